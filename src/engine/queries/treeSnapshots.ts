import type { StoreReader } from '../store/port';

/** A shared-tree attempt's recorded working trees (operations/treeSnapshots). */
export interface TreeSnapshot {
  repoRoot: string;
  before: string;
  beforeAt: number;
  after?: string;
  afterAt?: number;
}

export async function readTreeSnapshot(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  delegationId: string,
): Promise<TreeSnapshot | undefined> {
  const row = await r.get<{
    repo_root: string;
    before_commit: string;
    before_at: number;
    after_commit: string | null;
    after_at: number | null;
  }>(
    `SELECT repo_root, before_commit, before_at, after_commit, after_at FROM tree_snapshots WHERE run_id = ? AND delegation_id = ?`,
    [runId, delegationId],
  );
  if (!row) return undefined;
  return {
    repoRoot: row.repo_root,
    before: row.before_commit,
    beforeAt: row.before_at,
    ...(row.after_commit !== null ? { after: row.after_commit } : {}),
    ...(row.after_at !== null ? { afterAt: row.after_at } : {}),
  };
}
