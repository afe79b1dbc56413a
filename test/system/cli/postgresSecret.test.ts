// The store's password appears nowhere (issue #17, docs/team.md "Credentials" and "Tested
// failures"): a whole run on a PostgreSQL store whose role has a distinctive password (in
// BATON_STORE_URL, percent-encoded, and in PGPASSWORD) — start, a risk gate, approve, a worker
// that fails once and is retried, a worker and a verify command that dump their environment
// into their logs, diagnose, status, events, doctor, and a login with a wrong password. Then
// every stdout and stderr captured, every file under the workspace's .baton/ (logs, prompts,
// artifacts) and every text column of every table of the store's schema is searched for the
// password, as written and percent-encoded: it is in none of them.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  ROOT,
  runCli,
  writeFile,
  type CliResult,
} from '../../support/cli';

/** A worker that prints its whole environment into its log, then passes. */
const ENV_DUMP_WORKER = `
const fs = require('node:fs');
const path = require('node:path');
process.stdout.write('ENVIRONMENT ' + JSON.stringify(process.env) + '\\n');
const task = process.argv[2];
if (process.env.BATON_ARTIFACT_PATH) {
  fs.mkdirSync(path.dirname(process.env.BATON_ARTIFACT_PATH), { recursive: true });
  fs.writeFileSync(process.env.BATON_ARTIFACT_PATH, [
    '# ' + task, '', '\`\`\`baton-result', 'contract: baton-result-v1', 'task: ' + task, 'agent: coder',
    'status: PASS', 'summary: dumped its environment', 'artifacts: []', '\`\`\`', '',
  ].join('\\n'));
}
`;

const PLAN = `# Plan

\`\`\`baton-task
id: T1
title: Migrate the database
agent: coder
worker: envdump
risk: [database]
verify:
  - [node, envdump.js, verify]
\`\`\`

Migrate it.

\`\`\`baton-task
id: T2
title: Flaky
agent: coder
worker: flaky
\`\`\`

Fails once.

\`\`\`baton-task
id: T3
title: After the migration
agent: coder
worker: envdump
depends: [T1]
\`\`\`

Then this.
`;

describe('the store password over a whole run on PostgreSQL', function () {
  this.timeout(240_000);
  let cluster: PostgresCluster;
  let dir: string;
  let admin: pg.Client;
  const role = `baton_secret_${process.pid}`;
  // Distinctive, with characters a URL must encode.
  const password = `Pw-${randomBytes(9).toString('hex')}!s@cr/t%x`;
  const encoded = encodeURIComponent(password);

  before(async function () {
    this.timeout(600_000);
    ensureCliBuilt();
    cluster = await sharedPostgresCluster();
    admin = new pg.Client({ connectionString: cluster.url });
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
    await admin.query(`GRANT CREATE ON DATABASE postgres TO ${role}`);
    dir = makeWorkspace('baton-pg-secret-');
  });
  after(async () => {
    await admin?.end();
    removeWorkspace(dir);
  });

  it('is in no output, no file under .baton/, no text in the store, and no worker’s environment', async () => {
    const schema = schemaFor(dir);
    writeFile(
      dir,
      '.baton/config.json',
      JSON.stringify({
        store: { kind: 'postgres', schema },
        isolation: 'none',
        maxAttempts: 2,
        retryBackoffSeconds: 0,
        defaultWorker: 'envdump',
        workers: {
          envdump: { type: 'process', command: process.execPath, args: [join(dir, 'envdump.js'), '{taskId}'] },
          flaky: {
            type: 'process',
            command: process.execPath,
            args: [join(ROOT, 'test/fixtures/workers/attemptWorker.js'), '{taskId}'],
          },
        },
      }),
    );
    writeFile(dir, 'plan.md', PLAN);
    writeFile(dir, 'envdump.js', ENV_DUMP_WORKER);
    const url = `postgres://${role}:${encoded}@127.0.0.1:${cluster.port}/postgres`;
    const env = {
      BATON_STORE_URL: url,
      PGPASSWORD: password,
      BATON_USER: 'reviewer',
      NO_COLOR: '1',
      FAKE_BEHAVIOUR: JSON.stringify({ 'D-T2-coder-001': 'exit1' }),
    };
    const outputs: Array<{ what: string; r: CliResult }> = [];
    const baton = async (args: string[], expected: number | undefined, extra: Record<string, string> = {}) => {
      const r = await runCli(args, { cwd: dir, env: { ...env, ...extra }, timeoutMs: 90_000 });
      outputs.push({ what: `baton ${args.join(' ')}`, r });
      if (expected !== undefined) assert.equal(r.code, expected, `baton ${args.join(' ')}: ${describeResult(r)}`);
      return r;
    };

    // The run: T2 fails once and passes on its retry; T1 waits at its risk gate (exit 8).
    await baton(['start', 'plan.md'], 8);
    const gates = await baton(['gates', '--json'], 0);
    const gate = gates.json<{ gates: Array<{ id: string; taskId: string }> }>().gates.find((g) => g.taskId === 'T1');
    assert.ok(gate, gates.stdout);
    await baton(['approve', gate.id, '--note', 'go'], 0);
    await baton(['resume', '--json'], 0);
    for (const args of [
      ['status'],
      ['status', '--json'],
      ['diagnose'],
      ['diagnose', '--json'],
      ['events'],
      ['events', '--json'],
      ['doctor'],
      ['doctor', '--json'],
    ])
      await baton(args, args[0] === 'doctor' ? undefined : 0);
    const status = outputs
      .find((o) => o.what === 'baton status --json')!
      .r.json<{
        run: { status: string };
        delegations: Array<{ id: string; status: string }>;
      }>();
    // When it did not complete, what resume said tells why (it exits 0 when nothing is ready to run).
    const resumed = outputs.find((o) => o.what === 'baton resume --json')!.r;
    const statusText = outputs.find((o) => o.what === 'baton status')!.r.stdout;
    assert.equal(status.run.status, 'completed', `${describeResult(resumed)}\n${statusText}`);
    assert.deepEqual(status.delegations.map((d) => `${d.id}:${d.status}`).sort(), [
      'D-T1-coder-001:COMPLETED',
      'D-T2-coder-001:FAILED',
      'D-T2-coder-002:COMPLETED',
      'D-T3-coder-001:COMPLETED',
    ]);
    // A wrong password (one that holds the right one) is refused, and neither is shown.
    const wrong = `wrong-${password}`;
    const refused = await baton(['status'], 1, {
      BATON_STORE_URL: `postgres://${role}:${encodeURIComponent(wrong)}@127.0.0.1:${cluster.port}/postgres`,
      PGPASSWORD: wrong,
    });
    assert.match(refused.stderr, /store at postgres:\/\/baton_secret_\d+:\*\*\*@127\.0\.0\.1/);

    const secrets = [password, encoded];
    const holds = (text: string): boolean => secrets.some((s) => text.includes(s)) || text.includes(wrong);
    // Every output.
    for (const { what, r } of outputs)
      assert.ok(!holds(`${r.stdout}\n${r.stderr}`), `${what} shows the password:\n${describeResult(r)}`);

    // Every file under .baton/: logs (with the workers' and the verify command's environments), prompts, artifacts.
    const files = walk(join(dir, '.baton'));
    const logs = files.filter((f) => f.endsWith('.log'));
    const dumps = logs.filter((f) => readFileSync(f, 'utf8').includes('ENVIRONMENT {'));
    // T1's worker, T1's verify command and T3's worker dumped theirs: the search below would see a password there.
    assert.ok(dumps.length >= 3, `environment dumps in the logs: ${dumps.join(', ')} of ${logs.join(', ')}`);
    for (const dump of dumps) {
      const text = readFileSync(dump, 'utf8');
      assert.match(text, /"BATON_RUN_ID":"R-/, `${dump} holds a dumped environment`);
      for (const name of ['BATON_STORE_URL', 'PGPASSWORD'])
        assert.ok(!text.includes(`"${name}":`), `${dump}: a worker got ${name}`);
    }
    for (const file of files) {
      const text = readFileSync(file).toString('latin1');
      assert.ok(!holds(text), `${file} holds the password`);
    }

    // Every text column of every table of the store.
    const columns = await admin.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
       WHERE table_schema = $1 AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'bytea')`,
      [schema],
    );
    assert.ok(columns.rowCount! > 20, `text columns of ${schema}: ${columns.rowCount}`);
    let searched = 0;
    for (const { table_name: table, column_name: column } of columns.rows) {
      const found = await admin.query<{ n: string }>(
        `SELECT COUNT(*) AS n FROM ${schema}.${table}
         WHERE strpos(${column}::text, $1) > 0 OR strpos(${column}::text, $2) > 0 OR strpos(${column}::text, $3) > 0`,
        [password, encoded, wrong],
      );
      assert.equal(Number(found.rows[0]!.n), 0, `${schema}.${table}.${column} holds the password`);
      searched++;
    }
    // The search reads what the run wrote: the events are there to be searched.
    const events = await admin.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${schema}.events`);
    assert.ok(Number(events.rows[0]!.n) > 20 && searched > 20);
  });
});

function walk(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...walk(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}
