// A result travels as content (issue 17, docs/team-artifacts.md): a resident worker in workspace C
// — another clone, as on another machine — claims a task of a run that workspace A started on the
// shared PostgreSQL store, heartbeats, and hands its result in from stdin. A sees the accepted
// result with its content (`status --json`, `ingestion show`) although the file never existed in
// A; an oversized artifact is refused with exit 2 and nothing is recorded.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  resultText,
  runCli,
  STACK_FRAME,
  writeFile,
} from '../../support/cli';

interface StatusView {
  tasks: Array<{ id: string; status: string }>;
  delegations: Array<{ id: string; taskId: string; status: string; runtimeId?: string }>;
  runtimes: Array<{ id: string; delegationId: string; progress?: string; lastHeartbeatAt?: number }>;
  ingestions: Array<{
    id: string;
    delegationId: string;
    accepted: boolean;
    artifactPath: string;
    artifactBytes?: number;
    artifactContent?: string;
  }>;
}

describe('a resident worker on another clone hands its result in as content (PostgreSQL)', function () {
  this.timeout(180_000);
  let cluster: PostgresCluster;
  const workspaces: string[] = [];

  before(async function () {
    this.timeout(600_000);
    ensureCliBuilt();
    cluster = await sharedPostgresCluster();
  });
  afterEach(() => {
    for (const dir of workspaces.splice(0)) removeWorkspace(dir);
  });

  it('C claims, heartbeats and ingests from stdin into A’s run; A shows the result with its content; too large is refused', async () => {
    const schema = schemaFor(`artifacts-${process.pid}`);
    const config = JSON.stringify({ store: { kind: 'postgres', schema }, isolation: 'none', defaultWorker: 'manual' });
    const a = makeWorkspace('baton-art-a-');
    const c = makeWorkspace('baton-art-c-');
    workspaces.push(a, c);
    for (const dir of [a, c]) writeFile(dir, '.baton/config.json', config);
    // Both tasks wait at risk gates, so A's coordinator dispatches nothing: the resident worker takes them.
    writeFile(
      a,
      'plan.md',
      planText([
        { id: 'T1', risk: ['database'] },
        { id: 'T2', risk: ['database'] },
      ]),
    );
    const env = { BATON_STORE_URL: cluster.url, NO_COLOR: '1' };

    const started = await runCli(['start', 'plan.md'], { cwd: a, env, timeoutMs: 60_000 });
    assert.equal(started.code, 8, describeResult(started));
    const gates = await runCli(['gates', '--json'], { cwd: a, env });
    for (const gate of gates.json<{ gates: Array<{ id: string }> }>().gates) {
      const approved = await runCli(['approve', gate.id], { cwd: a, env });
      assert.equal(approved.code, 0, describeResult(approved));
    }
    const runId = (await runCli(['status', '--json'], { cwd: a, env })).json<{ run: { id: string } }>().run.id;

    // C: claim T1 of A's run, heartbeat with progress, write the work the result lists (in C only), hand it in.
    const claimed = await runCli(['claim', '--run', runId, '--task', 'T1', '--holder', 'resident@C', '--json'], {
      cwd: c,
      env,
    });
    assert.equal(claimed.code, 0, describeResult(claimed));
    const claim = claimed.json<{ delegationId: string; runtimeId: string; token: string }>();
    const beat = await runCli(
      ['heartbeat', '--runtime', claim.runtimeId, '--token', claim.token, '--progress', 'writing on C'],
      { cwd: c, env },
    );
    assert.equal(beat.code, 0, describeResult(beat));
    const beating = (await runCli(['status', '--json'], { cwd: a, env })).json<StatusView>();
    assert.equal(
      beating.runtimes.find((r) => r.delegationId === claim.delegationId)?.progress,
      'writing on C',
      'A sees C’s heartbeat',
    );
    writeFile(c, 'notes/t1.md', 'made on C\n');
    const result = resultText({
      task: 'T1',
      agent: 'coder',
      status: 'PASS',
      summary: 'done on C — ünïcödé kept',
      artifacts: ['notes/t1.md'],
    });
    const ingested = await runCli(
      [
        'ingest',
        '--delegation',
        claim.delegationId,
        '--run',
        runId,
        '--token',
        claim.token,
        '--artifact',
        '-',
        '--json',
      ],
      { cwd: c, env, input: result },
    );
    assert.equal(ingested.code, 0, describeResult(ingested));
    const record = ingested.json<{ record: { id: string; artifactPath: string; accepted: boolean } }>().record;
    assert.equal(record.accepted, true, 'the listed file is checked where the worker worked: C');
    assert.equal(record.artifactPath, '<stdin>');
    assert.equal(existsSync(join(a, 'notes/t1.md')), false, 'A never had the work file');

    // A's view: T1 completed, its result with the content C piped in; C's heartbeat progress was seen too.
    const status = await runCli(['status', '--json'], { cwd: a, env });
    assert.equal(status.code, 0, describeResult(status));
    const view = status.json<StatusView>();
    assert.equal(view.tasks.find((t) => t.id === 'T1')?.status, 'completed');
    assert.equal(view.delegations.find((d) => d.id === claim.delegationId)?.status, 'COMPLETED');
    assert.deepEqual(
      view.ingestions.map((i) => [i.id, i.delegationId, i.accepted, i.artifactBytes, i.artifactContent]),
      [[record.id, claim.delegationId, true, Buffer.byteLength(result), result]],
    );
    const shown = await runCli(['ingestion', 'show', record.id], { cwd: a, env });
    assert.equal(shown.code, 0, describeResult(shown));
    assert.equal(shown.stdout, result, 'printed on A byte for byte');

    // Too large: C claims T2 and pipes 2 MiB; refused with one line, exit 2; nothing recorded anywhere.
    const second = (await runCli(['claim', '--run', runId, '--task', 'T2', '--json'], { cwd: c, env })).json<{
      delegationId: string;
      token: string;
    }>();
    const oversized = `${resultText({ task: 'T2', agent: 'coder', status: 'PASS' })}${'x'.repeat(2 * 1024 * 1024)}`;
    const refused = await runCli(
      ['ingest', '--delegation', second.delegationId, '--run', runId, '--token', second.token, '--artifact', '-'],
      { cwd: c, env, input: oversized },
    );
    assert.equal(refused.code, 2, describeResult(refused));
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /^baton: <stdin>: The artifact is \d+ bytes; this run's limit is 1048576 bytes/);
    assert.equal(refused.stderr.trim().split('\n').length, 1, `one line: ${refused.stderr}`);
    assert.doesNotMatch(refused.stderr, STACK_FRAME);
    const after = (await runCli(['status', '--json'], { cwd: a, env })).json<StatusView>();
    assert.equal(after.ingestions.length, 1, 'no ingestion recorded for the refused artifact');
    assert.equal(after.delegations.find((d) => d.id === second.delegationId)?.status, 'RUNNING');
    assert.equal(after.tasks.find((t) => t.id === 'T2')?.status, 'running');
    assert.ok(!`${status.stdout}${refused.stderr}${shown.stdout}`.includes(cluster.password), 'no password printed');
  });
});
