import { withVerifyProcesses, type StopReportEntry, type StopRequest } from '../domain/stops';
import { cancelStoppedAttempt, markStopApplied } from '../operations/stops/stopRequests';
import { stoppableAttempts } from '../queries/stops';
import { endRecordedWorker } from '../usecases/applyStop';
import type { EngineContext } from '../usecases/context';
import { endVerifyProcesses } from '../usecases/endVerifyProcesses';
import type { AttemptSupervisor } from './attemptSupervisor';
import { counted } from '../domain/plural';

/**
 * Applies a stop request as the run's coordinator: graceful lets in-flight work finish (and
 * says so); immediate — or a stop of one attempt — ends the workers it drives and those it
 * does not (claimed by an external worker, or waiting at a gate) from what their runtime
 * recorded, all at once, then cancels the attempts and marks the stop applied in one
 * transaction. `keepHandOffs` (a coordinator shutting down, Ctrl-C on `baton start`): a
 * person's hand-off (manual worker) has no process to end and stays with the person.
 */
export async function applyStopAsCoordinator(
  ctx: EngineContext,
  supervisor: AttemptSupervisor,
  runId: string,
  request: StopRequest,
  /** graceMs: after SIGTERM, how long a worker gets before SIGKILL (default: the config's stopGraceSeconds). */
  options: { keepHandOffs?: boolean; graceMs?: number } = {},
): Promise<StopReportEntry[]> {
  const targets = supervisor
    .all()
    .filter(
      (a) => (!request.delegationId || a.delegationId === request.delegationId) && !(options.keepHandOffs && a.manual),
    );
  let report: StopReportEntry[];
  if (request.mode === 'immediate' || request.delegationId) {
    // Every worker gets its grace period at the same time, not one after another.
    const graceMs = options.graceMs ?? ctx.config.stopGraceSeconds * 1000;
    const driven = await Promise.all(
      targets.map(async (attempt): Promise<StopReportEntry> => {
        const [termination, verifies] = await Promise.all([
          supervisor.end(attempt, 'stopped', graceMs),
          // An attempt being verified: its verify command ends with it.
          endVerifyProcesses(ctx, runId, attempt.delegationId, 'stopped', graceMs),
        ]);
        return withVerifyProcesses(
          {
            delegationId: attempt.delegationId,
            processes: termination?.processes.map((p) => p.pid) ?? [],
            confirmed: termination ? termination.confirmed : true,
            survivors: termination?.survivors.map((p) => p.pid) ?? [],
            ...(attempt.manual ? { note: 'manual hand-off withdrawn' } : {}),
          },
          verifies,
        );
      }),
    );
    const others = await ctx.store.read((r) => stoppableAttempts(r, runId, request.delegationId));
    const external = await Promise.all(
      others
        .filter((d) => !targets.some((a) => a.delegationId === d.delegationId) && !(options.keepHandOffs && d.handOff))
        .map(async (d) => {
          await ctx.fence?.assertHeld();
          return endRecordedWorker(ctx, runId, d.delegationId, graceMs);
        }),
    );
    report = [...driven, ...external];
    try {
      await ctx.store.transact(async (tx) => {
        const now = ctx.clock.now();
        for (const entry of report) {
          await cancelStoppedAttempt(tx, { runId, delegationId: entry.delegationId, request, entry }, now);
        }
        await markStopApplied(tx, request, report, now);
      });
    } finally {
      for (const attempt of targets) supervisor.forget(attempt);
    }
  } else {
    report = targets.map((attempt) => ({
      delegationId: attempt.delegationId,
      processes: attempt.identity ? [attempt.identity.pid] : [],
      confirmed: false,
      survivors: [],
      note: 'left to finish (graceful)',
    }));
    await ctx.store.transact((tx) => markStopApplied(tx, request, report, ctx.clock.now()));
  }
  ctx.log(`stop ${request.id} (${request.mode}) applied to ${counted(report.length, 'attempt')}`);
  return report;
}
