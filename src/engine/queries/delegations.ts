import type { Delegation, TaskStatus } from '../domain/types';
import { isParkedReason } from '../domain/parking';
import type { StoreReader } from '../store/port';
import { DELEGATION_COLUMNS, toDelegation, type DelegationRow } from '../store/rows';

export async function getDelegation(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  delegationId: string,
): Promise<Delegation | undefined> {
  const row = await r.get<DelegationRow>(`SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND id = ?`, [
    runId,
    delegationId,
  ]);
  return row ? toDelegation(row) : undefined;
}

/** Of these runtimes, those whose stored lease ran out while they are not ended. */
export async function lapsedRuntimes(
  r: Pick<StoreReader, 'all'>,
  runtimeIds: readonly string[],
  now: number,
): Promise<Set<string>> {
  if (runtimeIds.length === 0) return new Set();
  const rows = await r.all<{ id: string }>(
    `SELECT id FROM runtimes WHERE id IN (${runtimeIds.map(() => '?').join(', ')}) AND ended_at IS NULL AND lease_expires_at <= ?`,
    [...runtimeIds, now],
  );
  return new Set(rows.map((row) => row.id));
}

/** Of these attempts of a run, those no longer RUNNING: decided (ingested, stopped, marked STALE) by someone. */
export async function decidedAttempts(
  r: Pick<StoreReader, 'all'>,
  runId: string,
  delegationIds: readonly string[],
): Promise<Set<string>> {
  if (delegationIds.length === 0) return new Set();
  const rows = await r.all<{ id: string }>(
    `SELECT id FROM delegations WHERE run_id = ? AND id IN (${delegationIds.map(() => '?').join(', ')}) AND status <> 'RUNNING'`,
    [runId, ...delegationIds],
  );
  return new Set(rows.map((row) => row.id));
}

/**
 * The task's RUNNING attempt claimed by `holder` whose worker was never recorded (no process behind its runtime): a
 * claim whose launch did not get as far as a worker — the coordinator that made it looks for it when it cannot know
 * whether its claim's commit landed (executor/attemptLauncher.ts).
 */
export async function unstartedClaim(
  r: Pick<StoreReader, 'get'>,
  input: { runId: string; taskId: string; holder: string },
): Promise<string | undefined> {
  const row = await r.get<{ id: string }>(
    `SELECT d.id FROM delegations d JOIN runtimes r ON r.run_id = d.run_id AND r.delegation_id = d.id
     WHERE d.run_id = ? AND d.task_id = ? AND d.status = 'RUNNING' AND r.holder = ? AND r.pid IS NULL
       AND r.ended_at IS NULL
     ORDER BY d.attempt DESC LIMIT 1`,
    [input.runId, input.taskId, input.holder],
  );
  return row?.id;
}

/** The task's latest attempt still RUNNING or BLOCKED: the one a verifying task's verification belongs to. */
export async function latestOpenAttempt(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  taskId: string,
): Promise<string | undefined> {
  const row = await r.get<{ id: string }>(
    `SELECT id FROM delegations WHERE run_id = ? AND task_id = ? AND status IN ('RUNNING', 'BLOCKED') ORDER BY attempt DESC LIMIT 1`,
    [runId, taskId],
  );
  return row?.id;
}

/** The task's attempt just before this one, when it was parked (domain/parking.ts): its id. */
export async function parkedBefore(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  taskId: string,
  attempt: number,
): Promise<string | undefined> {
  const row = await r.get<{ id: string; status: string; reason: string | null }>(
    `SELECT id, status, reason FROM delegations WHERE run_id = ? AND task_id = ? AND attempt = ?`,
    [runId, taskId, attempt - 1],
  );
  return row?.status === 'CANCELLED' && isParkedReason(row.reason ?? undefined) ? row.id : undefined;
}

/** A delegation and its task's status now, in one statement (undefined: no such delegation). */
export async function getDelegationAndTaskStatus(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  delegationId: string,
): Promise<{ delegation: Delegation; taskStatus: TaskStatus } | undefined> {
  const row = await r.get<DelegationRow & { task_status: TaskStatus }>(
    `SELECT ${DELEGATION_COLUMNS},
       (SELECT t.status FROM tasks t WHERE t.run_id = delegations.run_id AND t.id = delegations.task_id) AS task_status
     FROM delegations WHERE run_id = ? AND id = ?`,
    [runId, delegationId],
  );
  return row ? { delegation: toDelegation(row), taskStatus: row.task_status } : undefined;
}
