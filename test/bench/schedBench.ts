import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Engine, storeDirOf, type Task } from '../../src/engine';
import type { SqlValue, StorePort, StoreReader, StoreTx } from '../../src/engine/store/port';
import { buildPrompt } from '../../src/engine/domain/prompt';
import { nowMs, summarize, type Summary } from './stats';
import { timeFlushes } from './storeBench';

/**
 * Scheduling overhead of Baton's coordinator (DESIGN §4): N trivial tasks, each a real
 * process that writes a valid result artifact, driven by `engine.coordinate()` →
 * `coordinator.run()` at a given concurrency, next to a bare promise pool that starts the
 * same processes with the same spawn primitive (execa, the options `spawnWorker` uses) at
 * the same concurrency: the spawn limit. Nothing here asserts: it measures.
 */

/**
 * The trivial workers: a bash script that starts no other process (~2 ms), and a Node script (~60 ms, mostly Node's own
 * start).
 */
export type SchedWorkerKind = 'shell' | 'node';
export const SCHED_WORKERS: Record<SchedWorkerKind, { command: string; script: string; label: string }> = {
  shell: { command: 'bash', script: resolve(__dirname, 'fixtures/schedWorker.sh'), label: 'bash worker' },
  node: { command: process.execPath, script: resolve(__dirname, 'fixtures/schedWorker.js'), label: 'Node worker' },
};
const PLAN_FILE = 'bench.plan.md';
const AGENT = 'coder';
const WORKER_ID = 'bench';

export interface SchedBenchOptions {
  /** Independent tasks per run (one process each) with the bash worker; 0 skips these rows. */
  tasks: number;
  /** The same with the Node worker; 0 skips these rows. */
  nodeTasks: number;
  /** Concurrency levels (maxConcurrency of the run, slots of the pool). */
  concurrency: number[];
  /** Repetitions of every configuration (the figure is their median). */
  reps: number;
  /** Parent of the temporary folders (default: os.tmpdir()). */
  tmpRoot?: string;
  /** Which sides to run (default both; the profiler runs Baton alone). */
  sides?: Array<'baton' | 'pool'>;
  log?: (line: string) => void;
}

/** One task's timeline, wall-clock ms (Date.now() scale, in this process and in the worker). */
export interface TaskTiming {
  taskId: string;
  /**
   * When the task became ready: its `task:status` → ready event, or the coordinator's start for a task ready from the
   * run's start (pool: the pool's start).
   */
  readyAt: number;
  /** Baton: the `delegation:claimed` event. Pool: just before the spawn call. */
  dispatchedAt: number;
  /** The worker's `performance.timeOrigin`: its Node process starting, a few ms after exec. */
  processStart: number;
  /** The worker's first line of script (Node has booted). */
  scriptStart: number;
  /** The worker's last moment (artifact written, about to exit). */
  done: number;
}

/** Medians and 95th percentiles over the tasks of one repetition, ms. */
export interface LatencyFigures {
  /** Task ready → process start. With every task ready at once this is mostly waiting for a slot. */
  readyToStart: { median: number; p95: number };
  /**
   * Dispatch latency: the later of "task ready" and "a slot came free" (the end of the worker whose slot it takes) →
   * process start.
   */
  eligibleToStart: { median: number; p95: number };
  /** Eligible → claimed (Baton) / spawn call (pool): noticing the exit, ingesting, deciding. */
  eligibleToDispatch: { median: number; p95: number };
  /** Claimed (Baton) / spawn call (pool) → process start: prompt file, bookkeeping, spawn, exec. */
  dispatchToStart: { median: number; p95: number };
}

export interface SchedRep {
  wallMs: number;
  latency: LatencyFigures;
  /** CPU of this (the coordinating) process during the run, ms per task. */
  parentCpuMsPerTask: number;
  /** CPU of the worker processes (reaped children, from /proc/self/stat), ms per task; NaN off Linux. */
  childCpuMsPerTask: number;
  /** Baton only: durable store commits (journal lines) per task. */
  commitsPerTask?: number;
  /** Baton only: Engine.open + runForPlan of the N-task plan, ms (not in wallMs). */
  setupMs?: number;
  /** Baton only: what the coordinator asked of the store, per task. */
  store?: StoreUse;
}

/** The engine's store calls during a run, per task (the bench wraps the engine's store instance; src is untouched). */
export interface StoreUse {
  /** `read` calls. */
  reads: number;
  /**
   * `transact` calls (read-only ones write no journal line), and ms inside them (lock, catch-up, statements, journal
   * append, fdatasync).
   */
  transactions: number;
  transactMs: number;
  /** ms inside fdatasync/fsync calls. */
  flushMs: number;
  /** ms inside get/all statements (running the SQL and turning rows into objects), in reads and transactions. */
  statementMs: number;
  /** Rows returned by get/all, in reads and transactions. */
  rows: number;
  /** Per statement (whitespace collapsed): calls, rows and ms, per task. */
  statements: Array<{ sql: string; calls: number; rows: number; ms: number }>;
}

export interface SchedConfigResult {
  worker: SchedWorkerKind;
  tasks: number;
  concurrency: number;
  baton: SchedRep[];
  pool: SchedRep[];
}

export interface SchedBenchResult {
  options: Omit<SchedBenchOptions, 'log'>;
  configs: SchedConfigResult[];
  durationMs: number;
  /** The 1-minute load average at the start of every repetition (others' work on the machine shows here). */
  loadAverages: number[];
}

export async function runSchedBench(options: SchedBenchOptions): Promise<SchedBenchResult> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const root = mkdtempSync(join(options.tmpRoot ?? tmpdir(), 'baton-sched-'));
  const configs: SchedConfigResult[] = [];
  for (const [worker, tasks] of [
    ['shell', options.tasks],
    ['node', options.nodeTasks],
  ] as const) {
    if (tasks > 0)
      for (const c of options.concurrency) configs.push({ worker, tasks, concurrency: c, baton: [], pool: [] });
  }
  if (configs.some((c) => c.worker === 'shell')) checkBash();
  const loadAverages: number[] = [];
  try {
    // Interleaved: every round runs every configuration, concurrencies in rotating order and
    // Baton and the pool alternating which goes first, so drift hits both alike.
    for (let rep = 0; rep < options.reps; rep++) {
      for (let j = 0; j < configs.length; j++) {
        const config = configs[(rep + j) % configs.length]!;
        const { worker, tasks, concurrency: c } = config;
        const order: Array<'baton' | 'pool'> = (rep + j) % 2 === 0 ? ['baton', 'pool'] : ['pool', 'baton'];
        for (const which of order.filter((side) => !options.sides || options.sides.includes(side))) {
          loadAverages.push(loadavg()[0]!);
          const sample =
            which === 'baton' ? await batonRep(root, worker, tasks, c) : await poolRep(root, worker, tasks, c);
          config[which].push(sample);
          log(
            `sched rep ${rep + 1}/${options.reps} ${worker} ×${tasks} c=${c} ${which === 'baton' ? 'Baton' : 'pool '}: ${(sample.wallMs / 1000).toFixed(2)} s, ` +
              `dispatch ${sample.latency.eligibleToStart.median.toFixed(1)} ms median / ${sample.latency.eligibleToStart.p95.toFixed(1)} ms p95` +
              (sample.commitsPerTask !== undefined ? `, ${sample.commitsPerTask.toFixed(2)} commits/task` : ''),
          );
        }
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const { log: _log, ...plain } = options;
  return { options: plain, configs, durationMs: Date.now() - started, loadAverages };
}

// ── Baton ──────────────────────────────────────────────────────────────────

export function schedPlanText(taskIds: readonly string[]): string {
  return [
    '# Scheduling benchmark',
    '',
    ...taskIds.flatMap((id) => [
      '```baton-task',
      `id: ${id}`,
      `title: Trivial task ${id}`,
      `agent: ${AGENT}`,
      '```',
      `Do ${id}.`,
      '',
    ]),
  ].join('\n');
}

export function schedConfigText(worker: SchedWorkerKind): string {
  const { command, script } = SCHED_WORKERS[worker];
  return JSON.stringify(
    {
      defaultWorker: WORKER_ID,
      workers: { [WORKER_ID]: { type: 'process', command, args: [script, '{taskId}'], promptOnStdin: true } },
      retryBackoffSeconds: 0,
    },
    null,
    2,
  );
}

const taskIdsFor = (n: number): string[] =>
  Array.from({ length: n }, (_, i) => `T${String(i + 1).padStart(String(n).length, '0')}`);

async function batonRep(root: string, worker: SchedWorkerKind, tasks: number, concurrency: number): Promise<SchedRep> {
  const workspace = mkdtempSync(join(root, `baton-${worker}-c${concurrency}-`));
  mkdirSync(join(workspace, '.baton'), { recursive: true });
  writeFileSync(join(workspace, '.baton', 'config.json'), schedConfigText(worker));
  const ids = taskIdsFor(tasks);
  writeFileSync(join(workspace, PLAN_FILE), schedPlanText(ids));
  const setupStart = Date.now();
  // follow: true, as `baton start` and the extension open it.
  const engine = await Engine.open({ workspace, follow: true });
  try {
    const { run } = await engine.runForPlan(PLAN_FILE);
    const setupMs = Date.now() - setupStart;
    const storeDir = storeDirOf(workspace);
    const seqBefore = journalSeq(storeDir);
    const meter = meterStore(engine);
    const cpuBefore = process.cpuUsage();
    const childBefore = childCpuMs();
    const t0 = Date.now();
    let outcome;
    try {
      const taken = await engine.coordinate({ runId: run.id, maxConcurrency: concurrency });
      if (!('coordinator' in taken)) throw new Error(`the bench could not take the coordinator lease: ${taken.why}`);
      outcome = await taken.coordinator.run();
    } finally {
      meter.stop();
    }
    const wallMs = Date.now() - t0;
    const cpu = process.cpuUsage(cpuBefore);
    const childMs = childCpuMs() - childBefore;
    const commits = journalSeq(storeDir) - seqBefore;
    if (outcome.kind !== 'finished' || outcome.status !== 'completed')
      throw new Error(`the bench run did not complete: ${JSON.stringify(outcome)}`);

    const events = await engine.listEvents(run.id, 0, 1_000_000);
    const acquired = events.find((e) => e.type === 'coordinator:acquired')?.at ?? t0;
    const ready = new Map<string, number>();
    const claimed = new Map<string, { at: number; delegationId: string }>();
    for (const e of events) {
      const data = e.data as { taskId?: string; to?: string; delegationId?: string };
      if (e.type === 'task:status' && data.to === 'ready' && data.taskId) ready.set(data.taskId, e.at);
      if (e.type === 'delegation:claimed' && data.taskId && data.delegationId && !claimed.has(data.taskId))
        claimed.set(data.taskId, { at: e.at, delegationId: data.delegationId });
    }
    const artifacts = join(workspace, '.baton', 'runs', run.id, 'artifacts');
    const timings = ids.map((id): TaskTiming => {
      const claim = claimed.get(id);
      if (!claim) throw new Error(`no delegation:claimed event for ${id}`);
      const times = readTimes(join(artifacts, `${claim.delegationId}.md`));
      return { taskId: id, readyAt: Math.max(ready.get(id) ?? acquired, acquired), dispatchedAt: claim.at, ...times };
    });
    return {
      wallMs,
      latency: latencyFigures(timings, concurrency, acquired),
      parentCpuMsPerTask: (cpu.user + cpu.system) / 1000 / tasks,
      childCpuMsPerTask: childMs / tasks,
      commitsPerTask: commits / tasks,
      setupMs,
      store: meter.perTask(tasks),
    };
  } finally {
    await engine.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

// ── the bare pool ──────────────────────────────────────────────────────────

async function poolRep(root: string, worker: SchedWorkerKind, tasks: number, concurrency: number): Promise<SchedRep> {
  const { execa } = await import('execa');
  const { command, script } = SCHED_WORKERS[worker];
  const workspace = mkdtempSync(join(root, `pool-${worker}-c${concurrency}-`));
  const artifacts = join(workspace, 'artifacts');
  const logs = join(workspace, 'logs');
  mkdirSync(artifacts, { recursive: true });
  mkdirSync(logs, { recursive: true });
  const ids = taskIdsFor(tasks);
  const dispatched = new Map<string, number>();
  try {
    const cpuBefore = process.cpuUsage();
    const childBefore = childCpuMs();
    const t0 = Date.now();
    let next = 0;
    const slot = async (): Promise<void> => {
      while (next < ids.length) {
        const taskId = ids[next++]!;
        const delegationId = `D-${taskId}-${AGENT}-001`;
        const artifactPath = join(artifacts, `${delegationId}.md`);
        // The same prompt Baton writes, on stdin.
        const prompt = buildPrompt({
          task: poolTask(taskId),
          delegationId,
          agent: AGENT,
          artifactPath: `artifacts/${delegationId}.md`,
          dependencies: [],
        });
        dispatched.set(taskId, Date.now());
        // spawnWorker's primitive and options: execa, argv, own group and session, stdout and stderr to a log file
        // descriptor.
        const log = openSync(join(logs, `${delegationId}.log`), 'a');
        let subprocess;
        try {
          subprocess = execa(command, [script, taskId], {
            cwd: workspace,
            env: {
              BATON_RUN_ID: 'R-pool',
              BATON_DELEGATION_ID: delegationId,
              BATON_RUNTIME_ID: `RT-${taskId}`,
              BATON_RUNTIME_TOKEN: 'x'.repeat(43),
              BATON_ARTIFACT_PATH: artifactPath,
              BATON_WORKSPACE: workspace,
            },
            extendEnv: true,
            detached: true,
            cleanup: false,
            reject: false,
            stdout: log as never,
            stderr: log as never,
            input: prompt,
          });
        } finally {
          closeSync(log);
        }
        const result = await subprocess;
        if (result.exitCode !== 0)
          throw new Error(`pool worker ${taskId} exited with ${result.exitCode ?? result.signal}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, slot));
    const wallMs = Date.now() - t0;
    const cpu = process.cpuUsage(cpuBefore);
    const childMs = childCpuMs() - childBefore;
    const timings = ids.map((id): TaskTiming => ({
      taskId: id,
      readyAt: t0,
      dispatchedAt: dispatched.get(id)!,
      ...readTimes(join(artifacts, `D-${id}-${AGENT}-001.md`)),
    }));
    return {
      wallMs,
      latency: latencyFigures(timings, concurrency, t0),
      parentCpuMsPerTask: (cpu.user + cpu.system) / 1000 / tasks,
      childCpuMsPerTask: childMs / tasks,
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** The bash worker needs $EPOCHREALTIME (bash 5). */
function checkBash(): void {
  let value = '';
  try {
    value = execFileSync('bash', ['-c', 'printf %s "$EPOCHREALTIME"'], { encoding: 'utf8' });
  } catch {
    // no bash
  }
  if (!/^\d+[.,]\d+$/.test(value))
    throw new Error(
      'the scheduling rows need bash 5 ($EPOCHREALTIME) on PATH; skip them with BATON_BENCH_SCHED_TASKS=0',
    );
}

function poolTask(id: string): Task {
  return {
    runId: 'R-pool',
    id,
    title: `Trivial task ${id}`,
    agent: AGENT,
    depends: [],
    risk: [],
    files: [],
    verify: [],
    instructions: `Do ${id}.`,
    line: 1,
    status: 'ready',
  };
}

// ── measuring ──────────────────────────────────────────────────────────────

type Reader = Pick<StoreTx, 'get' | 'all'>;

/**
 * Counts and times what the coordinator asks of the store: wraps `read` and `transact` of
 * the engine's store instance (the coordinator gets the same object) and the get/all of
 * the reader each hands out, plus every fdatasync/fsync (through the node:fs module object,
 * as storeBench does). Bench-only instrumentation; a few µs per call.
 */
function meterStore(engine: Engine): { stop(): void; perTask(tasks: number): StoreUse } {
  const store = (engine as unknown as { store: StorePort }).store;
  const original = { read: store.read, transact: store.transact };
  const use = { reads: 0, transactions: 0, transactMs: 0, flushMs: 0, statementMs: 0, rows: 0 };
  const statements = new Map<string, { calls: number; rows: number; ms: number }>();
  const keys = new Map<string, string>();
  const wrap = <R extends Reader>(r: R): R => {
    const timed = (kind: 'get' | 'all') =>
      ((sql: string, params?: readonly SqlValue[]) => {
        const t0 = nowMs();
        const pending = (r[kind] as (sql: string, params?: readonly SqlValue[]) => Promise<unknown>)(sql, params);
        const ms = nowMs() - t0; // get/all do their work before they first await
        let key = keys.get(sql);
        if (key === undefined) keys.set(sql, (key = sql.replace(/\s+/g, ' ').trim()));
        const entry = statements.get(key) ?? { calls: 0, rows: 0, ms: 0 };
        statements.set(key, entry);
        entry.calls++;
        entry.ms += ms;
        use.statementMs += ms;
        return pending.then((result) => {
          const n = Array.isArray(result) ? result.length : result === undefined ? 0 : 1;
          entry.rows += n;
          use.rows += n;
          return result;
        });
      }) as R['get'];
    return Object.assign(Object.create(r) as R, { get: timed('get'), all: timed('all') as unknown as R['all'] });
  };
  store.read = <T>(work: (reader: StoreReader) => Promise<T>): Promise<T> => {
    use.reads++;
    return original.read.call(store, (reader: StoreReader) => work(wrap(reader))) as Promise<T>;
  };
  store.transact = async <T>(work: (tx: StoreTx) => Promise<T>): Promise<T> => {
    const t0 = nowMs();
    try {
      return (await original.transact.call(store, (tx: StoreTx) =>
        work(Object.assign(wrap(tx), { run: tx.run.bind(tx) })),
      )) as T;
    } finally {
      use.transactions++;
      use.transactMs += nowMs() - t0;
    }
  };
  const flushes = timeFlushes();
  return {
    stop(): void {
      store.read = original.read;
      store.transact = original.transact;
      flushes.stop();
      use.flushMs = flushes.ms;
    },
    perTask(tasks: number): StoreUse {
      return {
        reads: use.reads / tasks,
        statementMs: use.statementMs / tasks,
        transactions: use.transactions / tasks,
        transactMs: use.transactMs / tasks,
        flushMs: use.flushMs / tasks,
        rows: use.rows / tasks,
        statements: [...statements].map(([sql, e]) => ({
          sql,
          calls: e.calls / tasks,
          rows: e.rows / tasks,
          ms: e.ms / tasks,
        })),
      };
    },
  };
}

function readTimes(artifactPath: string): Pick<TaskTiming, 'processStart' | 'scriptStart' | 'done'> {
  const text = readFileSync(artifactPath, 'utf8');
  const field = (name: string): number => {
    const match = new RegExp(`^${name}: ([0-9.]+)$`, 'm').exec(text);
    if (!match) throw new Error(`${artifactPath} has no ${name} line`);
    return Number(match[1]);
  };
  return { processStart: field('process-start'), scriptStart: field('script-start'), done: field('done') };
}

/**
 * With `concurrency` slots, the k-th process to start (k ≥ concurrency) took the slot freed
 * by the (k − concurrency)-th worker to finish: it could have started at the later of that
 * moment and its task becoming ready. The first `concurrency` could start at `origin`.
 */
export function latencyFigures(timings: readonly TaskTiming[], concurrency: number, origin: number): LatencyFigures {
  const byStart = [...timings].sort((a, b) => a.processStart - b.processStart);
  const ends = timings.map((t) => t.done).sort((a, b) => a - b);
  const eligible = byStart.map((t, k) => Math.max(t.readyAt, k >= concurrency ? ends[k - concurrency]! : origin));
  const figures = (values: number[]): { median: number; p95: number } => ({
    median: percentile(values, 50),
    p95: percentile(values, 95),
  });
  return {
    readyToStart: figures(byStart.map((t) => t.processStart - t.readyAt)),
    eligibleToStart: figures(byStart.map((t, k) => t.processStart - eligible[k]!)),
    eligibleToDispatch: figures(byStart.map((t, k) => t.dispatchedAt - eligible[k]!)),
    dispatchToStart: figures(byStart.map((t) => t.processStart - t.dispatchedAt)),
  };
}

/** Nearest-rank percentile. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** CPU time of this process's reaped children (utime + stime of waited-for children), ms; NaN off Linux. */
function childCpuMs(): number {
  try {
    const text = readFileSync('/proc/self/stat', 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    // Fields 16 (cutime) and 17 (cstime), in clock ticks (USER_HZ, 100 on Linux).
    return ((Number(fields[13]) + Number(fields[14])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
}

/** The sequence number of the last committed journal line (journal lines: `<16 hex> {"q": seq, …}`). */
function journalSeq(storeDir: string): number {
  const segments = readdirSync(storeDir)
    .map((name) => /^journal-(\d+)\.log$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(b[1]) - Number(a[1]));
  const newest = segments[0];
  if (!newest) return 0;
  const lines = readFileSync(join(storeDir, newest[0]), 'utf8')
    .split('\n')
    .filter((l) => l.length > 0);
  const last = lines[lines.length - 1];
  if (!last) return Number(newest[1]) - 1;
  return (JSON.parse(last.slice(last.indexOf(' ') + 1)) as { q: number }).q;
}

// ── summaries for the report ───────────────────────────────────────────────

export type LatencyKey = keyof LatencyFigures;

/** Median (min–max) over repetitions of one per-repetition figure. */
export function acrossReps(reps: readonly SchedRep[], pick: (r: SchedRep) => number): Summary {
  return summarize(reps.map(pick).filter((v) => Number.isFinite(v)));
}
