import { foreignLeaseGraceMs } from '../domain/process';
import type { StopReportEntry } from '../domain/stops';
import { isProcessAlive, terminateWorker } from '../effects/processes/processes';
import { endVerifyProcess } from '../operations/verifyProcesses/verifyProcesses';
import { openVerifyProcesses } from '../queries/verifyProcesses';
import type { EngineContext } from './context';

/**
 * Ends the verify commands recorded as running for an attempt (or for every attempt of the
 * run) — left by a coordinator that died, was stopped or superseded, or asked to stop — the
 * way a worker is ended: the recorded process (pid and start time), its group and session,
 * and whatever carries its marker or tag; then proves it by looking again. One proven gone is
 * recorded as over. A process on another host is never touched: it counts as ended only when
 * a lease watchdog guards it and the caller is the coordinator that took the run over, once the
 * watchdog's time has passed since (a predecessor lost the run before its successor took it;
 * docs/team.md, "Failover"). Otherwise it is not confirmed.
 */
export async function endVerifyProcesses(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'fence' | 'config'>,
  runId: string,
  delegationId: string | undefined,
  reason: string,
  graceMs: number,
): Promise<StopReportEntry[]> {
  const open = await ctx.store.read((r) => openVerifyProcesses(r, runId, delegationId));
  // The watchdog's time, by the config's stop grace (the same on every machine of a team: the run's config).
  const foreignGraceMs = foreignLeaseGraceMs(ctx.config.stopGraceSeconds * 1000);
  return Promise.all(
    open.map(async (verify): Promise<StopReportEntry> => {
      const entry = { delegationId: verify.delegationId, processes: [] as number[], survivors: [] as number[] };
      if (isProcessAlive(verify.identity) === undefined) {
        const host = verify.identity.host;
        const endedBy =
          ctx.fence && ctx.fence.heldSince() > 0 && verify.watched ? ctx.fence.heldSince() + foreignGraceMs : undefined;
        if (endedBy === undefined || ctx.clock.now() < endedBy)
          return {
            ...entry,
            confirmed: false,
            note:
              endedBy === undefined
                ? `verify command runs on another host (${host})`
                : `verify command on another host (${host}): its lease watchdog ends it by ${new Date(endedBy).toISOString()}`,
          };
        await ctx.fence!.assertHeld();
        const over = `ended on ${host} by its lease watchdog (its coordinator lost the run)`;
        await ctx.store.transact((tx) => endVerifyProcess(tx, { id: verify.id, reason: over }, ctx.clock.now()));
        return { ...entry, confirmed: true, note: `verify \`${verify.command.join(' ')}\` ${over}` };
      }
      await ctx.fence?.assertHeld();
      const report = await terminateWorker(verify.identity, {
        marker: verify.marker,
        graceMs,
        clock: ctx.clock,
      });
      if (report.confirmed)
        await ctx.store.transact((tx) => endVerifyProcess(tx, { id: verify.id, reason }, ctx.clock.now()));
      return {
        ...entry,
        processes: report.processes.map((p) => p.pid),
        survivors: report.survivors.map((p) => p.pid),
        confirmed: report.confirmed,
        note: `verify \`${verify.command.join(' ')}\``,
      };
    }),
  );
}
