import type { RunIsolation } from '../../domain/isolation';
import type { StoreTx } from '../../store/port';

/** How the run isolates its tasks, decided at its first dispatch (or by a person at its isolation gate). */
export async function recordRunIsolation(tx: StoreTx, isolation: RunIsolation, now: number): Promise<void> {
  await tx.run(
    `INSERT INTO run_isolation (run_id, mode, strategy, repo_root, target_branch, base_commit, expected_head, note, decided_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (run_id) DO UPDATE SET mode = excluded.mode, repo_root = excluded.repo_root, target_branch = excluded.target_branch,
       base_commit = excluded.base_commit, expected_head = excluded.expected_head, note = excluded.note,
       decided_at = excluded.decided_at`,
    [
      isolation.runId,
      isolation.mode,
      isolation.strategy,
      isolation.repoRoot ?? null,
      isolation.targetBranch ?? null,
      isolation.baseCommit ?? null,
      // The target is expected where the run found it; each integration moves the expectation along.
      isolation.baseCommit ?? null,
      isolation.note ?? null,
      now,
    ],
  );
}

/**
 * What Baton now expects the run's target branch to be at: the head an integration left it at,
 * or the head a person accepted at a target_moved gate (docs/isolation.md, "The expected head").
 */
export async function recordExpectedTargetHead(tx: StoreTx, runId: string, head: string): Promise<void> {
  await tx.run(`UPDATE run_isolation SET expected_head = ? WHERE run_id = ?`, [head, runId]);
}
