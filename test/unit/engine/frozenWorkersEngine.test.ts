import assert from 'node:assert/strict';
import { BatonError, Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';

const PLAN = '```baton-task\nid: T1\nagent: coder\n```\nDo T1.\n';

/**
 * Issue 15, item 7, at the facade: a run's frozen worker definitions are what `resume` checks
 * before it starts a coordinator, and what `status` compares with the file.
 */
describe('frozen worker definitions: what resume checks, what status says', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  const gone = { type: 'process', command: '/nonexistent/agent-cli', args: [] };
  const node = { type: 'process', command: process.execPath, args: [] };
  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', PLAN);
    fixture.write('.baton/config.json', JSON.stringify({ defaultWorker: 'agent', workers: { agent: gone } }));
    engine = await fixture.open();
  });
  afterEach(() => fixture.dispose());

  it('a frozen worker whose program is gone is refused (worker.missing) while the config defines it the same', async () => {
    const { run } = await engine.runForPlan('plan.md');
    await assert.rejects(engine.refuseUnknownWorkers(run.id), (err) => BatonError.is(err, 'worker.missing'));
  });

  it('the refusal names the plan it was refused for: a doctor offered with it checks that plan (issue 24, item 1)', async () => {
    const { run } = await engine.runForPlan('plan.md');
    await assert.rejects(
      engine.refuseUnknownWorkers(run.id),
      (err) => BatonError.is(err, 'worker.missing') && (err as BatonError).details?.planPath === run.planPath,
    );
    assert.throws(
      () => Engine.refuseUnknownWorkersForPlan({ workspace: fixture.workspace, planPath: 'plan.md' }),
      (err) => BatonError.is(err, 'worker.missing') && (err as BatonError).details?.planPath === 'plan.md',
    );
  });

  it('…but not once the config defines it otherwise, or names another default: the gate will ask', async () => {
    const { run } = await engine.runForPlan('plan.md');
    fixture.write('.baton/config.json', JSON.stringify({ defaultWorker: 'agent', workers: { agent: node } }));
    engine.reloadConfig();
    await engine.refuseUnknownWorkers(run.id);
    fixture.write(
      '.baton/config.json',
      JSON.stringify({ defaultWorker: 'other', workers: { agent: gone, other: node } }),
    );
    engine.reloadConfig();
    await engine.refuseUnknownWorkers(run.id);
    const config = await engine.runConfig(run.id);
    assert.equal(config.workersDiffer, true);
    assert.deepEqual(config.changes, [
      'default worker: "agent" → "other"',
      'new worker "other": `' + process.execPath + '`',
    ]);
  });

  it('a worker removed from the config is still the run’s: resume checks the frozen definition', async () => {
    fixture.write('.baton/config.json', JSON.stringify({ defaultWorker: 'agent', workers: { agent: node } }));
    engine.reloadConfig();
    const { run } = await engine.runForPlan('plan.md');
    fixture.write('.baton/config.json', JSON.stringify({ defaultWorker: 'agent', workers: {} }));
    engine.reloadConfig();
    await engine.refuseUnknownWorkers(run.id); // before: worker.unknown, though the run holds its definition
    assert.deepEqual((await engine.runConfig(run.id)).changes, [
      `worker "agent" is no longer in the config (the run keeps \`${process.execPath}\`)`,
    ]);
  });

  it('a finished task needs no worker: a cancelled run is not refused for a program that is gone', async () => {
    const { run } = await engine.runForPlan('plan.md');
    await engine.cancelRun({ runId: run.id });
    await engine.refuseUnknownWorkers(run.id);
  });
});
