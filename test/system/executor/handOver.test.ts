import assert from 'node:assert/strict';
import { join } from 'node:path';
import { EngineFixture } from '../../support/engineFixture';
import {
  config,
  killQuietly,
  pidAlive,
  plan,
  readTrace,
  waitFor,
  withWorkerEnv,
  type TraceLine,
} from '../../fixtures/executor/harness';

// Coordinator.handOver: what an editor window does to the runs it drives when it closes or
// reloads with `baton.onWindowClose: keepRunning` (docs/extension.md). The coordinator lets go
// of the run without stopping its workers; the next coordinator takes it over at once (no lease
// to wait out) and adopts them — the same attempts, the same processes.

describe('coordinator: handing a run over with its workers running (a window that reloads)', () => {
  let fixture: EngineFixture;
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    for (const line of readTrace(join(fixture.workspace, 'trace.txt')))
      if (line.kind === 'start') killQuietly(line.pid, fixture.workspace);
    await fixture.dispose();
  });

  it('leaves the workers running, holds their leases for their task timeout, and the next coordinator takes over at once and adopts them', async () => {
    fixture.write('.baton/config.json', config({ leaseSeconds: 5, taskTimeoutSeconds: 120 }));
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '9000' };
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');

    const { first, running, handedOver, outcome } = await withWorkerEnv(env, async () => {
      const first = await engine.coordinate({ runId: run.id, maxConcurrency: 2, leaseMs: 2000 });
      assert.ok('coordinator' in first);
      const loop = first.coordinator.run();
      const running = await waitFor('both workers to start', () => {
        const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
        return starts.length === 2 ? starts : undefined;
      });
      const handedOver = await first.coordinator.handOver({ by: 'the window reloads' });
      return { first, running, handedOver, outcome: await loop };
    });
    assert.deepEqual(handedOver, { workers: 2 });
    assert.deepEqual(outcome, { kind: 'handed-over', workers: 2 });
    for (const w of running) assert.ok(pidAlive(w.pid), `the worker of ${w.delegation} runs on`);

    const after = await engine.overview(run.id);
    const lease = after.coordinatorLease!;
    assert.equal(lease.epoch, first.coordinator.leaseEpoch);
    assert.ok(lease.releasedAt !== undefined, 'the lease was released at once');
    assert.deepEqual(lease.handedOver, { workers: 2 }, 'and marked handed over');
    const now = Date.now();
    for (const r of after.runtimes.filter((x) => x.endedAt === undefined))
      assert.ok(
        r.leaseExpiresAt > now + 100_000,
        `${r.delegationId}'s lease is held for its task timeout, not one lease length (${r.leaseExpiresAt - now} ms)`,
      );
    const released = (await engine.listEvents(run.id)).filter((e) => e.type === 'coordinator:released');
    assert.deepEqual(
      released.map((e) => e.data.handedOver),
      [{ workers: 2 }],
    );

    // Longer than the lease: a successor that comes late still adopts them.
    await new Promise((r) => setTimeout(r, 5500));
    const second = await withWorkerEnv(env, async () => {
      // No waiting for a lease to run out: it was released.
      const taken = await engine.coordinate({ runId: run.id, maxConcurrency: 2, leaseMs: 2000 });
      assert.ok('coordinator' in taken, 'the next coordinator takes the run at once');
      const adopted = taken.reconcile.entries
        .filter((e) => e.repair)
        .map((e) => `${e.delegationId}: ${e.repair}`)
        .sort();
      assert.deepEqual(
        adopted,
        running.map((w: TraceLine) => `${w.delegation}: adopted: lease renewed by this coordinator`).sort(),
      );
      return taken.coordinator.run();
    });
    assert.deepEqual(second, { kind: 'finished', status: 'completed' });

    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`).sort(),
      ['D-A-coder-001:COMPLETED', 'D-B-coder-001:COMPLETED'],
      'the same attempts completed; none ran twice',
    );
    const trace = readTrace(tracePath);
    assert.deepEqual(
      trace
        .filter((l) => l.kind === 'end')
        .map((l) => `${l.delegation}:${l.pidToken}`)
        .sort(),
      running.map((w) => `${w.delegation}:${w.pidToken}`).sort(),
      'the processes that finished are the ones started before the hand-over',
    );
  });

  it('with a graceful stop (stopGracefully), the successor lets the running attempts finish and starts nothing new', async () => {
    fixture.write('.baton/config.json', config({ leaseSeconds: 5, taskTimeoutSeconds: 120 }));
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }, { id: 'C' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '3000' };
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');

    const outcome = await withWorkerEnv(env, async () => {
      const first = await engine.coordinate({ runId: run.id, maxConcurrency: 2, leaseMs: 2000 });
      assert.ok('coordinator' in first);
      const loop = first.coordinator.run();
      await waitFor('two workers to start', () => readTrace(tracePath).filter((l) => l.kind === 'start').length === 2);
      assert.deepEqual(await first.coordinator.handOver({ stop: 'graceful' }), { workers: 2 });
      await loop;
      const second = await engine.coordinate({ runId: run.id, maxConcurrency: 2, leaseMs: 2000 });
      assert.ok('coordinator' in second);
      return second.coordinator.run();
    });
    assert.equal(outcome.kind, 'paused');
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.tasks.map((t) => `${t.id}:${t.status}`),
      ['A:completed', 'B:completed', 'C:ready'],
    );
    assert.equal(view.run.stopMode, 'graceful');
    assert.equal(readTrace(tracePath).filter((l) => l.kind === 'start').length, 2, 'C never started');
  });
});
