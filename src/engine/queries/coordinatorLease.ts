import type { HandOver } from '../domain/events';
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

/**
 * A run's coordinator lease as the views show it: the lease, and — once it was let go — whether
 * it was handed over with its workers still running (the next window takes such a run over).
 */
export interface CoordinatorState extends CoordinatorLease {
  handedOver?: HandOver;
  /**
   * What a look at the holder's process said, when it proves the holder is not driving the run
   * although its lease has not run out: `gone` (dead, or its pid reused) or `stopped` (by a
   * signal: Ctrl-Z, a debugger). Set by the engine facade (a probe is an effect, not a query).
   */
  holderProcess?: 'gone' | 'stopped';
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

/**
 * The lease with what its release said. Only a released lease has a release event to read: it
 * is the run's newest `coordinator:released` (the lease row is written again when the run is
 * next taken), so the lookup walks back over the few events logged since, never the whole log.
 */
export async function readCoordinatorState(
  r: Pick<StoreReader, 'get'>,
  runId: string,
): Promise<CoordinatorState | undefined> {
  const lease = await readCoordinatorLease(r, runId);
  if (!lease || lease.releasedAt === undefined) return lease;
  const release = await r.get<{ data_json: string }>(
    `SELECT data_json FROM events WHERE run_id = ? AND type = 'coordinator:released' ORDER BY seq DESC LIMIT 1`,
    [runId],
  );
  const data = release ? (JSON.parse(release.data_json) as { epoch?: number; handedOver?: HandOver }) : undefined;
  return data?.epoch === lease.epoch && data.handedOver ? { ...lease, handedOver: data.handedOver } : lease;
}

/**
 * Whether a live coordinator holds the run at `now`, as far as the store and the last look at
 * its process tell: not let go, not run out, its holder not proven gone or stopped. The one
 * rule every surface applies (the views flip when it turns false, without a store change).
 */
export function isCoordinatorLive(lease: CoordinatorState | undefined, now: number): boolean {
  return Boolean(lease && lease.releasedAt === undefined && lease.expiresAt > now && !lease.holderProcess);
}

/** A coordinator that joined a run beside its lease holder (operations/coordinatorLease/runDrivers.ts). */
export interface RunDriver {
  holder: string;
  epoch: number;
  identity: ProcessIdentity;
  joinedAt: number;
  expiresAt: number;
}

/** The coordinators that hold a place in the run now (not left, not retired), oldest first. */
export async function readRunDrivers(r: Pick<StoreReader, 'all'>, runId: string): Promise<RunDriver[]> {
  const rows = await r.all<{
    holder: string;
    epoch: number;
    host: string;
    pid: number;
    pid_start: string | null;
    joined_at: number;
    expires_at: number;
  }>(
    `SELECT holder, epoch, host, pid, pid_start, joined_at, expires_at FROM run_drivers
     WHERE run_id = ? AND left_at IS NULL ORDER BY epoch`,
    [runId],
  );
  return rows.map((row) => ({
    holder: row.holder,
    epoch: row.epoch,
    identity: { pid: row.pid, startTime: row.pid_start, host: row.host },
    joinedAt: row.joined_at,
    expiresAt: row.expires_at,
  }));
}
