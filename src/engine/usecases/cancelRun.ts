import { BatonError } from '../domain/errors';
import type { StopRequest } from '../domain/stops';
import { isFinishedRun } from '../domain/types';
import { cancelRun as cancelRunOperation, type CancelRunOutcome } from '../operations/runs/cancelRun';
import { readCoordinatorLease } from '../queries/coordinatorLease';
import { readRunStatus } from '../queries/runs';
import { stopAndApply } from './applyStop';
import type { EngineContext } from './context';

export interface CancelOutcome extends CancelRunOutcome {
  runId: string;
  /** The immediate stop that ended the run's workers (absent when the run was already cancelled). */
  stop?: StopRequest;
}

/**
 * Cancels a run: first an immediate stop — every worker of the run ended and its end proven,
 * by the run's coordinator when one is alive (it watches the store), else by this process —
 * then, once that stop is applied, the run's gates, attempts and tasks are closed and the run
 * becomes `cancelled` (operations/runs/cancelRun.ts). If the coordinator does not apply the
 * stop within `waitMs`, nothing is cancelled (`run.cancel-pending`): the stop stays in force,
 * so nothing new starts, and the cancel can be asked again.
 */
export async function cancelRun(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'config'>,
  input: { runId: string; by: string; note?: string },
  waitMs: number,
): Promise<CancelOutcome> {
  const status = await ctx.store.read((r) => readRunStatus(r, input.runId));
  if (status === 'cancelled' || isFinishedRun(status)) {
    // Says "already cancelled", or refuses a finished run, without stopping anything.
    const outcome = await ctx.store.transact((tx) => cancelRunOperation(tx, input, ctx.clock.now()));
    return { runId: input.runId, ...outcome };
  }
  const stopped = await stopAndApply(
    ctx,
    { runId: input.runId, mode: 'immediate', by: input.by, purpose: 'cancel' },
    waitMs,
  );
  if (stopped.appliedBy === 'pending') {
    const lease = await ctx.store.read((r) => readCoordinatorLease(r, input.runId));
    throw new BatonError(
      'run.cancel-pending',
      `Run ${input.runId} is driven by ${lease?.holder ?? 'another process'}, which has not ended its workers yet (stop ${stopped.request.id}); nothing was cancelled. Nothing new starts meanwhile; cancel again in a moment.`,
    );
  }
  const outcome = await ctx.store.transact((tx) => cancelRunOperation(tx, input, ctx.clock.now()));
  // The stop paused the run and cancelled its attempts in flight a moment ago: report from before it.
  const stoppedAttempts = stopped.repeated ? [] : stopped.request.report.map((e) => e.delegationId);
  return {
    runId: input.runId,
    ...outcome,
    from: status,
    attemptsCancelled: [...new Set([...stoppedAttempts, ...outcome.attemptsCancelled])],
    stop: stopped.request,
  };
}
