import assert from 'node:assert/strict';
import type { WorkerRuntime } from '../../../../src/engine/domain/types';
import { identityOf } from '../../../../src/engine/effects/processes/processes';
import { recordedProcessAlive, withWorkerProcesses } from '../../../../src/engine/usecases/workerProcesses';

describe('worker processes: one look, shared by status, diagnose and the views', () => {
  const self = identityOf(process.pid);
  const runtime = (id: string, pid: number, pidStart: string | null, extra: Partial<WorkerRuntime> = {}) =>
    ({
      id,
      runId: 'R',
      delegationId: `D-${id}`,
      epoch: 1,
      leaseMs: 60_000,
      leaseExpiresAt: Date.now() + 60_000,
      claimedAt: Date.now(),
      heartbeatCount: 0,
      status: 'claimed',
      pid,
      host: self.host,
      ...(pidStart !== null ? { pidStart } : {}),
      ...extra,
    }) as WorkerRuntime;

  it('is alive only while the same process (pid and start time) runs on its host', () => {
    assert.equal(recordedProcessAlive({ pid: process.pid, pidStart: self.startTime, host: self.host }), true);
    assert.equal(recordedProcessAlive({ pid: process.pid, pidStart: '1', host: self.host }), false, 'a reused pid');
    assert.equal(recordedProcessAlive({ pid: process.pid, pidStart: self.startTime, host: 'elsewhere' }), undefined);
    assert.equal(recordedProcessAlive({ pid: null, host: self.host }), false);
  });

  it('marks a live runtime whose process is gone, and leaves the others as they are', () => {
    const view = {
      runtimes: [
        runtime('alive', process.pid, self.startTime),
        runtime('gone', process.pid, '1'),
        runtime('settled', process.pid, '1', { status: 'terminal', endedAt: Date.now() }),
      ],
    };
    const looked = withWorkerProcesses(view);
    assert.deepEqual(
      looked.runtimes.map((r) => `${r.id}:${r.processGone ?? '-'}`),
      ['alive:-', 'gone:true', 'settled:-'],
    );
    const unchanged = { runtimes: [runtime('alive', process.pid, self.startTime)] };
    assert.equal(withWorkerProcesses(unchanged), unchanged, 'nothing gone: the same view');
  });
});
