/**
 * PostgreSQL rows of `npm run bench` (issue #17, "Performance"), on a cluster the bench starts
 * itself (test/support/postgresCluster.ts) with fsync on:
 *
 * 1. Durable claim → heartbeat → ingest cycles per second with 1, 4 and 16 worker processes, each
 *    going through the engine's operations (as `baton claim` / `heartbeat` / `ingest` do), beside
 *    a bare `FOR UPDATE SKIP LOCKED` claim → update → complete loop on the same server with the
 *    same processes (plain `pg`, hand SQL, one jobs table: what a pg-boss user compares with),
 *    and beside the file store with the same processes.
 * 2. A heartbeat committed in one process → the engine event in an observer process
 *    (LISTEN/NOTIFY through `store.watch`), beside the same on the file store.
 * 3. Resident workers beating at 1 Hz (simulated by a few processes, each driving many runtimes
 *    through the engine's heartbeat): does the commit lag grow, and what CPU and connections it
 *    takes.
 *
 *   node --import tsx test/bench/pgBench.ts [--quick]        prints the section
 *   npm run bench -- --only pg                               rewrites its section of docs/benchmarks.md
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { Engine } from '../../src/engine/index';
import { bundleScript } from '../support/bundleScript';
import { startPostgresCluster, type PostgresCluster } from '../support/postgresCluster';
import { makeTempDir } from '../support/tempDir';
import { percentile, summarize, summarizeWithP95, formatRate, type Summary } from './stats';
import { lastBeats } from './engineBench';
import { runTwoHosts, type TwoHostsResult } from './teamBench';

export interface PgBenchOptions {
  /** Worker processes of the throughput row, one configuration each (empty skips the row). */
  processes: number[];
  /** Cycles per repetition of one configuration, shared evenly among its processes. */
  cycles: number;
  reps: number;
  /**
   * Untimed cycles each process runs of every kind before the first timed one: its code optimized by V8 and its
   * connections' statements prepared, as in a coordinator that has been running a while.
   */
  warmupCycles: number;
  /** Heartbeats of the latency row (0 skips it), one every `latencyIntervalMs`. */
  latencyBeats: number;
  latencyIntervalMs: number;
  /** Resident workers (0 skips the row), simulated by `residentProcesses` processes, beating for `residentSeconds`. */
  residentWorkers: number;
  residentProcesses: number;
  residentSeconds: number;
  /** The two-machine row (test/bench/teamBench.ts): tasks of its run (0 skips it), each `teamTaskMs` long. */
  teamTasks: number;
  teamTaskMs: number;
  teamConcurrency: number;
  teamReps: number;
  log?: (line: string) => void;
}

export const FULL_PG: Omit<PgBenchOptions, 'log'> = {
  processes: [1, 4, 16],
  cycles: 160,
  reps: 3,
  warmupCycles: 40,
  latencyBeats: 300,
  latencyIntervalMs: 30,
  residentWorkers: 1000,
  residentProcesses: 10,
  residentSeconds: 30,
  teamTasks: 200,
  teamTaskMs: 500,
  teamConcurrency: 4,
  teamReps: 1,
};
export const QUICK_PG: Omit<PgBenchOptions, 'log'> = {
  processes: [1, 4],
  cycles: 40,
  reps: 1,
  warmupCycles: 5,
  latencyBeats: 60,
  latencyIntervalMs: 30,
  residentWorkers: 200,
  residentProcesses: 4,
  residentSeconds: 8,
  teamTasks: 24,
  teamTaskMs: 300,
  teamConcurrency: 2,
  teamReps: 1,
};
export const SMOKE_PG: Omit<PgBenchOptions, 'log'> = {
  processes: [1, 2],
  cycles: 6,
  reps: 1,
  warmupCycles: 2,
  latencyBeats: 10,
  latencyIntervalMs: 20,
  residentWorkers: 20,
  residentProcesses: 2,
  residentSeconds: 3,
  teamTasks: 0,
  teamTaskMs: 0,
  teamConcurrency: 1,
  teamReps: 1,
};

export const PG_TARGETS = {
  /** Baton's cycle rate at 16 processes at least 1/1.5 of the bare loop doing Baton's bookkeeping (issue 26)… */
  bookedFactor: 1.5,
  /** …and at least 1/5 of the bare loop without it. */
  bareFactor: 5,
  bareFactorAt: 16,
  /** Throughput grows with processes: 16 processes at least 3× the rate of 1. */
  scaling: 3,
  /** Two machines driving one run take at most this share of one machine's time. */
  twoHostsShare: 0.6,
  notifyP95Ms: 50,
  /** "No growing lag": the lag p95 of the last seconds at most this factor (or the slack) above the first seconds'. */
  lagGrowthFactor: 2,
  lagSlackMs: 10,
};

/** Seconds at each end of the resident row whose lag is compared. */
const LAG_WINDOW_SECONDS = 5;

type Kind = 'pg' | 'pgRuns' | 'bare' | 'booked' | 'file';
const KINDS: readonly Kind[] = ['pg', 'pgRuns', 'bare', 'booked', 'file'];
const KIND_LABEL: Record<Kind, string> = {
  pg: 'Baton, PostgreSQL store',
  pgRuns: 'Baton, PostgreSQL store, a run per process',
  bare: 'bare SKIP LOCKED loop (hand SQL)',
  booked: 'bare loop with Baton’s bookkeeping (hand SQL)',
  file: 'Baton, file store',
};

export interface ThroughputCell {
  kind: Kind;
  processes: number;
  /** Cycles per second, one per repetition. */
  rates: number[];
  rate: Summary;
  /** Per cycle, over every repetition. */
  clientCpuMs: number;
  serverCpuMs: number;
  roundTrips: number;
  transactions: number;
  /** The longest single cycle of any process in any repetition. */
  longestMs: number;
}

export interface LatencyResult {
  backend: 'pg' | 'file';
  beats: number;
  /** Beats whose own count the observer announced (beats between two of its catch-ups are announced once). */
  heard: number;
  /** Runtimes that beat, and those whose last beat the observer announced: every one, on any machine. */
  runtimes: number;
  latestHeard: number;
  commitMs: Summary & { p95: number };
  aboveCommitMs: Summary & { p95: number };
}

export interface ResidentResult {
  workers: number;
  processes: number;
  seconds: number;
  scheduled: number;
  committed: number;
  failed: number;
  /** Beats still queued when the row ended (`graceMs` after the last was due). */
  uncommitted: number;
  graceSeconds: number;
  /** Beats committed per second, from the first due to the last commit. */
  committedPerSecond: number;
  roundTripsPerBeat: number;
  lagStart: { p50: number; p95: number };
  lagEnd: { p50: number; p95: number };
  lagAll: { p50: number; p95: number; max: number };
  serverCpuPercent: number;
  clientCpuPercent: number;
  /** Connections to the server while they beat: Baton's (most seen at once), and all client backends. */
  connections: { baton: number; total: number };
  claimSeconds: number;
}

export interface PgBenchResult {
  options: Omit<PgBenchOptions, 'log'>;
  server: string;
  load: { start: number; end: number };
  throughput: ThroughputCell[];
  /** Baton on PostgreSQL ÷ the bare loop, per repetition round, per process count. */
  pairedRatio: Map<number, Summary>;
  /** Baton on PostgreSQL ÷ the bare loop with Baton's bookkeeping, likewise. */
  pairedBookedRatio: Map<number, Summary>;
  latency: LatencyResult[];
  resident?: ResidentResult;
  twoHosts?: TwoHostsResult;
  seconds: number;
}

// ── the cluster ────────────────────────────────────────────────────────────

/** CPU time (ms) the server's processes used so far: the postmaster, its live backends, and the ones it reaped. */
function serverCpuMs(cluster: PostgresCluster): number {
  const postmaster = Number(readFileSync(join(cluster.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const fields = (pid: number | string): string[] | undefined => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    } catch {
      return undefined; // gone meanwhile
    }
  };
  // After the ")": state(0) ppid(1) … utime(11) stime(12) cutime(13) cstime(14).
  const own = fields(postmaster);
  if (!own) return Number.NaN;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = fields(name);
    if (f && Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
  }
  return (ticks * 1000) / CLOCK_TICKS;
}

const CLOCK_TICKS = ((): number => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

async function withClient<T>(cluster: PostgresCluster, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: cluster.url, application_name: 'bench' });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

// ── workspaces ─────────────────────────────────────────────────────────────

function planText(taskIds: readonly string[]): string {
  return taskIds.map((id) => `\`\`\`baton-task\nid: ${id}\nagent: coder\n\`\`\`\nStep ${id}.\n`).join('\n');
}

function resultArtifact(taskId: string): string {
  return [
    `# ${taskId} result`,
    '',
    '```baton-result',
    'contract: baton-result-v1',
    `task: ${taskId}`,
    'agent: coder',
    'status: PASS',
    `summary: Finished ${taskId}.`,
    'artifacts: []',
    '```',
    '',
  ].join('\n');
}

/** A workspace on the cluster (`schema`) or on files, with a run of `taskIds` and their result artifacts. */
async function prepareWorkspace(
  dir: string,
  store: { kind: 'postgres'; schema: string } | { kind: 'file' },
  env: NodeJS.ProcessEnv,
  plans: Record<string, readonly string[]>,
  withArtifacts: boolean,
): Promise<Record<string, string>> {
  mkdirSync(join(dir, '.baton'), { recursive: true });
  mkdirSync(join(dir, 'results'), { recursive: true });
  // Every claim of a configuration is held at once at most by its processes; runs allow up to 256.
  writeFileSync(join(dir, '.baton', 'config.json'), JSON.stringify({ store, maxConcurrency: 256 }));
  const engine = await Engine.open({ workspace: dir, env });
  const runs: Record<string, string> = {};
  try {
    for (const [name, taskIds] of Object.entries(plans)) {
      writeFileSync(join(dir, `${name}.md`), planText(taskIds));
      if (withArtifacts) for (const id of taskIds) writeFileSync(join(dir, 'results', `${id}.md`), resultArtifact(id));
      runs[name] = (await engine.startRun(`${name}.md`)).id;
    }
  } finally {
    await engine.close();
  }
  return runs;
}

// ── children ───────────────────────────────────────────────────────────────

/** A child that answers one JSON line per line it is sent. */
interface Child {
  process: ChildProcess;
  send(message: unknown): Promise<Record<string, unknown>>;
  /** The next line it prints (after `ready`, `claimed`, …). */
  next(): Promise<string>;
  end(): Promise<void>;
}

function startChild(script: string, args: string[], env: NodeJS.ProcessEnv): Child {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['pipe', 'pipe', 'pipe'], env });
  const waiting: Array<{ resolve: (line: string) => void; reject: (err: Error) => void }> = [];
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter.resolve(line);
    else lines.push(line);
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  child.on('exit', (code, signal) => {
    for (const waiter of waiting.splice(0))
      waiter.reject(
        new Error(`${script} exited (${code ?? signal}): ${stderr.trim().split('\n').slice(0, 3).join(' | ')}`),
      );
  });
  const next = (): Promise<string> => {
    const line = lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (child.exitCode !== null || child.signalCode !== null)
      return Promise.reject(new Error(`${script} exited: ${stderr.trim().split('\n').slice(0, 3).join(' | ')}`));
    return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
  };
  return {
    process: child,
    next,
    send: async (message) => {
      child.stdin!.write(`${JSON.stringify(message)}\n`);
      const reply = JSON.parse(await next()) as Record<string, unknown>;
      if (typeof reply.error === 'string') throw new Error(`${script}: ${reply.error}`);
      return reply;
    },
    end: async () => {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function expectLine(child: Child, expected: string): Promise<void> {
  const line = await child.next();
  if (line !== expected) throw new Error(`a bench child printed "${line}" instead of "${expected}"`);
}

// ── row 1: cycles per second ───────────────────────────────────────────────

/** The bookkeeping the reference loop keeps: an event log and results by digest, as Baton's store does. */
const BOOKED_TABLES = `CREATE TABLE bench_events (
  seq BIGSERIAL PRIMARY KEY, job_id BIGINT NOT NULL, type TEXT NOT NULL, at TIMESTAMPTZ NOT NULL DEFAULT now(), data TEXT);
CREATE TABLE bench_results (digest TEXT PRIMARY KEY, content TEXT NOT NULL)`;

const BARE_TABLE = `CREATE TABLE bench_jobs (
  id BIGSERIAL PRIMARY KEY,
  state TEXT NOT NULL DEFAULT 'created',
  payload TEXT NOT NULL,
  worker TEXT, progress TEXT, output TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  started_at TIMESTAMPTZ, heartbeat_at TIMESTAMPTZ, completed_at TIMESTAMPTZ)`;

async function throughput(
  cluster: PostgresCluster,
  options: PgBenchOptions,
): Promise<{ cells: ThroughputCell[]; pairedRatio: Map<number, Summary>; pairedBookedRatio: Map<number, Summary> }> {
  const log = options.log ?? (() => undefined);
  const most = Math.max(...options.processes);
  const warmupPerChild = options.warmupCycles;
  // Every cycle claims a task of its own: the timed ones, the warm-up, and one spare per process for rounding.
  const tasksNeeded = options.reps * options.processes.length * (options.cycles + most) + most * (warmupPerChild + 1);
  const taskIds = Array.from({ length: tasksNeeded }, (_, i) => `T${i + 1}`);
  const env = { ...process.env, BATON_STORE_URL: cluster.url };
  const pgDir = makeTempDir('baton-bench-pg-');
  const fileDir = makeTempDir('baton-bench-pgfile-');
  const children: Child[] = [];
  try {
    const setupStart = Date.now();
    // A run per process, for the row whose processes share no run: what each process claims in all, at most.
    const ownTasks =
      options.reps * options.processes.reduce((n, p) => n + Math.ceil(options.cycles / p), 0) + warmupPerChild + 1;
    const ownPlans = Object.fromEntries(
      Array.from({ length: most }, (_, j) => [`own${j}`, Array.from({ length: ownTasks }, (_, i) => `P${j}T${i + 1}`)]),
    );
    const [pgRuns, fileRuns] = await Promise.all([
      prepareWorkspace(pgDir, { kind: 'postgres', schema: 'bench_cycles' }, env, { plan: taskIds, ...ownPlans }, true),
      prepareWorkspace(fileDir, { kind: 'file' }, env, { plan: taskIds }, true),
    ]);
    const ownCursor = new Array<number>(most).fill(0);
    const takeOwn = (j: number, n: number): string[] => {
      const slice = ownPlans[`own${j}`]!.slice(ownCursor[j], ownCursor[j]! + n);
      ownCursor[j]! += n;
      if (slice.length < n) throw new Error('the bench made too few tasks for a run of its own');
      return slice;
    };
    await withClient(cluster, async (c) => {
      await c.query('CREATE SCHEMA bench_bare');
      await c.query(`SET search_path TO bench_bare; ${BARE_TABLE}`);
      await c.query(`CREATE INDEX bench_jobs_created ON bench_bare.bench_jobs (id) WHERE state = 'created'`);
      await c.query(`SET search_path TO bench_bare; ${BOOKED_TABLES}`);
      // The bare loop and the one with bookkeeping take jobs from one queue.
      await c.query(
        `INSERT INTO bench_bare.bench_jobs (payload) SELECT 'Step T' || n || '.' FROM generate_series(1, $1::int) AS n`,
        [2 * tasksNeeded],
      );
      await c.query('VACUUM ANALYZE bench_bare.bench_jobs');
    });
    log(`pg cycles: ${tasksNeeded} tasks per store prepared in ${((Date.now() - setupStart) / 1000).toFixed(1)} s`);

    const script = bundleScript('test/bench/children/pgCycler.ts');
    // One after the other: processes opening one file store at once wait for each other's open (its process lock),
    // and on a loaded machine the last of 16 can wait past the lock's timeout.
    for (let i = 0; i < most; i++) {
      children.push(startChild(script, [pgDir, fileDir, 'bench_bare'], env));
      await expectLine(children[i]!, 'ready');
    }

    const cursor: Record<'pg' | 'file', number> = { pg: 0, file: 0 };
    const takeTasks = (kind: 'pg' | 'file', n: number): string[] => {
      const slice = taskIds.slice(cursor[kind], cursor[kind] + n);
      cursor[kind] += n;
      if (slice.length < n) throw new Error('the bench made too few tasks');
      return slice;
    };
    /** One configuration, once: every process starts at the same moment; the rate runs to the last one's end. */
    const measure = async (kind: Kind, processes: number, cycles: number) => {
      const share = (j: number): number => Math.floor(cycles / processes) + (j < cycles % processes ? 1 : 0);
      const cpuBefore = serverCpuMs(cluster);
      const startAt = Date.now() + 100 + 10 * processes;
      const replies = await Promise.all(
        children.slice(0, processes).map((child, j) =>
          child.send(
            kind === 'bare' || kind === 'booked'
              ? { kind, cycles: share(j), startAt }
              : kind === 'pgRuns'
                ? { kind: 'pg', runId: pgRuns[`own${j}`], tasks: takeOwn(j, share(j)), startAt }
                : {
                    kind,
                    runId: (kind === 'pg' ? pgRuns : fileRuns).plan,
                    tasks: takeTasks(kind, share(j)),
                    startAt,
                  },
          ),
        ),
      );
      const serverCpu = serverCpuMs(cluster) - cpuBefore;
      const end = Math.max(...replies.map((r) => Number(r.end)));
      const sum = (key: string): number => replies.reduce((n, r) => n + Number(r[key]), 0);
      return {
        rate: sum('cycles') / ((end - startAt) / 1000),
        clientCpuMs: sum('cpuMs'),
        serverCpuMs: serverCpu,
        roundTrips: sum('roundTrips'),
        transactions: sum('transactions'),
        longestMs: Math.max(...replies.map((r) => Number(r.longestMs))),
        cycles: sum('cycles'),
      };
    };

    // Warm-up, untimed: every process's connections open, its code compiled.
    for (const kind of KINDS) await measure(kind, most, most * warmupPerChild);

    const cells = new Map<string, ThroughputCell & { cycles: number }>();
    const cell = (kind: Kind, processes: number) => {
      const key = `${kind}/${processes}`;
      let c = cells.get(key);
      if (!c) {
        c = {
          kind,
          processes,
          rates: [],
          rate: summarize([]),
          clientCpuMs: 0,
          serverCpuMs: 0,
          roundTrips: 0,
          transactions: 0,
          longestMs: 0,
          cycles: 0,
        };
        cells.set(key, c);
      }
      return c;
    };
    const ratios = new Map<number, number[]>();
    const bookedRatios = new Map<number, number[]>();
    for (let rep = 0; rep < options.reps; rep++) {
      // Rotating orders: drift in the machine's load hits every configuration and kind alike.
      const order = options.processes.map((_, i) => options.processes[(i + rep) % options.processes.length]!);
      for (const processes of order) {
        const rates: Partial<Record<Kind, number>> = {};
        for (let k = 0; k < KINDS.length; k++) {
          const kind = KINDS[(k + rep) % KINDS.length]!;
          const m = await measure(kind, processes, options.cycles);
          const c = cell(kind, processes);
          c.rates.push(m.rate);
          c.clientCpuMs += m.clientCpuMs;
          c.serverCpuMs += m.serverCpuMs;
          c.roundTrips += m.roundTrips;
          c.transactions += m.transactions;
          c.longestMs = Math.max(c.longestMs, m.longestMs);
          c.cycles += m.cycles;
          rates[kind] = m.rate;
          log(`pg cycles rep ${rep + 1}: ${kind} × ${processes}: ${m.rate.toFixed(0)} cycles/s`);
        }
        ratios.set(processes, [...(ratios.get(processes) ?? []), rates.pg! / rates.bare!]);
        bookedRatios.set(processes, [...(bookedRatios.get(processes) ?? []), rates.pg! / rates.booked!]);
      }
    }
    const result: ThroughputCell[] = [];
    for (const processes of options.processes)
      for (const kind of KINDS) {
        const c = cell(kind, processes);
        result.push({
          kind,
          processes,
          rates: c.rates,
          rate: summarize(c.rates),
          clientCpuMs: c.clientCpuMs / c.cycles,
          serverCpuMs: kind === 'file' ? 0 : c.serverCpuMs / c.cycles,
          roundTrips: kind === 'file' ? 0 : c.roundTrips / c.cycles,
          transactions: kind === 'file' ? 0 : c.transactions / c.cycles,
          longestMs: c.longestMs,
        });
      }
    return {
      cells: result,
      pairedRatio: new Map([...ratios].map(([p, values]) => [p, summarize(values)])),
      pairedBookedRatio: new Map([...bookedRatios].map(([p, values]) => [p, summarize(values)])),
    };
  } finally {
    await Promise.all(children.map((c) => c.end().catch(() => undefined)));
    rmSync(pgDir, { recursive: true, force: true });
    rmSync(fileDir, { recursive: true, force: true });
  }
}

// ── row 2: heartbeat → observer ────────────────────────────────────────────

/**
 * `beats` heartbeats, one every `intervalMs`, round-robin over a few claimed runtimes, committed by
 * this process; an observer process (test/bench/children/beatObserver.ts, an engine following the
 * store) prints when each one's event fires.
 */
async function beatLatency(
  backend: 'pg' | 'file',
  cluster: PostgresCluster,
  options: PgBenchOptions,
): Promise<LatencyResult> {
  // Each runtime beats about once a second, as a worker does: the observer's engine announces a runtime's latest
  // count, so one that beat twice before it looked is heard once.
  const runtimes = Math.max(1, Math.ceil(1000 / options.latencyIntervalMs));
  const taskIds = Array.from({ length: runtimes }, (_, i) => `H${i + 1}`);
  const env = { ...process.env, BATON_STORE_URL: cluster.url };
  const dir = makeTempDir('baton-bench-notify-');
  let observer: ChildProcess | undefined;
  try {
    const { plan } = await prepareWorkspace(
      dir,
      backend === 'pg' ? { kind: 'postgres', schema: 'bench_notify' } : { kind: 'file' },
      env,
      { plan: taskIds },
      false,
    );
    const engine = await Engine.open({ workspace: dir, env });
    try {
      const claims = [];
      for (const taskId of taskIds) claims.push(await engine.claimTask({ runId: plan!, taskId, leaseSeconds: 600 }));
      observer = spawn(process.execPath, [bundleScript('test/bench/children/beatObserver.ts'), dir], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env,
      });
      const heard = new Map<string, number>();
      let ready = false;
      createInterface({ input: observer.stdout! }).on('line', (line) => {
        if (line === 'ready') ready = true;
        const [runtimeId, count, at] = line.split(' ');
        if (at) heard.set(`${runtimeId}/${count}`, Number(at));
      });
      const exited = new Promise<void>((resolve) => observer!.on('exit', () => resolve()));
      await Promise.race([
        (async () => {
          while (!ready) await new Promise((r) => setTimeout(r, 20));
        })(),
        exited.then(() => {
          throw new Error('the observer process exited before it listened');
        }),
      ]);
      const committed = new Map<string, number>();
      const commitMs: number[] = [];
      const start = Date.now();
      for (let i = 0; i < options.latencyBeats; i++) {
        const wait = start + i * options.latencyIntervalMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const claim = claims[i % claims.length]!;
        const t0 = Date.now();
        const beat = await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token });
        const t1 = Date.now();
        commitMs.push(t1 - t0);
        committed.set(`${beat.id}/${beat.heartbeatCount}`, t1);
      }
      // Until the last beat of each runtime is heard (at most 60 s): the observer announces in order, so every beat it
      // will announce is heard by then (engineBench.ts, lastBeats).
      const latestKeys = lastBeats(committed.keys());
      const deadline = Date.now() + 60_000;
      while (latestKeys.some((k) => !heard.has(k)) && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 20));
      const above: number[] = [];
      for (const [key, at] of committed) {
        const h = heard.get(key);
        // An event can fire before the writer's own call returns (NOTIFY goes out at COMMIT): that is 0 late.
        if (h !== undefined) above.push(Math.max(0, h - at));
      }
      return {
        backend,
        beats: committed.size,
        heard: above.length,
        runtimes: latestKeys.length,
        latestHeard: latestKeys.filter((k) => heard.has(k)).length,
        commitMs: summarizeWithP95(commitMs),
        aboveCommitMs: summarizeWithP95(above),
      };
    } finally {
      await engine.close();
    }
  } finally {
    observer?.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}

// ── row 3: resident workers ────────────────────────────────────────────────

async function resident(cluster: PostgresCluster, options: PgBenchOptions): Promise<ResidentResult> {
  const log = options.log ?? (() => undefined);
  const perProcess = Math.ceil(options.residentWorkers / options.residentProcesses);
  if (perProcess > 256) throw new Error('at most 256 resident workers per process (one run each, maxConcurrency)');
  const env = { ...process.env, BATON_STORE_URL: cluster.url };
  const dir = makeTempDir('baton-bench-resident-');
  const children: Child[] = [];
  try {
    // One run per process: a run holds at most 256 claims at once (maxConcurrency).
    const plans: Record<string, string[]> = {};
    for (let p = 0; p < options.residentProcesses; p++)
      plans[`plan${p}`] = Array.from({ length: perProcess }, (_, i) => `R${p}x${i + 1}`);
    const runs = await prepareWorkspace(dir, { kind: 'postgres', schema: 'bench_resident' }, env, plans, false);
    const script = bundleScript('test/bench/children/pgResident.ts');
    const claimStart = Date.now();
    for (let p = 0; p < options.residentProcesses; p++)
      children.push(startChild(script, [dir, runs[`plan${p}`]!, `R${p}x`, String(perProcess)], env));
    await Promise.all(children.map((c) => expectLine(c, 'claimed')));
    const claimSeconds = (Date.now() - claimStart) / 1000;
    log(`resident: ${perProcess * options.residentProcesses} runtimes claimed in ${claimSeconds.toFixed(1)} s`);

    const connections = { baton: 0, total: 0 };
    const sampler = new pg.Client({ connectionString: cluster.url, application_name: 'bench' });
    await sampler.connect();
    let sampling = true;
    const sampled = (async () => {
      while (sampling) {
        const r = await sampler.query<{ baton: string; total: string }>(
          `SELECT count(*) FILTER (WHERE application_name = 'baton')::text AS baton, count(*)::text AS total
           FROM pg_stat_activity WHERE backend_type = 'client backend'`,
        );
        connections.baton = Math.max(connections.baton, Number(r.rows[0]!.baton));
        connections.total = Math.max(connections.total, Number(r.rows[0]!.total));
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();

    const startAt = Date.now() + 500;
    const cpuBefore = serverCpuMs(cluster);
    const spacing = 1000 / (perProcess * options.residentProcesses);
    // A store that falls behind would take ever longer to drain: what is not committed this long after the last beat
    // was due counts as not kept up with.
    const graceMs = Math.max(3000, (options.residentSeconds * 1000) / 6);
    const replies = await Promise.all(
      children.map((child, p) =>
        child.send({
          startAt,
          offsetMs: p * spacing,
          spacingMs: 1000 / perProcess,
          seconds: options.residentSeconds,
          graceMs,
        }),
      ),
    );
    // Every beat was due within residentSeconds; CPU is taken over the time from the first due to the last commit.
    const end = Math.max(...replies.map((r) => Number(r.end)));
    const serverCpu = serverCpuMs(cluster) - cpuBefore;
    sampling = false;
    await sampled;
    await sampler.end();
    const wallMs = end - startAt;
    const lags: Array<[number, number]> = replies.flatMap((r) => r.lags as Array<[number, number]>);
    const window = (from: number, to: number): { p50: number; p95: number } => {
      const values = lags.filter(([due]) => due >= from && due < to).map(([, lag]) => lag);
      return { p50: percentile(values, 50), p95: percentile(values, 95) };
    };
    const all = lags.map(([, lag]) => lag);
    const seconds = options.residentSeconds;
    return {
      workers: perProcess * options.residentProcesses,
      processes: options.residentProcesses,
      seconds,
      scheduled: perProcess * options.residentProcesses * seconds,
      committed: lags.length,
      failed: replies.reduce((n, r) => n + Number(r.failed), 0),
      uncommitted: replies.reduce((n, r) => n + Number(r.uncommitted), 0),
      graceSeconds: graceMs / 1000,
      committedPerSecond: lags.length / (wallMs / 1000),
      roundTripsPerBeat: replies.reduce((n, r) => n + Number(r.roundTrips), 0) / Math.max(1, lags.length),
      lagStart: window(0, LAG_WINDOW_SECONDS * 1000),
      lagEnd: window((seconds - LAG_WINDOW_SECONDS) * 1000, seconds * 1000),
      lagAll: { p50: percentile(all, 50), p95: percentile(all, 95), max: Math.max(...all) },
      serverCpuPercent: (serverCpu / wallMs) * 100,
      clientCpuPercent: (replies.reduce((n, r) => n + Number(r.cpuMs), 0) / wallMs) * 100,
      connections,
      claimSeconds,
    };
  } finally {
    await Promise.all(children.map((c) => c.end().catch(() => undefined)));
    rmSync(dir, { recursive: true, force: true });
  }
}

// ── the whole ──────────────────────────────────────────────────────────────

export async function runPgBench(options: PgBenchOptions): Promise<PgBenchResult> {
  const started = Date.now();
  const loadStart = loadavg()[0]!;
  const cluster = await startPostgresCluster({ durable: true });
  try {
    const server = await withClient(
      cluster,
      async (c) => (await c.query<{ server_version: string }>('SHOW server_version')).rows[0]!.server_version,
    );
    const { cells, pairedRatio, pairedBookedRatio } =
      options.processes.length > 0
        ? await throughput(cluster, options)
        : { cells: [], pairedRatio: new Map(), pairedBookedRatio: new Map() };
    const latency: LatencyResult[] = [];
    if (options.latencyBeats > 0)
      for (const backend of ['pg', 'file'] as const) {
        const l = await beatLatency(backend, cluster, options);
        latency.push(l);
        options.log?.(`notify latency (${backend}): p95 ${l.aboveCommitMs.p95} ms, ${l.heard}/${l.beats} heard`);
      }
    const residentResult = options.residentWorkers > 0 ? await resident(cluster, options) : undefined;
    const twoHosts =
      options.teamTasks > 0
        ? await runTwoHosts(
            cluster,
            {
              tasks: options.teamTasks,
              taskMs: options.teamTaskMs,
              concurrency: options.teamConcurrency,
              reps: options.teamReps,
            },
            options.log,
          )
        : undefined;
    const { log: _log, ...rest } = options;
    const result: PgBenchResult = {
      options: rest,
      server,
      load: { start: loadStart, end: loadavg()[0]! },
      throughput: cells,
      pairedRatio,
      pairedBookedRatio,
      latency,
      ...(residentResult ? { resident: residentResult } : {}),
      ...(twoHosts ? { twoHosts } : {}),
      seconds: (Date.now() - started) / 1000,
    };
    // BATON_BENCH_PG_SAVE=<file>: the figures as JSON, for `pgBench.ts --render <file>` (the section from them again).
    if (process.env.BATON_BENCH_PG_SAVE)
      writeFileSync(
        process.env.BATON_BENCH_PG_SAVE,
        JSON.stringify(
          { ...result, pairedRatio: [...result.pairedRatio], pairedBookedRatio: [...result.pairedBookedRatio] },
          null,
          1,
        ),
      );
    return result;
  } finally {
    cluster.stop();
  }
}

// ── the section ────────────────────────────────────────────────────────────

export const PG_SECTION = {
  heading: '## PostgreSQL store: claim cycles beside a bare SKIP LOCKED loop, NOTIFY latency, resident workers',
  end: '<!-- pg:end -->',
};

const holds = (ok: boolean): string => (ok ? '✓' : '✗');
const ms = (n: number): string => (Number.isFinite(n) ? n.toFixed(0) : '—');
const n0 = (n: number): string => n.toLocaleString('en-US');

/** Baton's rate at `processes` against a reference loop's: `ratio` = reference ÷ Baton (how many times slower). */
interface AgainstReference {
  processes: number;
  baton: number;
  reference: number;
  ratio: number;
  holds: boolean;
  paired?: Summary;
}

export interface PgChecks {
  bookedAt?: AgainstReference;
  bareAt?: AgainstReference;
  scaling?: { from: number; to: number; factor: number; holds: boolean };
  notify?: { p95: number; holds: boolean };
  keepsUp?: { holds: boolean; limit: number };
  twoHosts?: { share: number; holds: boolean };
}

export function evaluatePgTargets(r: PgBenchResult): PgChecks {
  const checks: PgChecks = {};
  const at = r.options.processes.includes(PG_TARGETS.bareFactorAt)
    ? PG_TARGETS.bareFactorAt
    : Math.max(...r.options.processes);
  const baton = r.throughput.find((c) => c.kind === 'pg' && c.processes === at);
  // Baton's rate as a share of a reference loop's: within 1.5× means at least 1/1.5 of it.
  const against = (kind: 'bare' | 'booked', factor: number, paired: Map<number, Summary>) => {
    const reference = r.throughput.find((c) => c.kind === kind && c.processes === at);
    if (!baton || !reference) return undefined;
    const ratio = reference.rate.median / baton.rate.median;
    return {
      processes: at,
      baton: baton.rate.median,
      reference: reference.rate.median,
      ratio,
      holds: ratio <= factor,
      ...(paired.get(at) ? { paired: paired.get(at)! } : {}),
    };
  };
  const booked = against('booked', PG_TARGETS.bookedFactor, r.pairedBookedRatio);
  if (booked) checks.bookedAt = booked;
  const bare = against('bare', PG_TARGETS.bareFactor, r.pairedRatio);
  if (bare) checks.bareAt = bare;
  const fewest = Math.min(...r.options.processes);
  const one = r.throughput.find((c) => c.kind === 'pg' && c.processes === fewest);
  if (baton && one && at > fewest) {
    const factor = baton.rate.median / one.rate.median;
    checks.scaling = { from: fewest, to: at, factor, holds: factor >= PG_TARGETS.scaling };
  }
  const pgLatency = r.latency.find((l) => l.backend === 'pg');
  if (pgLatency)
    checks.notify = {
      p95: pgLatency.aboveCommitMs.p95,
      holds: pgLatency.aboveCommitMs.p95 <= PG_TARGETS.notifyP95Ms && pgLatency.heard === pgLatency.beats,
    };
  if (r.twoHosts) {
    const share = r.twoHosts.twoHostsSummary.median / r.twoHosts.oneHostSummary.median;
    checks.twoHosts = { share, holds: share <= PG_TARGETS.twoHostsShare };
  }
  if (r.resident) {
    const limit = Math.max(
      r.resident.lagStart.p95 * PG_TARGETS.lagGrowthFactor,
      r.resident.lagStart.p95 + PG_TARGETS.lagSlackMs,
    );
    checks.keepsUp = {
      limit,
      holds: r.resident.lagEnd.p95 <= limit && r.resident.committed === r.resident.scheduled && r.resident.failed === 0,
    };
  }
  return checks;
}

export function pgSection(r: PgBenchResult): string {
  const o = r.options;
  const checks = evaluatePgTargets(r);
  const parts: string[] = [];
  parts.push(`${PG_SECTION.heading}

<!-- pg:start — generated by \`npm run bench\` (test/bench/pgBench.ts); \`npm run bench -- --only pg\` rewrites just this section. -->

A PostgreSQL ${r.server} cluster the bench starts for itself on loopback (test/support/postgresCluster.ts,
\`initdb\` into a temporary folder) with **fsync on** (\`durable: true\`; the test suites run theirs with fsync
off): a commit returns once its WAL is on the disk, as on a real server. Everything below ran in one run of
${r.seconds.toFixed(0)} s; 1-minute load average ${r.load.start.toFixed(1)} at its start (before any of its own processes) and ${r.load.end.toFixed(1)} at its end (its own
processes included), on 2 cores.
`);

  if (r.throughput.length > 0) {
    const cellOf = (kind: Kind, p: number) => r.throughput.find((c) => c.kind === kind && c.processes === p)!;
    parts.push(`### Claim → heartbeat → ingest cycles per second

${n0(o.cycles)} cycles per repetition and configuration, shared evenly among its processes, which start together;
a rate is the cycles over the time from that start to the last process's end. Median of ${o.reps} repetitions
(min–max), configurations and kinds in rotating order within each round. The reference loops' ratios are taken per
round too (Baton ÷ the loop in the same round). The loop with Baton's bookkeeping is the bare loop whose three
statements also append the event rows Baton's operations append (the attempt and the task's status at a claim, the
beat, the ingestion and both statuses at the end) and keep the result's content by its digest: one statement each,
row locks only (test/bench/children/pgCycler.ts). The last two columns: the same Baton cycles, each process claiming
from a run of its own (writes of different runs commit side by side: docs/team.md, "Concurrency").

| Processes | ${KIND_LABEL.pg} — cycles/s | ${KIND_LABEL.booked} — cycles/s (reference) | Baton ÷ it, per round | ${KIND_LABEL.bare} — cycles/s (reference) | Baton ÷ bare, per round | ${KIND_LABEL.file} — cycles/s (reference) | PostgreSQL ÷ file | ${KIND_LABEL.pgRuns} — cycles/s | it ÷ one run |
|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|
${o.processes
  .map((p) => {
    const pgCell = cellOf('pg', p);
    const ownCell = cellOf('pgRuns', p);
    const bookedCell = cellOf('booked', p);
    const bareCell = cellOf('bare', p);
    const fileCell = cellOf('file', p);
    const paired = (ratio?: Summary): string =>
      ratio ? `${ratio.median.toFixed(2)}× (${ratio.min.toFixed(2)}–${ratio.max.toFixed(2)})` : '—';
    return `| ${p} | ${fmtRate(pgCell.rate)} | ${fmtRate(bookedCell.rate)} | ${paired(r.pairedBookedRatio.get(p))} | ${fmtRate(bareCell.rate)} | ${paired(r.pairedRatio.get(p))} | ${fmtRate(fileCell.rate)} | ${(pgCell.rate.median / fileCell.rate.median).toFixed(2)}× | ${fmtRate(ownCell.rate)} | ${(ownCell.rate.median / pgCell.rate.median).toFixed(2)}× |`;
  })
  .join('\n')}

Where a cycle's time goes (per cycle, over every repetition): round trips to the server (every query a \`pg\`
client sent, counted in the worker processes), transactions (a BEGIN … COMMIT, or a statement on its own; reads
included, counted in the worker processes), server CPU (the postmaster and its backends, from \`/proc\`), the worker
processes' CPU, and the longest single cycle any process took (how long one waited its turn).

| Processes | Kind | Round trips | Transactions | Server CPU ms | Worker processes' CPU ms | Longest cycle ms |
|--:|---|--:|--:|--:|--:|--:|
${o.processes
  .flatMap((p) =>
    KINDS.map((kind) => {
      const c = cellOf(kind, p);
      return kind === 'file'
        ? `| ${p} | ${KIND_LABEL[kind]} | — | — | — | ${c.clientCpuMs.toFixed(2)} | ${ms(c.longestMs)} |`
        : `| ${p} | ${KIND_LABEL[kind]} | ${c.roundTrips.toFixed(1)} | ${c.transactions.toFixed(1)} | ${c.serverCpuMs.toFixed(2)} | ${c.clientCpuMs.toFixed(2)} | ${ms(c.longestMs)} |`;
    }),
  )
  .join('\n')}
`);
  }

  if (r.latency.length > 0) {
    parts.push(`### Heartbeat → another process's event

${n0(o.latencyBeats)} heartbeats, one every ${o.latencyIntervalMs} ms, round-robin over ${Math.ceil(1000 / o.latencyIntervalMs)} claimed runtimes (each beats about once a second), committed by the bench process
through the engine (\`engine.heartbeat\`); an observer process with its own engine following the store
(test/bench/children/beatObserver.ts, \`Engine.open({ follow: true })\`) prints when each one's
\`runtime:heartbeat\` event fires. On PostgreSQL the commit carries a \`NOTIFY\` and the observer \`LISTEN\`s
(\`store.watch\`), then reads the runtimes; on the file store it watches the store folder and reads the new
journal lines. Figure: from the writer's \`heartbeat()\` returning to the observer's event, same wall clock.

| Store | Beats heard | Commit → observer's event: p50 / p95 / max (ms) | The commit itself: p50 / p95 (ms) |
|---|--:|--:|--:|
${r.latency
  .map(
    (l) =>
      `| ${l.backend === 'pg' ? 'PostgreSQL (LISTEN/NOTIFY)' : 'file store (reference)'} | ${l.heard} of ${l.beats} | ${ms(l.aboveCommitMs.median)} / ${ms(l.aboveCommitMs.p95)} / ${ms(l.aboveCommitMs.max)} | ${l.commitMs.median.toFixed(1)} / ${l.commitMs.p95.toFixed(1)} |`,
  )
  .join('\n')}
`);
  }

  if (r.resident) {
    const s = r.resident;
    parts.push(`### ${n0(s.workers)} resident workers beating at 1 Hz

${s.processes} processes each drive ${n0(s.workers / s.processes)} runtimes (one run each: a run holds at most 256 claims),
each runtime beating once a second through the engine's heartbeat (\`engine.heartbeat\`, the operation
\`baton heartbeat\` runs), the beats spread evenly over the second, for ${s.seconds} s: ${n0(s.scheduled)} beats due.
A beat is sent when it is due whether or not the process's earlier ones have committed, so a store that falls
behind shows as lag that grows. Lag: from when a beat was due to its commit returning. Each process is one
engine with PgStore's default pool (4 connections; its writes go one at a time). Claiming the runtimes took
${s.claimSeconds.toFixed(1)} s beforehand (not part of the figures).

| What | Figure |
|---|--:|
| beats committed / due (failed; still queued ${s.graceSeconds} s after the last was due) | ${n0(s.committed)} / ${n0(s.scheduled)} (${s.failed}; ${n0(s.uncommitted)}) |
| beats committed per second (first due → last commit) / due per second | ${formatRate(s.committedPerSecond)} / ${n0(s.workers)} |
| round trips to the server per beat (its share of its batch's transaction, and of the engine's look after it) | ${s.roundTripsPerBeat.toFixed(1)} |
| lag in the first ${LAG_WINDOW_SECONDS} s: p50 / p95 | ${ms(s.lagStart.p50)} / ${ms(s.lagStart.p95)} ms |
| lag in the last ${LAG_WINDOW_SECONDS} s: p50 / p95 | ${ms(s.lagEnd.p50)} / ${ms(s.lagEnd.p95)} ms |
| lag over the whole run: p50 / p95 / max | ${ms(s.lagAll.p50)} / ${ms(s.lagAll.p95)} / ${ms(s.lagAll.max)} ms |
| server CPU (postmaster and backends) | ${s.serverCpuPercent.toFixed(0)}% of one core |
| the ${s.processes} worker processes' CPU | ${s.clientCpuPercent.toFixed(0)}% of one core |
| connections: Baton's / every client's, most at once | ${s.connections.baton} / ${s.connections.total} |

Pooling (decided in docs/team.md, "Connections and pooling"): PgStore keeps at most 4 connections per process
(\`poolSize\`), plus one that listens while the process follows the store. A process's writes go one at a time and
every process's writes queue on the store's lock, so one connection writes and the others serve reads; here the
${s.processes} processes held ${s.connections.baton} at most (${(s.connections.baton / s.processes).toFixed(1)} each: the write, and the announcement's read beside it).
`);
  }

  if (r.twoHosts) {
    const t = r.twoHosts;
    parts.push(`### Two machines on one run

One run of ${n0(t.options.tasks)} tasks, each a worker process that sleeps ${t.options.taskMs} ms and exits 0 (\`"result": "exit-code"\`),
on a shared store: driven by one \`baton start\` (machine A, \`maxConcurrency\` ${t.options.concurrency}), and again by a
\`baton start\` on A and a \`baton resume\` on machine B (another workspace, \`BATON_HOST_ID\`) that joins it as soon as
A claimed its first task, ${t.options.concurrency} slots each (test/bench/teamBench.ts). Wall time from A's start to the
last coordinator's exit; ${t.options.reps} repetition${t.options.reps === 1 ? '' : 's'}, median (min–max). Both "machines"
share this one's two cores.

| Driven by | Wall s | Tasks B ran |
|---|--:|--:|
| one machine | ${t.oneHostSummary.median.toFixed(1)} (${t.oneHostSummary.min.toFixed(1)}–${t.oneHostSummary.max.toFixed(1)}) | — |
| two machines, B joined | ${t.twoHostsSummary.median.toFixed(1)} (${t.twoHostsSummary.min.toFixed(1)}–${t.twoHostsSummary.max.toFixed(1)}) | ${t.joinedTasks.join(', ')} |
`);
  }

  const rows: string[] = [];
  const againstRow = (what: string, b: AgainstReference, factor: number, reference: string): string =>
    `| Baton on PostgreSQL within ${factor}× of the ${what}, ${b.processes} processes | ${formatRate(b.baton)} cycles/s | ${reference}: ${formatRate(b.reference)} cycles/s | ${b.ratio.toFixed(2)}× slower${b.paired ? ` (per round ${(1 / b.paired.median).toFixed(2)}×)` : ''} | ≤ ${factor}× | ${holds(b.holds)} |`;
  if (checks.bookedAt)
    rows.push(againstRow('bare loop doing its bookkeeping', checks.bookedAt, PG_TARGETS.bookedFactor, 'that loop'));
  if (checks.bareAt) rows.push(againstRow('bare SKIP LOCKED loop', checks.bareAt, PG_TARGETS.bareFactor, 'bare loop'));
  if (checks.scaling) {
    const c = checks.scaling;
    rows.push(
      `| Throughput grows with processes: ${c.to} processes ≥ ${PG_TARGETS.scaling}× the rate of ${c.from} | ${c.factor.toFixed(2)}× | — | — | ≥ ${PG_TARGETS.scaling}× | ${holds(c.holds)} |`,
    );
  }
  if (checks.twoHosts && r.twoHosts) {
    rows.push(
      `| two machines driving one run of ${n0(r.twoHosts.options.tasks)} short tasks, against one | ${r.twoHosts.twoHostsSummary.median.toFixed(1)} s | one machine: ${r.twoHosts.oneHostSummary.median.toFixed(1)} s | ${checks.twoHosts.share.toFixed(2)}× | ≤ ${PG_TARGETS.twoHostsShare}× | ${holds(checks.twoHosts.holds)} |`,
    );
  }
  if (checks.notify) {
    const file = r.latency.find((l) => l.backend === 'file');
    rows.push(
      `| heartbeat commit → observer's event (LISTEN/NOTIFY) | p95 ${ms(checks.notify.p95)} ms | file store: p95 ${file ? ms(file.aboveCommitMs.p95) : '—'} ms | — | p95 ≤ ${PG_TARGETS.notifyP95Ms} ms | ${holds(checks.notify.holds)} |`,
    );
  }
  if (checks.keepsUp && r.resident) {
    rows.push(
      `| ${n0(r.resident.workers)} resident workers at 1 Hz: lag does not grow | lag p95 ${ms(r.resident.lagEnd.p95)} ms in the last ${LAG_WINDOW_SECONDS} s | the first ${LAG_WINDOW_SECONDS} s: p95 ${ms(r.resident.lagStart.p95)} ms | — | ≤ ${ms(checks.keepsUp.limit)} ms (${PG_TARGETS.lagGrowthFactor}× the start, or +${PG_TARGETS.lagSlackMs} ms), every beat committed | ${holds(checks.keepsUp.holds)} |`,
    );
  }
  if (rows.length > 0)
    parts.push(`### Targets

| Target | Figure | Reference (same run) | Ratio | Needs | Holds |
|---|---|---|--:|---|:-:|
${rows.join('\n')}
`);
  const argued = arguePg(r, checks);
  if (argued) parts.push(argued);
  parts.push(`${PG_SECTION.end}\n`);
  return parts.join('\n');
}

function fmtRate(s: Summary): string {
  return `${formatRate(s.median)} (${formatRate(s.min)}–${formatRate(s.max)})`;
}

/** "Targets that do not hold", argued from this run's figures. */
function arguePg(r: PgBenchResult, checks: PgChecks): string | undefined {
  const out: string[] = [];
  const b = checks.bookedAt;
  const missed = [checks.bookedAt, checks.bareAt, checks.scaling].filter((c) => c && !c.holds).length;
  if (b && missed > 0) {
    const cellOf = (kind: Kind, p: number) => r.throughput.find((c) => c.kind === kind && c.processes === p);
    const fewest = Math.min(...r.options.processes);
    const one = cellOf('pg', fewest);
    const most = cellOf('pg', b.processes);
    const bookedOne = cellOf('booked', fewest);
    const bookedMost = cellOf('booked', b.processes);
    const scale = (hi?: ThroughputCell, lo?: ThroughputCell): string =>
      hi && lo ? `${(hi.rate.median / lo.rate.median).toFixed(2)}×` : '—';
    const perCycleMs = most ? 1000 / most.rate.median : Number.NaN;
    const ownMost = cellOf('pgRuns', b.processes);
    const cpuMs = (c?: ThroughputCell): number => (c ? c.serverCpuMs + c.clientCpuMs : Number.NaN);
    const cpuOf = (c?: ThroughputCell): string => (c ? cpuMs(c).toFixed(1) : '—');
    // Two cores give 2,000 ms of CPU a second.
    const ceiling = (c?: ThroughputCell): string => (c ? formatRate(2000 / cpuMs(c)) : '—');
    const fixed = (c: ThroughputCell | undefined, key: 'roundTrips' | 'transactions' | 'serverCpuMs', digits = 1) =>
      c ? c[key].toFixed(digits) : '—';
    out.push(`**The throughput targets** — ✗ (${missed} of 3): Baton ${formatRate(b.baton)} cycles/s at ${b.processes} processes, ${b.ratio.toFixed(2)}× slower than the loop doing its bookkeeping (${formatRate(b.reference)}), ${checks.bareAt ? `${checks.bareAt.ratio.toFixed(2)}× slower than the bare loop; ` : ''}from ${fewest} to ${b.processes} processes Baton's rate changes ${scale(most, one)} and that loop's ${scale(bookedMost, bookedOne)}.
Every PgStore write of a run takes that run's advisory lock (docs/team.md, "Concurrency: what a write locks"), so
the writes of processes sharing one run run one at a time, each holding the run's lock for all its round trips and
its commit's WAL flush: adding processes to one run adds no write throughput. Processes that each claim from a run of
their own write side by side: ${scale(ownMost, most)} the one-run rate at ${b.processes} processes (${ownMost ? formatRate(ownMost.rate.median) : '—'} cycles/s). The reference loop's three
single-statement transactions lock only the job row they touch (\`FOR UPDATE SKIP LOCKED\` picks a row no one
holds), and the server commits them side by side, flushing the WAL for several at once. A Baton cycle is also
${fixed(most, 'roundTrips')} round trips in ${fixed(most, 'transactions')} transactions against the loop's ${fixed(bookedMost, 'roundTrips')} in ${fixed(bookedMost, 'transactions')} (the
lease-expiry read before a claim, the run's slots and the task's dependencies checked, the attempt's token and
its runtime, the result judged against its contract and recorded), each statement a round trip of its own; its
server CPU is ${fixed(most, 'serverCpuMs', 2)} ms a cycle against ${fixed(bookedMost, 'serverCpuMs', 2)} — the engine's statements are prepared (named, planned once
per connection: issue 26), so that is execution, not planning. ${Number.isFinite(perCycleMs) ? `${perCycleMs.toFixed(1)} ms` : '—'} of wall time per cycle at ${b.processes} processes.

**Where the CPU, not the design, stops it.** A Baton cycle costs ${cpuOf(most)} ms of CPU (the server's and the worker
processes', per cycle at ${b.processes} processes), so these two cores can do at most ${ceiling(most)} cycles a second however the
writes are locked; the loop with the bookkeeping costs ${cpuOf(bookedMost)} ms (at most ${ceiling(bookedMost)}). Processes with a run of their own reach
${ownMost ? formatRate(ownMost.rate.median) : '—'} of their ${ceiling(ownMost)}: the scaling and 1.5× targets need fewer statements per cycle (the claim, the beat
and the ingestion each one or two statements, as the loop's are, and near 15 round trips), not fewer locks. Inside
one run, writes stay one at a time by decision (docs/team.md: the run's decisions — its slots, its dependents made
ready, its status, its event numbers — stay as proven as on the file store).
`);
  }
  if (checks.twoHosts && !checks.twoHosts.holds && r.twoHosts) {
    const t = r.twoHosts;
    const floor = (t.options.tasks * t.options.taskMs) / t.options.concurrency / 1000;
    out.push(`**Two machines driving one run take ≤ ${PG_TARGETS.twoHostsShare}× of one machine's time** — ✗, ${checks.twoHosts.share.toFixed(2)}×: ${t.twoHostsSummary.median.toFixed(1)} s against ${t.oneHostSummary.median.toFixed(1)} s, with machine B running ${t.joinedTasks.join(', ')} of the ${n0(t.options.tasks)} tasks.
The work did spread: B joined and ran about half the tasks, each once. What did not grow is the machine: both "machines"
are processes on this one's two cores, and one machine alone is already bound by them — its ${n0(t.options.tasks)} tasks sleep
${floor.toFixed(0)} s in all at ${t.options.concurrency} at once, and took ${t.oneHostSummary.median.toFixed(0)} s: each task is a worker process in a PID namespace of its own, its
lease watchdog (another Node process), and its claim, start and result in the store, which the two cores serve one
after the other. A second coordinator on the same cores adds its own passes and its writes to the run's one writer at
a time, so here it costs more than it brings. Two real machines bring their own cores for their workers and watchdogs;
one run's writes stay one at a time (the cycles row above), so a run whose tasks are this short is bound by the
store, and one whose tasks take minutes — agents' — by its workers, which is what the second machine adds.
`);
  }
  if (checks.notify && !checks.notify.holds)
    out.push(
      `**Heartbeat → observer, p95 ≤ ${PG_TARGETS.notifyP95Ms} ms** — ✗, p95 ${ms(checks.notify.p95)} ms. See the load average above: the observer's wake-up waits for a core.`,
    );
  if (checks.keepsUp && !checks.keepsUp.holds && r.resident) {
    const s = r.resident;
    out.push(`**${n0(s.workers)} resident workers at 1 Hz: the store keeps up** — ✗: ${n0(s.committed)} of ${n0(s.scheduled)} beats committed,
${formatRate(s.committedPerSecond)} a second against ${n0(s.workers)} due (${n0(s.uncommitted)} still queued ${s.graceSeconds} s after the last was due); lag p95
${ms(s.lagStart.p95)} ms in the first ${LAG_WINDOW_SECONDS} s, ${ms(s.lagEnd.p95)} ms in the last. The machine was the limit: the server used
${s.serverCpuPercent.toFixed(0)}% of a core and the ${s.processes} processes ${s.clientCpuPercent.toFixed(0)}%, together ${(s.serverCpuPercent + s.clientCpuPercent).toFixed(0)}% of the 200% two cores give.
Each beat costs ${s.roundTripsPerBeat.toFixed(1)} round trips: the beats a process sent while its last commit ran go together in its next
transaction (usecases/heartbeatBatch.ts: BEGIN with the run's lock, one read of their runtimes, one update each,
NOTIFY with COMMIT), and the engine's look after the commit reads only the log's position while nothing listens.
A batch commits per run, under that run's lock: batches of processes whose workers share a run wait for each
other.

What it would take: the batch's leases renewed in one statement instead of one update each, and runs spread over
the processes, so that the processes' batches do not wait for each other. Until then, plan on the rate measured
here (per database, on this machine) for resident workers that beat through their own heartbeat calls.
`);
  }
  return out.length > 0 ? `### Targets that do not hold, argued\n\n${out.join('\n')}` : undefined;
}

// ── command line ───────────────────────────────────────────────────────────

async function main(): Promise<void> {
  const render = process.argv.indexOf('--render');
  if (render >= 0) {
    const saved = JSON.parse(readFileSync(process.argv[render + 1]!, 'utf8')) as PgBenchResult & {
      pairedRatio: Array<[number, Summary]>;
      pairedBookedRatio?: Array<[number, Summary]>;
    };
    process.stdout.write(
      pgSection({
        ...saved,
        pairedRatio: new Map(saved.pairedRatio),
        pairedBookedRatio: new Map(saved.pairedBookedRatio ?? []),
      }),
    );
    return;
  }
  const quick = process.argv.includes('--quick');
  const result = await runPgBench({
    ...(quick ? QUICK_PG : FULL_PG),
    log: (l) => process.stderr.write(`[bench] ${l}\n`),
  });
  process.stdout.write(pgSection(result));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
