import assert from 'node:assert/strict';
import type { Engine } from '../../../src/engine/index';
import { RunsModel, type ModelChange } from '../../../src/extension/runsModel';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/** Counts the engine reads the model makes. */
function countOverviews(engine: Engine): { count: number } {
  const counter = { count: 0 };
  const original = engine.overview.bind(engine);
  engine.overview = async (runId?: string) => {
    counter.count++;
    return original(runId);
  };
  return counter;
}

describe('the view-model behind the Baton views', () => {
  let fixture: EngineFixture;
  beforeEach(() => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
  });
  afterEach(() => fixture.dispose());

  it('applies heartbeats from their events without reading the store, batched into few changes of the runtimes only', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const model = new RunsModel(engine, 100);
    await model.refreshNow();
    const reads = countOverviews(engine);
    const changes: ModelChange[] = [];
    model.onDidChange((c) => changes.push(c));
    for (let i = 0; i < 30; i++)
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: `step ${i}` });
    await new Promise((resolve) => setTimeout(resolve, 400));
    // (At most one read: the claim's own events may be announced after the model subscribed.)
    assert.ok(reads.count <= 1, `30 heartbeats cost ${reads.count} reads`);
    const beatChanges = changes.filter(
      (c) => c.runtimes && !c.structure && c.tasks.size === 0 && c.runs.size === 0 && !c.gates,
    );
    assert.ok(
      beatChanges.length >= 1 && beatChanges.length < 30,
      `${beatChanges.length} heartbeat changes for 30 heartbeats`,
    );
    assert.equal(model.liveRuntimes()[0]!.progress, 'step 29');
    assert.equal(model.liveRuntimes()[0]!.heartbeatCount, 30);
    model.dispose();
  });

  it('coalesces a burst of other engine events into one read and one change', async () => {
    const engine = await fixture.open({ follow: true });
    const model = new RunsModel(engine, 100);
    await engine.runForPlan('plan.md');
    await model.refreshNow();
    const run = model.allRuns[0]!;
    const reads = countOverviews(engine);
    const changes: ModelChange[] = [];
    model.onDidChange((c) => changes.push(c));
    for (const taskId of ['T1', 'T5']) await engine.claimTask({ runId: run.id, taskId });
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(reads.count, 1, `two claims cost ${reads.count} reads`);
    assert.equal(changes.length, 1);
    assert.deepEqual([...changes[0]!.tasks].sort(), [`${run.id}/T1`, `${run.id}/T5`]);
    model.dispose();
  });

  it('reports exactly which tasks changed, and no structure change for a status change', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const model = new RunsModel(engine, 50);
    await model.refreshNow();
    const change = new Promise<ModelChange>((resolve) => model.onDidChange(resolve));
    await engine.ingest({
      delegationId: claim.delegation.id,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    const seen = await change;
    assert.equal(seen.structure, false);
    assert.deepEqual(
      [...seen.tasks].sort(),
      [`${claim.runId}/T1`, `${claim.runId}/T3`],
      'T1 completed and T3 became ready; nothing else',
    );
    model.dispose();
  });

  it('while no view is visible it still follows, only less often', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const model = new RunsModel(engine, 50);
    await model.refreshNow();
    model.pause();
    const reads = countOverviews(engine);
    await engine.ingest({
      delegationId: claim.delegation.id,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(reads.count, 0, 'nothing read within the visible coalescing window');
    model.resume();
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(reads.count, 1, 'showing a view catches up at once');
    assert.equal(model.overview(claim.runId)!.tasks.find((t) => t.id === 'T1')!.status, 'completed');
    model.dispose();
  });
});
