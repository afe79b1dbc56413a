import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { evaluateTargets, renderMarkdown, resultsTable, targetSummary, type TargetCheck } from './report';
import { runStoreBench, type SeedHistory, type StoreBenchOptions, type StoreBenchResult } from './storeBench';

/**
 * `npm run bench`: measures durable commits per second of the Baton store and rewrites
 * docs/benchmarks.md. A benchmark, not a test: nothing here fails the run when a target
 * does not hold; it says so.
 *
 *   --quick          smoke run (tiny sizes, few cycles); prints, writes nothing unless --out
 *   --out <file>     where to write the markdown (default docs/benchmarks.md)
 *   --no-write       print only
 *   BATON_BENCH_SIZES=1000,10000   BATON_BENCH_REPS=15   BATON_BENCH_CYCLES=200
 *   BATON_BENCH_HISTORY=minimal|full   BATON_BENCH_TMP=/some/dir
 */

export const DEFAULT_SIZES = [1_000, 10_000, 100_000];
export const DEFAULT_OUT = resolve(__dirname, '../../docs/benchmarks.md');

export interface BenchConfig {
  sizes: number[];
  reps: number;
  /** Timed Baton (and better-sqlite3) cycles per repetition. */
  cycles: number;
  warmupCycles: number;
  history: SeedHistory;
  /** Cycles per repetition of the whole-export reference; default scales down with size. */
  sqlJsCycles?: number;
  tmpRoot?: string;
  /** Markdown file to write, or false. */
  out: string | false;
  log?: (line: string) => void;
}

export interface BenchOutcome {
  result: StoreBenchResult;
  checks: TargetCheck[];
  markdown: string;
  written?: string;
}

/** Runs the benchmark once; a unit test can call it with tiny sizes and `out: false`. */
export async function runBench(config: Partial<BenchConfig> = {}): Promise<BenchOutcome> {
  const full: BenchConfig = { ...defaultConfig(), ...config };
  const options: StoreBenchOptions = {
    sizes: full.sizes,
    reps: full.reps,
    cyclesAt: () => full.cycles,
    warmupCycles: full.warmupCycles,
    // The whole export costs time proportional to the database: few commits at large sizes (but 6 at least).
    sqlJsCyclesAt: (size) => full.sqlJsCycles ?? Math.max(2, Math.min(20, Math.round(200_000 / size))),
    history: full.history,
    ...(full.tmpRoot ? { tmpRoot: full.tmpRoot } : {}),
    ...(full.log ? { log: full.log } : {}),
  };
  const result = await runStoreBench(options);
  const checks = evaluateTargets(result);
  const markdown = renderMarkdown(result, checks);
  if (full.out === false) return { result, checks, markdown };
  mkdirSync(dirname(full.out), { recursive: true });
  writeFileSync(full.out, markdown);
  return { result, checks, markdown, written: full.out };
}

export function defaultConfig(): BenchConfig {
  return { sizes: DEFAULT_SIZES, reps: 15, cycles: 200, warmupCycles: 10, history: 'minimal', out: DEFAULT_OUT };
}

/** Flags and environment → config. */
export function configFromCommandLine(argv: readonly string[], env: NodeJS.ProcessEnv): Partial<BenchConfig> {
  const config: Partial<BenchConfig> = {};
  if (argv.includes('--quick')) Object.assign(config, { sizes: [100, 1_000], reps: 5, cycles: 10, warmupCycles: 2, sqlJsCycles: 2, out: false });
  const list = (name: string): number[] | undefined => {
    const raw = env[name];
    if (!raw) return undefined;
    const values = raw.split(',').map((s) => Number(s.trim().replace(/_/g, '')));
    if (values.some((v) => !Number.isSafeInteger(v) || v < 0)) throw new Error(`${name} must be a comma-separated list of whole numbers, not "${raw}"`);
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
    if (history !== 'minimal' && history !== 'full') throw new Error(`BATON_BENCH_HISTORY must be minimal or full, not "${history}"`);
    config.history = history;
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
  const started = Date.now();
  const outcome = await runBench({ ...config, log: (line) => process.stderr.write(`[bench] ${line}\n`) });
  const seconds = (Date.now() - started) / 1000;
  const took = seconds >= 120 ? `${(seconds / 60).toFixed(1)} min` : `${seconds.toFixed(0)} s`;
  process.stdout.write(`\n${resultsTable(outcome.result, outcome.checks)}\n\nTargets:\n${targetSummary(outcome.checks)}\n\n`);
  process.stdout.write(`${outcome.checks.filter((c) => c.holds).length} of ${outcome.checks.length} targets hold; benchmark took ${took}.\n`);
  process.stdout.write(outcome.written ? `Wrote ${outcome.written}\n` : 'Nothing written (--quick / --no-write).\n');
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
