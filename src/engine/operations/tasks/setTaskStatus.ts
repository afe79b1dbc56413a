import { BatonError } from '../../domain/errors';
import { canTransitionTask } from '../../domain/transitions';
import type { TaskStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

/**
 * Moves a task along TASK_TRANSITIONS (compare-and-set on the status read in this
 * transaction) and records the move in the run's event log. Setting the status it already
 * has with the same reason writes nothing.
 */
export async function setTaskStatus(
  tx: StoreTx,
  runId: string,
  taskId: string,
  to: TaskStatus,
  reason: string | null,
  now: number,
): Promise<void> {
  const row = await tx.get<{ status: TaskStatus; status_reason: string | null }>(
    `SELECT status, status_reason FROM tasks WHERE run_id = ? AND id = ?`,
    [runId, taskId],
  );
  if (!row) throw new BatonError('task.unknown', `Task ${taskId} is not in run ${runId}.`);
  if (row.status === to && row.status_reason === reason) return;
  if (!canTransitionTask(row.status, to)) {
    throw new BatonError('task.illegal-transition', `Task ${taskId} is ${row.status}; it cannot become ${to}.`);
  }
  const changed = await tx.run(
    `UPDATE tasks SET status = ?, status_reason = ?, updated_at = ? WHERE run_id = ? AND id = ? AND status = ?`,
    [to, reason, now, runId, taskId, row.status],
  );
  if (changed !== 1) throw new BatonError('task.changed-meanwhile', `Task ${taskId} changed meanwhile; try again.`);
  await appendEvent(tx, runId, 'task:status', now, { taskId, from: row.status, to, ...(reason ? { reason } : {}) });
}

/** When the task's next attempt may start (a retry backoff); null: now. */
export async function setTaskNotBefore(
  tx: StoreTx,
  runId: string,
  taskId: string,
  notBefore: number | null,
): Promise<void> {
  await tx.run(`UPDATE tasks SET not_before = ? WHERE run_id = ? AND id = ?`, [notBefore, runId, taskId]);
}
