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
