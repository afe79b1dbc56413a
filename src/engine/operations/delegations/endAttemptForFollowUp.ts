import { followUpReason } from '../../domain/followUp';
import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { setTaskNotBefore, setTaskStatus } from '../tasks/setTaskStatus';
import { transitionDelegation } from './transitionDelegation';

/**
 * A RUNNING attempt a person sent a follow-up message to (domain/followUp.ts) is ended, as a parked one is: CANCELLED
 * with a `follow-up:` reason — so it does not count against the task's attempts — and its task back to ready at once,
 * its next attempt continuing the session with the message first. Decided here, in the store; whoever drives the
 * attempt sees it decided elsewhere and ends its processes, gracefully first (AttemptSupervisor.endDecidedElsewhere).
 * An attempt that ended meanwhile is left as it is. Returns whether it ended it.
 */
export async function endAttemptForFollowUp(
  tx: StoreTx,
  input: { runId: string; delegationId: string; by: string },
  now: number,
): Promise<boolean> {
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!delegation || delegation.status !== 'RUNNING') return false;
  const reason = followUpReason(input.by);
  await transitionDelegation(tx, delegation, 'CANCELLED', { reason }, now);
  const why = `a message from ${input.by} ended ${delegation.id}; the next attempt continues with it`;
  await setTaskStatus(tx, input.runId, delegation.taskId, 'ready', why, now);
  await setTaskNotBefore(tx, input.runId, delegation.taskId, null);
  return true;
}
