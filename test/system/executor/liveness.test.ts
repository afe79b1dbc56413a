// A worker that never sends a heartbeat of its own, driven by a real coordinator: the store
// records its process (pid, when Baton first saw it), the coordinator's lease renewals count as
// heartbeats but not as the worker's own beats, and what every surface says of it is "alive",
// with its pid — never "no beat yet" for the whole task, never stale while its lease holds.
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import type { Engine, WorkerRuntime } from '../../../src/engine/index';
import { describeLiveness } from '../../../src/protocol/liveness';
import { EngineFixture } from '../../support/engineFixture';
import { plan, withWorkerEnv } from '../../fixtures/executor/harness';

const EDIT_WORKER = resolve(__dirname, '../../fixtures/workers/editWorker.js');

describe('liveness of a worker that sends no beats of its own', function () {
  this.timeout(60_000);
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  it('records its process; the coordinator renews its lease; it reads as alive with its pid until it ends', async () => {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'edit',
        workers: { edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'] } },
        // The shortest lease, renewed every 1.7 s: the worker outlives a couple of renewals.
        leaseSeconds: 5,
        isolation: 'none',
      }),
    );
    fixture.write('plan.md', plan([{ id: 'T1' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const seen: WorkerRuntime[] = [];
    await withWorkerEnv({ FAKE_DELAY_MS: '4500' }, async () => {
      const taken = await engine.coordinate({ runId: run.id });
      assert.ok('coordinator' in taken);
      const done = taken.coordinator.run();
      let finished = false;
      void done.finally(() => (finished = true));
      while (!finished) {
        const r = (await engine.overview(run.id)).runtimes[0];
        if (r && r.status !== 'terminal') seen.push(r);
        await new Promise((resolveSleep) => setTimeout(resolveSleep, 100));
      }
      assert.deepEqual(await done, { kind: 'finished', status: 'completed' });
    });
    const renewed = seen.filter((r) => r.heartbeatCount > 0 && r.pid !== undefined);
    assert.ok(renewed.length > 0, `the coordinator renewed the lease while the worker ran (${seen.length} looks)`);
    // Between the worker's end and the coordinator settling its attempt, a look reads `gone` (its process ended, its
    // attempt not yet settled: docs/workers.md, "Liveness: what Baton says about a worker"); before that, alive —
    // never alive again after gone.
    const states = renewed.map((r) => describeLiveness(r, r.lastHeartbeatAt!).state);
    const ended = states.indexOf('gone');
    const whileRunning = ended === -1 ? renewed : renewed.slice(0, ended);
    assert.ok(whileRunning.length > 0, `looks while the worker ran: ${states.join(', ')}`);
    assert.ok(ended === -1 || states.slice(ended).every((s) => s === 'gone'), `alive, then gone: ${states.join(', ')}`);
    for (const r of renewed.slice(whileRunning.length))
      assert.match(describeLiveness(r, r.lastHeartbeatAt!).summary, new RegExp(`^ended · pid ${r.pid}$`));
    for (const r of whileRunning) {
      assert.equal(r.workerBeatAt, undefined, 'a renewal by the coordinator is not a beat of the worker');
      assert.ok(r.processStartedAt !== undefined && r.processStartedAt >= r.claimedAt, 'when Baton saw the process');
      const live = describeLiveness(r, r.lastHeartbeatAt!);
      assert.equal(live.state, 'alive');
      assert.match(live.summary, new RegExp(`^alive \\d+s · pid ${r.pid}$`));
    }
    assert.ok(
      seen.every((r) => r.status !== 'stale'),
      'never stale while the coordinator holds the lease',
    );
  });

  it('a worker’s own heartbeat is recorded apart from renewals', async () => {
    fixture.write('plan.md', plan([{ id: 'T1' }]));
    engine = await fixture.open();
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const before = (await engine.overview(claim.runId)).runtimes[0]!;
    assert.equal(describeLiveness(before, engine.now()).summary, 'no beat yet', 'an external claim, nothing seen yet');
    const beat = await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'working' });
    assert.equal(beat.workerBeatAt, beat.lastHeartbeatAt);
    const after = (await engine.overview(claim.runId)).runtimes[0]!;
    assert.equal(after.workerBeatAt, beat.lastHeartbeatAt, 'stored');
    assert.equal(describeLiveness(after, after.workerBeatAt!).summary, 'beat 0s ago');
  });
});
