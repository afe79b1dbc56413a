// `npm test`: every check and every test tier, then a summary of each tier's counts
// (test/README.md).
//
//   npm test                          # lint, typecheck, build, unit, system, integration, e2e
//   npm test -- unit system           # only these steps, in this order
//   npm test -- --bail                # stop at the first step that fails
//
// Each step is the npm script of the same name (`npm run test:unit`, …), so a tier runs the
// same way alone. A step that runs alone passes its output through as it comes; steps of one
// group run at the same time, and each one's output is printed whole when it ends: the checks
// (lint, typecheck, build), and the system tier beside the integration tier; e2e runs after them,
// in two halves side by side (test/README.md, "Tiers side by side": with e2e beside the system tier
// too, the load reached 14 and a CLI test waited out the store lock).
// BATON_TEST_SERIAL=1 runs every step alone, one after another. The counts are read from the
// tier's own summary. A failing step does not stop the later ones (unless --bail): the summary
// then shows every tier, so one CI log says everything that is wrong.
//
// Every step has a time budget (test/README.md, "Time budgets"): a step still running at its
// budget is stopped (its whole process group) and fails with one line that says so, so a
// hung tier costs minutes, not the CI run's whole limit. BATON_TEST_BUDGET_SCALE=2 doubles
// every budget (a slower machine); 0 turns them off.
import { spawn, type ChildProcess } from 'node:child_process';

interface Step {
  name: string;
  script: string;
  /** How the step reports its counts; absent for checks (lint, typecheck, build). */
  counts?: (output: string) => Counts | undefined;
  /** Extra arguments for the script when this process writes to a terminal (mocha's colours through a pipe). */
  ttyArgs?: string[];
  /** Steps of one group run at the same time (their outputs printed whole, one after another). */
  group?: string;
  /** Within a group, steps of one lane run one after another, in their order (default: a lane of its own). */
  lane?: string;
  /** Stopped and failed past this (test/README.md, "Time budgets"); scaled by BATON_TEST_BUDGET_SCALE. */
  budgetSeconds: number;
}

interface Counts {
  passing: number;
  failing: number;
  pending: number;
}

interface Outcome {
  step: Step;
  exitCode: number | null;
  counts: Counts | undefined;
  seconds: number;
  ok: boolean;
  /** The failures as the tier printed them (titles and errors), for the recap above the summary. */
  failures: string | undefined;
  /** Stopped at its time budget. */
  overBudget: boolean;
}

// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '');

/** Mocha's own summary ("N passing (2s)", "N failing", "N pending"); the last one when there are several. */
function mochaCounts(output: string): Counts | undefined {
  const text = plain(output);
  const passing = [...text.matchAll(/^\s*(\d+) passing(?: \([^)]*\))?\s*$/gm)].pop();
  if (!passing) return undefined;
  const after = text.slice(passing.index);
  const count = (word: string): number => Number(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, 'm').exec(after)?.[1] ?? 0);
  return { passing: Number(passing[1]), failing: count('failing'), pending: count('pending') };
}

/**
 * Mocha's failure report (from its last "N failing" line on), cut to its first lines: CI shows
 * only a log's tail, so the recap repeats which tests failed and why just above the summary.
 */
function mochaFailures(output: string, maxLines = 60): string | undefined {
  const text = plain(output);
  const failing = [...text.matchAll(/^\s*\d+ failing\s*$/gm)].pop();
  if (!failing) return undefined;
  const lines = text
    .slice(failing.index)
    .split('\n')
    .filter((line) => !/^\s+at /.test(line)); // stack frames: the first error line says enough
  const cut = lines.length > maxLines;
  return [...lines.slice(0, maxLines), ...(cut ? [`  … ${lines.length - maxLines} more lines above in the log`] : [])]
    .join('\n')
    .trimEnd();
}

/** The total line test/runIntegration.ts prints after both windows. */
function integrationCounts(output: string): Counts | undefined {
  const match = /^Integration: (\d+) passing, (\d+) failing, (\d+) pending/m.exec(plain(output));
  return match ? { passing: Number(match[1]), failing: Number(match[2]), pending: Number(match[3]) } : undefined;
}

// The budgets: about twice what each step takes on a quiet 2-core machine, so that they hold with
// a CPU hog of two busy processes beside the run (test/README.md, "Time budgets").
const STEPS: Step[] = [
  { name: 'lint', script: 'lint', group: 'checks', budgetSeconds: 240 },
  { name: 'typecheck', script: 'typecheck', group: 'checks', budgetSeconds: 240 },
  { name: 'build', script: 'build', group: 'checks', budgetSeconds: 120 },
  // Unit tests need no build: they run beside lint and typecheck (the checks take as long as lint).
  { name: 'unit', script: 'test:unit', group: 'checks', counts: mochaCounts, ttyArgs: ['--color'], budgetSeconds: 240 },
  {
    name: 'system',
    script: 'test:system',
    counts: mochaCounts,
    ttyArgs: ['--color'],
    group: 'tiers',
    lane: 'system',
    budgetSeconds: 1800,
  },
  {
    name: 'integration',
    script: 'test:integration',
    counts: integrationCounts,
    group: 'tiers',
    lane: 'editor',
    budgetSeconds: 600,
  },
  // The e2e tier in two halves side by side, each with its own code-server and Chromium (test/README.md, "The e2e
  // tier in two halves"); `npm test -- e2e` runs both.
  {
    name: 'e2e-1',
    script: 'test:e2e:1',
    counts: mochaCounts,
    ttyArgs: ['--color'],
    group: 'e2e',
    lane: 'e2e-1',
    budgetSeconds: 1200,
  },
  {
    name: 'e2e-2',
    script: 'test:e2e:2',
    counts: mochaCounts,
    ttyArgs: ['--color'],
    group: 'e2e',
    lane: 'e2e-2',
    budgetSeconds: 1200,
  },
];

/** A step's name, or the name of a tier whose steps run in parts (`e2e`: e2e-1 and e2e-2). */
function stepsNamed(name: string): Step[] {
  return STEPS.filter((step) => step.name === name || step.name.startsWith(`${name}-`));
}

const SERIAL = process.env.BATON_TEST_SERIAL === '1';

const BUDGET_SCALE = Number(process.env.BATON_TEST_BUDGET_SCALE ?? 1);

function parseArgs(argv: readonly string[]): { steps: Step[]; bail: boolean } {
  const names = argv.filter((arg) => arg !== '--bail');
  const unknown = names.filter((name) => stepsNamed(name).length === 0);
  if (unknown.length)
    throw new Error(
      `Unknown step ${unknown.join(', ')}. Steps: ${STEPS.map((s) => s.name).join(', ')}; option: --bail.`,
    );
  const steps = names.length ? names.flatMap(stepsNamed) : STEPS;
  return { steps, bail: argv.includes('--bail') };
}

let interrupted = false;
const running = new Set<ChildProcess>();
process.on('SIGINT', () => {
  // Each step runs in a process group of its own (so that a budget can stop all of it): pass the terminal's Ctrl-C
  // on. No later step starts.
  interrupted = true;
  for (const child of running) signalGroup(child, 'SIGINT');
});

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // already gone
  }
}

const minutes = (seconds: number): string =>
  seconds % 60 === 0 ? `${seconds / 60} min` : `${(seconds / 60).toFixed(1)} min`;

/** Runs one step; `live` passes its output through as it comes, else it is printed whole at its end. */
function runStep(step: Step, live: boolean): Promise<Outcome> {
  const started = Date.now();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const tty = live && process.stdout.isTTY;
  const args = ['run', step.script, ...(tty && step.ttyArgs ? ['--', ...step.ttyArgs] : [])];
  const header = `\n== ${step.name}: npm ${args.join(' ')}\n`;
  // Beside other steps, its output waits for its end: the start is said now, so the log shows what runs.
  process.stdout.write(live ? header : `== ${step.name}: started\n`);
  return new Promise((resolve) => {
    const child = spawn(npm, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    running.add(child);
    const chunks: string[] = [];
    const take = (to: NodeJS.WriteStream) => (chunk: Buffer) => {
      chunks.push(chunk.toString());
      if (live) to.write(chunk);
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    const budget = step.budgetSeconds * BUDGET_SCALE;
    let overBudget = false;
    const budgetTimer =
      budget > 0
        ? setTimeout(() => {
            overBudget = true;
            const line = `== ${step.name}: over its time budget of ${minutes(budget)} (test/README.md, "Time budgets"): stopped\n`;
            chunks.push(line);
            if (live) process.stdout.write(`\n${line}`);
            signalGroup(child, 'SIGTERM');
            setTimeout(() => signalGroup(child, 'SIGKILL'), 10_000).unref();
          }, budget * 1000)
        : undefined;
    let finished = false;
    const finish = (exitCode: number | null): void => {
      if (finished) return;
      finished = true;
      clearTimeout(budgetTimer);
      running.delete(child);
      const output = chunks.join('');
      if (!live) process.stdout.write(header + output);
      const counts = step.counts?.(output);
      const ok =
        !overBudget &&
        exitCode === 0 &&
        (!step.counts || (counts !== undefined && counts.failing === 0 && counts.passing > 0));
      const overLine = overBudget ? `over its time budget of ${minutes(budget)}: stopped` : undefined;
      const failures = ok ? undefined : [overLine, mochaFailures(output)].filter(Boolean).join('\n') || undefined;
      resolve({ step, exitCode, counts, seconds: (Date.now() - started) / 1000, ok, failures, overBudget });
    };
    child.on('error', (err) => {
      chunks.push(`${step.name}: ${err.message}\n`);
      finish(null);
    });
    child.on('close', (code) => finish(code));
  });
}

function summary(outcomes: readonly Outcome[], skipped: readonly Step[]): string {
  const rows: string[][] = [['step', 'result', 'passing', 'failing', 'pending', 'time']];
  const total: Counts = { passing: 0, failing: 0, pending: 0 };
  for (const { step, exitCode, counts, seconds, ok, overBudget } of outcomes) {
    if (counts) {
      total.passing += counts.passing;
      total.failing += counts.failing;
      total.pending += counts.pending;
    }
    const result = ok
      ? 'ok'
      : overBudget
        ? `FAILED (over ${minutes(step.budgetSeconds * BUDGET_SCALE)})`
        : step.counts && exitCode === 0 && counts?.passing === 0
          ? 'FAILED (no test ran)'
          : step.counts && !counts
            ? `FAILED (exit ${exitCode}, no summary)`
            : `FAILED (exit ${exitCode})`;
    const number = (n: number | undefined): string => (step.counts ? String(n ?? '?') : '');
    rows.push([step.name, result, number(counts?.passing), number(counts?.failing), number(counts?.pending)]);
    rows[rows.length - 1]!.push(`${Math.round(seconds)} s`);
  }
  for (const step of skipped) rows.push([step.name, 'not run', '', '', '', '']);
  const seconds = (Date.now() - runStarted) / 1000;
  const allOk = skipped.length === 0 && outcomes.every((o) => o.ok);
  rows.push([
    'total',
    allOk ? 'ok' : 'FAILED',
    String(total.passing),
    String(total.failing),
    String(total.pending),
    `${Math.round(seconds)} s`,
  ]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  const numeric = new Set([2, 3, 4, 5]);
  const line = (row: string[]): string =>
    '  ' +
    row
      .map((cell, column) => (numeric.has(column) ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return ['', 'Test summary', ...rows.map(line), ''].join('\n');
}

const runStarted = Date.now();

/** The selected steps in order, consecutive steps of one group together (each alone with BATON_TEST_SERIAL). */
function batches(steps: readonly Step[]): Step[][] {
  const out: Step[][] = [];
  for (const step of steps) {
    const last = out[out.length - 1];
    if (!SERIAL && last && step.group && last[0]!.group === step.group) last.push(step);
    else out.push([step]);
  }
  return out;
}

/** A batch's lanes: the steps of one lane in their order; a step without a lane is a lane of its own. */
function lanes(batch: readonly Step[]): Step[][] {
  const byLane = new Map<string, Step[]>();
  for (const step of batch) {
    const key = step.lane ?? `step:${step.name}`;
    byLane.set(key, [...(byLane.get(key) ?? []), step]);
  }
  return [...byLane.values()];
}

/** Runs a lane's steps one after another (stopping at a failure with --bail, or at an interrupt). */
async function runLane(lane: readonly Step[], live: boolean, bail: boolean): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const step of lane) {
    if (interrupted) break;
    const outcome = await runStep(step, live);
    outcomes.push(outcome);
    if (bail && !outcome.ok) break;
  }
  return outcomes;
}

async function main(): Promise<number> {
  const { steps, bail } = parseArgs(process.argv.slice(2));
  const outcomes: Outcome[] = [];
  for (const batch of batches(steps)) {
    if (interrupted) break;
    const done = (await Promise.all(lanes(batch).map((lane) => runLane(lane, batch.length === 1, bail)))).flat();
    // In the order of the steps, whichever lane ran them.
    outcomes.push(...batch.flatMap((step) => done.filter((outcome) => outcome.step === step)));
    if (bail && done.some((outcome) => !outcome.ok)) break;
  }
  const skipped = steps.filter((step) => !outcomes.some((outcome) => outcome.step === step));
  for (const { step, failures } of outcomes)
    if (failures) process.stdout.write(`\n== ${step.name}: what failed (recap)\n${failures}\n`);
  process.stdout.write(summary(outcomes, skipped) + '\n');
  const failed = outcomes.filter((o) => !o.ok).map((o) => o.step.name);
  if (interrupted) {
    process.stdout.write('npm test: interrupted\n');
    return 130;
  }
  process.stdout.write(
    failed.length || skipped.length
      ? `npm test: FAILED${failed.length ? ` (${failed.join(', ')})` : ''}${skipped.length ? `; not run: ${skipped.map((s) => s.name).join(', ')}` : ''}\n`
      : 'npm test: passed\n',
  );
  return failed.length || skipped.length ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
