import type { IntegrationStrategy } from './types';

/** How a run isolates its tasks, decided once at its first dispatch (docs/isolation.md). */
export interface RunIsolation {
  runId: string;
  mode: 'worktree' | 'none';
  strategy: IntegrationStrategy;
  repoRoot?: string;
  targetBranch?: string;
  baseCommit?: string;
  /**
   * Where Baton expects the target branch: the base, then where its last integration left it
   * (or the head a person accepted at a target_moved gate). A target that is not a descendant
   * of it was moved backwards or sideways by someone other than Baton or the user's commits.
   */
  expectedHead?: string;
  note?: string;
}

/** The worktree of one isolated attempt, as recorded. */
export interface AttemptWorktree {
  runId: string;
  delegationId: string;
  taskId: string;
  path: string;
  branch: string;
  baseCommit: string;
  /** `pushed`: `integration: branch` — its branch is on the remote, the target did not move. */
  status: 'active' | 'committed' | 'integrated' | 'pushed' | 'conflict' | 'discarded';
  strategy: IntegrationStrategy;
  sourceHead?: string;
  changedFiles: string[];
  targetBefore?: string;
  targetAfter?: string;
  conflictFiles: string[];
  removedAt?: number;
}

/** What the coordinator should do about a task's isolation before it dispatches it. */
export type IsolationPlan =
  | { mode: 'none' }
  | { mode: 'worktree'; run: RunIsolation & { repoRoot: string; targetBranch: string; baseCommit: string } }
  /** Needs a person: open an isolation gate with this reason. `record`: what to store for the run first. */
  | { mode: 'gate'; reason: string; problem: string };

export type RepositoryProbe =
  | { ok: true; repoRoot: string; branch: string; head: string }
  | { ok: false; problem: 'git-missing' | 'not-a-repository' | 'no-commit' | 'detached' | 'dirty'; reason: string };

/** How a task's isolation is settled before its start: known already, or by a look at the repository first. */
export type IsolationNeed =
  | { mode: 'none' }
  | { mode: 'worktree'; run: RunIsolation & { repoRoot: string; targetBranch: string; baseCommit: string } }
  /** The run's first isolated dispatch: the repository is probed (`explicit`: a worktree was asked for, not `auto`). */
  | { mode: 'probe'; explicit: boolean; strategy: IntegrationStrategy };

/**
 * Decides how a task runs (docs/isolation.md) from what the run recorded: its own `isolation:`
 * wins, else the run's setting; `auto` is a worktree when the workspace is a git repository and
 * more than one task may run at once, or always with `integration: branch`. The first isolated
 * dispatch of a run needs a probe of the repository (isolationFromProbe), whose answer the run records.
 */
export function isolationNeed(
  settings: { isolation?: 'auto' | 'worktree' | 'none'; integration?: IntegrationStrategy },
  recorded: RunIsolation | undefined,
  task: { isolation?: 'worktree' | 'none' },
  maxConcurrency: number,
): IsolationNeed {
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
  // A pull request needs a branch per task: `integration: branch` asks for worktrees as `isolation: worktree` does.
  const explicit =
    task.isolation === 'worktree' ||
    setting === 'worktree' ||
    (setting === 'auto' && settings.integration === 'branch');
  if (!explicit && (setting === 'none' || maxConcurrency <= 1)) return { mode: 'none' };
  return { mode: 'probe', explicit, strategy: settings.integration ?? 'merge' };
}

/**
 * What the probe of the repository means for the run: a worktree from its branch and head; for
 * `auto` outside a git repository (or without git), the shared working tree, recorded once for
 * the run (`decided`); any other problem is a gate, never a silent fallback.
 */
export function isolationFromProbe(
  runId: string,
  need: Extract<IsolationNeed, { mode: 'probe' }>,
  probe: RepositoryProbe,
): IsolationPlan | { mode: 'decided'; run: RunIsolation } {
  const { strategy } = need;
  if (!probe.ok) {
    if (!need.explicit && probe.problem !== 'dirty' && probe.problem !== 'detached')
      return { mode: 'decided', run: { runId, mode: 'none', strategy, note: `auto: ${probe.reason}` } };
    return { mode: 'gate', reason: probe.reason, problem: probe.problem };
  }
  return {
    mode: 'worktree',
    run: {
      runId,
      mode: 'worktree',
      strategy,
      repoRoot: probe.repoRoot,
      targetBranch: probe.branch,
      baseCommit: probe.head,
    },
  };
}

/** What a cherry-pick integration still has to bring over (docs/isolation.md, "Exactly once"). */
export type CherryPicks = { kind: 'on-target' } | { kind: 'pick'; commits: string[] };

/**
 * Decides from `git cherry <target> <source> <base>` (one line per commit of the attempt,
 * oldest first: `-` when a commit with the same patch-id is on the target, `+` when not)
 * which of the attempt's commits a cherry-pick integration still has to copy. None left
 * means its work is on the target already — copied there by a coordinator that died before
 * it could record it — so the integration is recorded, never done twice: picking copies
 * that are there would stop on empty commits (a conflict gate with no files).
 */
export function cherryPicks(cherryOutput: string): CherryPicks {
  const commits = cherryOutput
    .split('\n')
    .filter((line) => line.startsWith('+ '))
    .map((line) => line.slice(2).trim());
  return commits.length === 0 ? { kind: 'on-target' } : { kind: 'pick', commits };
}

/** A path a failed fast-forward was to change, as the working tree has it now and as the target has it. */
export interface ForwardedPath {
  path: string;
  /** Its content in the working tree (decoded as UTF-8); undefined when absent or not a plain file. */
  present: string | undefined;
  /** Its content in the commit the target moves to; undefined when the move deletes it. */
  incoming: string | undefined;
  absent: boolean;
}

/**
 * Whether the changes in the way of a fast-forward are what an interrupted fast-forward to the
 * same commit left (docs/isolation.md, "A fast-forward that failed while writing"): git writes
 * the new files into the working tree before it moves the branch, so a disk that fills (or a
 * kill) in between leaves them written, half-written or deleted while the branch has not moved.
 * A path counts as left over only when nothing of a person's can be in it: deleted where the
 * move deletes it, or holding a prefix of what the move writes there (a file cut mid-character
 * ends in U+FFFD once decoded). Anything else is a person's change and stops at a gate.
 */
export function leftOverByFastForward(paths: readonly ForwardedPath[]): boolean {
  return paths.every((p) =>
    p.absent
      ? p.incoming === undefined
      : p.present !== undefined && p.incoming !== undefined && p.incoming.startsWith(p.present.replace(/\uFFFD$/, '')),
  );
}
