import type { IntegrationStrategy } from '../../domain/types';
import type { StoreTx } from '../../store/port';

type AttemptKey = { runId: string; delegationId: string };

/**
 * The worktree of an isolated attempt, recorded with its claim and before it exists on
 * disk: a crash in between leaves a row that reconcile and cleanup know about.
 */
export async function recordWorktree(
  tx: StoreTx,
  worktree: AttemptKey & {
    taskId: string;
    path: string;
    branch: string;
    baseCommit: string;
    strategy: IntegrationStrategy;
  },
  now: number,
): Promise<void> {
  await tx.run(
    `INSERT INTO worktrees (run_id, delegation_id, task_id, path, branch, base_commit, status, strategy, created_at)
     VALUES (?, ?, ?, ?, ?, ?, 'active', ?, ?)`,
    [
      worktree.runId,
      worktree.delegationId,
      worktree.taskId,
      worktree.path,
      worktree.branch,
      worktree.baseCommit,
      worktree.strategy,
      now,
    ],
  );
}

/** The attempt's work is committed on its branch (integration step 1). */
export async function markWorktreeCommitted(
  tx: StoreTx,
  key: AttemptKey,
  commit: { sourceHead: string; changedFiles: string[] },
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE worktrees SET status = 'committed', source_head = ?, changed_files_json = ?, committed_at = ?
     WHERE run_id = ? AND delegation_id = ?`,
    [commit.sourceHead, JSON.stringify(commit.changedFiles), now, key.runId, key.delegationId],
  );
}

/** The attempt's work is on the target branch: what moved it, from where to where. */
export async function markWorktreeIntegrated(
  tx: StoreTx,
  key: AttemptKey,
  facts: { sourceHead: string; changedFiles: string[]; targetBefore: string; targetAfter: string },
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE worktrees SET status = 'integrated', source_head = ?, changed_files_json = ?, target_before = ?, target_after = ?,
       integrated_at = ?, conflict_files_json = NULL
     WHERE run_id = ? AND delegation_id = ?`,
    [
      facts.sourceHead,
      JSON.stringify(facts.changedFiles),
      facts.targetBefore,
      facts.targetAfter,
      now,
      key.runId,
      key.delegationId,
    ],
  );
}

/**
 * The attempt's branch is on the remote (`integration: branch`): its work left through a pull request, the target
 * did not move (`targetBefore`: where it was, the pull request's base; no `target_after`).
 */
export async function markWorktreePushed(
  tx: StoreTx,
  key: AttemptKey,
  facts: { sourceHead: string; changedFiles: string[]; targetBefore: string },
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE worktrees SET status = 'pushed', source_head = ?, changed_files_json = ?, target_before = ?, target_after = NULL,
       integrated_at = ?, conflict_files_json = NULL
     WHERE run_id = ? AND delegation_id = ?`,
    [facts.sourceHead, JSON.stringify(facts.changedFiles), facts.targetBefore, now, key.runId, key.delegationId],
  );
}

/** The attempt's work does not integrate cleanly: its worktree is kept for a person, with the files in conflict. */
export async function markWorktreeConflict(tx: StoreTx, key: AttemptKey, files: string[]): Promise<void> {
  await tx.run(
    `UPDATE worktrees SET status = 'conflict', conflict_files_json = ? WHERE run_id = ? AND delegation_id = ?`,
    [JSON.stringify(files), key.runId, key.delegationId],
  );
}

/** A person gave up the attempt's work at its conflict gate: its worktree goes at the next pass. */
export async function discardWorktree(tx: StoreTx, key: AttemptKey): Promise<void> {
  await tx.run(`UPDATE worktrees SET status = 'discarded' WHERE run_id = ? AND delegation_id = ?`, [
    key.runId,
    key.delegationId,
  ]);
}

/**
 * The worktree and its branch are gone from disk. `retired`: removed by cleanup, so work that
 * was never integrated is recorded as discarded.
 */
export async function markWorktreeRemoved(
  tx: StoreTx,
  key: AttemptKey,
  now: number,
  options: { retired?: boolean } = {},
): Promise<void> {
  await tx.run(
    options.retired
      ? `UPDATE worktrees SET removed_at = ?, status = CASE WHEN status IN ('integrated', 'pushed') THEN status ELSE 'discarded' END
         WHERE run_id = ? AND delegation_id = ?`
      : `UPDATE worktrees SET removed_at = ? WHERE run_id = ? AND delegation_id = ?`,
    [now, key.runId, key.delegationId],
  );
}
