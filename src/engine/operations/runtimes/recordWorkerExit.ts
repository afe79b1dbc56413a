import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

export interface WorkerExitSeen {
  runId: string;
  delegationId: string;
  runtimeId: string;
  exitCode: number | null;
  signal: string | null;
  endedAt: number;
  /** The host whose lease watchdog handed the end in (usecases/handIn.ts), when it was not read here. */
  handedInBy?: string;
}

/**
 * Tells the run how a worker ended while no coordinator watched (its exit record), before its
 * attempt is settled from it — only while that attempt, under that runtime, is still RUNNING:
 * a record read after someone settled the attempt tells nothing. Says whether it was told.
 */
export async function recordWorkerExit(tx: StoreTx, seen: WorkerExitSeen, now: number): Promise<boolean> {
  const delegation = await getDelegation(tx, seen.runId, seen.delegationId);
  if (!delegation || delegation.status !== 'RUNNING' || delegation.runtimeId !== seen.runtimeId) return false;
  await appendEvent(tx, seen.runId, 'runtime:exited', now, {
    runtimeId: seen.runtimeId,
    delegationId: seen.delegationId,
    taskId: delegation.taskId,
    exitCode: seen.exitCode,
    signal: seen.signal,
    endedAt: seen.endedAt,
    ...(seen.handedInBy !== undefined ? { handedInBy: seen.handedInBy } : {}),
  });
  return true;
}
