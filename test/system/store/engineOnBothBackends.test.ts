// One operation, written once, runs on both backends (docs/architecture.md, "Decision: one
// portable SQL subset"): the same walk through the engine — claims, heartbeats, a conflict,
// gates approved and rejected, results accepted, rejected and repeated, a lease running out
// and a retry, replan refusals, diagnosis — on the file store and on PostgreSQL, with the same
// fake clock and ids, must leave the same runs, tasks, attempts, runtimes, gates, ingestions
// and event log. Any statement whose meaning differs between the two shows up as a difference.
import assert from 'node:assert/strict';
import { BatonError, type Engine } from '../../../src/engine/index';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';

async function walk(fixture: EngineFixture, engine: Engine): Promise<unknown> {
  const clock = fixture.fakeClock;
  const refusals: string[] = [];
  const refused = async (step: Promise<unknown>): Promise<void> => {
    try {
      await step;
      refusals.push('(accepted)');
    } catch (err) {
      refusals.push(BatonError.is(err) ? err.code : `unexpected: ${(err as Error).message}`);
    }
  };
  fixture.write('plan.md', DEMO_PLAN);
  const t1 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
  await refused(engine.claimTask({ planPath: 'plan.md', taskId: 'T1' }));
  await refused(engine.claimTask({ planPath: 'plan.md', taskId: 'T3' }));
  await refused(engine.claimTask({ planPath: 'plan.md', taskId: 'T2' }));
  clock.advance(30_000);
  await engine.heartbeat({ runtimeId: t1.runtimeId, token: t1.token, progress: 'reading the code' });
  await refused(engine.heartbeat({ runtimeId: t1.runtimeId, token: 'not-the-token' }));
  await engine.decideGate({ gateId: 'G-1', decision: 'approved', by: 'ann', note: 'schema reviewed' });
  await refused(engine.decideGate({ gateId: 'G-1', decision: 'rejected', by: 'bob' }));
  await engine.ingest({
    delegationId: t1.delegation.id,
    token: t1.token,
    artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
  });

  // A lease that runs out: the attempt goes STALE and the task is claimed again as attempt 2.
  const t5 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
  clock.advance(121_000);
  await refused(engine.heartbeat({ runtimeId: t5.runtimeId, token: t5.token }));
  await engine.expireStaleRuntimes();
  // Claims obey the retry backoff (counted from the expiry): the next attempt is claimed once it is over.
  await refused(engine.claimTask({ planPath: 'plan.md', taskId: 'T5' }));
  clock.advance(2_000);
  const t5again = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
  // Beats sent at once: the first commits alone, the others together in one statement, each with its own outcome.
  await Promise.all([
    engine.heartbeat({ runtimeId: t5again.runtimeId, token: t5again.token, progress: 'batched 1' }),
    refused(engine.heartbeat({ runtimeId: t5again.runtimeId, token: 'not-the-token' })),
    engine.heartbeat({ runtimeId: t5again.runtimeId, token: t5again.token, progress: 'batched 2' }),
    engine.heartbeat({ runtimeId: t5again.runtimeId, token: t5again.token }),
  ]);

  // A rejected result, the same one again (idempotent), then a corrected one.
  const t3 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T3' });
  await refused(engine.replan({ runId: t1.runId, planPath: 'plan.md' }));
  const bad = fixture.writeResult('T3-bad.md', { task: 'T9', status: 'DONE' });
  await engine.ingest({ delegationId: t3.delegation.id, token: t3.token, artifactPath: bad });
  await engine.ingest({ delegationId: t3.delegation.id, token: t3.token, artifactPath: bad });
  await engine.ingest({ delegationId: t3.delegation.id, artifactPath: fixture.writeResult('T3.md', { task: 'T3' }) });

  const t2 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T2' });
  await engine.ingest({
    delegationId: t2.delegation.id,
    token: t2.token,
    artifactPath: fixture.writeResult('T2.md', { task: 'T2', status: 'FAIL', summary: 'the migration broke' }),
  });
  await engine.ingest({
    delegationId: t5again.delegation.id,
    token: t5again.token,
    artifactPath: fixture.writeResult('T5.md', { task: 'T5' }),
  });
  // A follow-up message (follow_ups, migration 12): the completed T1 runs again as a follow-up attempt and passes.
  await engine.sendFollowUp({ runId: t1.runId, taskId: 'T1', message: 'Add a README.', by: 'ann' });
  // A second one while T1 waits to start: its next attempt carries both. One to a task that is not there: refused.
  await refused(engine.sendFollowUp({ runId: t1.runId, taskId: 'T1', message: 'Wait for it.', by: 'bob' }));
  await refused(engine.sendFollowUp({ runId: t1.runId, taskId: 'T9', message: 'Hello?', by: 'bob' }));
  const t1again = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
  await engine.ingest({
    delegationId: t1again.delegation.id,
    token: t1again.token,
    artifactPath: fixture.writeResult('T1-again.md', { task: 'T1' }),
  });
  // A replan once nothing runs: finished work carries over to the new run, the old one is superseded.
  fixture.write('plan.md', DEMO_PLAN.replace('Write the docs.', 'Write better docs.'));
  const replanned = await engine.replan({ runId: t1.runId, planPath: 'plan.md' });

  const overview = await engine.overview();
  const runs = await engine.listRuns();
  return {
    refusals,
    replanned,
    runs,
    overview,
    ingestions: await engine.listIngestions(t1.runId),
    followUps: await engine.listFollowUps(t1.runId),
    events: (await engine.listEvents(t1.runId)).map(({ id: _id, ...event }) => event),
    record: await engine.taskRecord(t1.runId, 'T3'),
    diagnosis: await engine.diagnose(t1.runId),
  };
}

/** The walk's outcome with the workspace's own path (a temporary folder) taken out. */
function comparable(outcome: unknown, workspace: string): unknown {
  const parsed = JSON.parse(JSON.stringify(outcome).split(workspace).join('<workspace>')) as {
    diagnosis?: { config?: { file?: { digest?: string } } };
  };
  // The two config files differ by design (one names the PostgreSQL store), so their digests do.
  if (parsed.diagnosis?.config?.file?.digest) parsed.diagnosis.config.file.digest = '<the config file digest>';
  return parsed;
}

describe('the engine on both backends', () => {
  let cluster: PostgresCluster;
  const fixtures: EngineFixture[] = [];
  before(async function () {
    this.timeout(120_000);
    cluster = await sharedPostgresCluster();
  });
  afterEach(async () => {
    for (const fixture of fixtures.splice(0)) await fixture.dispose();
  });

  it('leaves the same runs, attempts, gates, ingestions and events after the same walk on the file store and on PostgreSQL', async function () {
    this.timeout(60_000);
    // Fractions of a second are allowed in the backoff: the retry's not_before must still be whole milliseconds.
    const settings = { retryBackoffSeconds: 1.0005 };
    const onFiles = new EngineFixture();
    onFiles.write('.baton/config.json', JSON.stringify(settings));
    fixtures.push(onFiles);
    const expected = comparable(await walk(onFiles, await onFiles.open()), onFiles.workspace);

    const schema = schemaFor(onFiles.workspace);
    const onPostgres = new EngineFixture({ postgres: { url: cluster.url, schema } });
    onPostgres.write('.baton/config.json', JSON.stringify({ ...settings, store: { kind: 'postgres', schema } }));
    fixtures.push(onPostgres);
    const actual = comparable(await walk(onPostgres, await onPostgres.open()), onPostgres.workspace);

    // The walk did what it says (so that two empty outcomes cannot agree).
    const { refusals, ingestions, events } = expected as {
      refusals: string[];
      ingestions: unknown[];
      events: unknown[];
    };
    assert.deepEqual(refusals, [
      'task.already-claimed',
      'task.dependencies-unmet',
      'task.gated',
      'runtime.wrong-token',
      'gate.already-decided',
      'runtime.lease-expired',
      'claim.retry-backoff',
      'runtime.wrong-token',
      'replan.workers-alive',
      '(accepted)',
      'task.unknown',
    ]);
    assert.equal((expected as { runs: unknown[] }).runs.length, 2);
    assert.ok(
      ingestions.length >= 5 && events.length >= 20,
      `${ingestions.length} ingestions, ${events.length} events`,
    );
    assert.deepEqual(actual, expected);
  });
});
