import { DEFAULT_SNAPSHOT_MIN_BYTES, SNAPSHOT_MAX_LINES } from '../../src/engine/store/fileStore';
import { formatRate, formatSummary, summarize, type Summary } from './stats';
import type { SchedBenchResult, SchedWorkerKind } from './schedBench';
import {
  evaluateSchedTargets,
  schedArgued,
  schedDetails,
  schedMachineLine,
  schedReadingNotes,
  schedResultRows,
  schedWhatIsMeasured,
} from './schedReport';
import { SEED_ROWS_PER_TX, SEED_RUN_TASKS, type SizeResult, type StoreBenchResult } from './storeBench';

/** "Commit cost flat in store size": the rate at the largest size within this factor of the smallest. */
export const FLAT_FACTOR = 1.25;
/** Baton's commit rate as a share of the disk's raw append + fdatasync rate. */
export const APPEND_SHARE = 0.5;
/** Proposed for one caller, where APPEND_SHARE is out of reach (see arguedTargets). */
export const ONE_CALLER_APPEND_SHARE = 0.2;

export interface TargetCheck {
  /**
   * flat, append, append-concurrent: the store rows (size = delegations in store); sched: the scheduling rows (size =
   * tasks).
   */
  kind: 'flat' | 'append' | 'append-concurrent' | 'sched';
  size: number;
  /** sched: the concurrency and worker of the configuration. */
  concurrency?: number;
  worker?: SchedWorkerKind;
  /** Baton commits/s (median) at `size`; sched: Baton's wall ms. */
  figure: number;
  /** How to print the figure (default: as a rate). */
  figureLabel?: string;
  reference: number;
  referenceLabel: string;
  ratio: number;
  threshold: number;
  /** The ratio must stay at or below the threshold (sched) rather than reach it. */
  atMost?: boolean;
  holds: boolean;
  description: string;
  /**
   * The same ratio taken per repetition round (figure and reference measured minutes apart at most), median (min–max).
   */
  paired: Summary;
}

/** Every target: the store's, then the scheduler's (when its rows ran). */
export function evaluateTargets(result: StoreBenchResult, sched?: SchedBenchResult): TargetCheck[] {
  return [...evaluateStoreTargets(result), ...evaluateSchedTargets(sched)];
}

export function evaluateStoreTargets(result: StoreBenchResult): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const bySize = [...result.sizes].sort((a, b) => a.size - b.size);
  const smallest = bySize[0];
  for (const s of bySize) {
    const figure = s.baton.commitsPerSecond.median;
    const raw = s.rawAppend.median;
    checks.push({
      kind: 'append',
      size: s.size,
      figure,
      reference: raw,
      referenceLabel: `raw append+fdatasync: ${formatRate(raw)} lines/s`,
      ratio: figure / raw,
      threshold: APPEND_SHARE,
      holds: figure >= APPEND_SHARE * raw,
      paired: pairedRatios(s.baton.commitsPerSecond.samples, s.rawAppend.samples),
      description: `Baton commits/s ≥ ${APPEND_SHARE} × raw append rate at ${count(s.size)} delegations`,
    });
    const concurrent = s.batonConcurrent;
    if (concurrent) {
      const rate = concurrent.commitsPerSecond.median;
      checks.push({
        kind: 'append-concurrent',
        size: s.size,
        figure: rate,
        reference: raw,
        referenceLabel: `raw append+fdatasync: ${formatRate(raw)} lines/s`,
        ratio: rate / raw,
        threshold: APPEND_SHARE,
        holds: rate >= APPEND_SHARE * raw,
        paired: pairedRatios(concurrent.commitsPerSecond.samples, s.rawAppend.samples),
        description: `Baton commits/s with ${concurrent.callers} callers at once ≥ ${APPEND_SHARE} × raw append rate at ${count(s.size)} delegations`,
      });
    }
    if (smallest && s !== smallest) {
      const base = smallest.baton.commitsPerSecond.median;
      checks.push({
        kind: 'flat',
        size: s.size,
        figure,
        reference: base,
        referenceLabel: `Baton at ${count(smallest.size)}: ${formatRate(base)} commits/s`,
        ratio: figure / base,
        threshold: 1 / FLAT_FACTOR,
        holds: figure >= base / FLAT_FACTOR,
        paired: pairedRatios(s.baton.commitsPerSecond.samples, smallest.baton.commitsPerSecond.samples),
        description: `commit cost flat in store size: rate at ${count(s.size)} ≥ rate at ${count(smallest.size)} / ${FLAT_FACTOR}`,
      });
    }
  }
  return checks;
}

/** Sample i of each was taken in the same repetition round. */
function pairedRatios(figures: readonly number[], references: readonly number[]): Summary {
  const n = Math.min(figures.length, references.length);
  return summarize(Array.from({ length: n }, (_, i) => figures[i]! / references[i]!));
}

const mark = (holds: boolean): string => (holds ? '✓' : '✗');
const count = (n: number): string => n.toLocaleString('en-US');
const ratio = (r: number): string => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '—');
const spread = (v: Summary): string =>
  v.samples.length > 0 ? `${v.median.toFixed(2)} (${v.min.toFixed(2)}–${v.max.toFixed(2)})` : '—';
const ms = (v: number): string => (v >= 100 ? v.toFixed(0) : v.toFixed(1));

/** The results table: one line per measured row and size, targets next to the Baton rows. */
export function resultsTable(
  result: StoreBenchResult,
  checks = evaluateTargets(result),
  sched?: SchedBenchResult,
): string {
  const lines = [
    '| Row | Size | Figure: median (min–max) | Reference | Ratio (figure ÷ reference) | Target | Holds |',
    '|---|--:|--:|---|--:|---|:-:|',
  ];
  const bySize = [...result.sizes].sort((a, b) => a.size - b.size);
  for (const s of bySize) {
    const baton = s.baton.commitsPerSecond;
    const own = checks.filter((c) => (c.kind === 'append' || c.kind === 'flat') && c.size === s.size);
    const first = own[0];
    const batonLabel = '**1. Baton store** — commits/s';
    const size = `${count(s.size)} delegations`;
    if (!first) lines.push(`| ${batonLabel} | ${size} | ${formatSummary(baton)} | — | — | — | |`);
    for (const [i, c] of own.entries()) {
      const target =
        c.kind === 'flat'
          ? `≥ 1/${FLAT_FACTOR} (${c.threshold.toFixed(2)}×): flat in store size`
          : `≥ ${c.threshold.toFixed(2)}× raw append`;
      lines.push(
        `| ${i === 0 ? batonLabel : '″'} | ${size} | ${i === 0 ? formatSummary(baton) : '″'} | ${c.referenceLabel} | ${ratio(c.ratio)} | ${target} | ${mark(c.holds)} |`,
      );
    }
    const concurrent = s.batonConcurrent;
    const concurrentCheck = checks.find((c) => c.kind === 'append-concurrent' && c.size === s.size);
    if (concurrent && concurrentCheck) {
      lines.push(
        `| **1b. Baton store, ${concurrent.callers} callers at once** — commits/s | ${size} | ${formatSummary(concurrent.commitsPerSecond)} | ${concurrentCheck.referenceLabel} | ${ratio(concurrentCheck.ratio)} | ≥ ${concurrentCheck.threshold.toFixed(2)}× raw append | ${mark(concurrentCheck.holds)} |`,
      );
    }
    lines.push(
      `| 2. Raw append + fdatasync (${s.rawAppend.lineBytes}-byte lines) — lines/s | ${size} | ${formatSummary(s.rawAppend)} | the disk's limit | — | — | |`,
    );
    lines.push(
      s.sqlite
        ? `| 3. better-sqlite3, WAL, synchronous=FULL — commits/s | ${size} | ${formatSummary(s.sqlite)} | Baton: ${formatRate(baton.median)} | ${ratio(s.sqlite.median / baton.median)} | — | |`
        : `| 3. better-sqlite3, WAL, synchronous=FULL — commits/s | ${size} | not measured: better-sqlite3 ${result.sqliteMissing ?? 'missing'} | — | — | — | |`,
    );
    lines.push(
      `| 4. sql.js, whole export + fsync per commit — commits/s | ${size} | ${formatSummary(s.sqlJsExport)} | Baton: ${formatRate(baton.median)} | ${ratio(s.sqlJsExport.median / baton.median)} | — | |`,
    );
  }
  lines.push(...schedResultRows(sched, checks));
  return lines.join('\n');
}

export function targetSummary(checks: readonly TargetCheck[]): string {
  if (checks.length === 0) return '- (no target applies to this run)';
  return checks
    .map(
      (c) =>
        `- ${mark(c.holds)} ${c.description}: ${c.figureLabel ?? formatRate(c.figure)} vs ${c.referenceLabel} → ${ratio(c.ratio)} (needs ${c.atMost ? '≤' : '≥'} ${c.threshold.toFixed(2)}×; ` +
        `per round: median ${ratio(c.paired.median)}, ${ratio(c.paired.min)}–${ratio(c.paired.max)}, ${c.paired.samples.filter((r) => (c.atMost ? r <= c.threshold : r >= c.threshold)).length} of ${c.paired.samples.length} rounds hold)`,
    )
    .join('\n');
}

/** Amortized cost of the automatic snapshots, from the measured snapshot time and journal line size. */
export function snapshotAmortization(s: SizeResult): {
  commitsBetween: number;
  msPerCommit: number;
  effectiveRate: number;
} {
  // FileStore snapshots when the journal since the last one reaches max(8 MiB, snapshot size), or 10,000 lines.
  const threshold = Math.max(DEFAULT_SNAPSHOT_MIN_BYTES, s.baton.snapshotBytes);
  const commitsBetween = Math.min(
    SNAPSHOT_MAX_LINES,
    s.baton.avgLineBytes > 0 ? threshold / s.baton.avgLineBytes : Number.POSITIVE_INFINITY,
  );
  const msPerCommit = s.baton.snapshotMs / commitsBetween;
  const rate = s.baton.commitsPerSecond.median;
  return { commitsBetween, msPerCommit, effectiveRate: 1 / (1 / rate + msPerCommit / 1000) };
}

export function detailsTable(result: StoreBenchResult): string {
  const lines = [
    '| Delegations | Rows seeded | Journal line, avg bytes | Journal lines per cycle | fdatasync calls per commit | ms per commit in fdatasync: median (min–max) | ms per commit outside fdatasync: median (min–max) | Outside-fdatasync time ÷ smallest size | Engine.open ms: median (min–max) | Snapshot MB | Snapshot write ms | Commits between automatic snapshots | Amortized snapshot ms per commit | Commits/s with snapshots amortized |',
    '|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const sorted = [...result.sizes].sort((a, b) => a.size - b.size);
  const baseOther = sorted[0]?.baton.otherMsPerCommit.median ?? Number.NaN;
  for (const s of sorted) {
    const b = s.baton;
    const snap = snapshotAmortization(s);
    lines.push(
      `| ${count(s.size)} | ${count(b.storeRows)} | ${b.avgLineBytes.toFixed(0)} | ${b.linesPerCycle.toFixed(2)} | ${b.flushesPerCommit.toFixed(2)} | ${spread(b.flushMsPerCommit)} | ${spread(b.otherMsPerCommit)} | ${ratio(b.otherMsPerCommit.median / baseOther)} | ${ms(b.openMs.median)} (${ms(b.openMs.min)}–${ms(b.openMs.max)}) | ${(b.snapshotBytes / 1e6).toFixed(1)} | ${ms(b.snapshotMs)} | ${count(Math.round(snap.commitsBetween))} | ${snap.msPerCommit.toFixed(3)} | ${formatRate(snap.effectiveRate)} |`,
    );
  }
  return lines.join('\n');
}

/** Plain statements derived from the figures: where a Baton commit's time goes at each size. */
export function readingNotes(result: StoreBenchResult): string {
  const notes: string[] = [];
  for (const s of [...result.sizes].sort((a, b) => a.size - b.size)) {
    const wall = 1000 / s.baton.commitsPerSecond.median;
    const inFlush = s.baton.flushMsPerCommit.median;
    const other = s.baton.otherMsPerCommit.median;
    const raw = 1000 / s.rawAppend.median;
    const split =
      s.baton.flushesPerCommit > 0
        ? `${inFlush.toFixed(2)} ms of it inside fdatasync and ${other.toFixed(2)} ms outside (medians)`
        : 'the fdatasync calls could not be timed';
    const bound =
      other >= inFlush ? 'its own work costs more than the flush' : 'the flush costs more than its own work';
    notes.push(
      `- ${count(s.size)} delegations: a Baton commit takes ${wall.toFixed(2)} ms (from the median rate), ${split}: ${bound}. ` +
        `A bare append + fdatasync of the same line takes ${raw.toFixed(2)} ms. With a free flush Baton could not pass ~${formatRate(1000 / other)} commits/s; ` +
        `${APPEND_SHARE} × the raw rate needs ≤ ${(raw / APPEND_SHARE).toFixed(2)} ms per commit in all.`,
    );
  }
  const sorted = [...result.sizes].sort((a, b) => a.size - b.size);
  const first = sorted[0];
  const last = sorted[sorted.length - 1];
  if (first && last) {
    const range = (f: (s: SizeResult) => number): string =>
      first === last ? formatRate(f(first)) : `${formatRate(f(first))} → ${formatRate(f(last))}`;
    const sqlite = first.sqlite
      ? `better-sqlite3 (WAL, synchronous=FULL) makes ${range((s) => s.sqlite?.median ?? Number.NaN)} commits/s, ${range((s) => (s.sqlite?.median ?? Number.NaN) / s.baton.commitsPerSecond.median)}× Baton's rate`
      : `better-sqlite3 was not measured: ${result.sqliteMissing ?? 'missing'}`;
    notes.push(
      `- ${sqlite}; ` +
        `the whole-export way makes ${range((s) => s.sqlJsExport.median)} commits/s as the database grows to ${(last.sqlJsExport.fileBytes / 1e6).toFixed(1)} MB — the cost the journal exists to avoid.`,
    );
  }
  return notes.join('\n');
}

/**
 * The targets that do not hold, each argued from this run's figures, with the target
 * proposed in its place and whether that holds. Empty when every target holds.
 */
export function arguedTargets(
  result: StoreBenchResult,
  checks: readonly TargetCheck[],
  schedResult?: SchedBenchResult,
): string {
  const parts: string[] = [];
  const sizes = [...result.sizes].sort((a, b) => a.size - b.size);
  const oneCaller = checks.filter((c) => c.kind === 'append' && !c.holds);
  if (oneCaller.length > 0) {
    const s = sizes.find((x) => x.size === oneCaller[0]!.size)!;
    const raw = 1000 / s.rawAppend.median;
    const inFlush = s.baton.flushMsPerCommit.median;
    const other = s.baton.otherMsPerCommit.median;
    const proposed = sizes.map(
      (x) =>
        `${mark(x.baton.commitsPerSecond.median >= ONE_CALLER_APPEND_SHARE * x.rawAppend.median)} ${ratio(x.baton.commitsPerSecond.median / x.rawAppend.median)} at ${count(x.size)}`,
    );
    const concurrent = s.batonConcurrent;
    parts.push(
      `**One caller, ≥ ${APPEND_SHARE}× the raw append rate (row 1).** One caller waits for each commit to be on disk before it makes the next, so a commit costs its flush plus its own work, one after the other. ` +
        `Here a bare append + fdatasync takes ${raw.toFixed(2)} ms, so ${APPEND_SHARE}× allows ${(raw / APPEND_SHARE).toFixed(2)} ms per commit in all (at ${count(s.size)} delegations). ` +
        `Baton's flush alone takes ${inFlush.toFixed(2)} ms, and its own work — the SQL statements of a real claim, heartbeat or ingest in sql.js, the journal line, reading and checking the artifact — ${other.toFixed(2)} ms, measured outside fdatasync and so the same on any disk. ` +
        `${other >= raw / APPEND_SHARE ? 'The own work alone is over the budget: even an infinitely fast disk would not reach the target with one caller.' : `The two together are over the budget; the flush is the disk's and the own work is ${((100 * other) / (other + inFlush)).toFixed(0)}% of the commit.`} ` +
        `It is a limit of one caller, not of the store: with ${concurrent ? concurrent.callers : 'several'} callers (row 1b) a flush covers every line written before it` +
        `${concurrent ? ` (${concurrent.commitsPerFlush.toFixed(1)} commits per fdatasync here)` : ''} and runs on the thread pool while the next transactions do their work. ` +
        `Proposed for one caller: ≥ ${ONE_CALLER_APPEND_SHARE}× the raw append rate — ${proposed.join(', ')} — and own work per commit flat in the size of the store (the "flat" rows).`,
    );
  }
  const concurrentFailing = checks.filter((c) => c.kind === 'append-concurrent' && !c.holds);
  if (concurrentFailing.length > 0) {
    const s = sizes.find((x) => x.size === concurrentFailing[0]!.size)!;
    const raw = 1000 / s.rawAppend.median;
    parts.push(
      `**Several callers, ≥ ${APPEND_SHARE}× the raw append rate (row 1b): ✗ at ${concurrentFailing.map((c) => `${count(c.size)} (${ratio(c.ratio)})`).join(', ')}.** ` +
        `With flushes shared and overlapped, a commit costs the JavaScript thread its own work only: ${(1000 / s.batonConcurrent!.commitsPerSecond.median).toFixed(2)} ms per commit here against the ${(raw / APPEND_SHARE).toFixed(2)} ms the target allows. ` +
        `Most of it is SQLite itself in WebAssembly (see \`node --import tsx test/bench/storeProfile.ts 1000 2000 8\`); what is left to take is fewer statements per engine call.`,
    );
  }
  const sched = schedArgued(schedResult, checks);
  if (sched) parts.push(sched);
  return parts.length === 0
    ? ''
    : `## Targets that do not hold, argued

${parts.join('\n\n')}
`;
}

export function renderMarkdown(
  result: StoreBenchResult,
  checks = evaluateTargets(result),
  sched?: SchedBenchResult,
): string {
  const m = result.machine;
  const o = result.options;
  const sizes = [...result.sizes].sort((a, b) => a.size - b.size);
  const cycles = sizes.map((s) => `${result.options.cycles[s.size]} at ${count(s.size)}`).join(', ');
  const sqlJsCommits = sizes.map((s) => `${s.sqlJsExport.commitsPerRep} at ${count(s.size)}`).join(', ');
  const holdsAll = checks.every((c) => c.holds);
  const wholeMs = result.durationMs + (sched?.durationMs ?? 0);
  const minutes = (ms: number): string =>
    ms >= 120_000 ? `${(ms / 60000).toFixed(1)} min` : `${(ms / 1000).toFixed(0)} s`;
  return `# Benchmarks: durable commits of the Baton store, and scheduling overhead

<!-- Generated by \`npm run bench\` (test/bench/run.ts, test/bench/report.ts). Every run rewrites this file: edit the generator, not the file. -->

How many durable commits per second the Baton store (DESIGN §3: sql.js in memory, one
fsynced journal line per commit, snapshots now and then) sustains through the public
\`Engine\` API, how that changes with the size of the store, and how it compares with the
disk's own limit and two other ways of making SQLite durable (rows 1–4). Every figure is the
median of ${o.reps} repetitions, with the minimum and maximum of the repetitions next to it.

How much Baton's coordinator (DESIGN §4: claim, spawn, supervise, ingest) costs on top of
starting the processes themselves: N trivial tasks, each a real process, driven through
\`engine.coordinate()\` next to a bare promise pool starting the same processes the same way at
the same concurrency (rows 5–6), and how long a ready task waits for its process to start.${sched ? ` Every figure is the median of ${sched.options.reps} repetition${sched.options.reps === 1 ? '' : 's'} (min–max next to it).` : ''}

## Machine and run

- Date: ${m.date}
- CPUs: ${m.cpus} (\`nproc\`; ${m.cpuModel}), memory ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}
- Disk: ${m.disk}. Every row worked in temporary folders under \`os.tmpdir()\` ${result.sameDevice ? 'on this one device (checked)' : '**on different devices** (the rows are not comparable)'}; they are removed afterwards.
- Store sizes: ${sizes.map((s) => count(s.size)).join(', ')} delegations; ${o.reps} repetitions; Baton cycles per repetition: ${cycles} (after ${o.warmupCycles} untimed warm-up cycles); seeded history: ${o.history}.
- The rows run interleaved: each repetition round measures every row at every size (sizes in rotating order), so drift in the disk's fsync latency — large on shared virtual disks — hits every row alike instead of favouring whichever ran last.
${schedMachineLine(sched)}
- Store and scheduling rows: ${minutes(wholeMs)} (store rows ${minutes(result.durationMs)}${sched ? `, scheduling rows ${minutes(sched.durationMs)}` : ''}).

## How to reproduce

\`\`\`sh
npm run bench                                   # full run; rewrites docs/benchmarks.md
npm run bench -- --quick                        # smoke run with tiny sizes; prints, writes nothing
BATON_BENCH_SIZES=1000,10000 npm run bench      # other store sizes
BATON_BENCH_SCHED_TASKS=100 npm run bench       # fewer tasks in the scheduling rows
npm run bench -- --only engine                  # only the engine rows (heartbeat latency, store open, bundle); rewrites their section
npm run bench -- --only agents                  # only the agent-stream rows (1,000 events/s → heartbeats, coordinator CPU); rewrites their section
npm run bench -- --only integration             # only the merge-queue row (50 tasks, integrationBatch 1 vs 8, plain merge); rewrites its section
npm run bench -- --only dashboard               # only the dashboard rows (Chromium); rewrites their section
npm run bench -- --only visible                 # heartbeat → on screen in code-server; rewrites its section
npm run bench -- --only activation              # extension activation with a 10k store vs empty; rewrites its section
BATON_BENCH_EDITOR=0 npm run bench              # everything but the two rows that start code-server (their sections are kept)
npm run bench -- --only pg                      # only the PostgreSQL rows (a cluster of their own, ~3 min); rewrites their section
BATON_BENCH_PG=0 npm run bench                  # everything but the PostgreSQL rows (their section is kept)
node --import tsx test/bench/storeProfile.ts 1000 2000 8   # where a store commit's time goes (CPU profile of rows 1 / 1b)
\`\`\`

The full run installs code-server 4.99.4 into \`.cache/\` on first use (as \`npm test\` does), and better-sqlite3 12 for
row 3 into \`.cache/bench-deps/\` (npm compiles it: a few minutes, once; it is not a dependency of Baton, and
\`BATON_BENCH_BETTER_SQLITE=0\` leaves the row out), and drives Debian's
Chromium through playwright-core for the dashboard and editor rows; it takes about half an hour on 2 cores, plus the
merge-queue row's three rounds (each a few minutes of git on an idle machine, far more on a loaded one).

Other knobs: \`BATON_BENCH_REPS\` (default 15, at least 5 for a real figure), \`BATON_BENCH_CYCLES\`
(timed claim → heartbeat → ingest cycles per repetition, default 200), \`BATON_BENCH_HISTORY=full\`
(seed runtimes, ingestions and event-log rows too), \`BATON_BENCH_TMP\` (where the temporary
folders go), \`--out <file>\` / \`--no-write\`. Scheduling rows: \`BATON_BENCH_SCHED_TASKS\` (tasks with the
bash worker, default 500; 0 skips them), \`BATON_BENCH_SCHED_NODE_TASKS\` (tasks with the Node worker,
default 100; 0 skips them), \`BATON_BENCH_SCHED_CONCURRENCY\` (default 1,4,8), \`BATON_BENCH_SCHED_REPS\`
(default 3). Row 1b: \`concurrentCallers\` of \`runStoreBench\` (default 8). PostgreSQL rows: \`BATON_BENCH_PG_PROCESSES\` (default 1,4,16), \`BATON_BENCH_PG_CYCLES\` (cycles per repetition and configuration, default 160), \`BATON_BENCH_PG_REPS\` (default 3), \`BATON_BENCH_PG_BEATS\` (heartbeats of the NOTIFY row, default 300; 0 skips it), \`BATON_BENCH_PG_WORKERS\` (resident workers, default 1000; 0 skips them), \`BATON_BENCH_PG_WORKER_PROCESSES\` (default 10), \`BATON_BENCH_PG_SECONDS\` (default 30), \`BATON_BENCH_TEAM_TASKS\` (tasks of the two-machine row, default 200; 0 skips it). Merge-queue row: \`BATON_BENCH_INTEGRATION_TASKS\` (default 50; 0 skips it), \`BATON_BENCH_INTEGRATION_BATCHES\` (default 1,8), \`BATON_BENCH_INTEGRATION_REPS\` (default 3). From code: \`runBench()\` in test/bench/run.ts (without scheduling sizes it runs those rows
at smoke size, and never the editor rows; the PostgreSQL rows only when given \`pg\`, the merge-queue row only when given \`integrationTasks\`).

## Results

${resultsTable(result, checks, sched)}

Targets (${holdsAll ? 'all hold' : 'not all hold'}):

${targetSummary(checks)}

${arguedTargets(result, checks, sched)}
## Reading the results

${readingNotes(result)}
${schedReadingNotes(sched, checks)}

## Details of the Baton store row

${detailsTable(result)}

- *In / outside fdatasync*: the bench times every \`fdatasync\`/\`fsync\` the store makes during the timed
  cycles (by wrapping the \`node:fs\` functions) and splits each commit's wall time in two. Outside is the
  store's and engine's own work — sql.js statements, journal encoding and checksum, directory listings,
  the process lock, change announcements, reading and validating the artifact — which does not depend on
  how fast the disk flushes: a commit cannot be faster than it even on an infinitely fast disk, and it is
  the disk-independent way to see whether commit cost grows with the store.
- *Journal lines per cycle* checks that each engine call is exactly one durable commit (3 per cycle).
- *Snapshot* figures come from \`store.snapshot()\` right after seeding. The store writes one by itself
  when the journal since the last snapshot reaches max(8 MiB, snapshot size) or 10,000 lines; the last two columns
  spread that cost over the commits in between. Closing the engine also snapshots once 1 MiB of
  journal has piled up; that happens outside the timed loop here.

${schedDetails(sched)}
## What each row measures

1. **Baton store.** A workspace is created and the engine opened once, so the migrations run.
   The history is then seeded in bulk through the store port (\`FileStore.transact\`, ~${count(SEED_ROWS_PER_TX)} rows
   per transaction): N delegations, all COMPLETED (result PASS), in seeded runs of up to ${count(SEED_RUN_TASKS)}
   tasks with the plan text, task rows, and a dependency on the previous task for 9 tasks in 10${o.history === 'full' ? ', plus the ended runtime, the accepted ingestion and the six event-log rows each completed delegation leaves' : ''}.
   A separate run is started with \`engine.startRun(plan)\` from a plan of independent tasks (no
   dependencies, no risk tags), and a small valid \`baton-result\` artifact (contract
   baton-result-v1, status PASS, \`artifacts: []\`) is written for each of its tasks beforehand.
   Then \`store.snapshot()\` and close, so the timed phase starts from a snapshot like a real store.
   Each repetition opens the engine, runs warm-up cycles, then times cycles of
   \`engine.claimTask({runId, taskId, leaseSeconds})\` → \`engine.heartbeat({runtimeId, token, progress})\`
   → \`engine.ingest({delegationId, runId, artifactPath})\`, each call one durable commit (the
   ingest also reads and validates the artifact, as it always does). commits/s = 3 × cycles ÷ seconds.
1b. **Baton store, several callers at once.** The same cycles in the same workspace, shared among
   ${sizes[0]?.batonConcurrent?.callers ?? 'several'} callers that run together against one engine, each doing claim → heartbeat → ingest in
   turn — what a coordinator driving that many workers asks of the store. A commit still resolves only once
   its journal line is on disk; lines written while a flush runs share the next one (group commit, see
   docs/architecture.md). Run right after row 1 in each round.
2. **Raw append + fdatasync** — the disk's limit for Baton's way of committing: a loop appending lines
   of the average size of the journal lines Baton wrote in the timed cycles (measured from the
   \`journal-*.log\` files) to a file opened with \`'a'\`, calling \`fs.fdatasyncSync\` after each; lines/s,
   as many lines per repetition as Baton made commits. Run right after each Baton repetition.
3. **better-sqlite3** (v12; not a dependency of Baton: \`npm run bench\` installs it into \`.cache/bench-deps/\` on first
   use, and when it cannot be had the row says so) with \`journal_mode=WAL\`, \`synchronous=FULL\`: a delegations table and a
   runtimes table (the Baton columns and indexes) holding N completed delegations; each cycle is
   three small transactions shaped like Baton's — insert a RUNNING delegation and its runtime
   (claim), update the runtime's lease (heartbeat), complete the delegation and end the runtime
   (ingest). Same number of cycles as the Baton row.
4. **sql.js, whole export per commit** — the naive way to make sql.js durable: the same tables and
   cycles as row 3, in sql.js (\`loadSqlJs\`), and after every commit \`db.export()\` of the whole
   database written over one file and fsynced. Commits per repetition: ${sqlJsCommits} (the
   database file is ${sizes.map((s) => `${(s.sqlJsExport.fileBytes / 1e6).toFixed(1)} MB at ${count(s.size)}`).join(', ')}).
${schedWhatIsMeasured(sched)}`;
}
