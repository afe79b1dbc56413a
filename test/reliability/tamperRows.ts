/**
 * Rows of the fault matrix for the target branch and `files:` at integration (issue 15, item
 * 8): a worker moves the target branch through the refs every worktree shares, the user commits
 * on it, a task changes files outside its declaration. The scenarios are shared with
 * test/system/isolation/tamper.test.ts, which asserts more of each.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine, type CoordinatorOutcome, type Gate } from '../../src/engine/index';
import { plan, withWorkerEnv } from '../fixtures/executor/harness';
import { git, initRepo } from '../support/gitRepo';
import { makeTempDir } from '../support/tempDir';
import type { RowOutcome } from './matrix';

const EDIT_WORKER = resolve(__dirname, '../fixtures/workers/editWorker.js');

function editConfig(): string {
  return JSON.stringify({
    defaultWorker: 'edit',
    workers: {
      edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true },
    },
    retryBackoffSeconds: 0,
    maxConcurrency: 4,
    isolation: 'worktree',
  });
}

/** A plan whose tasks may declare `files:`. */
function filesPlan(tasks: Array<{ id: string; files?: string[] }>): string {
  return plan(tasks).replace(/```baton-task\nid: (\S+)\n/g, (block, id: string) => {
    const task = tasks.find((t) => t.id === id)!;
    return `${block}${task.files ? `files: [${task.files.join(', ')}]\n` : ''}`;
  });
}

async function waitUntil<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export type TargetFault = 'rewound-by-worker' | 'moved-sideways' | 'forward-by-user';

export interface TargetScenario {
  workspace: string;
  engine: Engine;
  runId: string;
  outcome: CoordinatorOutcome;
  /** main after the user's commit (the run's base), after A's integration, and when B's worker was let go. */
  base: string;
  afterA: string;
  /** Where the fault left main (the rewound or unrelated commit; the user's new commit when forward). */
  moved: string;
  /** The target_moved gates opened. */
  gates: Gate[];
  dispose(): Promise<void>;
}

/**
 * Two independent tasks in worktrees, merged into main. A is integrated first; B's worker is
 * held until then, and then the fault happens: B's worker rewinds main two commits through the
 * refs its worktree shares (past the user's commit and A's work), or points it at an unrelated
 * commit; or the user commits on main (forward: fine).
 */
export async function targetScenario(fault: TargetFault): Promise<TargetScenario> {
  const workspace = makeTempDir('baton-target-');
  writeFileSync(join(workspace, 'plan.md'), filesPlan([{ id: 'A' }, { id: 'B' }]));
  const batonDir = join(workspace, '.baton');
  mkdirSync(batonDir, { recursive: true });
  writeFileSync(join(batonDir, 'config.json'), editConfig());
  initRepo(workspace, { 'README.md': '# demo\n' });
  writeFileSync(join(workspace, 'notes.txt'), 'the user wrote this\n');
  git(workspace, 'add', 'notes.txt');
  git(workspace, 'commit', '--quiet', '-m', 'user: notes');
  const base = git(workspace, 'rev-parse', 'main');
  const unrelated = git(workspace, 'commit-tree', `${base}^{tree}`, '-m', 'unrelated history');
  const engine = await Engine.open({ workspace, follow: true });
  const dispose = async (): Promise<void> => {
    await engine.close().catch(() => undefined);
    rmSync(workspace, { recursive: true, force: true });
  };
  try {
    const { run } = await engine.runForPlan('plan.md');
    const release = join(batonDir, 'release-B');
    const moveBy =
      fault === 'rewound-by-worker'
        ? [['update-ref', 'refs/heads/main', 'main~2']]
        : fault === 'moved-sideways'
          ? [['update-ref', 'refs/heads/main', unrelated]]
          : [];
    let afterA = '';
    let moved = '';
    const outcome = await withWorkerEnv(
      {
        FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'from A\n' }, B: { 'b.txt': 'from B\n' } }),
        FAKE_GIT: JSON.stringify({ B: moveBy }),
        FAKE_HOLD_B: release,
      },
      async () => {
        const taken = await engine.coordinate({ runId: run.id });
        if (!('coordinator' in taken)) throw new Error('the lease was not free');
        const running = taken.coordinator.run();
        await waitUntil(
          async () =>
            (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'A')?.status === 'integrated'
              ? true
              : undefined,
          "A's integration",
        );
        afterA = git(workspace, 'rev-parse', 'main');
        if (fault === 'forward-by-user') {
          writeFileSync(join(workspace, 'more-notes.txt'), 'the user again\n');
          git(workspace, 'add', 'more-notes.txt');
          git(workspace, 'commit', '--quiet', '-m', 'user: more notes');
          moved = git(workspace, 'rev-parse', 'main');
        }
        writeFileSync(release, '');
        return running;
      },
    );
    if (fault === 'rewound-by-worker') moved = git(workspace, 'rev-parse', `${afterA}~2`);
    if (fault === 'moved-sideways') moved = unrelated;
    const gates = (await engine.listGates({ runId: run.id })).filter((g) => g.kind === 'target_moved');
    return { workspace, engine, runId: run.id, outcome, base, afterA, moved, gates, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** What is wrong with a scenario's end, by the row's guarantee (an empty list: it held). */
export function targetFailures(s: TargetScenario, fault: TargetFault): string[] {
  const failures: string[] = [];
  const main = git(s.workspace, 'rev-parse', 'main');
  if (fault === 'forward-by-user') {
    if (s.outcome.kind !== 'finished' || s.outcome.status !== 'completed')
      failures.push(`forward: the run ended ${JSON.stringify(s.outcome)}`);
    if (s.gates.length > 0) failures.push(`forward: ${s.gates.length} target_moved gate(s) opened`);
    if (!isAncestor(s.workspace, s.moved, main)) failures.push("forward: the user's commit is not on main");
    return failures;
  }
  if (s.outcome.kind !== 'paused') failures.push(`${fault}: the run ended ${JSON.stringify(s.outcome)}, not paused`);
  const gate = s.gates.find((g) => g.status === 'open' && g.taskId === 'B');
  if (!gate) failures.push(`${fault}: no open target_moved gate on B`);
  else {
    if (gate.details.expected !== s.afterA)
      failures.push(`${fault}: the gate expects ${String(gate.details.expected)}`);
    if (gate.details.found !== s.moved) failures.push(`${fault}: the gate found ${String(gate.details.found)}`);
    if (!gate.reason.includes(`git branch rescue ${s.afterA}`)) failures.push(`${fault}: no way back in the reason`);
  }
  if (main !== s.moved) failures.push(`${fault}: Baton moved main to ${main} (the fault left it at ${s.moved})`);
  return failures;
}

function isAncestor(cwd: string, ancestor: string, descendant: string): boolean {
  try {
    git(cwd, 'merge-base', '--is-ancestor', ancestor, descendant);
    return true;
  } catch {
    return false;
  }
}

export type UndeclaredFault = 'edit' | 'delete' | 'rename';

export interface UndeclaredScenario {
  workspace: string;
  engine: Engine;
  runId: string;
  outcome: CoordinatorOutcome;
  base: string;
  /** The files the gate should list. */
  outside: string[];
  gates: Gate[];
  dispose(): Promise<void>;
}

/**
 * Task A declares `files: [src/**]` and, besides src/a.ts, edits docs/guide.md, deletes
 * README.md, or renames src/keep.ts to keep.ts (its old name is inside, its new one is not).
 */
export async function undeclaredScenario(fault: UndeclaredFault): Promise<UndeclaredScenario> {
  const workspace = makeTempDir('baton-files-');
  writeFileSync(join(workspace, 'plan.md'), filesPlan([{ id: 'A', files: ['src/**'] }]));
  mkdirSync(join(workspace, '.baton'), { recursive: true });
  writeFileSync(join(workspace, '.baton', 'config.json'), editConfig());
  const base = initRepo(workspace, {
    'README.md': '# demo\n',
    'src/keep.ts': 'export const keep = 1;\n',
    'docs/guide.md': '# guide\n',
  });
  const engine = await Engine.open({ workspace, follow: true });
  const dispose = async (): Promise<void> => {
    await engine.close().catch(() => undefined);
    rmSync(workspace, { recursive: true, force: true });
  };
  try {
    const { run } = await engine.runForPlan('plan.md');
    const edits: Record<string, string> = { 'src/a.ts': 'export const a = 1;\n' };
    if (fault === 'edit') edits['docs/guide.md'] = '# guide, rewritten\n';
    const gitSteps =
      fault === 'delete'
        ? [['rm', '--quiet', 'README.md']]
        : fault === 'rename'
          ? [['mv', 'src/keep.ts', 'keep.ts']]
          : [];
    const outside = fault === 'edit' ? ['docs/guide.md'] : fault === 'delete' ? ['README.md'] : ['keep.ts'];
    const outcome = await withWorkerEnv(
      { FAKE_EDITS: JSON.stringify({ A: edits }), FAKE_GIT: JSON.stringify({ A: gitSteps }) },
      async () => {
        const taken = await engine.coordinate({ runId: run.id });
        if (!('coordinator' in taken)) throw new Error('the lease was not free');
        return taken.coordinator.run();
      },
    );
    const gates = (await engine.listGates({ runId: run.id })).filter((g) => g.kind === 'undeclared_files');
    return { workspace, engine, runId: run.id, outcome, base, outside, gates, dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

export function undeclaredFailures(s: UndeclaredScenario, fault: UndeclaredFault): string[] {
  const failures: string[] = [];
  if (s.outcome.kind !== 'paused') failures.push(`${fault}: the run ended ${JSON.stringify(s.outcome)}, not paused`);
  const gate = s.gates.find((g) => g.status === 'open' && g.taskId === 'A');
  if (!gate) failures.push(`${fault}: no open undeclared_files gate on A`);
  else if (JSON.stringify(gate.details.files) !== JSON.stringify(s.outside))
    failures.push(`${fault}: the gate lists ${JSON.stringify(gate.details.files)}, want ${JSON.stringify(s.outside)}`);
  const main = git(s.workspace, 'rev-parse', 'main');
  if (main !== s.base) failures.push(`${fault}: main moved to ${main}: something was integrated`);
  return failures;
}

/** Row H7: the target branch rewound or moved sideways by a worker, or moved forward by the user. */
export async function targetTampering(trials: number): Promise<RowOutcome> {
  const faults: TargetFault[] = ['rewound-by-worker', 'moved-sideways', 'forward-by-user'];
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let trial = 0; trial < trials; trial++) {
    const fault = faults[trial % faults.length]!;
    let scenario: TargetScenario | undefined;
    try {
      scenario = await targetScenario(fault);
      failures.push(...targetFailures(scenario, fault).map((f) => `trial ${trial}: ${f}`));
      if (fault !== 'forward-by-user') {
        // The way back the gate names: put the branch back, approve; everything ends up on main.
        git(scenario.workspace, 'update-ref', 'refs/heads/main', scenario.afterA);
        git(scenario.workspace, 'reset', '--quiet', '--hard', 'main');
        const gate = scenario.gates.find((g) => g.status === 'open')!;
        await scenario.engine.decideGate({ gateId: gate.id, decision: 'approved' });
        const taken = await scenario.engine.coordinate({ runId: scenario.runId });
        if (!('coordinator' in taken)) throw new Error('the lease was not free');
        const end = await taken.coordinator.run();
        if (end.kind !== 'finished' || end.status !== 'completed')
          failures.push(`trial ${trial} (${fault}): after putting main back and approving: ${JSON.stringify(end)}`);
        const main = git(scenario.workspace, 'rev-parse', 'main');
        if (!isAncestor(scenario.workspace, scenario.afterA, main))
          failures.push(`trial ${trial} (${fault}): A's integration and the user's commit are not on main`);
      }
      seen.set(fault, (seen.get(fault) ?? 0) + 1);
    } catch (err) {
      failures.push(`trial ${trial} (${fault}): ${(err as Error).message}`);
    } finally {
      await scenario?.dispose();
    }
  }
  return { trials, failures, note: [...seen].map(([name, n]) => `${name} ×${n}`).join(', ') };
}

/** Row H8: a task with `files:` edits, deletes or renames a file outside its declaration. */
export async function undeclaredFiles(trials: number): Promise<RowOutcome> {
  const faults: UndeclaredFault[] = ['edit', 'delete', 'rename'];
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let trial = 0; trial < trials; trial++) {
    const fault = faults[trial % faults.length]!;
    let scenario: UndeclaredScenario | undefined;
    try {
      scenario = await undeclaredScenario(fault);
      failures.push(...undeclaredFailures(scenario, fault).map((f) => `trial ${trial}: ${f}`));
      seen.set(fault, (seen.get(fault) ?? 0) + 1);
    } catch (err) {
      failures.push(`trial ${trial} (${fault}): ${(err as Error).message}`);
    } finally {
      await scenario?.dispose();
    }
  }
  return { trials, failures, note: [...seen].map(([name, n]) => `${name} ×${n}`).join(', ') };
}
