// `npm test`: every check and every test tier, one after the other, then a summary of each
// tier's counts (test/README.md).
//
//   npm test                          # lint, typecheck, build, unit, system, integration, e2e
//   npm test -- unit system           # only these steps, in this order
//   npm test -- --bail                # stop at the first step that fails
//
// Each step is the npm script of the same name (`npm run test:unit`, …), so a tier runs the
// same way alone. Its output passes through as it comes; the counts are read from the
// tier's own summary. A failing step does not stop the later ones (unless --bail): the
// summary then shows every tier, so one CI log says everything that is wrong.
import { spawn } from 'node:child_process';

interface Step {
  name: string;
  script: string;
  /** How the step reports its counts; absent for checks (lint, typecheck, build). */
  counts?: (output: string) => Counts | undefined;
  /** Extra arguments for the script when this process writes to a terminal (mocha's colours through a pipe). */
  ttyArgs?: string[];
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

const STEPS: Step[] = [
  { name: 'lint', script: 'lint' },
  { name: 'typecheck', script: 'typecheck' },
  { name: 'build', script: 'build' },
  { name: 'unit', script: 'test:unit', counts: mochaCounts, ttyArgs: ['--color'] },
  { name: 'system', script: 'test:system', counts: mochaCounts, ttyArgs: ['--color'] },
  { name: 'integration', script: 'test:integration', counts: integrationCounts },
  { name: 'e2e', script: 'test:e2e', counts: mochaCounts, ttyArgs: ['--color'] },
];

function parseArgs(argv: readonly string[]): { steps: Step[]; bail: boolean } {
  const names = argv.filter((arg) => arg !== '--bail');
  const unknown = names.filter((name) => !STEPS.some((step) => step.name === name));
  if (unknown.length)
    throw new Error(
      `Unknown step ${unknown.join(', ')}. Steps: ${STEPS.map((s) => s.name).join(', ')}; option: --bail.`,
    );
  const steps = names.length ? names.map((name) => STEPS.find((step) => step.name === name)!) : STEPS;
  return { steps, bail: argv.includes('--bail') };
}

let interrupted = false;
process.on('SIGINT', () => {
  // The step in progress gets the terminal's SIGINT itself; no later step starts.
  interrupted = true;
});

function runStep(step: Step): Promise<Outcome> {
  const started = Date.now();
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const args = ['run', step.script, ...(process.stdout.isTTY && step.ttyArgs ? ['--', ...step.ttyArgs] : [])];
  process.stdout.write(`\n== ${step.name}: npm ${args.join(' ')}\n`);
  return new Promise((resolve) => {
    const child = spawn(npm, args, { stdio: ['inherit', 'pipe', 'pipe'] });
    const chunks: string[] = [];
    child.stdout.on('data', (chunk: Buffer) => {
      chunks.push(chunk.toString());
      process.stdout.write(chunk);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      chunks.push(chunk.toString());
      process.stderr.write(chunk);
    });
    const finish = (exitCode: number | null): void => {
      const output = chunks.join('');
      const counts = step.counts?.(output);
      const ok =
        exitCode === 0 && (!step.counts || (counts !== undefined && counts.failing === 0 && counts.passing > 0));
      const failures = ok ? undefined : mochaFailures(output);
      resolve({ step, exitCode, counts, seconds: (Date.now() - started) / 1000, ok, failures });
    };
    child.on('error', (err) => {
      process.stderr.write(`${step.name}: ${err.message}\n`);
      finish(null);
    });
    child.on('close', (code) => finish(code));
  });
}

function summary(outcomes: readonly Outcome[], skipped: readonly Step[]): string {
  const rows: string[][] = [['step', 'result', 'passing', 'failing', 'pending', 'time']];
  const total: Counts = { passing: 0, failing: 0, pending: 0 };
  for (const { step, exitCode, counts, seconds, ok } of outcomes) {
    if (counts) {
      total.passing += counts.passing;
      total.failing += counts.failing;
      total.pending += counts.pending;
    }
    const result = ok
      ? 'ok'
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
  const seconds = outcomes.reduce((sum, o) => sum + o.seconds, 0);
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

async function main(): Promise<number> {
  const { steps, bail } = parseArgs(process.argv.slice(2));
  const outcomes: Outcome[] = [];
  for (const step of steps) {
    if (interrupted) break;
    const outcome = await runStep(step);
    outcomes.push(outcome);
    if (bail && !outcome.ok) break;
  }
  const skipped = steps.slice(outcomes.length);
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
