import { BatonError } from '../../domain/errors';
import { canHeartbeat } from '../../domain/transitions';
import type { WorkerRuntime } from '../../domain/types';
import { hashToken } from '../delegations/claimDelegation';
import type { StoreTx } from '../../store/port';
import { RUNTIME_SELECT, toRuntime, type RuntimeRow } from '../../store/rows';
import { expireStaleRuntimes } from './expireStaleRuntimes';

export interface RenewLeaseInput {
  runtimeId: string;
  token: string;
  /** Progress text shown next to the runtime; omitted keeps the last one. */
  progress?: string;
}

export type RenewLeaseOutcome = { renewed: true; runtime: WorkerRuntime } | { renewed: false; error: BatonError };

export const MAX_PROGRESS_LENGTH = 500;

/**
 * A heartbeat: renews the lease of a live runtime and records its progress. Refused with
 * the wrong token, and for a runtime that is no longer live. A heartbeat that arrives after
 * the lease ran out does not revive it: it makes the expiry official (STALE, retry policy)
 * and is refused — so the outcome is returned, not thrown, to let that write commit.
 */
export async function renewRuntimeLease(tx: StoreTx, input: RenewLeaseInput, now: number): Promise<RenewLeaseOutcome> {
  const row = await tx.get<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.id = ?`, [input.runtimeId]);
  if (!row) throw new BatonError('runtime.unknown', `There is no worker runtime ${input.runtimeId}.`);
  if (row.token_hash !== hashToken(input.token)) {
    throw new BatonError(
      'runtime.wrong-token',
      `The token does not match runtime ${input.runtimeId}; only the holder of its lease can heartbeat.`,
    );
  }
  const runtime = toRuntime(row, now);
  if (runtime.status === 'stale') {
    await expireStaleRuntimes(tx, now, runtime.id);
    return {
      renewed: false,
      error: new BatonError(
        'runtime.lease-expired',
        `The lease of runtime ${runtime.id} expired at ${new Date(runtime.leaseExpiresAt).toISOString()}; ${runtime.delegationId} is now STALE. Claim the task again for a new attempt.`,
      ),
    };
  }
  if (!canHeartbeat(runtime.status)) {
    throw new BatonError(
      'runtime.not-live',
      `Runtime ${runtime.id} is ${runtime.status} (${runtime.delegationId} is ${row.delegation_status}); it holds no lease to renew.`,
    );
  }
  const progress = input.progress === undefined ? null : input.progress.slice(0, MAX_PROGRESS_LENGTH);
  const leaseExpiresAt = now + runtime.leaseMs;
  await tx.run(
    `UPDATE runtimes SET last_heartbeat_at = ?, heartbeat_count = heartbeat_count + 1, progress = COALESCE(?, progress), lease_expires_at = ?
     WHERE id = ? AND ended_at IS NULL`,
    [now, progress, leaseExpiresAt, runtime.id],
  );
  return {
    renewed: true,
    runtime: {
      ...runtime,
      status: 'active',
      lastHeartbeatAt: now,
      heartbeatCount: runtime.heartbeatCount + 1,
      leaseExpiresAt,
      ...(progress !== null ? { progress } : {}),
    },
  };
}
