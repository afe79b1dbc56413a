import type { StoreTx } from '../../store/port';

/**
 * The shared working tree as a shared-tree attempt's worker found it (docs/workers.md, "What an
 * attempt changed"). Recorded once per attempt: a second `before` changes nothing.
 */
export async function recordTreeBefore(
  tx: StoreTx,
  snapshot: { runId: string; delegationId: string; repoRoot: string; commit: string },
  now: number,
): Promise<void> {
  await tx.run(
    `INSERT INTO tree_snapshots (run_id, delegation_id, repo_root, before_commit, before_at) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT DO NOTHING`,
    [snapshot.runId, snapshot.delegationId, snapshot.repoRoot, snapshot.commit, now],
  );
}

/** The shared working tree as the worker left it: once, and only after a `before`. */
export async function recordTreeAfter(
  tx: StoreTx,
  snapshot: { runId: string; delegationId: string; commit: string },
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE tree_snapshots SET after_commit = ?, after_at = ? WHERE run_id = ? AND delegation_id = ? AND after_commit IS NULL`,
    [snapshot.commit, now, snapshot.runId, snapshot.delegationId],
  );
}
