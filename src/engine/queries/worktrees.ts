import { SEND_BACK_GATES } from '../domain/followUp';
import type { AttemptWorktree, RunIsolation } from '../domain/isolation';
import type { IntegrationStrategy } from '../domain/types';
import type { StoreReader } from '../store/port';

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
    expected_head: string | null;
    note: string | null;
  }>(
    `SELECT mode, strategy, repo_root, target_branch, base_commit, expected_head, note FROM run_isolation WHERE run_id = ?`,
    [runId],
  );
  if (!row) return undefined;
  return {
    runId,
    mode: row.mode as RunIsolation['mode'],
    strategy: row.strategy as IntegrationStrategy,
    ...(row.repo_root ? { repoRoot: row.repo_root } : {}),
    ...(row.target_branch ? { targetBranch: row.target_branch } : {}),
    ...(row.base_commit ? { baseCommit: row.base_commit } : {}),
    ...(row.expected_head ? { expectedHead: row.expected_head } : {}),
    ...(row.note ? { note: row.note } : {}),
  };
}

/**
 * The work a task's next isolated attempt starts from instead of the target branch's head: the committed work of its
 * attempt that last waited before integration, when a message sent it back to the agent (domain/followUp.ts
 * SEND_BACK_GATES: changes requested at its review, or its failure on the merged tree; the gate rejected with
 * `sentBack`). That work is not on the target — it was held before integration — so a worktree from the target would
 * not have it, and the agent would continue its session in a tree without its own changes. The latest such gate of
 * the task decides: one approved (its work integrated, or integrates) or rejected outright carries nothing.
 * `baseCommit` stays the held attempt's base, so its work counts as the new attempt's to integrate.
 */
export async function carriedHeldWork(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  taskId: string,
): Promise<{ delegationId: string; sourceHead: string; baseCommit: string } | undefined> {
  const gate = await r.get<{ delegation_id: string | null; kind: string; status: string; details_json: string }>(
    `SELECT delegation_id, kind, status, details_json FROM gates
     WHERE run_id = ? AND task_id = ? AND kind IN (${SEND_BACK_GATES.map(() => '?').join(', ')})
     ORDER BY ordinal DESC LIMIT 1`,
    [runId, taskId, ...SEND_BACK_GATES],
  );
  if (!gate?.delegation_id || gate.status !== 'rejected') return undefined;
  const details = JSON.parse(gate.details_json) as { sentBack?: unknown; mergedCommit?: unknown; targetHead?: unknown };
  if (!details.sentBack) return undefined;
  const worktree = await getAttemptWorktree(r, runId, gate.delegation_id);
  if (!worktree?.sourceHead) return undefined;
  // Its work failed merged with the target: the agent fixes it in the merged tree it failed in (the target then, with
  // its work on top), so the fix is made against what the target holds, not the older base it started from.
  if (
    gate.kind === 'integration_failed' &&
    typeof details.mergedCommit === 'string' &&
    typeof details.targetHead === 'string'
  )
    return { delegationId: worktree.delegationId, sourceHead: details.mergedCommit, baseCommit: details.targetHead };
  return { delegationId: worktree.delegationId, sourceHead: worktree.sourceHead, baseCommit: worktree.baseCommit };
}
