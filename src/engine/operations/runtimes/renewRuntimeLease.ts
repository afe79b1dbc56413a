import { createHash } from 'node:crypto';
import { BatonError } from '../../domain/errors';
import { canHeartbeat } from '../../domain/transitions';
import type { WorkerRuntime } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { RUNTIME_SELECT, toRuntime, type RuntimeRow } from '../../store/rows';
import { assertCoordinatorEpoch } from '../coordinatorLease/coordinatorLease';
import { expireStaleRuntimes } from './expireStaleRuntimes';

/**
 * Who may renew a worker's lease. The worker itself, with the token it was handed at the
 * claim (`baton heartbeat`); or the coordinator that drives it, whose current epoch is the
 * authority (an adopted worker's token left with its predecessor). The check happens inside
 * the same transaction as the renewal (BullMQ's extendLock does the same in one script).
 */
export type LeaseAuthority =
  | { holder: 'worker'; token: string }
  | {
      holder: 'coordinator';
      runId: string;
      epoch: number;
      /** The coordinator's monotonic clock says the lease still holds: a wall-clock jump does not end it. */
      withinLease: boolean;
      /**
       * Hold the lease until this time instead of one lease length from now: a coordinator that
       * hands its workers over keeps them adoptable for as long as their task may still run,
       * however late its successor comes.
       */
      until?: number;
    };

export interface RenewLeaseInput {
  runtimeId: string;
  authority: LeaseAuthority;
  /** Progress text shown next to the runtime; omitted keeps the last one. */
  progress?: string;
  /**
   * The progress describes what the worker began at this time (a coordinator's reading of its stream): the worker's
   * own beat since then (its note, which is newer) is kept, and this progress is not written.
   */
  describesSince?: number;
  /** False: extend the lease without counting a heartbeat (restating it after a clock jump, adopting a worker). */
  beat?: boolean;
  /**
   * A lease that already ran out is lost. `expire` (default) makes that official in this
   * transaction — the attempt becomes STALE and the retry policy applies — and the outcome
   * says so; `refuse` writes nothing.
   */
  onLapsed?: 'expire' | 'refuse';
}

export type RenewLeaseOutcome = { renewed: true; runtime: WorkerRuntime } | { renewed: false; error: BatonError };

export const MAX_PROGRESS_LENGTH = 500;

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** What a renewal comes to, decided on the runtime's row alone (nothing written yet). */
type RenewalDecision =
  | { kind: 'refused'; error: BatonError }
  | { kind: 'lapsed'; error: BatonError }
  | { kind: 'renewed'; runtime: WorkerRuntime; row: RuntimeRow };

function decideRenewal(row: RuntimeRow | undefined, input: RenewLeaseInput, now: number): RenewalDecision {
  const { authority } = input;
  if (!row)
    return {
      kind: 'refused',
      error: new BatonError('runtime.unknown', `There is no worker runtime ${input.runtimeId}.`),
    };
  if (authority.holder === 'worker' && row.token_hash !== hashToken(authority.token)) {
    return {
      kind: 'refused',
      error: new BatonError(
        'runtime.wrong-token',
        `The token does not match runtime ${input.runtimeId}; only the holder of its lease can heartbeat.`,
      ),
    };
  }
  const runtime = toRuntime(row, now);
  // The coordinator's monotonic clock outranks the stored expiry for the workers it drives.
  const lapsed =
    authority.holder === 'coordinator'
      ? !authority.withinLease && runtime.leaseExpiresAt <= now && runtime.status === 'stale'
      : runtime.status === 'stale';
  if (lapsed) {
    return {
      kind: 'lapsed',
      error: new BatonError(
        'runtime.lease-expired',
        `The lease of runtime ${runtime.id} expired at ${new Date(runtime.leaseExpiresAt).toISOString()}; ${runtime.delegationId} is now STALE. Claim the task again for a new attempt.`,
      ),
    };
  }
  if (!canHeartbeat(runtime.status) && runtime.status !== 'stale') {
    return {
      kind: 'refused',
      error: new BatonError(
        'runtime.not-live',
        `Runtime ${runtime.id} is ${runtime.status} (${runtime.delegationId} is ${row.delegation_status}); it holds no lease to renew.`,
      ),
    };
  }
  const beat = input.beat ?? true;
  const olderThanOwnBeat =
    input.describesSince !== undefined && row.worker_beat_at !== null && row.worker_beat_at >= input.describesSince;
  const progress =
    input.progress === undefined || olderThanOwnBeat ? null : input.progress.slice(0, MAX_PROGRESS_LENGTH);
  const until = authority.holder === 'coordinator' ? authority.until : undefined;
  // A worker's heartbeat extends its lease, never shortens it: a coordinator that handed its workers over held their
  // leases for their task timeout, and a beat must not cut that back to one lease length before a successor comes.
  // After the wall clock went back (the last record of this runtime is in the "future"), the stored expiry is not a
  // hold but the old clock's: the renewal runs from the new wall time (fault matrix, row 13).
  const clockWentBack = Math.max(runtime.lastHeartbeatAt ?? 0, runtime.claimedAt) > now;
  const held = authority.holder === 'worker' && !clockWentBack ? runtime.leaseExpiresAt : 0;
  const leaseExpiresAt = Math.max(now + runtime.leaseMs, until ?? 0, held);
  // The worker's own beat is kept apart: a supervised worker that never beats still reads as alive, not as beating.
  const ownBeat = beat && authority.holder === 'worker';
  return {
    kind: 'renewed',
    // The row as the renewal leaves it (writeRenewedRuntimes writes it).
    row: beat
      ? {
          ...row,
          last_heartbeat_at: now,
          heartbeat_count: row.heartbeat_count + 1,
          progress: progress ?? row.progress,
          lease_expires_at: leaseExpiresAt,
          worker_beat_at: ownBeat ? now : row.worker_beat_at,
        }
      : { ...row, lease_expires_at: leaseExpiresAt },
    runtime: {
      ...runtime,
      leaseExpiresAt,
      ...(beat
        ? {
            status: 'active' as const,
            lastHeartbeatAt: now,
            heartbeatCount: runtime.heartbeatCount + 1,
            ...(progress !== null ? { progress } : {}),
            ...(ownBeat ? { workerBeatAt: now } : {}),
          }
        : { status: runtime.status === 'stale' ? ('active' as const) : runtime.status }),
    },
  };
}

/**
 * Renews the lease of a live runtime, by the authority of its worker or of its coordinator
 * (see LeaseAuthority), and records progress. Refused with the wrong token or a superseded
 * epoch, and for a runtime that is no longer live. A renewal that arrives after the lease ran
 * out does not revive it (docs/architecture.md, "an expired lease is lost"); the outcome is
 * returned, not thrown, so that the expiry it made official commits.
 */
export async function renewRuntimeLease(tx: StoreTx, input: RenewLeaseInput, now: number): Promise<RenewLeaseOutcome> {
  const { authority } = input;
  if (authority.holder === 'coordinator') await assertCoordinatorEpoch(tx, authority.runId, authority.epoch);
  const row = await tx.get<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.id = ?`, [input.runtimeId]);
  const decision = decideRenewal(row, input, now);
  if (decision.kind === 'refused') throw decision.error;
  if (decision.kind === 'lapsed') {
    if ((input.onLapsed ?? 'expire') === 'expire')
      await expireStaleRuntimes(tx, now, { onlyRuntimeId: input.runtimeId });
    return { renewed: false, error: decision.error };
  }
  await writeRenewedRuntimes(tx, [decision.row]);
  return { renewed: true, runtime: decision.runtime };
}

export interface WorkerBeat {
  runtimeId: string;
  token: string;
  progress?: string;
}

/** Most runtimes one statement of a batch names (every backend's limit on bound parameters is well above it). */
const BATCH_CHUNK = 100;

/**
 * Renews many leases in one transaction, each decided exactly as `renewRuntimeLease` decides it, in the order given
 * (a runtime may beat twice): one read of the runtimes and one write of those renewed per 100, instead of a read and
 * a write per renewal. An item is a worker's beat (its token) or a renewal by any authority — a coordinator renews
 * every worker it drives in one batch (executor/workerLeaseKeeper.ts), its epoch checked once per batch. A refusal
 * is that item's outcome and writes nothing; a lapsed lease is made official (STALE, the retry policy) before the
 * items after it, unless the item says `onLapsed: 'refuse'`.
 */
export async function renewWorkerLeases(
  tx: StoreTx,
  renewals: ReadonlyArray<WorkerBeat | RenewLeaseInput>,
  now: number,
): Promise<RenewLeaseOutcome[]> {
  const inputs = renewals.map(asRenewal);
  const epochs = new Map<string, number>();
  for (const { authority } of inputs)
    if (authority.holder === 'coordinator') epochs.set(authority.runId, authority.epoch);
  for (const [runId, epoch] of epochs) await assertCoordinatorEpoch(tx, runId, epoch);
  const rows = new Map<string, RuntimeRow>();
  const ids = [...new Set(inputs.map((input) => input.runtimeId))];
  for (let i = 0; i < ids.length; i += BATCH_CHUNK) {
    const chunk = ids.slice(i, i + BATCH_CHUNK);
    const found = await tx.all<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.id IN (${placeholders(chunk.length)})`, chunk);
    for (const row of found) rows.set(row.id, row);
  }
  const renewed = new Map<string, RuntimeRow>();
  const outcomes: RenewLeaseOutcome[] = [];
  for (const input of inputs) {
    const decision = decideRenewal(rows.get(input.runtimeId), input, now);
    if (decision.kind === 'renewed') {
      rows.set(input.runtimeId, decision.row);
      renewed.set(input.runtimeId, decision.row);
      outcomes.push({ renewed: true, runtime: decision.runtime });
      continue;
    }
    if (decision.kind === 'lapsed' && (input.onLapsed ?? 'expire') === 'expire') {
      // A lapsed runtime was not renewed earlier in this batch (a renewal leaves it active): nothing of it is pending.
      await expireStaleRuntimes(tx, now, { onlyRuntimeId: input.runtimeId });
      const after = await tx.get<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.id = ?`, [input.runtimeId]);
      if (after) rows.set(input.runtimeId, after);
    }
    outcomes.push({ renewed: false, error: decision.error });
  }
  await writeRenewedRuntimes(tx, [...renewed.values()]);
  return outcomes;
}

function asRenewal(item: WorkerBeat | RenewLeaseInput): RenewLeaseInput {
  if ('authority' in item) return item;
  return {
    runtimeId: item.runtimeId,
    authority: { holder: 'worker', token: item.token },
    ...(item.progress !== undefined ? { progress: item.progress } : {}),
  };
}

/**
 * Writes renewed runtimes' rows as decideRenewal left them, one statement per 100. The values are absolute
 * (the count, not "+ 1"): they were computed from rows read in this transaction, and writers run one at a time.
 */
async function writeRenewedRuntimes(tx: StoreTx, renewed: readonly RuntimeRow[]): Promise<void> {
  for (let i = 0; i < renewed.length; i += BATCH_CHUNK) {
    const chunk = renewed.slice(i, i + BATCH_CHUNK);
    // Each column by the runtime's id; typed, since PostgreSQL reads an untyped parameter in THEN as text.
    const byId = (type: string): string => `CASE id ${chunk.map(() => `WHEN ? THEN CAST(? AS ${type})`).join(' ')} END`;
    const values = (column: keyof RuntimeRow) => chunk.flatMap((row) => [row.id, row[column]]);
    await tx.run(
      `UPDATE runtimes SET last_heartbeat_at = ${byId('BIGINT')}, worker_beat_at = ${byId('BIGINT')},
         heartbeat_count = ${byId('BIGINT')}, lease_expires_at = ${byId('BIGINT')}, progress = ${byId('TEXT')}
         WHERE id IN (${placeholders(chunk.length)}) AND ended_at IS NULL`,
      [
        ...values('last_heartbeat_at'),
        ...values('worker_beat_at'),
        ...values('heartbeat_count'),
        ...values('lease_expires_at'),
        ...values('progress'),
        ...chunk.map((row) => row.id),
      ],
    );
  }
}

function placeholders(count: number): string {
  return Array.from({ length: count }, () => '?').join(', ');
}
