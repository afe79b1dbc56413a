// The `baton` CLI on a PostgreSQL store (docs/team.md): two workspaces (two clones, or two
// machines) on one database see one queue; a wrong password or a password in the config is
// refused with its exit code, and the password is in no output.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { fifoWhileRunning } from '../../reliability/boundaryRows';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  writeFile,
} from '../../support/cli';

describe('baton on a PostgreSQL store', function () {
  this.timeout(120_000);
  let cluster: PostgresCluster;
  const workspaces: string[] = [];
  const workspace = (schema: string): string => {
    const dir = makeWorkspace('baton-pg-cli-');
    workspaces.push(dir);
    writeFile(dir, '.baton/config.json', JSON.stringify({ store: { kind: 'postgres', schema } }));
    writeFile(dir, 'plan.md', planText([{ id: 'T1' }, { id: 'T2' }]));
    return dir;
  };

  before(async function () {
    this.timeout(600_000);
    ensureCliBuilt();
    cluster = await sharedPostgresCluster();
  });
  afterEach(() => {
    for (const dir of workspaces.splice(0)) removeWorkspace(dir);
  });

  it('lets a claim made in one workspace show in the status of another workspace on the same store', async () => {
    const a = workspace(schemaFor(`cli-${process.pid}-shared`));
    const b = workspace(schemaFor(`cli-${process.pid}-shared`));
    const env = { BATON_STORE_URL: cluster.url };
    const claim = await runCli(['claim', '--plan', 'plan.md', '--task', 'T1', '--json'], { cwd: a, env });
    assert.equal(claim.code, 0, describeResult(claim));
    assert.equal(claim.json<{ delegationId: string }>().delegationId, 'D-T1-coder-001');

    const status = await runCli(['status', '--json'], { cwd: b, env });
    assert.equal(status.code, 0, describeResult(status));
    const view = status.json<{ delegations: Array<{ id: string; status: string }> }>();
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-T1-coder-001:RUNNING'],
    );
    // And the other way round: B's claim of the same task is refused as taken (exit 3).
    const again = await runCli(['claim', '--plan', 'plan.md', '--task', 'T1', '--json'], { cwd: b, env });
    assert.equal(again.code, 3, describeResult(again));
    assert.equal(again.json<{ error: { code: string } }>().error.code, 'task.already-claimed');
    for (const r of [claim, status, again]) assert.ok(!`${r.stdout}${r.stderr}`.includes(cluster.password));
  });

  it('refuses a wrong password with exit 1 in status, claim and doctor, and prints the password nowhere', async () => {
    const dir = workspace(schemaFor(`cli-${process.pid}-wrong`));
    const password = `wrong-${randomBytes(8).toString('hex')}`;
    const env = { BATON_STORE_URL: cluster.url.replace(`:${cluster.password}@`, `:${password}@`) };
    const status = await runCli(['status', '--json'], { cwd: dir, env });
    assert.equal(status.code, 1, describeResult(status));
    const error = status.json<{ error: { code: string; message: string } }>().error;
    assert.equal(error.code, 'store.unreachable');
    assert.match(error.message, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres/);
    const claim = await runCli(['claim', '--plan', 'plan.md', '--task', 'T1'], { cwd: dir, env });
    assert.equal(claim.code, 1, describeResult(claim));
    const doctor = await runCli(['doctor', '--json'], { cwd: dir, env });
    const store = doctor
      .json<{ checks: Array<{ name: string; status: string; detail: string }> }>()
      .checks.find((c) => c.name === 'store');
    assert.equal(store?.status, 'fail', describeResult(doctor));
    for (const r of [status, claim, doctor]) {
      assert.ok(!`${r.stdout}${r.stderr}`.includes(password), `the password was printed:\n${describeResult(r)}`);
    }
  });

  it('refuses a config whose store URL holds a password (exit 2) in every command, while the store holds a running run, without repeating it', async () => {
    const schema = schemaFor(`cli-${process.pid}-password-in-config`);
    const dir = workspace(schema);
    // A teammate's run is running in the team's store (issue 26: status said "No Baton runs yet", exit 0).
    const teammate = await runCli(['claim', '--plan', 'plan.md', '--task', 'T1'], {
      cwd: workspace(schema),
      env: { BATON_STORE_URL: cluster.url },
    });
    assert.equal(teammate.code, 0, describeResult(teammate));
    const password = `in-config-${randomBytes(6).toString('hex')}`;
    writeFile(
      dir,
      '.baton/config.json',
      JSON.stringify({
        store: { kind: 'postgres', schema, url: `postgres://postgres:${password}@127.0.0.1:${cluster.port}/postgres` },
      }),
    );
    const claim = await runCli(['claim', '--plan', 'plan.md', '--task', 'T1', '--json'], { cwd: dir });
    const validate = await runCli(['validate', '.baton/config.json'], { cwd: dir });
    const status = await runCli(['status', '--json'], { cwd: dir });
    const gates = await runCli(['gates'], { cwd: dir });
    for (const r of [claim, validate, status, gates]) {
      assert.equal(r.code, 2, describeResult(r));
      assert.match(`${r.stdout}${r.stderr}`, /store\.url: must not hold a password/, describeResult(r));
      assert.ok(!`${r.stdout}${r.stderr}`.includes(password), describeResult(r));
    }
    assert.equal(status.json<{ error: { code: string } }>().error.code, 'config.invalid');
    const doctor = await runCli(['doctor', '--json'], { cwd: dir });
    assert.equal(doctor.code, 7, describeResult(doctor));
    const store = doctor
      .json<{ checks: Array<{ name: string; status: string; detail: string }> }>()
      .checks.find((c) => c.name === 'store');
    assert.equal(store?.status, 'fail', describeResult(doctor));
    assert.doesNotMatch(store.detail, /no store yet/);
    assert.ok(!doctor.stdout.includes(password), describeResult(doctor));
  });

  it('a worker that replaces its heartbeat relay file with a FIFO while it runs (issue 25, item 3.4): `baton start` completes the run', async function () {
    // Before a3ed031 the relay's open(2) blocked on the FIFO and `baton start` never ended (row H16, odd trials).
    this.timeout(150_000);
    assert.deepEqual(await fifoWhileRunning('relay', cluster), []);
  });

  it('says what doctor found: the server, the schema version and a round trip, the URL without its password', async () => {
    const dir = workspace(schemaFor(`cli-${process.pid}-doctor`));
    const r = await runCli(['doctor', '--json'], { cwd: dir, env: { BATON_STORE_URL: cluster.url } });
    const store = r
      .json<{ checks: Array<{ name: string; status: string; detail: string }> }>()
      .checks.find((c) => c.name === 'store');
    assert.equal(store?.status, 'ok', describeResult(r));
    assert.match(
      store.detail,
      /^PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres \(schema t_[0-9a-f]+\): schema version \d+, a read took \d+ ms$/,
    );
    assert.ok(!r.stdout.includes(cluster.password));
  });
});
