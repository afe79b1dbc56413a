import assert from 'node:assert/strict';
import { BatonError, type Engine } from '../../../src/engine/index';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

describe('replan: a run mapped onto a new plan', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    engine = await fixture.open();
  });
  afterEach(() => fixture.dispose());

  async function complete(taskId: string, agent = 'coder'): Promise<string> {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId });
    await engine.ingest({
      delegationId: claim.delegation.id,
      token: claim.token,
      artifactPath: fixture.writeResult(`${taskId}.md`, { task: taskId, agent }),
    });
    return claim.runId;
  }

  it('carries completed tasks over by id and by --map, supersedes the old run, and readies what they unblock', async () => {
    await complete('T1');
    const oldRun = await complete('T5');
    fixture.write(
      'plan2.md',
      DEMO_PLAN.replace('id: T3\n', 'id: T3b\n')
        .replace('depends: [T2, T3]', 'depends: [T2, T3b]')
        .replace('Write the docs.', 'Write the docs, better.'),
    );
    const outcome = await engine.replan({ runId: oldRun, planPath: 'plan2.md', mapping: { T5: null } });
    assert.deepEqual(
      outcome.carried.map((c) => `${c.from}->${c.to}`),
      ['T1->T1'],
    );
    assert.equal((await engine.getRun(oldRun)).status, 'superseded');
    const view = await engine.overview(outcome.run.id);
    const status = Object.fromEntries(view.tasks.map((t) => [t.id, t.status]));
    assert.equal(status.T1, 'completed');
    assert.equal(status.T3b, 'ready', 'T3b depended only on T1, which carried over');
    assert.equal(status.T5, 'ready', 'T5 was dropped from the mapping, so it runs again');
    assert.match(view.tasks.find((t) => t.id === 'T1')!.statusReason!, /carried over from .*T1 \(D-T1-coder-001\)/);
  });

  it('closes the risk gate of a task whose approved work carries over', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    await engine.ingest({
      delegationId: claim.delegation.id,
      token: claim.token,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    await engine.decideGate({ gateId: 'G-1', decision: 'approved', by: 'ann' });
    const t2 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T2' });
    await engine.ingest({
      delegationId: t2.delegation.id,
      token: t2.token,
      artifactPath: fixture.writeResult('T2.md', { task: 'T2' }),
    });
    fixture.write('plan2.md', DEMO_PLAN + '\n```baton-task\nid: T6\n```\nOne more.\n');
    const outcome = await engine.replan({ runId: claim.runId, planPath: 'plan2.md' });
    const gates = await engine.listGates({ runId: outcome.run.id });
    assert.deepEqual(
      gates.map((g) => [g.taskId, g.status, g.decidedBy]),
      [['T2', 'approved', 'baton']],
    );
  });

  it('closes the open gates of the superseded run: nobody is left to decide them', async () => {
    const oldRun = await complete('T1');
    const open = await engine.listGates({ status: 'open' });
    assert.deepEqual(
      open.map((g) => [g.runId, g.taskId, g.kind]),
      [[oldRun, 'T2', 'risk_approval']],
    );
    fixture.write('plan2.md', DEMO_PLAN);
    const outcome = await engine.replan({ runId: oldRun, planPath: 'plan2.md' });
    const old = await engine.listGates({ runId: oldRun });
    assert.deepEqual(
      old.map((g) => [g.id, g.status, g.decidedBy, g.note]),
      [[open[0]!.id, 'rejected', 'baton', `the run was replanned as ${outcome.run.id}`]],
    );
    assert.deepEqual(
      (await engine.listGates({ status: 'open' })).map((g) => [g.runId, g.taskId]),
      [[outcome.run.id, 'T2']],
      'only the new run asks',
    );
  });

  it('is refused while work of the old run is in flight, and writes nothing', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    fixture.write('plan2.md', DEMO_PLAN);
    await assert.rejects(
      engine.replan({ runId: claim.runId, planPath: 'plan2.md' }),
      (err) => BatonError.is(err, 'replan.workers-alive') && err.kind === 'conflict',
    );
    assert.equal((await engine.listRuns()).length, 1);
    assert.equal((await engine.getRun(claim.runId)).status, 'running');
  });

  it('refuses a mapping that names tasks neither plan has', async () => {
    const runId = await complete('T1');
    fixture.write('plan2.md', DEMO_PLAN);
    await assert.rejects(engine.replan({ runId, planPath: 'plan2.md', mapping: { T9: 'T1', T1: 'T7' } }), (err) => {
      assert.ok(BatonError.is(err, 'replan.invalid-mapping'));
      assert.deepEqual(err.issues.map((i) => i.code).sort(), ['replan.unknown-new-task', 'replan.unknown-old-task']);
      return true;
    });
  });

  it('refuses an invalid new plan with its issues', async () => {
    const runId = await complete('T1');
    fixture.write('plan2.md', '```baton-task\nid: A\ndepends: [A]\n```\n');
    await assert.rejects(
      engine.replan({ runId, planPath: 'plan2.md' }),
      (err) => BatonError.is(err, 'plan.invalid') && err.issues.some((i) => i.code === 'plan.dependency-cycle'),
    );
  });
});

describe('diagnose', () => {
  it('suggests the decision a gate waits for, and reconcile for an attempt whose worker is gone', async () => {
    const fixture = new EngineFixture();
    try {
      fixture.write('plan.md', DEMO_PLAN);
      const engine = await fixture.open();
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      let d = await engine.diagnose();
      assert.match(d.next.command, /baton reconcile --run/, 'T1 is RUNNING but no worker process is recorded alive');
      await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
      });
      d = await engine.diagnose();
      assert.match(d.next.command, /baton approve G-1/);
      assert.equal(d.coordinator, undefined);
      assert.equal(d.diskBytes, 0, 'nothing under .baton/runs/<run> yet: no worker ran');
      fixture.write(`.baton/runs/${claim.delegation.runId}/logs/${claim.delegation.id}.log`, 'twelve bytes');
      assert.equal((await engine.diagnose()).diskBytes, 12, 'the logs, prompts and artifacts of the run are counted');
    } finally {
      await fixture.dispose();
    }
  });
});
