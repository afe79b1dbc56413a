import type { Delegation, ResultStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';

/**
 * A PASS whose attempt still has to be verified (or integrated): the result is recorded on
 * the delegation, which stays RUNNING until the coordinator finishes it.
 */
export async function recordDelegationResult(
  tx: StoreTx,
  delegation: Pick<Delegation, 'runId' | 'id'>,
  result: { resultStatus: ResultStatus; artifactPath: string },
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE delegations SET result_status = ?, artifact_path = ?, updated_at = ? WHERE run_id = ? AND id = ?`,
    [result.resultStatus, result.artifactPath, now, delegation.runId, delegation.id],
  );
}
