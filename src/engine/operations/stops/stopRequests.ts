import { setRunStopMode } from '../runs/setRunStopMode';
import { setTaskNotBefore } from '../tasks/setTaskStatus';
import { closeOpenGates } from '../gates/closeGate';
import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import { blockDependents } from '../tasks/dependents';
import { getDelegation } from '../../queries/delegations';
import { nextCounter } from '../counters/nextCounter';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskStatus } from '../tasks/setTaskStatus';
import { transitionDelegation } from '../delegations/transitionDelegation';
import type { StoreTx } from '../../store/port';
import type { StopReportEntry, StopRequest } from '../../domain/stops';
import { STOP_COLUMNS, toStop, type StopRow } from '../../queries/stops';

import type { StopMode } from '../../domain/types';

/**
 * Records a request to stop a run (or one delegation). Repeating a stop that is still in
 * force is a no-op that returns the first request; so is asking for graceful while an
 * immediate stop is in force (the answer is that immediate stop). Asking for immediate while
 * only a graceful one is in force is not a repeat: it escalates (a new request, applied like
 * any other). A stop of one delegation always ends its worker, so any stop of it in force
 * covers another. A run stop takes effect for dispatch at once (`runs.stop_mode`); killing
 * in-flight work is the job of whoever applies it.
 */
export async function requestStop(
  tx: StoreTx,
  input: {
    runId: string;
    delegationId?: string;
    mode: StopMode;
    by: string;
    /** The stop a cancel starts with: the run is being cancelled, not paused for a person. */
    purpose?: 'cancel';
  },
  now: number,
): Promise<{ request: StopRequest; repeated: boolean }> {
  const run = await tx.get<{ status: string }>(`SELECT status FROM runs WHERE id = ?`, [input.runId]);
  if (!run) throw new BatonError('run.unknown', `There is no run ${input.runId}.`);
  if (input.delegationId) {
    const delegation = await getDelegation(tx, input.runId, input.delegationId);
    if (!delegation)
      throw new BatonError('delegation.unknown', `There is no delegation ${input.delegationId} in run ${input.runId}.`);
  }
  const inForce = await tx.all<StopRow>(
    `SELECT ${STOP_COLUMNS} FROM stop_requests WHERE run_id = ? AND status IN ('requested', 'applied') AND ${input.delegationId ? 'delegation_id = ?' : 'delegation_id IS NULL'} ORDER BY ordinal`,
    input.delegationId ? [input.runId, input.delegationId] : [input.runId],
  );
  // The strongest stop in force answers: after an escalation, a graceful repeat is told about the immediate one.
  const covering = input.delegationId
    ? inForce[0]
    : (inForce.find((r) => r.mode === 'immediate') ?? inForce.find((r) => r.mode === input.mode));
  if (covering) return { request: toStop(covering), repeated: true };
  const ordinal = await nextCounter(tx, 'stop');
  const id = `S-${ordinal}`;
  await tx.run(
    `INSERT INTO stop_requests (id, ordinal, run_id, delegation_id, mode, status, requested_at, requested_by, report_json, purpose) VALUES (?, ?, ?, ?, ?, 'requested', ?, ?, '[]', ?)`,
    [id, ordinal, input.runId, input.delegationId ?? null, input.mode, now, input.by, input.purpose ?? null],
  );
  await appendEvent(tx, input.runId, 'stop:requested', now, {
    stopId: id,
    mode: input.mode,
    by: input.by,
    ...(input.delegationId ? { delegationId: input.delegationId } : {}),
  });
  if (!input.delegationId) {
    await setRunStopMode(tx, input.runId, input.mode, now);
    await refreshRunStatus(tx, input.runId, now);
  }
  return {
    request: {
      id,
      runId: input.runId,
      ...(input.delegationId ? { delegationId: input.delegationId } : {}),
      mode: input.mode,
      status: 'requested',
      requestedAt: now,
      requestedBy: input.by,
      report: [],
    },
    repeated: false,
  };
}

/**
 * Records one stopped attempt: the delegation is CANCELLED with who stopped it. After a run
 * stop the task goes back to ready (resume runs it again); after a stop of this attempt
 * alone the task is cancelled and its dependents blocked.
 */
export async function cancelStoppedAttempt(
  tx: StoreTx,
  input: { runId: string; delegationId: string; request: StopRequest; entry: StopReportEntry },
  now: number,
): Promise<void> {
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (
    !delegation ||
    (delegation.status !== 'RUNNING' && delegation.status !== 'PENDING' && delegation.status !== 'BLOCKED')
  )
    return;
  const how = `stopped (${input.request.mode}) by ${input.request.requestedBy}${input.entry.confirmed ? '' : '; termination NOT confirmed'}`;
  await transitionDelegation(tx, delegation, 'CANCELLED', { reason: how }, now);
  await closeOpenGates(
    tx,
    { runId: input.runId, delegationId: delegation.id },
    { decision: 'rejected', note: how },
    now,
  );
  if (input.request.delegationId) {
    await setTaskStatus(tx, input.runId, delegation.taskId, 'cancelled', how, now);
    await blockDependents(tx, input.runId, delegation.taskId, now);
  } else {
    await setTaskStatus(tx, input.runId, delegation.taskId, 'ready', how, now);
    await setTaskNotBefore(tx, input.runId, delegation.taskId, null);
  }
}

/**
 * Marks a stop applied with its report. Only the first to apply it records it: a stop applied
 * twice (a coordinator that took over while another process applied it) is reported once.
 * Returns whether this call applied it.
 */
export async function markStopApplied(
  tx: StoreTx,
  request: StopRequest,
  report: StopReportEntry[],
  now: number,
): Promise<boolean> {
  const changed = await tx.run(
    `UPDATE stop_requests SET status = 'applied', applied_at = ?, report_json = ? WHERE id = ? AND status = 'requested'`,
    [now, JSON.stringify(report), request.id],
  );
  if (changed !== 1) return false;
  await appendEvent(tx, request.runId, 'stop:applied', now, {
    stopId: request.id,
    mode: request.mode,
    attempts: report.length,
    confirmed: report.every((e) => e.confirmed),
    ...(request.delegationId ? { delegationId: request.delegationId } : {}),
  });
  await refreshRunStatus(tx, request.runId, now);
  return true;
}

/** Resuming ends the stops in force: the run dispatches again. */
export async function liftStops(tx: StoreTx, runId: string, now: number): Promise<void> {
  await tx.run(
    `UPDATE stop_requests SET status = 'closed' WHERE run_id = ? AND delegation_id IS NULL AND status IN ('requested', 'applied')`,
    [runId],
  );
  if (await setRunStopMode(tx, runId, null, now)) await appendEvent(tx, runId, 'run:resumed', now, {});
  await refreshRunStatus(tx, runId, now);
}
