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
  status: 'active' | 'committed' | 'integrated' | 'conflict' | 'discarded';
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
