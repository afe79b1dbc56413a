import assert from 'node:assert/strict';
import { attemptAccessRefusal } from '../../../../src/engine/domain/attemptCredential';
import { runsUnderWorker, type Presenter } from '../../../../src/engine/domain/process';
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
  /** A presenter that runs under no worker: itself, its shell, init. */
  const outsider: Presenter = {
    host: 'h1',
    ancestry: [
      { pid: 900, startTime: '90', host: 'h1' },
      { pid: 800, startTime: '80', host: 'h1' },
      { pid: 1, startTime: '1', host: 'h1' },
    ],
  };
  const code = (r: ReturnType<typeof runtime> | undefined, hash = 'h', presenter = outsider) =>
    attemptAccessRefusal(r, credential, hash, presenter)?.code;

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

  it("takes a started worker's token only from that worker's processes (issue 25, item 2.7)", () => {
    const started = { pid: 800, pidStart: '80', host: 'h1' };
    assert.equal(code(runtime(started)), undefined, 'the worker is a parent of the presenter');
    assert.equal(code(runtime({ ...started, pid: 700 })), 'runtime.not-its-worker', 'another worker read the token');
    assert.equal(code(runtime({ ...started, pidStart: '81' })), 'runtime.not-its-worker', 'its pid reused since');
    assert.equal(
      code(runtime({ ...started, host: 'h2' })),
      'runtime.not-its-worker',
      'the worker runs on another host',
    );
    assert.equal(code(runtime({ ...started, pid: 700 }), 'other'), 'runtime.wrong-token', 'the token is checked first');
  });

  it("in a worker's PID namespace, takes its token only from inside that namespace (its /proc shows no parent above it)", () => {
    const namespaced = { pid: 4242, pidStart: '42', host: 'h1', pidNamespace: 'pid:[4026532100]' };
    // Inside, the chain of parents ends at the namespace's init (pid 1): the worker's own pid never shows.
    const inside: Presenter = { ...outsider, pidNamespace: 'pid:[4026532100]' };
    assert.equal(code(runtime(namespaced), 'h', inside), undefined, 'a process of the worker');
    assert.equal(
      code(runtime(namespaced), 'h', { ...outsider, pidNamespace: 'pid:[4026532200]' }),
      'runtime.not-its-worker',
      "another worker's namespace",
    );
    assert.equal(code(runtime(namespaced)), 'runtime.not-its-worker', 'no namespace said: the machine outside');
    assert.equal(
      code(runtime({ ...namespaced, host: 'h2' }), 'h', inside),
      'runtime.not-its-worker',
      'the same namespace number on another host is another namespace',
    );
  });

  it('leaves the token alone to decide where there is nothing to bind to', () => {
    assert.equal(runsUnderWorker({}, outsider), true, '`baton claim` started no process: its claimer holds the token');
    assert.equal(runsUnderWorker({ pid: 700, host: 'h1' }, { host: 'h1', ancestry: undefined }), true, 'no /proc');
    assert.equal(runsUnderWorker({ pid: 800, host: 'h1' }, outsider), true, 'no start time recorded: the pid decides');
  });
});
