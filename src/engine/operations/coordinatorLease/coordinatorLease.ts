import { BatonError } from '../../domain/errors';
import type { HandOver } from '../../domain/events';
import { sameProcess, type ProcessIdentity, type ProcessProbe } from '../../domain/process';
import { readCoordinatorLease, type CoordinatorLease } from '../../queries/coordinatorLease';
import type { StoreTx } from '../../store/port';
import { nextCounter } from '../counters/nextCounter';
import { appendEvent } from '../events/appendEvent';
import { holdsRunPlace } from './runDrivers';

export type AcquireOutcome =
  | { acquired: true; epoch: number; tookOverFrom?: CoordinatorLease }
  | { acquired: false; heldBy: CoordinatorLease; why: string }
  /** The lease changed since the caller probed its holder: read and probe again. */
  | { acquired: false; reprobe: true };

export interface AcquireInput {
  runId: string;
  holder: string;
  identity: ProcessIdentity;
  leaseMs: number;
  /**
   * What the caller saw of the holder before the transaction: the lease's epoch and a look
   * at its process. A transaction does no process I/O, so the probe is taken outside and
   * only used while the lease is still the one that was probed.
   */
  seen?: { epoch: number; probe: ProcessProbe };
  /**
   * On a shared store (PostgreSQL), a holder on another host — which cannot be probed from
   * here — is taken over this long after its lease ran out: by then its workers' watchdogs have
   * ended them (domain/process.ts, `foreignLeaseGraceMs`). Without it, such a holder is never
   * taken over from here.
   */
  foreignGraceMs?: number;
}

/**
 * Takes the coordinator lease of a run. Free, released, or held by this very process: take
 * it. Held by someone else: only when the lease has expired and the holder is provably not
 * running on this host (dead, or its pid now belongs to another process, or stopped by a
 * signal) — or, for a holder on another host, when the lease ran out `foreignGraceMs` ago.
 * Each taking gets a new epoch, the fencing token every coordinator write carries.
 */
export async function acquireCoordinatorLease(tx: StoreTx, input: AcquireInput, now: number): Promise<AcquireOutcome> {
  const current = await readCoordinatorLease(tx, input.runId);
  let tookOverFrom: CoordinatorLease | undefined;
  if (current && current.releasedAt === undefined && !sameProcess(current.identity, input.identity)) {
    if (current.expiresAt > now) {
      const until = new Date(current.expiresAt).toISOString();
      return { acquired: false, heldBy: current, why: `the lease of ${current.holder} runs until ${until}` };
    }
    if (!input.seen || input.seen.epoch !== current.epoch) return { acquired: false, reprobe: true };
    const { alive, stopped } = input.seen.probe;
    if (alive === undefined) {
      if (input.foreignGraceMs === undefined)
        return {
          acquired: false,
          heldBy: current,
          why: `its holder ${current.holder} runs on another host (${current.identity.host}); it cannot be proven gone from here`,
        };
      const takeoverAt = current.expiresAt + input.foreignGraceMs;
      if (now < takeoverAt)
        return {
          acquired: false,
          heldBy: current,
          why: `its holder ${current.holder} runs on another host (${current.identity.host}); its lease ran out, and it is taken over from ${new Date(takeoverAt).toISOString()}, once its workers' watchdogs have ended them`,
        };
    } else if (alive && !stopped)
      return { acquired: false, heldBy: current, why: `its holder ${current.holder} is still running` };
    tookOverFrom = current;
  }
  const epoch = await nextCounter(tx, 'coordinator_epoch');
  // A takeover continues the chain of coordinators that ended without a clean release; anything else starts one.
  const chainSince = tookOverFrom ? (tookOverFrom.chainSince ?? 0) : now;
  await tx.run(
    `INSERT INTO coordinator_leases (run_id, holder, host, pid, pid_start, epoch, acquired_at, renewed_at, expires_at, released_at, chain_since)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?)
     ON CONFLICT (run_id) DO UPDATE SET holder = excluded.holder, host = excluded.host, pid = excluded.pid,
       pid_start = excluded.pid_start, epoch = excluded.epoch, acquired_at = excluded.acquired_at,
       renewed_at = excluded.renewed_at, expires_at = excluded.expires_at, released_at = NULL,
       chain_since = excluded.chain_since`,
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
      chainSince,
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
 * longer current — neither the run's lease nor a place a coordinator joined it with: a coordinator paused past its
 * lease cannot overwrite its successor.
 */
export async function assertCoordinatorEpoch(tx: Pick<StoreTx, 'get'>, runId: string, epoch: number): Promise<void> {
  const lease = await readCoordinatorLease(tx, runId);
  if (!lease || lease.epoch !== epoch || lease.releasedAt !== undefined) {
    // A coordinator that joined the run holds its own place (runDrivers.ts).
    if (await holdsRunPlace(tx, runId, epoch)) return;
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

/**
 * Lets the lease go. With `handedOver`, the coordinator leaves the run to a successor without
 * stopping its workers: the event says so (with how many it left running and its task
 * selection), and that is what tells the next window to take the run over
 * (queries/coordinatorLease.ts, `handedOver`).
 */
export async function releaseCoordinatorLease(
  tx: StoreTx,
  input: { runId: string; epoch: number; handedOver?: HandOver },
  now: number,
): Promise<void> {
  const changed = await tx.run(
    `UPDATE coordinator_leases SET released_at = ? WHERE run_id = ? AND epoch = ? AND released_at IS NULL`,
    [now, input.runId, input.epoch],
  );
  if (changed === 1)
    await appendEvent(tx, input.runId, 'coordinator:released', now, {
      epoch: input.epoch,
      ...(input.handedOver ? { handedOver: input.handedOver } : {}),
    });
}
