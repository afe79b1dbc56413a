import assert from 'node:assert/strict';
import { attemptAccessRefusal } from '../../../../src/engine/domain/attemptCredential';
import type { WorkerRuntime } from '../../../../src/engine/index';

describe('who may act for an attempt (baton mcp): decided on the runtime row, with the CLI codes', () => {
  const credential = { runId: 'R-1', delegationId: 'D-T1-coder-001', runtimeId: 'W-1', token: 't' };
  const runtime = (over: Partial<WorkerRuntime> = {}): WorkerRuntime & { tokenHash: string } => ({
    id: 'W-1',
    runId: 'R-1',
    delegationId: 'D-T1-coder-001',
    epoch: 1,
    leaseMs: 60_000,
    leaseExpiresAt: 60_000,
    claimedAt: 0,
    heartbeatCount: 0,
    status: 'claimed',
    tokenHash: 'h',
    ...over,
  });
  const code = (r: ReturnType<typeof runtime> | undefined, hash = 'h') =>
    attemptAccessRefusal(r, credential, hash)?.code;

  it('lets the holder of a live lease act', () => {
    assert.equal(code(runtime()), undefined);
    assert.equal(code(runtime({ status: 'active' })), undefined);
  });

  it('refuses an unknown runtime, a wrong token, a runtime of another attempt', () => {
    assert.equal(code(undefined), 'runtime.unknown');
    assert.equal(code(runtime(), 'other'), 'runtime.wrong-token');
    assert.equal(code(runtime({ delegationId: 'D-T2-coder-001' })), 'runtime.wrong-token');
  });

  it('refuses once the lease ran out, and once the attempt ended or waits at a gate', () => {
    assert.equal(code(runtime({ status: 'stale' })), 'runtime.lease-expired');
    assert.equal(code(runtime({ status: 'terminal' })), 'runtime.not-live');
    assert.equal(code(runtime({ status: 'blocked' })), 'runtime.not-live');
  });

  it('checks the token before it says anything about the attempt', () => {
    assert.equal(code(runtime({ status: 'terminal' }), 'other'), 'runtime.wrong-token');
  });
});
