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
 * recorded as over. A process on another host is neither touched nor confirmed.
 */
export async function endVerifyProcesses(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'fence'>,
  runId: string,
  delegationId: string | undefined,
  reason: string,
  graceMs: number,
): Promise<StopReportEntry[]> {
  const open = await ctx.store.read((r) => openVerifyProcesses(r, runId, delegationId));
  return Promise.all(
    open.map(async (verify): Promise<StopReportEntry> => {
      const entry = { delegationId: verify.delegationId, processes: [] as number[], survivors: [] as number[] };
      if (isProcessAlive(verify.identity) === undefined)
        return { ...entry, confirmed: false, note: `verify command runs on another host (${verify.identity.host})` };
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

/** A stop's entry for an attempt, with what ending its verify commands found added to what ending its worker found. */
export function withVerifyProcesses(entry: StopReportEntry, verifies: readonly StopReportEntry[]): StopReportEntry {
  const mine = verifies.filter((v) => v.delegationId === entry.delegationId);
  if (mine.length === 0) return entry;
  return {
    ...entry,
    processes: [...entry.processes, ...mine.flatMap((v) => v.processes)],
    survivors: [...entry.survivors, ...mine.flatMap((v) => v.survivors)],
    confirmed: entry.confirmed && mine.every((v) => v.confirmed),
  };
}
