import { mkdirSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Engine, storeDirOf, type Task } from '../../src/engine';
import { buildPrompt } from '../../src/engine/workers/prompt';
import { summarize, type Summary } from './stats';

/**
 * Scheduling overhead of Baton's coordinator (DESIGN §4): N trivial tasks, each a real
 * process that writes a valid result artifact, driven by `engine.coordinate()` →
 * `coordinator.run()` at a given concurrency, next to a bare promise pool that starts the
 * same processes with the same spawn primitive (execa, the options `spawnWorker` uses) at
 * the same concurrency: the spawn limit. Nothing here asserts: it measures.
 */

export const SCHED_WORKER = resolve(__dirname, 'fixtures/schedWorker.js');
const PLAN_FILE = 'bench.plan.md';
const AGENT = 'coder';
const WORKER_ID = 'bench';

export interface SchedBenchOptions {
  /** Independent tasks per run (one process each). */
  tasks: number;
  /** Concurrency levels (maxConcurrency of the run, slots of the pool). */
  concurrency: number[];
  /** Repetitions of every configuration (the figure is their median). */
  reps: number;
  /** Parent of the temporary folders (default: os.tmpdir()). */
  tmpRoot?: string;
  log?: (line: string) => void;
}

/** One task's timeline, wall-clock ms (Date.now() scale, in this process and in the worker). */
export interface TaskTiming {
  taskId: string;
  /** When the task became ready: its `task:status` → ready event, or the coordinator's start for a task ready from the run's start (pool: the pool's start). */
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
  /** Dispatch latency: the later of "task ready" and "a slot came free" (the end of the worker whose slot it takes) → process start. */
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
}

export interface SchedConfigResult {
  concurrency: number;
  baton: SchedRep[];
  pool: SchedRep[];
}

export interface SchedBenchResult {
  options: Omit<SchedBenchOptions, 'log'>;
  configs: SchedConfigResult[];
  durationMs: number;
}

export async function runSchedBench(options: SchedBenchOptions): Promise<SchedBenchResult> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const root = mkdtempSync(join(options.tmpRoot ?? tmpdir(), 'baton-sched-'));
  const configs: SchedConfigResult[] = options.concurrency.map((c) => ({ concurrency: c, baton: [], pool: [] }));
  try {
    // Interleaved: every round runs every configuration, concurrencies in rotating order and
    // Baton and the pool alternating which goes first, so drift hits both alike.
    for (let rep = 0; rep < options.reps; rep++) {
      for (let j = 0; j < configs.length; j++) {
        const config = configs[(rep + j) % configs.length]!;
        const c = config.concurrency;
        const order: Array<'baton' | 'pool'> = (rep + j) % 2 === 0 ? ['baton', 'pool'] : ['pool', 'baton'];
        for (const which of order) {
          const sample = which === 'baton' ? await batonRep(root, options.tasks, c) : await poolRep(root, options.tasks, c);
          config[which].push(sample);
          log(
            `sched rep ${rep + 1}/${options.reps} c=${c} ${which === 'baton' ? 'Baton' : 'pool '}: ${(sample.wallMs / 1000).toFixed(2)} s, ` +
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
  return { options: plain, configs, durationMs: Date.now() - started };
}

// ── Baton ──────────────────────────────────────────────────────────────────

export function schedPlanText(taskIds: readonly string[]): string {
  return [
    '# Scheduling benchmark',
    '',
    ...taskIds.flatMap((id) => ['```baton-task', `id: ${id}`, `title: Trivial task ${id}`, `agent: ${AGENT}`, '```', `Do ${id}.`, '']),
  ].join('\n');
}

export function schedConfigText(): string {
  return JSON.stringify(
    {
      defaultWorker: WORKER_ID,
      workers: { [WORKER_ID]: { type: 'process', command: process.execPath, args: [SCHED_WORKER, '{taskId}'], promptOnStdin: true } },
      retryBackoffSeconds: 0,
    },
    null,
    2,
  );
}

const taskIdsFor = (n: number): string[] => Array.from({ length: n }, (_, i) => `T${String(i + 1).padStart(String(n).length, '0')}`);

async function batonRep(root: string, tasks: number, concurrency: number): Promise<SchedRep> {
  const workspace = mkdtempSync(join(root, `baton-c${concurrency}-`));
  mkdirSync(join(workspace, '.baton'), { recursive: true });
  writeFileSync(join(workspace, '.baton', 'config.json'), schedConfigText());
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
    const cpuBefore = process.cpuUsage();
    const childBefore = childCpuMs();
    const t0 = Date.now();
    const taken = await engine.coordinate({ runId: run.id, maxConcurrency: concurrency });
    if (!('coordinator' in taken)) throw new Error(`the bench could not take the coordinator lease: ${taken.why}`);
    const outcome = await taken.coordinator.run();
    const wallMs = Date.now() - t0;
    const cpu = process.cpuUsage(cpuBefore);
    const childMs = childCpuMs() - childBefore;
    const commits = journalSeq(storeDir) - seqBefore;
    if (outcome.kind !== 'finished' || outcome.status !== 'completed') throw new Error(`the bench run did not complete: ${JSON.stringify(outcome)}`);

    const events = await engine.listEvents(run.id, 0, 1_000_000);
    const acquired = events.find((e) => e.type === 'coordinator:acquired')?.at ?? t0;
    const ready = new Map<string, number>();
    const claimed = new Map<string, { at: number; delegationId: string }>();
    for (const e of events) {
      const data = e.data as { taskId?: string; to?: string; delegationId?: string };
      if (e.type === 'task:status' && data.to === 'ready' && data.taskId) ready.set(data.taskId, e.at);
      if (e.type === 'delegation:claimed' && data.taskId && data.delegationId && !claimed.has(data.taskId)) claimed.set(data.taskId, { at: e.at, delegationId: data.delegationId });
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
    };
  } finally {
    await engine.close();
    rmSync(workspace, { recursive: true, force: true });
  }
}

// ── the bare pool ──────────────────────────────────────────────────────────

async function poolRep(root: string, tasks: number, concurrency: number): Promise<SchedRep> {
  const { execa } = await import('execa');
  const workspace = mkdtempSync(join(root, `pool-c${concurrency}-`));
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
        const prompt = buildPrompt({ task: poolTask(taskId), delegationId, agent: AGENT, artifactPath: `artifacts/${delegationId}.md`, dependencies: [] });
        dispatched.set(taskId, Date.now());
        // spawnWorker's primitive and options: execa, argv, own group and session, stdout and stderr to a log file descriptor.
        const log = openSync(join(logs, `${delegationId}.log`), 'a');
        let subprocess;
        try {
          subprocess = execa(process.execPath, [SCHED_WORKER, taskId], {
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
        if (result.exitCode !== 0) throw new Error(`pool worker ${taskId} exited with ${result.exitCode ?? result.signal}`);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, slot));
    const wallMs = Date.now() - t0;
    const cpu = process.cpuUsage(cpuBefore);
    const childMs = childCpuMs() - childBefore;
    const timings = ids.map((id): TaskTiming => ({ taskId: id, readyAt: t0, dispatchedAt: dispatched.get(id)!, ...readTimes(join(artifacts, `D-${id}-${AGENT}-001.md`)) }));
    return { wallMs, latency: latencyFigures(timings, concurrency, t0), parentCpuMsPerTask: (cpu.user + cpu.system) / 1000 / tasks, childCpuMsPerTask: childMs / tasks };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

function poolTask(id: string): Task {
  return { runId: 'R-pool', id, title: `Trivial task ${id}`, agent: AGENT, depends: [], risk: [], files: [], verify: [], instructions: `Do ${id}.`, line: 1, status: 'ready' };
}

// ── measuring ──────────────────────────────────────────────────────────────

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
  const figures = (values: number[]): { median: number; p95: number } => ({ median: percentile(values, 50), p95: percentile(values, 95) });
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
  const lines = readFileSync(join(storeDir, newest[0]), 'utf8').split('\n').filter((l) => l.length > 0);
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
