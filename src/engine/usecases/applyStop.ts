import { sleep } from '../domain/clock';
import { withVerifyProcesses, type StopReportEntry, type StopRequest } from '../domain/stops';
import type { StopMode } from '../domain/types';
import { isProcessAlive, terminateWorker, workerMarker } from '../effects/processes/processes';
import { cancelStoppedAttempt, markStopApplied, requestStop } from '../operations/stops/stopRequests';
import { readCoordinatorLease } from '../queries/coordinatorLease';
import { readStop, recordedWorker } from '../queries/stops';
import { endVerifyProcesses } from './endVerifyProcesses';
import type { EngineContext } from './context';
import { isCoordinatorResponsive } from './coordinatorLiveness';

export interface StopOutcome {
  request: StopRequest;
  repeated: boolean;
  appliedBy: 'coordinator' | 'this process' | 'pending';
}

/**
 * Records a stop and sees it applied. A live coordinator of the run applies it (it watches
 * the store): this waits up to `waitMs` for its report, and answers `pending` if none came.
 * With none alive, this process applies it: it ends the workers recorded on this host and
 * cancels their attempts. Either way the returned request, once applied, reports per attempt
 * whether the end of its processes was confirmed.
 */
export async function stopAndApply(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'config'>,
  stop: { runId: string; delegationId?: string; mode: StopMode; by: string; purpose?: 'cancel' },
  waitMs: number,
): Promise<StopOutcome> {
  const { request, repeated } = await ctx.store.transact((tx) => requestStop(tx, stop, ctx.clock.now()));
  if (request.status === 'applied') return { request, repeated, appliedBy: 'coordinator' };
  const lease = await ctx.store.read((r) => readCoordinatorLease(r, stop.runId));
  // A coordinator stopped by a signal (Ctrl-Z) cannot apply it: whoever asks does (isCoordinatorResponsive).
  if (isCoordinatorResponsive(lease, ctx.clock.now())) {
    // The coordinator notices the request through the journal; wait a little for its report.
    const deadline = ctx.clock.monotonic() + waitMs;
    while (ctx.clock.monotonic() < deadline) {
      const current = await ctx.store.read((r) => readStop(r, request.id));
      if (current?.status === 'applied') return { request: current, repeated, appliedBy: 'coordinator' };
      await sleep(ctx.clock, 50);
    }
    return { request, repeated, appliedBy: 'pending' };
  }
  const applied = await applyStopHere(ctx, request, ctx.config.stopGraceSeconds * 1000);
  return { request: applied, repeated, appliedBy: 'this process' };
}

/**
 * Ends the worker an attempt recorded, for whoever did not spawn it (this process after its
 * coordinator died; a coordinator asked to stop an attempt it does not drive): the recorded
 * process and its descendants, and whatever carries its runtime's marker — so also what a
 * worker left behind when it exited, or what a coordinator spawned and died before
 * recording — and the verify commands recorded for the attempt. A worker on another host is
 * not touched and not confirmed.
 */
export async function endRecordedWorker(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'fence' | 'config'>,
  runId: string,
  delegationId: string,
  graceMs: number,
): Promise<StopReportEntry> {
  const verifies = await endVerifyProcesses(ctx, runId, delegationId, 'stopped', graceMs);
  const entry = withVerifyProcesses({ delegationId, processes: [], confirmed: true, survivors: [] }, verifies);
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
    processes: [...termination.processes.map((p) => p.pid), ...entry.processes],
    confirmed: termination.confirmed && entry.confirmed,
    survivors: [...termination.survivors.map((p) => p.pid), ...entry.survivors],
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
  ctx: Pick<EngineContext, 'store' | 'clock' | 'config'>,
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
