import { agentStreamSection, runAgentStreamBench, type AgentStreamBenchResult } from './agentStreamBench';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { evaluateTargets, renderMarkdown, resultsTable, targetSummary, type TargetCheck } from './report';
import { runSchedBench, type SchedBenchResult } from './schedBench';
import { runStoreBench, type SeedHistory, type StoreBenchOptions, type StoreBenchResult } from './storeBench';
import { loadBetterSqlite } from './betterSqlite';
import { dashboardSection, runDashboardBench, type DashboardBenchResult } from './dashboardBench';
import { engineSection, runEngineBench, type EngineBenchResult } from './engineBench';
import { runVisibleBench, visibleSection } from './visibleBench';
import { activationSection, runActivationBench } from './activationBench';
import { existsSync, readFileSync } from 'node:fs';
import {
  INTEGRATION_SECTION,
  integrationSection,
  runIntegrationBench,
  type IntegrationBenchResult,
} from './integrationBench';
import { evaluatePgTargets, FULL_PG, PG_SECTION, pgSection, QUICK_PG, runPgBench, type PgBenchResult } from './pgBench';

/**
 * `npm run bench`: measures durable commits per second of the Baton store and the
 * coordinator's scheduling overhead, and rewrites docs/benchmarks.md. A benchmark, not a
 * test: nothing here fails the run when a target does not hold; it says so.
 *
 *   --quick          smoke run (tiny sizes, few cycles); prints, writes nothing unless --out
 *   --out <file>     where to write the markdown (default docs/benchmarks.md)
 *   --no-write       print only
 *   BATON_BENCH_SIZES=1000,10000   BATON_BENCH_REPS=15   BATON_BENCH_CYCLES=200
 *   BATON_BENCH_HISTORY=minimal|full   BATON_BENCH_TMP=/some/dir
 *   BATON_BENCH_SCHED_TASKS=500   BATON_BENCH_SCHED_NODE_TASKS=100   (0 skips those rows)
 *   BATON_BENCH_SCHED_CONCURRENCY=1,4,8   BATON_BENCH_SCHED_REPS=3
 *   BATON_BENCH_DASHBOARD_TASKS=10000 (0 skips the dashboard rows)
 *   BATON_BENCH_ENGINE_RUNTIMES=200 (0 skips the engine rows: heartbeat latency, store open, bundle size)
 *   BATON_BENCH_AGENTS=1,4 (agents at once in the agent-stream rows; 0 skips them)
 *   BATON_BENCH_INTEGRATION_TASKS=50 (0 skips the merge-queue row)   BATON_BENCH_INTEGRATION_BATCHES=1,8
 *   BATON_BENCH_INTEGRATION_REPS=3
 *   --only dashboard|engine|agents|integration|visible|activation|pg  runs only those rows and rewrites only their
 *     section of the file
 *   BATON_BENCH_PG=0 skips the PostgreSQL rows (their section is kept from the file);
 *   BATON_BENCH_PG_PROCESSES=1,4,16   BATON_BENCH_PG_CYCLES=160   BATON_BENCH_PG_REPS=3   BATON_BENCH_PG_BEATS=300
 *   BATON_BENCH_PG_WORKERS=1000 (0 skips the resident row)   BATON_BENCH_PG_WORKER_PROCESSES=10
 *   BATON_BENCH_PG_SECONDS=30   BATON_BENCH_PG_WARMUP=40 (untimed cycles per process and kind first)
 *   BATON_BENCH_TEAM_TASKS=200     tasks of the two-machine row (0 skips it)
 *   BATON_BENCH_EDITOR=0   skips the rows that start code-server (visible, activation); their sections are kept from
 * the file
 *   BATON_BENCH_BETTER_SQLITE=0   leaves out row 3 (better-sqlite3, not a dependency: `npm run bench` installs it into
 *     .cache/bench-deps/ on first use; --quick and runBench() from code use it only when it is there)
 */

export const DEFAULT_SIZES = [1_000, 10_000, 100_000];
export const DEFAULT_OUT = resolve(__dirname, '../../docs/benchmarks.md');

export interface BenchConfig {
  sizes: number[];
  reps: number;
  /** Timed Baton (and better-sqlite3) cycles per repetition. */
  cycles: number;
  /**
   * Row 3's better-sqlite3 is not a dependency of Baton: install it into .cache/bench-deps/ when it is in neither
   * place (`npm run bench`); otherwise row 3 is measured only when it is there, and says so when it is not.
   */
  installBetterSqlite: boolean;
  warmupCycles: number;
  history: SeedHistory;
  /** Cycles per repetition of the whole-export reference; default scales down with size. */
  sqlJsCycles?: number;
  tmpRoot?: string;
  /** Markdown file to write, or false. */
  out: string | false;
  /**
   * Scheduling rows: tasks per run with the bash worker and with the Node worker (0 skips), concurrency levels,
   * repetitions.
   */
  schedTasks: number;
  schedNodeTasks: number;
  schedConcurrency: number[];
  schedReps: number;
  /** Dashboard rows (Chromium): tasks in the first render (0 skips), live runtimes beating, page loads. */
  dashboardTasks: number;
  dashboardRuntimes: number;
  dashboardReps: number;
  /**
   * Engine rows: runtimes beating (0 skips), seconds of beating, delegations and journal lines of the store opened,
   * open repetitions.
   */
  engineRuntimes: number;
  engineSeconds: number;
  engineDelegations: number;
  engineJournalLines: number;
  engineOpenReps: number;
  /** The agent-stream rows: agents at once per configuration (empty skips), seconds of streaming, repetitions. */
  agentStreamAgents: number[];
  agentStreamSeconds: number;
  agentStreamReps: number;
  /**
   * The merge-queue row: passed tasks integrated per run (0 skips), `integrationBatch` values (the first is the
   * one the others are set beside), rounds.
   */
  integrationTasks: number;
  integrationBatches: number[];
  integrationReps: number;
  /** The rows in a real editor (code-server, installed on first use): heartbeat → visible, activation. */
  editorRows: boolean;
  /**
   * The PostgreSQL rows (test/bench/pgBench.ts, a cluster of their own); absent skips them. `runBench()` from code
   * runs them only when given: the system tier's smoke test runs them on their own.
   */
  pg?: PgConfig;
  log?: (line: string) => void;
}

export type PgConfig = Omit<Parameters<typeof runPgBench>[0], 'log'>;

export type SchedConfig = Pick<BenchConfig, 'schedTasks' | 'schedNodeTasks' | 'schedConcurrency' | 'schedReps'>;

/**
 * `npm run bench`: 500 tasks with the bash worker and 100 with the Node worker, at 1, 4 and 8, 3 rounds (~3 min on 2
 * cores).
 */
export const FULL_SCHED: SchedConfig = {
  schedTasks: 500,
  schedNodeTasks: 100,
  schedConcurrency: [1, 4, 8],
  schedReps: 3,
};
/** `--quick`. */
export const QUICK_SCHED: SchedConfig = { schedTasks: 40, schedNodeTasks: 10, schedConcurrency: [1, 4], schedReps: 1 };
/** `runBench()` called from code without any scheduling size (the smoke test): a few seconds. */
export const SMOKE_SCHED: SchedConfig = { schedTasks: 6, schedNodeTasks: 0, schedConcurrency: [1, 2], schedReps: 1 };

export type DashboardConfig = Pick<BenchConfig, 'dashboardTasks' | 'dashboardRuntimes' | 'dashboardReps'>;
export const FULL_DASHBOARD: DashboardConfig = { dashboardTasks: 10_000, dashboardRuntimes: 200, dashboardReps: 7 };
export const QUICK_DASHBOARD: DashboardConfig = { dashboardTasks: 1_000, dashboardRuntimes: 50, dashboardReps: 2 };
export const SMOKE_DASHBOARD: DashboardConfig = { dashboardTasks: 100, dashboardRuntimes: 10, dashboardReps: 1 };

export type EngineConfig = Pick<
  BenchConfig,
  'engineRuntimes' | 'engineSeconds' | 'engineDelegations' | 'engineJournalLines' | 'engineOpenReps'
>;
export const FULL_ENGINE: EngineConfig = {
  engineRuntimes: 200,
  engineSeconds: 10,
  engineDelegations: 100_000,
  engineJournalLines: 10_000,
  engineOpenReps: 5,
};
export const QUICK_ENGINE: EngineConfig = {
  engineRuntimes: 50,
  engineSeconds: 3,
  engineDelegations: 5_000,
  engineJournalLines: 1_000,
  engineOpenReps: 2,
};
export const SMOKE_ENGINE: EngineConfig = {
  engineRuntimes: 5,
  engineSeconds: 1,
  engineDelegations: 200,
  engineJournalLines: 50,
  engineOpenReps: 1,
};

export type AgentStreamConfig = Pick<BenchConfig, 'agentStreamAgents' | 'agentStreamSeconds' | 'agentStreamReps'>;
export const FULL_AGENT_STREAM: AgentStreamConfig = {
  agentStreamAgents: [1, 4],
  agentStreamSeconds: 10,
  agentStreamReps: 3,
};
export const SMOKE_AGENT_STREAM: AgentStreamConfig = {
  agentStreamAgents: [1],
  agentStreamSeconds: 1,
  agentStreamReps: 1,
};

export type IntegrationConfig = Pick<BenchConfig, 'integrationTasks' | 'integrationBatches' | 'integrationReps'>;
/** `npm run bench`: 50 tasks, batch 1 vs 8, 3 rounds (~10 min a round on 2 loaded cores). */
export const FULL_INTEGRATION: IntegrationConfig = {
  integrationTasks: 50,
  integrationBatches: [1, 8],
  integrationReps: 3,
};
export const QUICK_INTEGRATION: IntegrationConfig = {
  integrationTasks: 16,
  integrationBatches: [1, 8],
  integrationReps: 1,
};
/** The system tier's smoke test (test/system/bench.test.ts), which runs the row on its own. */
export const SMOKE_INTEGRATION: IntegrationConfig = {
  integrationTasks: 4,
  integrationBatches: [1, 2],
  integrationReps: 1,
};

export interface BenchOutcome {
  result: StoreBenchResult;
  pg?: PgBenchResult;
  /** The scheduling rows (absent when both task counts are 0). */
  sched?: SchedBenchResult;
  dashboard?: DashboardBenchResult;
  engine?: EngineBenchResult;
  agentStream?: AgentStreamBenchResult;
  integration?: IntegrationBenchResult;
  checks: TargetCheck[];
  markdown: string;
  written?: string;
}

/**
 * Runs the benchmark once; the system tier's smoke test (test/system/bench.test.ts) calls it with tiny
 * sizes and `out: false`. Called without any `sched*` setting, the scheduling rows run at smoke size (SMOKE_SCHED);
 * `npm run bench` passes FULL_SCHED. The merge-queue row runs only when `integrationTasks` is given (as the PostgreSQL
 * rows only with `pg`).
 */
export async function runBench(config: Partial<BenchConfig> = {}): Promise<BenchOutcome> {
  const givesSched = (Object.keys(SMOKE_SCHED) as Array<keyof SchedConfig>).some((key) => config[key] !== undefined);
  const givesDashboard = config.dashboardTasks !== undefined;
  const givesEngine = config.engineRuntimes !== undefined;
  const givesAgentStream = config.agentStreamAgents !== undefined;
  const givesIntegration = config.integrationTasks !== undefined;
  const full: BenchConfig = {
    ...defaultConfig(),
    ...(givesSched ? {} : SMOKE_SCHED),
    ...(givesDashboard ? {} : SMOKE_DASHBOARD),
    ...(givesEngine ? {} : SMOKE_ENGINE),
    ...(givesAgentStream ? {} : SMOKE_AGENT_STREAM),
    // Only when asked for (`npm run bench` asks): a few minutes of git on a loaded machine even at smoke size, so the
    // smoke test runs the row on its own (runIntegrationBench with SMOKE_INTEGRATION).
    ...(givesIntegration ? {} : { integrationTasks: 0 }),
    editorRows: false,
    // Only when asked for: they start a PostgreSQL cluster (the smoke test runs them on their own).
    pg: undefined,
    ...config,
  };
  const options: StoreBenchOptions = {
    sizes: full.sizes,
    reps: full.reps,
    cyclesAt: () => full.cycles,
    warmupCycles: full.warmupCycles,
    // The whole export costs time proportional to the database: few commits at large sizes (but 6 at least).
    sqlJsCyclesAt: (size) => full.sqlJsCycles ?? Math.max(2, Math.min(20, Math.round(200_000 / size))),
    history: full.history,
    betterSqlite: loadBetterSqlite({ install: full.installBetterSqlite, ...(full.log ? { log: full.log } : {}) }),
    ...(full.tmpRoot ? { tmpRoot: full.tmpRoot } : {}),
    ...(full.log ? { log: full.log } : {}),
  };
  const result = await runStoreBench(options);
  const sched =
    full.schedTasks > 0 || full.schedNodeTasks > 0
      ? await runSchedBench({
          tasks: full.schedTasks,
          nodeTasks: full.schedNodeTasks,
          concurrency: full.schedConcurrency,
          reps: full.schedReps,
          ...(full.tmpRoot ? { tmpRoot: full.tmpRoot } : {}),
          ...(full.log ? { log: full.log } : {}),
        })
      : undefined;
  const dashboard = full.dashboardTasks > 0 ? await runDashboard(full) : undefined;
  const engine = full.engineRuntimes > 0 ? await runEngine(full) : undefined;
  const agentStream = full.agentStreamAgents.length > 0 ? await runAgentStream(full) : undefined;
  const integration = full.integrationTasks > 0 ? await runIntegration(full) : undefined;
  const editor = full.editorRows
    ? { visible: await editorSection('visible', full), activation: await editorSection('activation', full) }
    : undefined;
  const pg = full.pg ? await runPg(full) : undefined;
  const checks = evaluateTargets(result, sched);
  const markdown = `${renderMarkdown(result, checks, sched)}${engine ? `\n${engineSection(engine)}` : ''}${agentStream ? `\n${agentStreamSection(agentStream)}` : ''}${integration ? `\n${integrationSection(integration)}` : ''}${dashboard ? `\n${dashboardSection(dashboard)}` : ''}${editor ? `\n${editor.visible}\n${editor.activation}` : ''}${pg ? `\n${pgSection(pg)}` : ''}`;
  const outcome = {
    result,
    ...(pg ? { pg } : {}),
    ...(sched ? { sched } : {}),
    ...(dashboard ? { dashboard } : {}),
    ...(engine ? { engine } : {}),
    ...(agentStream ? { agentStream } : {}),
    ...(integration ? { integration } : {}),
    checks,
    markdown,
  };
  if (full.out === false) return outcome;
  mkdirSync(dirname(full.out), { recursive: true });
  // Without the editor rows (BATON_BENCH_EDITOR=0) or the PostgreSQL rows (BATON_BENCH_PG=0), their sections are kept
  // from the file as they are.
  const current = existsSync(full.out) ? readFileSync(full.out, 'utf8') : '';
  const notRun = [...(editor ? [] : (['visible', 'activation'] as const)), ...(pg ? [] : (['pg'] as const))];
  const kept = notRun
    .map((which) => {
      const { heading, end } = SECTIONS[which];
      const start = current.indexOf(heading);
      const stop = current.indexOf(end);
      return start >= 0 && stop > start ? current.slice(start, stop + end.length + 1) : '';
    })
    .filter(Boolean);
  writeFileSync(full.out, [markdown, ...kept].join('\n'));
  return { ...outcome, written: full.out };
}

/** The rows that start code-server: heartbeat → on screen, and activation with a 10k store. */
async function editorSection(which: 'visible' | 'activation', config: BenchConfig): Promise<string> {
  const log = config.log ? { log: config.log } : {};
  return which === 'visible'
    ? visibleSection(await runVisibleBench({ beats: 40, ...log }))
    : activationSection(await runActivationBench({ delegations: 10_000, reps: 5, ...log }));
}

function runDashboard(config: BenchConfig): Promise<DashboardBenchResult> {
  return runDashboardBench({
    tasks: config.dashboardTasks,
    runtimes: config.dashboardRuntimes,
    reps: config.dashboardReps,
    ...(config.log ? { log: config.log } : {}),
  });
}

function runEngine(config: BenchConfig): Promise<EngineBenchResult> {
  return runEngineBench({
    runtimes: config.engineRuntimes,
    seconds: config.engineSeconds,
    delegations: config.engineDelegations,
    journalLines: config.engineJournalLines,
    openReps: config.engineOpenReps,
    ...(config.log ? { log: config.log } : {}),
  });
}

function runPg(config: BenchConfig): Promise<PgBenchResult> {
  return runPgBench({ ...(config.pg ?? FULL_PG), ...(config.log ? { log: config.log } : {}) });
}

function runAgentStream(config: BenchConfig): Promise<AgentStreamBenchResult> {
  return runAgentStreamBench({
    agents: config.agentStreamAgents,
    seconds: config.agentStreamSeconds,
    rate: 1000,
    reps: config.agentStreamReps,
    ...(config.log ? { log: config.log } : {}),
  });
}

function runIntegration(config: BenchConfig): Promise<IntegrationBenchResult> {
  return runIntegrationBench({
    tasks: config.integrationTasks,
    batches: config.integrationBatches,
    reps: config.integrationReps,
    ...(config.tmpRoot ? { tmpRoot: config.tmpRoot } : {}),
    ...(config.log ? { log: config.log } : {}),
  });
}

/** The sections `--only` can rewrite alone: their heading and end marker in the file. */
const SECTIONS = {
  agents: { heading: '## Agent streams: a fast agent → heartbeats → the views', end: '<!-- agents:end -->' },
  activation: {
    heading: '## Extension activation (code-server 4.99.4 extension host)',
    end: '<!-- activation:end -->',
  },
  visible: { heading: '## Heartbeat → visible in the editor (code-server, Chromium)', end: '<!-- visible:end -->' },
  integration: INTEGRATION_SECTION,
  dashboard: { heading: '## Dashboard webview (Chromium)', end: '<!-- dashboard:end -->' },
  engine: {
    heading: '## Engine rows: heartbeat latency across processes, store open, bundle size',
    end: '<!-- engine:end -->',
  },
  pg: PG_SECTION,
};

/**
 * `--only dashboard|engine|visible|activation`: those rows alone (visible and activation start code-server: only this
 * way); their section of the file (between its
 * heading and end marker) is replaced, the other sections — from their own run — are kept.
 */
export async function runSectionOnly(
  which: keyof typeof SECTIONS,
  config: BenchConfig,
): Promise<{ section: string; written?: string }> {
  const section =
    which === 'dashboard'
      ? dashboardSection(await runDashboard(config))
      : which === 'engine'
        ? engineSection(await runEngine(config))
        : which === 'agents'
          ? agentStreamSection(await runAgentStream(config))
          : which === 'integration'
            ? integrationSection(await runIntegration(config))
            : which === 'pg'
              ? pgSection(await runPg(config))
              : await editorSection(which, config);
  if (config.out === false) return { section };
  const current = existsSync(config.out) ? readFileSync(config.out, 'utf8') : '';
  const { heading, end: endMarker } = SECTIONS[which];
  const start = current.indexOf(heading);
  const end = current.indexOf(endMarker);
  const next =
    start >= 0 && end > start
      ? `${current.slice(0, start)}${section}${current.slice(end + endMarker.length + 1)}`
      : `${current}${current.endsWith('\n') ? '' : '\n'}\n${section}`;
  writeFileSync(config.out, next);
  return { section, written: config.out };
}

/** The full-size settings (`npm run bench` without flags or environment). */
export function defaultConfig(): BenchConfig {
  return {
    sizes: DEFAULT_SIZES,
    reps: 15,
    cycles: 200,
    warmupCycles: 10,
    history: 'minimal',
    installBetterSqlite: false,
    out: DEFAULT_OUT,
    ...FULL_SCHED,
    ...FULL_DASHBOARD,
    ...FULL_ENGINE,
    ...FULL_AGENT_STREAM,
    ...FULL_INTEGRATION,
    editorRows: true,
    pg: FULL_PG,
  };
}

/** Flags and environment → config. */
export function configFromCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Partial<BenchConfig> {
  const config: Partial<BenchConfig> = {
    ...FULL_SCHED,
    ...FULL_DASHBOARD,
    ...FULL_ENGINE,
    ...FULL_AGENT_STREAM,
    ...FULL_INTEGRATION,
    editorRows: env.BATON_BENCH_EDITOR !== '0',
    pg: FULL_PG,
    installBetterSqlite: true,
  };
  if (argv.includes('--quick'))
    Object.assign(
      config,
      {
        sizes: [100, 1_000],
        reps: 5,
        cycles: 10,
        warmupCycles: 2,
        sqlJsCycles: 2,
        out: false,
        editorRows: false,
        installBetterSqlite: false,
      },
      QUICK_SCHED,
      QUICK_DASHBOARD,
      QUICK_ENGINE,
      SMOKE_AGENT_STREAM,
      QUICK_INTEGRATION,
      { pg: QUICK_PG },
    );
  const list = (name: string): number[] | undefined => {
    const raw = env[name];
    if (!raw) return undefined;
    const values = raw.split(',').map((s) => Number(s.trim().replace(/_/g, '')));
    if (values.some((v) => !Number.isSafeInteger(v) || v < 0))
      throw new Error(`${name} must be a comma-separated list of whole numbers, not "${raw}"`);
    return values;
  };
  const num = (name: string, min: number): number | undefined => {
    const value = list(name)?.[0];
    if (value !== undefined && value < min) throw new Error(`${name} must be at least ${min}`);
    return value;
  };
  const sizes = list('BATON_BENCH_SIZES');
  if (sizes) config.sizes = sizes;
  const reps = num('BATON_BENCH_REPS', 1);
  if (reps !== undefined) config.reps = reps;
  const cycles = num('BATON_BENCH_CYCLES', 1);
  if (cycles !== undefined) config.cycles = cycles;
  const history = env.BATON_BENCH_HISTORY;
  if (history) {
    if (history !== 'minimal' && history !== 'full')
      throw new Error(`BATON_BENCH_HISTORY must be minimal or full, not "${history}"`);
    config.history = history;
  }
  const schedTasks = num('BATON_BENCH_SCHED_TASKS', 0);
  if (schedTasks !== undefined) config.schedTasks = schedTasks;
  const schedNodeTasks = num('BATON_BENCH_SCHED_NODE_TASKS', 0);
  if (schedNodeTasks !== undefined) config.schedNodeTasks = schedNodeTasks;
  const schedConcurrency = list('BATON_BENCH_SCHED_CONCURRENCY');
  if (schedConcurrency) {
    if (schedConcurrency.length === 0 || schedConcurrency.some((c) => c < 1))
      throw new Error('BATON_BENCH_SCHED_CONCURRENCY must list whole numbers of at least 1');
    config.schedConcurrency = schedConcurrency;
  }
  const schedReps = num('BATON_BENCH_SCHED_REPS', 1);
  if (schedReps !== undefined) config.schedReps = schedReps;
  const dashboardTasks = num('BATON_BENCH_DASHBOARD_TASKS', 0);
  if (dashboardTasks !== undefined) config.dashboardTasks = dashboardTasks;
  const engineRuntimes = num('BATON_BENCH_ENGINE_RUNTIMES', 0);
  if (engineRuntimes !== undefined) config.engineRuntimes = engineRuntimes;
  const agentStreamAgents = list('BATON_BENCH_AGENTS');
  if (agentStreamAgents !== undefined) config.agentStreamAgents = agentStreamAgents.filter((n) => n > 0);
  const integrationTasks = num('BATON_BENCH_INTEGRATION_TASKS', 0);
  if (integrationTasks !== undefined) config.integrationTasks = integrationTasks;
  const integrationBatches = list('BATON_BENCH_INTEGRATION_BATCHES');
  if (integrationBatches) {
    if (integrationBatches.length === 0 || integrationBatches.some((b) => b < 1 || b > 64))
      throw new Error('BATON_BENCH_INTEGRATION_BATCHES must list whole numbers from 1 to 64 (integrationBatch)');
    config.integrationBatches = integrationBatches;
  }
  const integrationReps = num('BATON_BENCH_INTEGRATION_REPS', 1);
  if (integrationReps !== undefined) config.integrationReps = integrationReps;
  if (env.BATON_BENCH_PG === '0') delete config.pg;
  else if (config.pg) {
    const pg = { ...config.pg };
    const pgProcesses = list('BATON_BENCH_PG_PROCESSES');
    if (pgProcesses) pg.processes = pgProcesses.filter((n) => n > 0);
    const pgCycles = num('BATON_BENCH_PG_CYCLES', 1);
    if (pgCycles !== undefined) pg.cycles = pgCycles;
    const pgReps = num('BATON_BENCH_PG_REPS', 1);
    if (pgReps !== undefined) pg.reps = pgReps;
    const pgWarmup = num('BATON_BENCH_PG_WARMUP', 0);
    if (pgWarmup !== undefined) pg.warmupCycles = pgWarmup;
    const pgBeats = num('BATON_BENCH_PG_BEATS', 0);
    if (pgBeats !== undefined) pg.latencyBeats = pgBeats;
    const pgWorkers = num('BATON_BENCH_PG_WORKERS', 0);
    if (pgWorkers !== undefined) pg.residentWorkers = pgWorkers;
    const pgWorkerProcesses = num('BATON_BENCH_PG_WORKER_PROCESSES', 1);
    if (pgWorkerProcesses !== undefined) pg.residentProcesses = pgWorkerProcesses;
    const pgSeconds = num('BATON_BENCH_PG_SECONDS', 1);
    if (pgSeconds !== undefined) pg.residentSeconds = pgSeconds;
    const teamTasks = num('BATON_BENCH_TEAM_TASKS', 0);
    if (teamTasks !== undefined) pg.teamTasks = teamTasks;
    config.pg = pg;
  }
  if (env.BATON_BENCH_TMP) config.tmpRoot = env.BATON_BENCH_TMP;
  const outAt = argv.indexOf('--out');
  if (outAt >= 0) {
    const path = argv[outAt + 1];
    if (!path) throw new Error('--out needs a file name');
    config.out = resolve(path);
  }
  if (argv.includes('--no-write')) config.out = false;
  return config;
}

async function main(): Promise<void> {
  const config = configFromCommandLine(process.argv.slice(2), process.env);
  const only = process.argv.indexOf('--only');
  if (only >= 0) {
    const which = process.argv[only + 1];
    if (!(which && which in SECTIONS)) throw new Error(`--only takes: ${Object.keys(SECTIONS).join(', ')}`);
    const outcome = await runSectionOnly(which as keyof typeof SECTIONS, {
      ...defaultConfig(),
      ...config,
      log: (line) => process.stderr.write(`[bench] ${line}\n`),
    });
    process.stdout.write(
      `${outcome.section}\n${outcome.written ? `Wrote the ${which} section of ${outcome.written}\n` : 'Nothing written.\n'}`,
    );
    return;
  }
  const started = Date.now();
  const outcome = await runBench({ ...config, log: (line) => process.stderr.write(`[bench] ${line}\n`) });
  const seconds = (Date.now() - started) / 1000;
  const took = seconds >= 120 ? `${(seconds / 60).toFixed(1)} min` : `${seconds.toFixed(0)} s`;
  process.stdout.write(
    `\n${resultsTable(outcome.result, outcome.checks, outcome.sched)}\n\nTargets:\n${targetSummary(outcome.checks)}\n\n`,
  );
  if (outcome.pg) {
    const pg = evaluatePgTargets(outcome.pg);
    process.stdout.write(
      `PostgreSQL rows: within 1.5× of the bare loop ${pg.bareAt ? `${pg.bareAt.holds ? '✓' : '✗'} ${pg.bareAt.ratio.toFixed(2)}×` : '—'}; ` +
        `NOTIFY p95 ${pg.notify ? `${pg.notify.holds ? '✓' : '✗'} ${pg.notify.p95} ms` : '—'}; ` +
        `resident workers keep up ${pg.keepsUp ? (pg.keepsUp.holds ? '✓' : '✗') : '—'}\n\n`,
    );
  }
  process.stdout.write(
    `${outcome.checks.filter((c) => c.holds).length} of ${outcome.checks.length} targets hold; benchmark took ${took}.\n`,
  );
  process.stdout.write(outcome.written ? `Wrote ${outcome.written}\n` : 'Nothing written (--quick / --no-write).\n');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
