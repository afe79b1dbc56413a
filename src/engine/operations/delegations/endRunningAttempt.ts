import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { settleUnsuccessfulAttempt } from '../tasks/settleUnsuccessfulAttempt';
import { transitionDelegation } from './transitionDelegation';

/**
 * A RUNNING attempt ends without success — FAILED (its worker failed, timed out, could not
 * start) or STALE (its process is gone, its lease ran out) — and the retry policy applies.
 * An attempt already decided elsewhere is left as it is.
 */
export async function endRunningAttempt(
  tx: StoreTx,
  input: { runId: string; delegationId: string; to: 'FAILED' | 'STALE'; reason: string },
  now: number,
): Promise<void> {
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!delegation || delegation.status !== 'RUNNING') return;
  await transitionDelegation(tx, delegation, input.to, { reason: input.reason }, now);
  await settleUnsuccessfulAttempt(tx, input.runId, delegation.taskId, `${input.delegationId} ${input.reason}`, now);
  await refreshRunStatus(tx, input.runId, now);
}
