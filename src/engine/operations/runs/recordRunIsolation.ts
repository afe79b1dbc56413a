import type { RunIsolation } from '../../domain/isolation';
import type { StoreTx } from '../../store/port';

/** How the run isolates its tasks, decided at its first dispatch (or by a person at its isolation gate). */
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
