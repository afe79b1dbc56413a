import { parkedReason, waitingForLimitReason, type ParkCause } from '../../domain/parking';
import { attemptWorker } from '../../queries/agentUsage';
import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskNotBefore, setTaskStatus } from '../tasks/setTaskStatus';
import { transitionDelegation } from './transitionDelegation';

/**
 * A RUNNING attempt is parked (domain/parking.ts): CANCELLED with a `parked:` reason — so it does not count against
 * the task's attempts — and its task goes back to ready. The `attempt:parked` event names its worker and `until`: for
 * a usage limit it is the worker's quota hold, which the dispatch pass reads (queries/quotaHolds.ts) and which decides
 * where and when the task runs next — on its worker's `fallbackWorker` now, else on its worker after the reset (its
 * backoff set then). An attempt already decided elsewhere is left as it is. Returns whether it parked.
 */
export async function parkAttempt(
  tx: StoreTx,
  input: { runId: string; delegationId: string; cause: ParkCause; until: number; said?: string },
  now: number,
): Promise<boolean> {
  const { runId, cause, until } = input;
  const delegation = await getDelegation(tx, runId, input.delegationId);
  if (!delegation || delegation.status !== 'RUNNING') return false;
  const worker = (await attemptWorker(tx, runId, delegation.id)) ?? delegation.agent;
  await transitionDelegation(tx, delegation, 'CANCELLED', { reason: parkedReason(cause, worker, until, now) }, now);
  const reason =
    cause === 'usage-limit'
      ? waitingForLimitReason(until, now)
      : `${delegation.id} was silent and stopped; resumes in its session`;
  await setTaskStatus(tx, runId, delegation.taskId, 'ready', reason, now);
  await setTaskNotBefore(tx, runId, delegation.taskId, null);
  await appendEvent(tx, runId, 'attempt:parked', now, {
    delegationId: delegation.id,
    taskId: delegation.taskId,
    worker,
    cause,
    until,
    ...(input.said ? { said: input.said } : {}),
  });
  await refreshRunStatus(tx, runId, now);
  return true;
}
