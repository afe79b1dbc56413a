import type { Delegation } from '../domain/types';
import type { StoreReader } from '../store/port';
import { DELEGATION_COLUMNS, toDelegation, type DelegationRow } from '../store/rows';

export async function getDelegation(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  delegationId: string,
): Promise<Delegation | undefined> {
  const row = await r.get<DelegationRow>(`SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND id = ?`, [
    runId,
    delegationId,
  ]);
  return row ? toDelegation(row) : undefined;
}

/** Whether some RUNNING attempt's lease ran out and is not yet marked STALE (expireStaleRuntimes would act). */
export async function anyLeaseExpired(r: Pick<StoreReader, 'get'>, now: number): Promise<boolean> {
  const row = await r.get(
    `SELECT 1 AS x FROM runtimes r JOIN delegations d ON d.run_id = r.run_id AND d.id = r.delegation_id
     WHERE r.ended_at IS NULL AND r.lease_expires_at <= ? AND d.status = 'RUNNING' LIMIT 1`,
    [now],
  );
  return row !== undefined;
}
