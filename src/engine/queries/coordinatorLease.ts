import type { ProcessIdentity } from '../domain/process';
import type { StoreReader } from '../store/port';

export interface CoordinatorLease {
  runId: string;
  holder: string;
  identity: ProcessIdentity;
  epoch: number;
  expiresAt: number;
  releasedAt?: number;
  /**
   * When the chain of coordinators that took over from one another without a clean release
   * began: attempts ended since then may have processes a predecessor decided to end but did
   * not get to (a successor ends them).
   */
  chainSince?: number;
}

interface LeaseRow {
  run_id: string;
  holder: string;
  host: string;
  pid: number;
  pid_start: string | null;
  epoch: number;
  expires_at: number;
  released_at: number | null;
  chain_since: number | null;
}

export async function readCoordinatorLease(
  r: Pick<StoreReader, 'get'>,
  runId: string,
): Promise<CoordinatorLease | undefined> {
  const row = await r.get<LeaseRow>(
    `SELECT run_id, holder, host, pid, pid_start, epoch, expires_at, released_at, chain_since FROM coordinator_leases WHERE run_id = ?`,
    [runId],
  );
  if (!row) return undefined;
  return {
    runId: row.run_id,
    holder: row.holder,
    identity: { pid: row.pid, startTime: row.pid_start, host: row.host },
    epoch: row.epoch,
    expiresAt: row.expires_at,
    ...(row.released_at !== null ? { releasedAt: row.released_at } : {}),
    ...(row.chain_since !== null ? { chainSince: row.chain_since } : {}),
  };
}
