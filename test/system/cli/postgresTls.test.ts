// TLS passes through BATON_STORE_URL to PostgreSQL (issue #17, docs/team.md "TLS"): a cluster
// with ssl=on, a certificate signed by a CA made with `openssl`, and TCP logins without TLS
// refused, so a command that works went through TLS. The libpq parameters in the URL mean
// what they mean to psql; a certificate that is not trusted, a CA file that cannot be read,
// and a server without TLS that the URL requires it of are each refused with one readable
// line (the URL shown without its password) and exit 1 (store.unreachable).
import assert from 'node:assert/strict';
import {
  schemaFor,
  sharedPostgresCluster,
  startPostgresCluster,
  type PostgresCluster,
} from '../../support/postgresCluster';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  STACK_FRAME,
  writeFile,
  type CliResult,
} from '../../support/cli';

describe('baton on a PostgreSQL store over TLS', function () {
  this.timeout(120_000);
  let tlsCluster: PostgresCluster;
  let plainCluster: PostgresCluster;
  let dir: string;

  before(async function () {
    this.timeout(600_000);
    ensureCliBuilt();
    tlsCluster = await startPostgresCluster({ tls: true });
    plainCluster = await sharedPostgresCluster();
    dir = makeWorkspace('baton-pg-tls-');
    writeFile(dir, '.baton/config.json', JSON.stringify({ store: { kind: 'postgres', schema: schemaFor(dir) } }));
    writeFile(dir, 'plan.md', planText([{ id: 'T1' }]));
  });
  after(() => {
    removeWorkspace(dir);
    tlsCluster?.stop();
  });

  const withCa = (ca: string, mode = 'verify-full'): string =>
    `${tlsCluster.url}?sslmode=${mode}&sslrootcert=${encodeURIComponent(ca)}`;
  const storeCheck = (r: CliResult): { status: string; detail: string } | undefined =>
    r
      .json<{ checks: Array<{ name: string; status: string; detail: string }> }>()
      .checks.find((c) => c.name === 'store');

  /** One readable line, exit 1 (store.unreachable), the URL without its password, no stack trace. */
  function assertRefused(r: CliResult, password: string, why: RegExp): void {
    assert.equal(r.code, 1, describeResult(r));
    assert.equal(r.stdout, '', describeResult(r));
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line:\n${describeResult(r)}`);
    assert.match(
      lines[0]!,
      /^baton: Cannot use the Baton store at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres/,
    );
    assert.match(lines[0]!, why);
    assert.doesNotMatch(r.stderr, STACK_FRAME);
    assert.ok(!r.stderr.includes(password), 'the password is not shown');
  }

  it('works with sslmode=verify-full and the CA that signed the server: doctor, claim and status (and only over TLS)', async () => {
    const env = { BATON_STORE_URL: withCa(tlsCluster.tls!.ca) };
    const doctor = await runCli(['doctor', '--json'], { cwd: dir, env });
    const store = storeCheck(doctor);
    assert.equal(store?.status, 'ok', describeResult(doctor));
    assert.match(
      store.detail,
      /^PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres\?sslmode=verify-full/,
    );
    const claim = await runCli(['claim', '--plan', 'plan.md', '--task', 'T1', '--json'], { cwd: dir, env });
    assert.equal(claim.code, 0, describeResult(claim));
    const status = await runCli(['status', '--json'], { cwd: dir, env });
    assert.equal(status.code, 0, describeResult(status));
    assert.deepEqual(
      status
        .json<{ delegations: Array<{ id: string; status: string }> }>()
        .delegations.map((d) => `${d.id}:${d.status}`),
      ['D-T1-coder-001:RUNNING'],
    );
    // The same server refuses a login without TLS: what worked above went through TLS.
    const plain = await runCli(['status'], { cwd: dir, env: { BATON_STORE_URL: tlsCluster.url } });
    assertRefused(plain, tlsCluster.password, /no encryption/);
    for (const r of [doctor, claim, status]) {
      assert.ok(!`${r.stdout}${r.stderr}`.includes(tlsCluster.password), describeResult(r));
      assert.equal(r.stderr, '', `nothing on stderr (no warning from the client):\n${describeResult(r)}`);
    }
  });

  it('refuses a server certificate signed by another CA: one line, exit 1, in status and doctor', async () => {
    const env = { BATON_STORE_URL: withCa(tlsCluster.tls!.otherCa) };
    const status = await runCli(['status'], { cwd: dir, env });
    assertRefused(
      status,
      tlsCluster.password,
      /the server's TLS certificate was not accepted \(.+\)\. Check the TLS parameters/,
    );
    const json = await runCli(['status', '--json'], { cwd: dir, env });
    assert.equal(json.code, 1, describeResult(json));
    assert.equal(json.json<{ error: { code: string } }>().error.code, 'store.unreachable');
    const doctor = await runCli(['doctor', '--json'], { cwd: dir, env });
    const store = storeCheck(doctor);
    assert.equal(store?.status, 'fail', describeResult(doctor));
    assert.match(store.detail, /the server's TLS certificate was not accepted/);
    assert.ok(!doctor.stdout.includes(tlsCluster.password));
  });

  it('refuses a CA file that cannot be read, naming the parameter and the file', async () => {
    const missing = `${dir}/no-such-ca.pem`;
    const status = await runCli(['status'], { cwd: dir, env: { BATON_STORE_URL: withCa(missing) } });
    assertRefused(status, tlsCluster.password, new RegExp(`sslrootcert ${missing} cannot be read \\(ENOENT\\)`));
  });

  it('refuses sslmode=require against a server without TLS, saying so', async () => {
    const env = { BATON_STORE_URL: `${plainCluster.url}?sslmode=require` };
    const status = await runCli(['status'], { cwd: dir, env });
    assertRefused(
      status,
      plainCluster.password,
      /the server does not offer TLS, which the URL requires \(sslmode=require\)/,
    );
    const doctor = await runCli(['doctor', '--json'], { cwd: dir, env });
    assert.match(storeCheck(doctor)?.detail ?? '', /does not offer TLS/, describeResult(doctor));
  });

  it('reads sslmode=require as libpq does: encrypted, the certificate not checked without a CA', async () => {
    // psql connects here too; the pg client alone would check the certificate as verify-full and refuse.
    const status = await runCli(['status', '--json'], {
      cwd: dir,
      env: { BATON_STORE_URL: `${tlsCluster.url}?sslmode=require` },
    });
    assert.equal(status.code, 0, describeResult(status));
    assert.equal(status.stderr, '', describeResult(status));
  });
});
