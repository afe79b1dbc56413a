import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import type { Task } from '../../domain/types';
import { readRunSettings } from '../../operations/tasks/taskFlow';
import type { StoreReader, StoreTx } from '../../store/port';
import { findGit, Git } from './git';

/** How a run isolates its tasks, decided once at its first dispatch (docs/isolation.md). */
export interface RunIsolation {
  runId: string;
  mode: 'worktree' | 'none';
  strategy: IntegrationStrategy;
  repoRoot?: string;
  targetBranch?: string;
  baseCommit?: string;
  note?: string;
}

import type { IntegrationStrategy } from '../../domain/types';
export type { IntegrationStrategy };

/** The worktree of one isolated attempt, as recorded. */
export interface AttemptWorktree {
  runId: string;
  delegationId: string;
  taskId: string;
  path: string;
  branch: string;
  baseCommit: string;
  status: 'active' | 'committed' | 'integrated' | 'conflict' | 'discarded';
  strategy: IntegrationStrategy;
  sourceHead?: string;
  changedFiles: string[];
  targetBefore?: string;
  targetAfter?: string;
  conflictFiles: string[];
  removedAt?: number;
}

interface WorktreeRow {
  run_id: string;
  delegation_id: string;
  task_id: string;
  path: string;
  branch: string;
  base_commit: string;
  status: string;
  strategy: string;
  source_head: string | null;
  changed_files_json: string | null;
  target_before: string | null;
  target_after: string | null;
  conflict_files_json: string | null;
  removed_at: number | null;
}

export const WORKTREE_COLUMNS =
  'run_id, delegation_id, task_id, path, branch, base_commit, status, strategy, source_head, changed_files_json, target_before, target_after, conflict_files_json, removed_at';

export function toAttemptWorktree(r: WorktreeRow): AttemptWorktree {
  return {
    runId: r.run_id,
    delegationId: r.delegation_id,
    taskId: r.task_id,
    path: r.path,
    branch: r.branch,
    baseCommit: r.base_commit,
    status: r.status as AttemptWorktree['status'],
    strategy: r.strategy as IntegrationStrategy,
    ...(r.source_head ? { sourceHead: r.source_head } : {}),
    changedFiles: r.changed_files_json ? (JSON.parse(r.changed_files_json) as string[]) : [],
    ...(r.target_before ? { targetBefore: r.target_before } : {}),
    ...(r.target_after ? { targetAfter: r.target_after } : {}),
    conflictFiles: r.conflict_files_json ? (JSON.parse(r.conflict_files_json) as string[]) : [],
    ...(r.removed_at !== null ? { removedAt: r.removed_at } : {}),
  };
}

export async function getAttemptWorktree(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  delegationId: string,
): Promise<AttemptWorktree | undefined> {
  const row = await r.get<WorktreeRow>(
    `SELECT ${WORKTREE_COLUMNS} FROM worktrees WHERE run_id = ? AND delegation_id = ?`,
    [runId, delegationId],
  );
  return row ? toAttemptWorktree(row) : undefined;
}

export async function listAttemptWorktrees(r: Pick<StoreReader, 'all'>, runId: string): Promise<AttemptWorktree[]> {
  return (
    await r.all<WorktreeRow>(
      `SELECT ${WORKTREE_COLUMNS} FROM worktrees WHERE run_id = ? ORDER BY created_at, delegation_id`,
      [runId],
    )
  ).map(toAttemptWorktree);
}

export async function readRunIsolation(r: Pick<StoreReader, 'get'>, runId: string): Promise<RunIsolation | undefined> {
  const row = await r.get<{
    mode: string;
    strategy: string;
    repo_root: string | null;
    target_branch: string | null;
    base_commit: string | null;
    note: string | null;
  }>(`SELECT mode, strategy, repo_root, target_branch, base_commit, note FROM run_isolation WHERE run_id = ?`, [runId]);
  if (!row) return undefined;
  return {
    runId,
    mode: row.mode as RunIsolation['mode'],
    strategy: row.strategy as IntegrationStrategy,
    ...(row.repo_root ? { repoRoot: row.repo_root } : {}),
    ...(row.target_branch ? { targetBranch: row.target_branch } : {}),
    ...(row.base_commit ? { baseCommit: row.base_commit } : {}),
    ...(row.note ? { note: row.note } : {}),
  };
}

export async function recordRunIsolation(tx: StoreTx, isolation: RunIsolation, now: number): Promise<void> {
  await tx.run(
    `INSERT INTO run_isolation (run_id, mode, strategy, repo_root, target_branch, base_commit, note, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET mode = excluded.mode, repo_root = excluded.repo_root, target_branch = excluded.target_branch,
       base_commit = excluded.base_commit, note = excluded.note, decided_at = excluded.decided_at`,
    [
      isolation.runId,
      isolation.mode,
      isolation.strategy,
      isolation.repoRoot ?? null,
      isolation.targetBranch ?? null,
      isolation.baseCommit ?? null,
      isolation.note ?? null,
      now,
    ],
  );
}

/** What the coordinator should do about a task's isolation before it dispatches it. */
export type IsolationPlan =
  | { mode: 'none' }
  | { mode: 'worktree'; run: RunIsolation & { repoRoot: string; targetBranch: string; baseCommit: string } }
  /** Needs a person: open an isolation gate with this reason. `record`: what to store for the run first. */
  | { mode: 'gate'; reason: string; problem: string };

/**
 * Decides how a task runs (docs/isolation.md): its own `isolation:` wins, else the run's
 * setting; `auto` is a worktree when the workspace is a git repository and more than one
 * task may run at once. The first isolated dispatch of a run checks the repository (git
 * present, a repository, a branch checked out, a clean tree) and records the run's target
 * branch and base commit; a problem is a gate, never a silent fallback.
 */
export async function planIsolation(
  read: <T>(work: (r: StoreReader) => Promise<T>) => Promise<T>,
  workspace: string,
  task: Pick<Task, 'runId' | 'isolation'>,
  maxConcurrency: number,
): Promise<IsolationPlan | { mode: 'decided'; run: RunIsolation }> {
  const { settings, recorded } = await read(async (r) => ({
    settings: await readRunSettings(r, task.runId),
    recorded: await readRunIsolation(r, task.runId),
  }));
  const setting = settings.isolation ?? 'none';
  if (task.isolation === 'none') return { mode: 'none' };
  if (recorded?.mode === 'none' && task.isolation !== 'worktree') return { mode: 'none' };
  if (recorded?.mode === 'worktree' && recorded.repoRoot && recorded.targetBranch && recorded.baseCommit) {
    return {
      mode: 'worktree',
      run: recorded as RunIsolation & { repoRoot: string; targetBranch: string; baseCommit: string },
    };
  }
  if (recorded?.mode === 'none' && recorded.note?.startsWith('approved')) return { mode: 'none' };
  const explicit = task.isolation === 'worktree' || setting === 'worktree';
  if (!explicit && (setting === 'none' || maxConcurrency <= 1)) return { mode: 'none' };
  const strategy = settings.integration ?? 'merge';
  const probe = await probeRepository(workspace);
  if (!probe.ok) {
    if (!explicit && probe.problem !== 'dirty' && probe.problem !== 'detached') {
      // auto outside a git repository (or without git): the shared working tree, recorded once for the run.
      return { mode: 'decided', run: { runId: task.runId, mode: 'none', strategy, note: `auto: ${probe.reason}` } };
    }
    return { mode: 'gate', reason: probe.reason, problem: probe.problem };
  }
  return {
    mode: 'worktree',
    run: {
      runId: task.runId,
      mode: 'worktree',
      strategy,
      repoRoot: probe.repoRoot,
      targetBranch: probe.branch,
      baseCommit: probe.head,
    },
  };
}

export type RepositoryProbe =
  | { ok: true; repoRoot: string; branch: string; head: string }
  | { ok: false; problem: 'git-missing' | 'not-a-repository' | 'no-commit' | 'detached' | 'dirty'; reason: string };

/** Can this workspace's tasks run in worktrees? Says exactly why not. */
export async function probeRepository(workspace: string): Promise<RepositoryProbe> {
  if (!(await findGit()))
    return {
      ok: false,
      problem: 'git-missing',
      reason: 'git is not installed or not on PATH, so tasks cannot get worktrees of their own.',
    };
  const git = new Git(workspace);
  const top = await git.attempt(['rev-parse', '--show-toplevel']);
  if (top.exitCode !== 0)
    return {
      ok: false,
      problem: 'not-a-repository',
      reason: `${workspace} is not in a git repository, so tasks cannot get worktrees of their own.`,
    };
  const repoRoot = top.stdout.trim();
  // A workspace in an ignored folder of some outer repository (a scratch copy under node_modules or .cache) is not part
  // of it.
  if ((await git.attempt(['check-ignore', '--quiet', '--no-index', workspace])).exitCode === 0) {
    return {
      ok: false,
      problem: 'not-a-repository',
      reason: `${workspace} is in a folder the git repository at ${repoRoot} ignores, so tasks cannot get worktrees of their own.`,
    };
  }
  const head = await git.attempt(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
  if (head.exitCode !== 0)
    return {
      ok: false,
      problem: 'no-commit',
      reason: `The repository at ${repoRoot} has no commit yet; worktrees start from a commit. Commit once first.`,
    };
  const branch = await git.currentBranch();
  if (!branch)
    return {
      ok: false,
      problem: 'detached',
      reason: `HEAD is detached in ${repoRoot}; Baton integrates finished tasks into a branch. Check out a branch first.`,
    };
  ensureBatonExcluded(repoRoot);
  const dirty = await git.dirtyPaths();
  if (dirty.length > 0) {
    const shown = dirty.slice(0, 5).join(', ') + (dirty.length > 5 ? ` and ${dirty.length - 5} more` : '');
    return {
      ok: false,
      problem: 'dirty',
      reason: `The working tree has uncommitted changes (${shown}); isolated tasks start from the last commit on ${branch} and would not see them. Commit or stash them first.`,
    };
  }
  return { ok: true, repoRoot, branch, head: head.stdout.trim() };
}

/**
 * `.baton/` (store, logs, worktrees) is never part of the user's history: it goes into the repository's info/exclude.
 */
export function ensureBatonExcluded(repoRoot: string): void {
  const gitPath = join(repoRoot, '.git');
  let infoDir = join(gitPath, 'info');
  try {
    // A worktree or submodule has a .git file pointing at the real folder.
    const text = readFileSync(gitPath, 'utf8');
    const match = /^gitdir: (.+)$/m.exec(text);
    if (match) {
      const gitDir = resolve(repoRoot, match[1]!.trim());
      const common = existsSync(join(gitDir, 'commondir'))
        ? resolve(gitDir, readFileSync(join(gitDir, 'commondir'), 'utf8').trim())
        : gitDir;
      infoDir = join(common, 'info');
    }
  } catch {
    // .git is a folder (the usual case)
  }
  const exclude = join(infoDir, 'exclude');
  const current = existsSync(exclude) ? readFileSync(exclude, 'utf8') : '';
  if (current.split('\n').some((line) => line.trim() === '.baton/' || line.trim() === '.baton')) return;
  mkdirSync(infoDir, { recursive: true });
  writeFileSync(
    exclude,
    `${current}${current === '' || current.endsWith('\n') ? '' : '\n'}# Baton's state, logs and task worktrees\n.baton/\n`,
  );
}

/** Where an attempt's worktree lives, and its branch (docs/isolation.md). */
export function worktreeLocation(
  workspace: string,
  runId: string,
  taskId: string,
  attempt: number,
): { path: string; branch: string } {
  const n = String(attempt).padStart(3, '0');
  return {
    path: join(workspace, '.baton', 'worktrees', runId, `${taskId}-${n}`),
    branch: `baton/${runId}/${taskId}/${n}`,
  };
}

export function worktreesRoot(workspace: string, runId?: string): string {
  return runId ? join(workspace, '.baton', 'worktrees', runId) : join(workspace, '.baton', 'worktrees');
}

/** The worker's folder inside a worktree: the workspace's place in the repository, mirrored. */
export function workspaceInWorktree(worktreePath: string, repoRoot: string, workspace: string): string {
  const inside = relative(repoRoot, workspace);
  return inside ? join(worktreePath, inside) : worktreePath;
}

/**
 * Creates the attempt's worktree on a new branch from the target branch's head now (so a
 * task sees the integrated work of the tasks it depends on). A leftover of the same name
 * (a crash between creating and recording) is removed first.
 */
export async function createWorktree(
  repoRoot: string,
  location: { path: string; branch: string },
  baseCommit: string,
): Promise<void> {
  await removeWorktree(repoRoot, location);
  mkdirSync(join(location.path, '..'), { recursive: true });
  await new Git(repoRoot).run(['worktree', 'add', '--quiet', '-b', location.branch, location.path, baseCommit]);
}

/** The commit a new attempt starts from: the target branch's head now. */
export async function targetHead(run: { repoRoot: string; targetBranch: string }): Promise<string> {
  return new Git(run.repoRoot).revParse(`refs/heads/${run.targetBranch}`);
}

/** Removes an attempt's worktree and its branch; what is already gone is fine. */
export async function removeWorktree(
  repoRoot: string,
  worktree: Pick<AttemptWorktree, 'path' | 'branch'>,
): Promise<void> {
  const git = new Git(repoRoot);
  if (existsSync(worktree.path)) await git.attempt(['worktree', 'remove', '--force', worktree.path]);
  await git.attempt(['worktree', 'prune']);
  if ((await git.attempt(['rev-parse', '--verify', '--quiet', `refs/heads/${worktree.branch}`])).exitCode === 0)
    await git.attempt(['branch', '-D', worktree.branch]);
}
