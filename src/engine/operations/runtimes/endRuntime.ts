import type { Delegation } from '../../domain/types';
import type { StoreTx } from '../../store/port';

/**
 * A runtime's lease ends once (compare-and-set on `ended_at IS NULL`): its attempt reached
 * a terminal status, or its worker handed in a result and the rest (verification,
 * integration) is the coordinator's job.
 */
export async function endRuntimesOf(
  tx: StoreTx,
  delegation: Pick<Delegation, 'runId' | 'id'>,
  reason: string,
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE runtimes SET ended_at = ?, end_reason = ? WHERE run_id = ? AND delegation_id = ? AND ended_at IS NULL`,
    [now, reason, delegation.runId, delegation.id],
  );
}
