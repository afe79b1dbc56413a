import { closeOpenGates } from '../gates/closeGate';
import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import {
  blockDependents,
  getDelegation,
  nextCounter,
  refreshRunStatus,
  setTaskStatus,
  transitionDelegation,
} from '../tasks/taskFlow';
import { isProcessAlive, terminateWorker, workerMarker, type ProcessIdentity } from '../../effects/processes/processes';
import type { StorePort, StoreTx } from '../../store/port';
import type { Clock } from '../../domain/clock';

import type { StopMode } from '../../domain/types';
export type { StopMode };

export interface StopRequest {
  id: string;
  runId: string;
  delegationId?: string;
  mode: StopMode;
  status: 'requested' | 'applied' | 'closed';
  requestedAt: number;
  requestedBy: string;
  appliedAt?: number;
  report: StopReportEntry[];
}

/** What happened to one in-flight attempt when a stop was applied. */
export interface StopReportEntry {
  delegationId: string;
  /** Every process of the worker that was found and signalled. */
  processes: number[];
  /** True when, after TERM, the grace period and KILL, none of them is alive. */
  confirmed: boolean;
  survivors: number[];
  note?: string;
}

interface StopRow {
  id: string;
  run_id: string;
  delegation_id: string | null;
  mode: string;
  status: string;
  requested_at: number;
  requested_by: string;
  applied_at: number | null;
  report_json: string;
}

const STOP_COLUMNS = 'id, run_id, delegation_id, mode, status, requested_at, requested_by, applied_at, report_json';

function toStop(r: StopRow): StopRequest {
  return {
    id: r.id,
    runId: r.run_id,
    ...(r.delegation_id ? { delegationId: r.delegation_id } : {}),
    mode: r.mode as StopMode,
    status: r.status as StopRequest['status'],
    requestedAt: r.requested_at,
    requestedBy: r.requested_by,
    ...(r.applied_at !== null ? { appliedAt: r.applied_at } : {}),
    report: JSON.parse(r.report_json) as StopReportEntry[],
  };
}

export async function readStop(tx: Pick<StoreTx, 'get'>, stopId: string): Promise<StopRequest | undefined> {
  const row = await tx.get<StopRow>(`SELECT ${STOP_COLUMNS} FROM stop_requests WHERE id = ?`, [stopId]);
  return row ? toStop(row) : undefined;
}

export async function pendingStops(tx: Pick<StoreTx, 'all'>, runId: string): Promise<StopRequest[]> {
  return (
    await tx.all<StopRow>(
      `SELECT ${STOP_COLUMNS} FROM stop_requests WHERE run_id = ? AND status = 'requested' ORDER BY ordinal`,
      [runId],
    )
  ).map(toStop);
}

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
  input: { runId: string; delegationId?: string; mode: StopMode; by: string },
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
    `INSERT INTO stop_requests (id, ordinal, run_id, delegation_id, mode, status, requested_at, requested_by, report_json) VALUES (?, ?, ?, ?, ?, 'requested', ?, ?, '[]')`,
    [id, ordinal, input.runId, input.delegationId ?? null, input.mode, now, input.by],
  );
  await appendEvent(tx, input.runId, 'stop:requested', now, {
    stopId: id,
    mode: input.mode,
    by: input.by,
    ...(input.delegationId ? { delegationId: input.delegationId } : {}),
  });
  if (!input.delegationId) {
    await tx.run(`UPDATE runs SET stop_mode = ?, updated_at = ? WHERE id = ?`, [input.mode, now, input.runId]);
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
    await tx.run(`UPDATE tasks SET not_before = NULL WHERE run_id = ? AND id = ?`, [input.runId, delegation.taskId]);
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
  const changed = await tx.run(
    `UPDATE runs SET stop_mode = NULL, updated_at = ? WHERE id = ? AND stop_mode IS NOT NULL`,
    [now, runId],
  );
  if (changed === 1) await appendEvent(tx, runId, 'run:resumed', now, {});
  await refreshRunStatus(tx, runId, now);
}

/** The live processes a runtime recorded, for whoever applies a stop without having spawned them. */
export async function recordedWorker(
  tx: Pick<StoreTx, 'get'>,
  runId: string,
  delegationId: string,
): Promise<{ runtimeId: string; identity?: ProcessIdentity } | undefined> {
  const row = await tx.get<{ id: string; pid: number | null; pid_start: string | null; host: string | null }>(
    `SELECT id, pid, pid_start, host FROM runtimes WHERE run_id = ? AND delegation_id = ? ORDER BY claimed_at DESC LIMIT 1`,
    [runId, delegationId],
  );
  if (!row) return undefined;
  return {
    runtimeId: row.id,
    ...(row.pid !== null && row.host ? { identity: { pid: row.pid, startTime: row.pid_start, host: row.host } } : {}),
  };
}

/**
 * Ends the worker an attempt recorded, for whoever did not spawn it (this process after its
 * coordinator died; a coordinator asked to stop an attempt it does not drive): the recorded
 * process and its descendants, and whatever carries its runtime's marker — so also what a
 * worker left behind when it exited, or what a coordinator spawned and died before
 * recording. A worker on another host is not touched and not confirmed.
 */
export async function endRecordedWorker(
  ctx: { store: StorePort; clock: Clock },
  runId: string,
  delegationId: string,
  graceMs: number,
): Promise<StopReportEntry> {
  const entry: StopReportEntry = { delegationId, processes: [], confirmed: true, survivors: [] };
  const worker = await ctx.store.read((r) => recordedWorker(r, runId, delegationId));
  if (!worker) return entry;
  if (worker.identity && isProcessAlive(worker.identity) === undefined) {
    return {
      ...entry,
      confirmed: false,
      note: `runs on another host (${worker.identity.host}); not stopped from here`,
    };
  }
  const termination = await terminateWorker(worker.identity, {
    marker: workerMarker(worker.runtimeId),
    graceMs,
    clock: ctx.clock,
  });
  return {
    ...entry,
    processes: termination.processes.map((p) => p.pid),
    confirmed: termination.confirmed,
    survivors: termination.survivors.map((p) => p.pid),
  };
}

/**
 * Applies a stop with no coordinator alive (the CLI, after the coordinator died). Immediate,
 * or a stop of one delegation: ends the workers of the targeted attempts, all at once (each
 * gets its grace period, not one after the other), and cancels those attempts. Graceful: lets
 * in-flight attempts run and reports them; nothing new is dispatched. Returns the request as
 * stored.
 */
export async function applyStopHere(
  ctx: { store: StorePort; clock: Clock },
  request: StopRequest,
  graceMs: number,
): Promise<StopRequest> {
  const ends = request.mode === 'immediate' || request.delegationId !== undefined;
  const targets = await ctx.store.read((r) =>
    r.all<{ id: string; status: string }>(
      request.delegationId
        ? `SELECT id, status FROM delegations WHERE run_id = ? AND id = ? AND status IN ('RUNNING', 'PENDING', 'BLOCKED')`
        : `SELECT id, status FROM delegations WHERE run_id = ? AND status IN ('RUNNING', 'PENDING') ORDER BY created_at, id`,
      request.delegationId ? [request.runId, request.delegationId] : [request.runId],
    ),
  );
  const report = await Promise.all(
    targets.map(async ({ id, status }): Promise<StopReportEntry> => {
      if (ends) {
        const entry = await endRecordedWorker(ctx, request.runId, id, graceMs);
        return status === 'BLOCKED' && entry.processes.length === 0
          ? { ...entry, note: 'no worker was running (it waited at a gate)' }
          : entry;
      }
      const worker = await ctx.store.read((r) => recordedWorker(r, request.runId, id));
      const alive = worker?.identity ? isProcessAlive(worker.identity) !== false : false;
      return {
        delegationId: id,
        processes: alive ? [worker!.identity!.pid] : [],
        confirmed: false,
        survivors: [],
        note: 'left to finish (graceful)',
      };
    }),
  );
  // One transaction: the attempts are cancelled and the stop is applied together, or neither is.
  return ctx.store.transact(async (tx) => {
    const current = await readStop(tx, request.id);
    if (current?.status !== 'requested') return current ?? request; // applied meanwhile by someone else
    const now = ctx.clock.now();
    if (ends)
      for (const entry of report)
        await cancelStoppedAttempt(tx, { runId: request.runId, delegationId: entry.delegationId, request, entry }, now);
    await markStopApplied(tx, request, report, now);
    return (await readStop(tx, request.id))!;
  });
}
