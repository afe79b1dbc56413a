import assert from 'node:assert/strict';
import type { Engine, RunEvent } from '../../../src/engine/index';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/** Every way a gate closes records one `gate:decided` shape: with its kind (issue: two paths left it out). */
describe('events: gate:decided carries the gate kind on every path', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    engine = await fixture.open();
  });
  afterEach(() => fixture.dispose());

  async function decided(runId: string): Promise<Array<RunEvent<'gate:decided'>['data']>> {
    return (await engine.listEvents(runId)).flatMap((e) => (e.type === 'gate:decided' ? [e.data] : []));
  }

  it('a stop that cancels an attempt closes its gate as rejected by baton, with the kind', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    await engine.ingest({
      delegationId: claim.delegation.id,
      token: claim.token,
      artifactPath: fixture.writeResult('bad.md', { task: 'T9' }),
    });
    await engine.requestStop({ runId: claim.runId, delegationId: claim.delegation.id, mode: 'immediate', by: 'ann' });
    const gate = (await decided(claim.runId)).find((d) => d.kind === 'ingestion_failed');
    assert.deepEqual(gate && { kind: gate.kind, decision: gate.decision, by: gate.by }, {
      kind: 'ingestion_failed',
      decision: 'rejected',
      by: 'baton',
    });
  });

  it('a replan that carries a task over closes its risk gate as approved by baton, with the kind', async () => {
    for (const taskId of ['T1']) {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId });
      await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult(`${taskId}.md`, { task: taskId }),
      });
    }
    await engine.decideGate({ gateId: 'G-1', decision: 'approved', by: 'ann' });
    const t2 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T2' });
    await engine.ingest({
      delegationId: t2.delegation.id,
      token: t2.token,
      artifactPath: fixture.writeResult('T2.md', { task: 'T2' }),
    });
    fixture.write('plan2.md', DEMO_PLAN + '\n```baton-task\nid: T6\n```\nOne more.\n');
    const { run } = await engine.replan({ runId: t2.runId, planPath: 'plan2.md' });
    assert.deepEqual(
      (await decided(run.id)).map((d) => [d.kind, d.decision, d.by]),
      [['risk_approval', 'approved', 'baton']],
    );
  });

  it('a person deciding records the kind and the note', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    await engine.decideGate({ gateId: 'G-1', decision: 'rejected', by: 'ann', note: 'not now' });
    assert.deepEqual(await decided(claim.runId), [
      { gateId: 'G-1', kind: 'risk_approval', decision: 'rejected', by: 'ann', note: 'not now' },
    ]);
  });
});
