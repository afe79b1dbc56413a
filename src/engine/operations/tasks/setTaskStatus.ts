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
  /** The task's status and reason as read in this transaction; read here otherwise. The update checks it still is. */
  current?: { status: TaskStatus; reason: string | null },
): Promise<void> {
  const row = current
    ? { status: current.status, status_reason: current.reason }
    : await tx.get<{ status: TaskStatus; status_reason: string | null }>(
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

/**
 * A finished task (completed or failed) goes back to ready for a follow-up attempt (domain/followUp.ts): the one move
 * out of an end, and only this operation makes it — TASK_TRANSITIONS keeps the ends final for every other path.
 * Compare-and-set on the status it found; the retry backoff is cleared (a follow-up is no retry).
 */
export async function reopenFinishedTask(
  tx: StoreTx,
  runId: string,
  taskId: string,
  reason: string,
  now: number,
): Promise<void> {
  const row = await tx.get<{ status: TaskStatus }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
    runId,
    taskId,
  ]);
  if (!row) throw new BatonError('task.unknown', `Task ${taskId} is not in run ${runId}.`);
  if (row.status !== 'completed' && row.status !== 'failed')
    throw new BatonError(
      'task.illegal-transition',
      `Task ${taskId} is ${row.status}; only a finished task is reopened.`,
    );
  const changed = await tx.run(
    `UPDATE tasks SET status = 'ready', status_reason = ?, not_before = NULL, updated_at = ? WHERE run_id = ? AND id = ? AND status = ?`,
    [reason, now, runId, taskId, row.status],
  );
  if (changed !== 1) throw new BatonError('task.changed-meanwhile', `Task ${taskId} changed meanwhile; try again.`);
  await appendEvent(tx, runId, 'task:status', now, { taskId, from: row.status, to: 'ready', reason });
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
