import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import { nextCounter } from '../tasks/taskFlow';
import { isProcessAlive, isProcessStopped, type ProcessIdentity } from '../../effects/processes/processes';
import type { StoreTx } from '../../store/port';

export interface CoordinatorLease {
  runId: string;
  holder: string;
  identity: ProcessIdentity;
  epoch: number;
  expiresAt: number;
  releasedAt?: number;
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
}

function toLease(row: LeaseRow): CoordinatorLease {
  return {
    runId: row.run_id,
    holder: row.holder,
    identity: { pid: row.pid, startTime: row.pid_start, host: row.host },
    epoch: row.epoch,
    expiresAt: row.expires_at,
    ...(row.released_at !== null ? { releasedAt: row.released_at } : {}),
  };
}

export async function readCoordinatorLease(
  tx: Pick<StoreTx, 'get'>,
  runId: string,
): Promise<CoordinatorLease | undefined> {
  const row = await tx.get<LeaseRow>(
    `SELECT run_id, holder, host, pid, pid_start, epoch, expires_at, released_at FROM coordinator_leases WHERE run_id = ?`,
    [runId],
  );
  return row ? toLease(row) : undefined;
}

export type AcquireOutcome =
  | { acquired: true; epoch: number; tookOverFrom?: CoordinatorLease }
  | { acquired: false; heldBy: CoordinatorLease; why: string };

/**
 * Takes the coordinator lease of a run. Free, released, or held by this very process: take
 * it. Held by someone else: only when the lease has expired and the holder is provably not
 * running on this host (dead, or its pid now belongs to another process, or stopped by a
 * signal). Each taking gets a new epoch, the fencing token every coordinator write carries.
 */
export async function acquireCoordinatorLease(
  tx: StoreTx,
  input: { runId: string; holder: string; identity: ProcessIdentity; leaseMs: number },
  now: number,
): Promise<AcquireOutcome> {
  const current = await readCoordinatorLease(tx, input.runId);
  let tookOverFrom: CoordinatorLease | undefined;
  if (current && current.releasedAt === undefined && !sameProcess(current.identity, input.identity)) {
    const alive = isProcessAlive(current.identity);
    if (current.expiresAt > now) {
      return {
        acquired: false,
        heldBy: current,
        why: `the lease of ${current.holder} runs until ${new Date(current.expiresAt).toISOString()}`,
      };
    }
    if (alive === undefined)
      return {
        acquired: false,
        heldBy: current,
        why: `its holder ${current.holder} runs on another host (${current.identity.host}); it cannot be proven gone from here`,
      };
    if (alive && !isProcessStopped(current.identity))
      return { acquired: false, heldBy: current, why: `its holder ${current.holder} is still running` };
    tookOverFrom = current;
  }
  const epoch = await nextCounter(tx, 'coordinator_epoch');
  await tx.run(
    `INSERT OR REPLACE INTO coordinator_leases (run_id, holder, host, pid, pid_start, epoch, acquired_at, renewed_at, expires_at, released_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    [
      input.runId,
      input.holder,
      input.identity.host,
      input.identity.pid,
      input.identity.startTime,
      epoch,
      now,
      now,
      now + input.leaseMs,
    ],
  );
  await appendEvent(tx, input.runId, 'coordinator:acquired', now, {
    holder: input.holder,
    epoch,
    ...(tookOverFrom ? { tookOverFrom: tookOverFrom.holder } : {}),
  });
  return { acquired: true, epoch, ...(tookOverFrom ? { tookOverFrom } : {}) };
}

/**
 * Refuses, inside the caller's transaction, a write by a coordinator whose epoch is no
 * longer current: a coordinator paused past its lease cannot overwrite its successor.
 */
export async function assertCoordinatorEpoch(tx: Pick<StoreTx, 'get'>, runId: string, epoch: number): Promise<void> {
  const lease = await readCoordinatorLease(tx, runId);
  if (!lease || lease.epoch !== epoch || lease.releasedAt !== undefined) {
    throw new BatonError(
      'coordinator.superseded',
      `This coordinator (epoch ${epoch}) no longer holds run ${runId}${lease ? `; ${lease.holder} does (epoch ${lease.epoch})` : ''}.`,
    );
  }
}

export async function renewCoordinatorLease(
  tx: StoreTx,
  input: { runId: string; epoch: number; leaseMs: number },
  now: number,
): Promise<void> {
  await assertCoordinatorEpoch(tx, input.runId, input.epoch);
  await tx.run(`UPDATE coordinator_leases SET renewed_at = ?, expires_at = ? WHERE run_id = ? AND epoch = ?`, [
    now,
    now + input.leaseMs,
    input.runId,
    input.epoch,
  ]);
}

export async function releaseCoordinatorLease(
  tx: StoreTx,
  input: { runId: string; epoch: number },
  now: number,
): Promise<void> {
  const changed = await tx.run(
    `UPDATE coordinator_leases SET released_at = ? WHERE run_id = ? AND epoch = ? AND released_at IS NULL`,
    [now, input.runId, input.epoch],
  );
  if (changed === 1) await appendEvent(tx, input.runId, 'coordinator:released', now, { epoch: input.epoch });
}

/** Is a live coordinator holding the run (so that others observe and leave the driving to it)? */
export function isLeaseLive(lease: CoordinatorLease | undefined, now: number): boolean {
  if (!lease || lease.releasedAt !== undefined) return false;
  if (lease.expiresAt > now) return isProcessAlive(lease.identity) !== false;
  return false;
}

function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.host === b.host && a.pid === b.pid && a.startTime === b.startTime;
}
