import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskStatus } from '../tasks/setTaskStatus';
import { transitionDelegation } from './transitionDelegation';

/** The reason an attempt released this way ends with (CANCELLED: it does not count against maxAttempts). */
export const UNLAUNCHED_REASON = 'not launched: the store went out of reach during its launch; released, not counted';

/**
 * A claimed attempt whose worker never ran — its launch was cut off by a store outage after the claim committed
 * (executor/attemptLauncher.ts) — is released once the store answers: CANCELLED, so it does not count against the
 * task's attempts, and its task ready at once, instead of holding its slot until its lease runs out and counting as
 * STALE. An attempt already decided elsewhere (a stop, an expiry) is left as it is. Returns whether it released.
 */
export async function releaseUnlaunchedAttempt(
  tx: StoreTx,
  /** `reason`: another release of the same kind — a coordinator that joined the run left it (executor/coordinator). */
  input: { runId: string; delegationId: string; reason?: string },
  now: number,
): Promise<boolean> {
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!delegation || delegation.status !== 'RUNNING') return false;
  const reason = input.reason ?? UNLAUNCHED_REASON;
  await transitionDelegation(tx, delegation, 'CANCELLED', { reason }, now);
  await setTaskStatus(tx, input.runId, delegation.taskId, 'ready', `${delegation.id} ${reason}`, now);
  await refreshRunStatus(tx, input.runId, now);
  return true;
}
