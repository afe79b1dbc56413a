/**
 * Merge-queue row of `npm run bench` (issue 27, "Done when"): N passed tasks integrated onto `main` with
 * `integrationBatch` 1 and with a larger batch (docs/isolation.md, "Batching with bisection"), each beside a plain
 * sequential merge of the same N branches with the same verify command (test/bench/fixtures/plainMerge.sh).
 *
 * Baton side: a git repository with `isolation: "worktree"`, `verifyIntegrated` set to one cheap `node -e` check,
 * `maxConcurrency` = N so every task runs at once, and N process workers (test/bench/fixtures/integrationWorker.js)
 * that each write their own file `tasks/<id>.txt` and pass — after waiting until all N have started, so they finish
 * together and batches form. Driven in this process: `engine.coordinate()` →
 * `coordinator.run()`, as the scheduling rows.
 *
 * Reference: a repository with the same first commit and N branches, each one commit writing the same file with the
 * same content from the same base; the script merges them one after another (`git merge --no-ff`, as Baton's `merge`
 * strategy) and runs the same verify command after each merge in the merged working tree.
 *
 *   node --import tsx test/bench/integrationBench.ts [--tasks 50] [--batches 1,8] [--reps 3]
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Engine } from '../../src/engine/index';
import { git, initRepo } from '../support/gitRepo';
import { schedPlanText } from './schedBench';
import { formatRate, median, nowMs, summarize, type Summary } from './stats';

const WORKER = resolve(__dirname, 'fixtures/integrationWorker.js');
const PLAIN_MERGE = resolve(__dirname, 'fixtures/plainMerge.sh');
const PLAN_FILE = 'plan.md';

/**
 * The verify command of both sides: records where it ran (one line per run, in the file named by its argument), and
 * checks that every `tasks/<id>.txt` of the tree holds `<id> done`. A few ms of work on top of Node starting.
 */
export const CHECK_SCRIPT = [
  "const fs = require('node:fs');",
  "fs.appendFileSync(process.argv[1], process.cwd() + '\\n');",
  "const files = fs.existsSync('tasks') ? fs.readdirSync('tasks').filter((f) => f.endsWith('.txt')) : [];",
  'for (const f of files) {',
  "  if (fs.readFileSync('tasks/' + f, 'utf8') !== f.slice(0, -4) + ' done\\n') {",
  "    console.error('tasks/' + f + ' is wrong');",
  '    process.exit(1);',
  '  }',
  '}',
].join('\n');

export const INTEGRATION_SECTION = {
  heading: '## Merge queue: integration batched vs one at a time, beside a plain sequential merge',
  end: '<!-- integration:end -->',
};

export interface IntegrationBenchOptions {
  /** Passed tasks to integrate per run (0 skips the row). */
  tasks: number;
  /** `integrationBatch` values, one Baton configuration each (the first is the one the others are set beside). */
  batches: number[];
  /** Rounds; each runs every configuration and the plain merge once, in rotating order. */
  reps: number;
  tmpRoot?: string;
  log?: (line: string) => void;
}

export interface BatonIntegrationRep {
  batch: number;
  /** `coordinator.run()` from its call to its return: worktrees, workers, ingestion and integration. */
  runMs: number;
  /** The integration phase: the run's first `integration:committed` event → its last `integration:done` event. */
  integrationMs: number;
  /** The last worker's last moment (result written) → the last `integration:done`: what integration adds at the end. */
  tailMs: number;
  /** Verify runs on merged trees, from the events: Σ `ran` of `integration:verified`, plus each failed verification. */
  verifyRuns: number;
  /** The same, counted by the verify command itself (one line per run). */
  verifyRunsCounted: number;
  /** `integration:batch-started` events (0 with batch 1: one at a time). */
  batches: number;
  /**
   * A batch whose merged tree passed is combined again before the target moves (its receipt makes the verification
   * free: a second `integration:verifying` … `integration:verified` with `ran: 0`): the time from the verification
   * that ran to that second one, summed over the run.
   */
  recombineMs: number;
  /** Every worker had started before the first one finished (the tasks finished together). */
  together: boolean;
  commits: number;
  merges: number;
  load: number;
}

export interface PlainMergeRep {
  /** The script's wall time: N merges and N verify runs, one after another. */
  wallMs: number;
  verifyRuns: number;
  commits: number;
  merges: number;
  /** Committing the N branches beforehand (`git add` + `git commit` each; setup, not in wallMs). */
  commitSetupMs: number;
  load: number;
}

export interface IntegrationBenchResult {
  options: Omit<IntegrationBenchOptions, 'log'>;
  baton: Array<{ batch: number; reps: BatonIntegrationRep[] }>;
  plain: PlainMergeRep[];
  durationMs: number;
  load: { start: number[]; end: number[]; cores: number };
  gitVersion: string;
}

const taskIds = (n: number): string[] => Array.from({ length: n }, (_, i) => `T${String(i + 1).padStart(2, '0')}`);

function configText(options: { tasks: number; batch: number; counter: string; trace: string }): string {
  return JSON.stringify(
    {
      defaultWorker: 'edit',
      workers: {
        edit: {
          type: 'process',
          command: process.execPath,
          args: [WORKER, '{taskId}'],
          promptOnStdin: true,
          env: { BENCH_TRACE: options.trace, BENCH_TOGETHER: String(options.tasks) },
        },
      },
      retryBackoffSeconds: 0,
      maxConcurrency: Math.min(256, options.tasks),
      isolation: 'worktree',
      integration: 'merge',
      verifyIntegrated: [checkCommand(options.counter)],
      integrationBatch: options.batch,
    },
    null,
    2,
  );
}

const checkCommand = (counter: string): string[] => [process.execPath, '-e', CHECK_SCRIPT, counter];
/** What each task's worker writes (test/bench/fixtures/integrationWorker.js); the plain branches hold the same. */
const editsFor = (ids: readonly string[]): Record<string, Record<string, string>> =>
  Object.fromEntries(ids.map((id) => [id, { [`tasks/${id}.txt`]: `${id} done\n` }]));
const lines = (file: string): string[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];

/**
 * A repository like the Baton side's (the same config and plan in its first commit), `scratch` beside it for the
 * counter and trace files (outside the repository, so they are never part of a tree).
 */
function setUp(root: string, prefix: string, tasks: number, batch: number) {
  const dir = mkdtempSync(join(root, prefix));
  const workspace = join(dir, 'repo');
  const scratch = join(dir, 'scratch');
  mkdirSync(join(workspace, '.baton'), { recursive: true });
  mkdirSync(scratch);
  const ids = taskIds(tasks);
  const counter = join(scratch, 'verify-runs.txt');
  const trace = join(scratch, 'workers.txt');
  writeFileSync(join(workspace, '.baton', 'config.json'), configText({ tasks, batch, counter, trace }));
  writeFileSync(join(workspace, PLAN_FILE), schedPlanText(ids));
  const base = initRepo(workspace, { 'README.md': '# Merge-queue bench\n' });
  return { dir, workspace, ids, counter, trace, base };
}

async function batonRep(root: string, tasks: number, batch: number): Promise<BatonIntegrationRep> {
  const load = loadavg()[0]!;
  const { dir, workspace, ids, counter, trace, base } = setUp(root, `baton-b${batch}-`, tasks, batch);
  try {
    const engine = await Engine.open({ workspace, follow: true });
    try {
      const { run } = await engine.runForPlan(PLAN_FILE);
      const taken = await engine.coordinate({ runId: run.id, maxConcurrency: Math.min(256, tasks) });
      if (!('coordinator' in taken)) throw new Error(`the bench could not take the coordinator lease: ${taken.why}`);
      const t0 = nowMs();
      const outcome = await taken.coordinator.run();
      const runMs = nowMs() - t0;
      if (outcome.kind !== 'finished' || outcome.status !== 'completed') {
        const gates = await engine.listGates({ runId: run.id, status: 'open' });
        const why = gates.map((gate) => `${gate.kind} ${gate.taskId}: ${gate.reason}`).join('; ');
        throw new Error(`the batch-${batch} bench run did not complete: ${JSON.stringify(outcome)} ${why}`);
      }
      const events = await engine.listEvents(run.id, 0, 1_000_000);
      const at = (type: string): number[] => events.filter((e) => e.type === type).map((e) => e.at);
      const committed = at('integration:committed');
      const done = at('integration:done');
      if (done.length !== tasks) throw new Error(`${done.length} of ${tasks} tasks integrated`);
      const verified = events
        .filter((e) => e.type === 'integration:verified')
        .map((e) => (e.data as { ran: number }).ran);
      const failures = at('integration:failed').length + at('integration:batch-split').length;
      // A passed verification of a tree, then the same tree verifying again from its receipt: the batch recombined.
      let recombineMs = 0;
      const passedAt = new Map<string, number>();
      for (const e of events) {
        const d = e.data as { tree?: string; ran?: number };
        if (e.type === 'integration:verified' && d.tree && (d.ran ?? 0) > 0) passedAt.set(d.tree, e.at);
        if (e.type === 'integration:verifying' && d.tree && passedAt.has(d.tree)) {
          recombineMs += e.at - passedAt.get(d.tree)!;
          passedAt.delete(d.tree);
        }
      }
      const trail = lines(trace).map((l) => l.split(' '));
      const starts = trail.filter((t) => t[0] === 'start').map((t) => Number(t[2]));
      const ends = trail.filter((t) => t[0] === 'end').map((t) => Number(t[2]));
      const missing = ids.filter((id) => !existsSync(join(workspace, 'tasks', `${id}.txt`)));
      if (missing.length) throw new Error(`not on main after the run: ${missing.join(', ')}`);
      return {
        batch,
        runMs,
        integrationMs: Math.max(...done) - Math.min(...committed),
        tailMs: Math.max(...done) - Math.max(...ends),
        verifyRuns: verified.reduce((a, b) => a + b, 0) + failures,
        verifyRunsCounted: lines(counter).length,
        batches: at('integration:batch-started').length,
        recombineMs,
        together: starts.length === tasks && Math.max(...starts) <= Math.min(...ends),
        commits: Number(git(workspace, 'rev-list', '--count', `${base}..main`)),
        merges: Number(git(workspace, 'rev-list', '--merges', '--count', `${base}..main`)),
        load,
      };
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function plainRep(root: string, tasks: number): Promise<PlainMergeRep> {
  const { dir, workspace, ids, counter, base } = setUp(root, 'plain-', tasks, 1);
  try {
    // The same N branches: from the same base, one commit each writing what that task's worker writes.
    let commitSetupMs = 0;
    for (const [id, files] of Object.entries(editsFor(ids))) {
      git(workspace, 'checkout', '--quiet', '-b', `task/${id}`, 'main');
      for (const [path, content] of Object.entries(files)) {
        mkdirSync(join(workspace, 'tasks'), { recursive: true });
        writeFileSync(join(workspace, path), content);
      }
      const t = nowMs();
      git(workspace, 'add', '--all');
      git(workspace, 'commit', '--quiet', '--no-verify', '-m', `task ${id}`);
      commitSetupMs += nowMs() - t;
      git(workspace, 'checkout', '--quiet', 'main');
    }
    const branches = join(dir, 'scratch', 'branches.txt');
    writeFileSync(branches, ids.map((id) => `task/${id}\n`).join(''));
    const load = loadavg()[0]!;
    const t0 = nowMs();
    execFileSync('bash', [PLAIN_MERGE, branches, ...checkCommand(counter)], {
      cwd: workspace,
      env: { ...process.env, LC_ALL: 'C' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const wallMs = nowMs() - t0;
    const missing = ids.filter((id) => !existsSync(join(workspace, 'tasks', `${id}.txt`)));
    if (missing.length) throw new Error(`the plain merge left out ${missing.join(', ')}`);
    return {
      wallMs,
      verifyRuns: lines(counter).length,
      commits: Number(git(workspace, 'rev-list', '--count', `${base}..main`)),
      merges: Number(git(workspace, 'rev-list', '--merges', '--count', `${base}..main`)),
      commitSetupMs,
      load,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runIntegrationBench(options: IntegrationBenchOptions): Promise<IntegrationBenchResult> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const loadStart = loadavg();
  const root = mkdtempSync(join(options.tmpRoot ?? tmpdir(), 'baton-integration-'));
  const baton = options.batches.map((batch) => ({ batch, reps: [] as BatonIntegrationRep[] }));
  const plain: PlainMergeRep[] = [];
  const kinds: Array<number | 'plain'> = [...options.batches, 'plain'];
  try {
    // Interleaved: every round runs every configuration and the plain merge, in rotating order, so drift in the
    // machine's load hits each alike.
    for (let rep = 0; rep < options.reps; rep++) {
      for (let j = 0; j < kinds.length; j++) {
        const kind = kinds[(rep + j) % kinds.length]!;
        if (kind === 'plain') {
          const sample = await plainRep(root, options.tasks);
          plain.push(sample);
          log(
            `integration rep ${rep + 1}/${options.reps} plain merge ×${options.tasks}: ${(sample.wallMs / 1000).toFixed(2)} s, ` +
              `${sample.verifyRuns} verify runs, load ${sample.load.toFixed(1)}`,
          );
        } else {
          const sample = await batonRep(root, options.tasks, kind);
          baton.find((b) => b.batch === kind)!.reps.push(sample);
          log(
            `integration rep ${rep + 1}/${options.reps} Baton batch ${kind} ×${options.tasks}: integration ${(sample.integrationMs / 1000).toFixed(2)} s, ` +
              `run ${(sample.runMs / 1000).toFixed(2)} s, ${sample.verifyRuns} verify runs (${sample.verifyRunsCounted} counted), ` +
              `${sample.batches} batches, together ${sample.together}, load ${sample.load.toFixed(1)}`,
          );
        }
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const { log: _log, ...plainOptions } = options;
  return {
    options: plainOptions,
    baton,
    plain,
    durationMs: Date.now() - started,
    load: { start: loadStart, end: loadavg(), cores: cpus().length },
    gitVersion: execFileSync('git', ['--version'], { encoding: 'utf8' })
      .trim()
      .replace(/^git version /, ''),
  };
}

// ── rendering ─────────────────────────────────────────────────────────────────

const seconds = (s: Summary): string =>
  `${formatRate(s.median / 1000)} (${formatRate(s.min / 1000)}–${formatRate(s.max / 1000)})`;
const count = (values: number[]): string => {
  const s = summarize(values);
  return s.min === s.max ? String(s.median) : `${s.median} (${s.min}–${s.max})`;
};
const ratio = (a: number, b: number): string => `${(a / b).toFixed(2)}×`;
const loads = (l: number[]): string => l.map((v) => v.toFixed(1)).join(' / ');

/** The figures the section and the smoke test read: medians over the rounds. */
export function integrationFigures(r: IntegrationBenchResult) {
  const plainMs = summarize(r.plain.map((p) => p.wallMs));
  const rows = r.baton.map(({ batch, reps }) => ({
    batch,
    integrationMs: summarize(reps.map((x) => x.integrationMs)),
    runMs: summarize(reps.map((x) => x.runMs)),
    tailMs: summarize(reps.map((x) => x.tailMs)),
    verifyRuns: reps.map((x) => x.verifyRuns),
    verifyRunsCounted: reps.map((x) => x.verifyRunsCounted),
    batches: reps.map((x) => x.batches),
    recombineMs: summarize(reps.map((x) => x.recombineMs)),
    commits: reps.map((x) => x.commits),
    merges: reps.map((x) => x.merges),
    together: reps.filter((x) => x.together).length,
    /** Per round: this configuration's integration phase ÷ the plain merge of the same round. */
    perRoundVsPlain: reps.map((x, i) => x.integrationMs / (r.plain[i]?.wallMs ?? Number.NaN)),
  }));
  return { plainMs, rows };
}

export function integrationSection(r: IntegrationBenchResult): string {
  const o = r.options;
  const { plainMs, rows } = integrationFigures(r);
  const first = rows[0]!;
  const repLoads = [...r.baton.flatMap((b) => b.reps.map((x) => x.load)), ...r.plain.map((p) => p.load)];
  const baseRows = rows.map(
    (row) =>
      `| **Baton, \`integrationBatch: ${row.batch}\`** | ${seconds(row.integrationMs)} | ${seconds(row.runMs)} | ${count(row.verifyRuns)} (${count(row.verifyRunsCounted)} counted) | ${row.batch === 1 ? '— (one at a time)' : count(row.batches)} | ${count(row.commits)} (${count(row.merges)} merges) | ${ratio(row.integrationMs.median, plainMs.median)} (per round ${formatRate(median(row.perRoundVsPlain))}×) | ${row.batch === first.batch ? '—' : `${ratio(row.integrationMs.median, first.integrationMs.median)} (whole run ${ratio(row.runMs.median, first.runMs.median)}; verify runs ${ratio(median(row.verifyRuns), median(first.verifyRuns))})`} |`,
  );
  const plainRow = `| plain sequential merge (reference): \`git merge --no-ff\` + the verify command, one branch after another | ${seconds(plainMs)} | — | ${count(r.plain.map((p) => p.verifyRuns))} | — | ${count(r.plain.map((p) => p.commits))} (${count(r.plain.map((p) => p.merges))} merges) | 1.00× | — |`;
  const perTask = rows
    .map(
      (row) =>
        `\`integrationBatch: ${row.batch}\` ${formatRate(row.integrationMs.median / o.tasks)} ms per task (${formatRate(row.tailMs.median / 1000)} s after the last worker finished)`,
    )
    .join('; ');
  const notTogether = rows.filter((row) => row.together < o.reps);
  return `${INTEGRATION_SECTION.heading}

<!-- integration:start — generated by \`npm run bench\` (test/bench/integrationBench.ts); \`npm run bench -- --only integration\` rewrites just this section. -->

${o.tasks} tasks pass at once and are integrated onto \`main\` through the merge queue (docs/isolation.md, "The merge
queue", "Batching with bisection"): \`isolation: "worktree"\`, \`integration: "merge"\`, \`maxConcurrency: ${Math.min(256, o.tasks)}\`,
\`verifyIntegrated\` one cheap command (\`node -e\`: it checks every \`tasks/<id>.txt\` of the tree and records that it
ran), no verify command of their own. Each task is a process worker (test/bench/fixtures/integrationWorker.js) that
writes its own file \`tasks/<id>.txt\` in its worktree and passes, once all ${o.tasks} have started — so they finish
together and batches form. The run is driven in the bench's process (\`engine.coordinate()\` →
\`coordinator.run()\`). Beside it, the reference: test/bench/fixtures/plainMerge.sh merges the same ${o.tasks}
branches with plain git one after another and runs the same verify command after each merge. Median of ${o.reps}
round${o.reps === 1 ? '' : 's'} (min–max); every round runs each configuration and the reference once, in rotating order.

| what | integration phase, s | whole run, s | verify runs | batches | commits on \`main\` | ÷ plain merge | ÷ \`integrationBatch: ${first.batch}\` |
|---|--:|--:|--:|--:|--:|--:|--:|
${[...baseRows, plainRow].join('\n')}

- *Integration phase* (the figure set beside the reference): from the run's first \`integration:committed\` event (the
  first task's work committed in its worktree, ready to integrate) to its last \`integration:done\` (the ${o.tasks}th
  task recorded on \`main\`), by the events' times. It includes committing the other tasks' work (\`git add\`, \`git
  commit\` in each worktree), which the reference's branches have before its clock starts (that took
  ${formatRate(median(r.plain.map((p) => p.commitSetupMs)) / 1000)} s for its ${o.tasks} branches). Per task: ${perTask}.
  *Whole run*: \`coordinator.run()\`, with the ${o.tasks} worktrees, workers and results before it.
- *Verify runs*: on merged trees, from the run's events (Σ \`ran\` of \`integration:verified\`, plus every failed
  verification — none here), and counted by the command itself (one line per run). One per task with
  \`integrationBatch: 1\`; one per batch when every batch passes.
${rows
  .filter((row) => row.batch > 1)
  .map(
    (row) =>
      `- *A batch that passed is combined twice*: the bisection's first step verifies the whole batch, its next step
  (\`integrate\`) merges the same tasks onto the same target again and moves the target (the receipt makes the
  second verification free: \`integration:verified\` with \`ran: 0, reused: 1\`). With \`integrationBatch: ${row.batch}\` the
  time from the verification that ran to the second one was ${formatRate(row.recombineMs.median / 1000)} s of the integration phase
  (median, summed over its batches).\n`,
  )
  .join(
    '',
  )}- *Commits*: \`git rev-list --count <first commit>..main\` — per task its work and its merge commit on both sides.
- *The reference, made fair*: the same first commit (the same config, plan and README), the same ${o.tasks} branches
  (from the same base, one commit each writing the same file with the same content as that task's worker), the same
  order (plan order), the same merge shape (\`--no-ff\`: one merge commit per branch, as Baton's \`merge\`
  strategy), the same verify argv run once per merge in a checkout of the merged tree (the script's own working
  tree; Baton's is a scratch worktree), \`main\` checked out and moved on both sides, both on the same disk, timed
  from the same process. The script does nothing else: no durable record, no scratch worktree, no check of the
  target's head before it moves, no undeclared-file check, no removal of the task's worktree and branch — what Baton
  adds is what the ratio shows.
${notTogether.length ? `- Not every worker had started before the first one finished in ${notTogether.map((row) => `${o.reps - row.together} of ${o.reps} batch-${row.batch} rounds`).join(', ')}: those batches formed from fewer tasks.\n` : ''}
Machine: ${r.load.cores} cores, git ${r.gitVersion}. Load average (1 / 5 / 15 min) ${loads(r.load.start)} at the start,
${loads(r.load.end)} at the end; 1-minute load at the start of each repetition: median ${formatRate(median(repLoads))},
max ${formatRate(Math.max(...repLoads))} — other work shared the machine; the ratios (each round runs every side back to
back) are steadier than the absolute times. Took ${formatRate(r.durationMs / 60_000)} min.

<!-- integration:end -->
`;
}

async function main(): Promise<void> {
  const arg = (name: string, fallback: string): string => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? process.argv[at + 1]! : fallback;
  };
  const result = await runIntegrationBench({
    tasks: Number(arg('--tasks', '50')),
    batches: arg('--batches', '1,8').split(',').map(Number),
    reps: Number(arg('--reps', '3')),
    log: (l) => process.stderr.write(`[bench] ${l}\n`),
  });
  process.stdout.write(integrationSection(result));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
