import { BatonError } from '../../domain/errors';
import type { ProcessIdentity } from '../../domain/process';
import type { StoreTx } from '../../store/port';
import { nextCounter } from '../counters/nextCounter';
import { appendEvent } from '../events/appendEvent';

/**
 * Coordinators that join a run (docs/team.md, "Every machine works"; issue 26): beside the one that holds the run's
 * lease, others — one per host, or more — execute its tasks, each with a place of its own in `run_drivers`: an epoch
 * (the same counter as the lease's, so never one a lease holds) that fences its writes while the place lives, renewed
 * like a lease. A place is left when its coordinator is done, or retired by another once it lapsed.
 */

export interface JoinInput {
  runId: string;
  holder: string;
  identity: ProcessIdentity;
  leaseMs: number;
}

/** Takes a place beside the lease holder. Returns its epoch. */
export async function joinRun(tx: StoreTx, input: JoinInput, now: number): Promise<number> {
  const epoch = await nextCounter(tx, 'coordinator_epoch');
  await tx.run(
    `INSERT INTO run_drivers (run_id, epoch, holder, host, pid, pid_start, joined_at, expires_at, left_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL)`,
    [
      input.runId,
      epoch,
      input.holder,
      input.identity.host,
      input.identity.pid,
      input.identity.startTime,
      now,
      now + input.leaseMs,
    ],
  );
  await appendEvent(tx, input.runId, 'coordinator:joined', now, {
    holder: input.holder,
    epoch,
    host: input.identity.host,
  });
  return epoch;
}

/** Whether `epoch` is a joined coordinator's place in the run that has not been left or retired. */
export async function holdsRunPlace(tx: Pick<StoreTx, 'get'>, runId: string, epoch: number): Promise<boolean> {
  const row = await tx.get<{ x: number }>(
    `SELECT 1 AS x FROM run_drivers WHERE run_id = ? AND epoch = ? AND left_at IS NULL`,
    [runId, epoch],
  );
  return row !== undefined;
}

/** Renews a joined coordinator's place; refused (`coordinator.superseded`) once it was left or retired. */
export async function renewRunPlace(
  tx: StoreTx,
  input: { runId: string; epoch: number; leaseMs: number },
  now: number,
): Promise<void> {
  const renewed = await tx.run(
    `UPDATE run_drivers SET expires_at = ? WHERE run_id = ? AND epoch = ? AND left_at IS NULL`,
    [now + input.leaseMs, input.runId, input.epoch],
  );
  if (renewed === 0)
    throw new BatonError(
      'coordinator.superseded',
      `This coordinator (epoch ${input.epoch}) no longer has a place in run ${input.runId}: it was retired after it stopped renewing it.`,
    );
}

/** Leaves the run: its epoch writes nothing more. */
export async function leaveRun(tx: StoreTx, input: { runId: string; epoch: number }, now: number): Promise<void> {
  const row = await tx.get<{ holder: string }>(
    `SELECT holder FROM run_drivers WHERE run_id = ? AND epoch = ? AND left_at IS NULL`,
    [input.runId, input.epoch],
  );
  if (!row) return;
  await tx.run(`UPDATE run_drivers SET left_at = ? WHERE run_id = ? AND epoch = ?`, [now, input.runId, input.epoch]);
  await appendEvent(tx, input.runId, 'coordinator:left', now, { holder: row.holder, epoch: input.epoch });
}

/**
 * Retires the places that lapsed `graceMs` ago (their coordinator was killed, stopped or cut off): a coordinator that
 * wakes after that is refused, as a lease holder that was taken over is. `graceMs` is the takeover rule's: by then the
 * lapsed coordinator's workers were ended by their watchdogs (domain/process.ts, `foreignLeaseGraceMs`).
 */
export async function retireLapsedPlaces(tx: StoreTx, runId: string, now: number, graceMs: number): Promise<number> {
  const lapsed = await tx.all<{ epoch: number; holder: string }>(
    `SELECT epoch, holder FROM run_drivers WHERE run_id = ? AND left_at IS NULL AND expires_at + ? <= ?`,
    [runId, graceMs, now],
  );
  for (const place of lapsed) {
    await tx.run(`UPDATE run_drivers SET left_at = ? WHERE run_id = ? AND epoch = ?`, [now, runId, place.epoch]);
    await appendEvent(tx, runId, 'coordinator:left', now, { holder: place.holder, epoch: place.epoch, lapsed: true });
  }
  return lapsed.length;
}
