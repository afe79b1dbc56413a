// A throwaway PostgreSQL cluster for the tests, started and stopped by the project itself
// (issue #17): `initdb` into a temporary folder, `pg_ctl start` on a free loopback port (and a
// unix socket in the same folder), password authentication over TCP so the tests use a real
// password. PostgreSQL refuses to run as root and CI runs the tests as root: then every
// PostgreSQL command runs as the `postgres` user that Debian's package creates (`runuser`).
// One cluster per test process (`sharedPostgresCluster`), stopped when the process exits.
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface PostgresCluster {
  /** postgres://postgres:<password>@127.0.0.1:<port>/postgres */
  readonly url: string;
  readonly password: string;
  readonly port: number;
  /** The cluster's folder (data, socket, log). */
  readonly dir: string;
  /** `pg_ctl restart`: every connection is cut, the data stays. */
  restart(): void;
  /** `pg_ctl stop -m fast`: the server goes away (every connection cut, new ones refused), the data stays. */
  down(): void;
  /** Starts the server that `down` stopped, on the same port. */
  up(): void;
  stop(): void;
  /** The server's log so far (for a failing test's message). */
  log(): string;
  /** With `tls`: the CA that signed the server's certificate, and a CA that did not (PEM files). */
  readonly tls?: { ca: string; otherCa: string };
}

export interface PostgresClusterOptions {
  /**
   * ssl=on with a certificate for 127.0.0.1 signed by a CA made here with `openssl`, and TCP
   * connections without TLS refused (pg_hba `hostssl` only): a login that works went through TLS.
   */
  tls?: boolean;
  /**
   * fsync and full-page writes on, as on a real server: a commit returns once its WAL is on disk.
   * For the benchmark (test/bench/pgBench.ts), whose figures are durable commits.
   */
  durable?: boolean;
}

/** The newest PostgreSQL whose binaries are installed (Debian: /usr/lib/postgresql/<major>/bin), or BATON_PG_BIN. */
export function postgresBinDir(): string {
  const fromEnv = process.env.BATON_PG_BIN;
  if (fromEnv) return fromEnv;
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((name) => existsSync(join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length === 0) {
    throw new Error(
      'PostgreSQL is not installed: no /usr/lib/postgresql/<version>/bin/initdb. Install Debian\'s "postgresql" package (.ci/run does) or set BATON_PG_BIN.',
    );
  }
  return join(root, majors[0]!, 'bin');
}

/** Who runs PostgreSQL: this user, or `postgres` when this is root. */
function serverUser(): { uid: number; gid: number; prefix: string[] } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  if (!line) throw new Error('Running as root and there is no "postgres" user to run PostgreSQL as.');
  const [, , uid, gid] = line.split(':');
  return { uid: Number(uid), gid: Number(gid), prefix: ['runuser', '-u', 'postgres', '--'] };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

export async function startPostgresCluster(options: PostgresClusterOptions = {}): Promise<PostgresCluster> {
  const bin = postgresBinDir();
  const user = serverUser();
  const dir = mkdtempSync(join(tmpdir(), 'baton-pg-'));
  const data = join(dir, 'data');
  const logFile = join(dir, 'server.log');
  const password = randomBytes(12).toString('hex');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (user) {
    chownSync(dir, user.uid, user.gid);
    chownSync(pwfile, user.uid, user.gid);
  }
  chmodSync(dir, 0o700);
  const run = (program: string, args: string[]): void => {
    const argv = [...(user?.prefix ?? []), join(bin, program), ...args];
    const result = spawnSync(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
    if (result.status !== 0) {
      const output = `${result.stdout?.toString() ?? ''}${result.stderr?.toString() ?? ''}`.trim();
      const serverLog = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-2000) : '';
      throw new Error(`${program} failed (${result.status ?? result.signal}): ${output}\n${serverLog}`);
    }
  };
  run('initdb', [
    '-D',
    data,
    '-U',
    'postgres',
    `--pwfile=${pwfile}`,
    '--auth-local=trust',
    '--auth-host=scram-sha-256',
    '--no-locale',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  rmSync(pwfile);
  const tls = options.tls ? makeCertificates(dir, data, user) : undefined;
  const port = await freePort();
  // Durability of the test server itself is not under test: fsync off keeps it fast on shared cores.
  const settings = [
    'listen_addresses=127.0.0.1',
    `port=${port}`,
    `unix_socket_directories=${dir}`,
    ...(options.durable ? [] : ['fsync=off', 'full_page_writes=off']),
    'max_connections=200',
    ...(tls ? ['ssl=on', 'ssl_cert_file=server.crt', 'ssl_key_file=server.key'] : []),
  ];
  const start = (): void =>
    run('pg_ctl', [
      'start',
      '-D',
      data,
      '-w',
      '-t',
      '60',
      '-l',
      logFile,
      '-o',
      settings.map((s) => `-c ${s}`).join(' '),
    ]);
  start();
  // A watchdog outlives a test process killed by a signal or a CI timeout (no 'exit' handler runs
  // then): once this process is gone it stops the cluster and removes its folder.
  const pgCtl = [...(user?.prefix ?? []), join(bin, 'pg_ctl')].map((arg) => `'${arg}'`).join(' ');
  spawn(
    'sh',
    [
      '-c',
      `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; ${pgCtl} stop -D '${data}' -m immediate >/dev/null 2>&1; rm -rf '${dir}'`,
    ],
    { detached: true, stdio: 'ignore' },
  ).unref();
  let stopped = false;
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres`,
    password,
    port,
    dir,
    restart: () =>
      run('pg_ctl', [
        'restart',
        '-D',
        data,
        '-w',
        '-t',
        '60',
        '-m',
        'fast',
        '-l',
        logFile,
        '-o',
        settings.map((s) => `-c ${s}`).join(' '),
      ]),
    down: () => run('pg_ctl', ['stop', '-D', data, '-w', '-t', '60', '-m', 'fast']),
    up: start,
    stop: () => {
      if (stopped) return;
      stopped = true;
      try {
        run('pg_ctl', ['stop', '-D', data, '-w', '-t', '30', '-m', 'immediate']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8') : ''),
    ...(tls ? { tls } : {}),
  };
}

/**
 * A CA, a server certificate it signs (for 127.0.0.1 and localhost) in the data folder, and a
 * second, unrelated CA; pg_hba then lets TCP logins in only over TLS.
 */
function makeCertificates(
  dir: string,
  data: string,
  user: { uid: number; gid: number } | undefined,
): { ca: string; otherCa: string } {
  const tlsDir = join(dir, 'tls');
  mkdirSync(tlsDir);
  const openssl = (args: string[]): void => {
    const result = spawnSync('openssl', args, { cwd: tlsDir, stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    if (result.error || result.status !== 0)
      throw new Error(
        `openssl ${args[0]} failed (${result.error?.message ?? result.status}): ${result.stderr?.toString() ?? ''}. .ci/run installs Debian's "openssl".`,
      );
  };
  const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl([
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Baton test CA',
  ]);
  openssl([
    'req',
    '-x509',
    ...ecKey,
    '-keyout',
    'other.key',
    '-out',
    'other-ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=Another CA',
  ]);
  openssl(['req', '-new', ...ecKey, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(tlsDir, 'san.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
  openssl([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  ]);
  for (const file of ['server.crt', 'server.key']) {
    const target = join(data, file);
    copyFileSync(join(tlsDir, file), target);
    // PostgreSQL refuses a key others can read.
    chmodSync(target, 0o600);
    if (user) chownSync(target, user.uid, user.gid);
  }
  const hba = join(data, 'pg_hba.conf');
  writeFileSync(
    hba,
    readFileSync(hba, 'utf8')
      .split('\n')
      .map((line) => (/^host\s/.test(line) ? line.replace(/^host/, 'hostssl') : line))
      .join('\n'),
  );
  return { ca: join(tlsDir, 'ca.pem'), otherCa: join(tlsDir, 'other-ca.pem') };
}

let shared: Promise<PostgresCluster> | undefined;

/** The test process's one cluster: started on first use, stopped when the process exits. */
export function sharedPostgresCluster(): Promise<PostgresCluster> {
  if (!shared) {
    shared = startPostgresCluster();
    shared.then(
      (cluster) =>
        process.once('exit', () => {
          try {
            cluster.stop();
          } catch {
            // Exiting anyway; the temporary folder is all that may stay.
          }
        }),
      () => undefined,
    );
  }
  return shared;
}

/** A schema name of its own for a test location (a temporary folder): several stores in one database. */
export function schemaFor(location: string): string {
  return `t_${createHash('sha256').update(location).digest('hex').slice(0, 16)}`;
}
