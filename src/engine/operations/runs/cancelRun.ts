import { BatonError } from '../../domain/errors';
import { isFinishedRun, type RunStatus, type TaskStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { DELEGATION_COLUMNS, toDelegation, type DelegationRow } from '../../store/rows';
import { transitionDelegation } from '../delegations/transitionDelegation';
import { appendEvent } from '../events/appendEvent';
import { closeOpenGates } from '../gates/closeGate';
import { setTaskStatus } from '../tasks/setTaskStatus';

export interface CancelRunOutcome {
  /** The status the run had before (`cancelled` when it already was: nothing was written). */
  from: RunStatus;
  alreadyCancelled: boolean;
  /** What the cancel ended, for the report. */
  gatesClosed: number;
  attemptsCancelled: string[];
  tasksCancelled: number;
}

const UNFINISHED_TASKS: readonly TaskStatus[] = ['pending', 'ready', 'gated', 'running', 'verifying'];

/**
 * Ends a run for good, in one transaction: its open gates are closed (rejected, with who
 * cancelled it), every attempt not yet over is CANCELLED (its runtime ended), every task not
 * yet over is cancelled, and the run becomes `cancelled` — a status refreshRunStatus never
 * changes again. The caller has already stopped the run immediately (usecases/cancelRun.ts),
 * so no worker of it is alive when this runs; attempts still RUNNING here are those whose
 * termination could not be confirmed, and the report says so. Cancelling a cancelled run
 * writes nothing; a run that finished otherwise cannot be cancelled.
 */
export async function cancelRun(
  tx: StoreTx,
  input: { runId: string; by: string; note?: string },
  now: number,
): Promise<CancelRunOutcome> {
  const run = await tx.get<{ status: RunStatus }>(`SELECT status FROM runs WHERE id = ?`, [input.runId]);
  if (!run) throw new BatonError('run.unknown', `There is no run ${input.runId}.`);
  const none = { gatesClosed: 0, attemptsCancelled: [], tasksCancelled: 0 };
  if (run.status === 'cancelled') return { from: run.status, alreadyCancelled: true, ...none };
  if (isFinishedRun(run.status))
    throw new BatonError('run.finished', `Run ${input.runId} is ${run.status} already; there is nothing to cancel.`);
  const why = `run cancelled by ${input.by}${input.note ? `: ${input.note}` : ''}`;

  const open = await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM gates WHERE run_id = ? AND status = 'open'`, [
    input.runId,
  ]);
  await closeOpenGates(tx, { runId: input.runId }, { decision: 'rejected', note: why }, now);

  const live = (
    await tx.all<DelegationRow>(
      `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND status IN ('PENDING', 'RUNNING', 'BLOCKED') ORDER BY created_at, id`,
      [input.runId],
    )
  ).map(toDelegation);
  for (const delegation of live) await transitionDelegation(tx, delegation, 'CANCELLED', { reason: why }, now);

  const tasks = await tx.all<{ id: string }>(
    `SELECT id FROM tasks WHERE run_id = ? AND status IN (${UNFINISHED_TASKS.map((s) => `'${s}'`).join(', ')}) ORDER BY ordinal`,
    [input.runId],
  );
  for (const task of tasks) await setTaskStatus(tx, input.runId, task.id, 'cancelled', why, now);

  await tx.run(`UPDATE runs SET status = 'cancelled', updated_at = ? WHERE id = ?`, [now, input.runId]);
  await appendEvent(tx, input.runId, 'run:status', now, { from: run.status, to: 'cancelled', reason: why });
  return {
    from: run.status,
    alreadyCancelled: false,
    gatesClosed: open?.n ?? 0,
    attemptsCancelled: live.map((d) => d.id),
    tasksCancelled: tasks.length,
  };
}
