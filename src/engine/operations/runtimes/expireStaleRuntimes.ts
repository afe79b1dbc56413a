import { appendEvent } from '../events/appendEvent';
import { getDelegation } from '../../queries/delegations';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { settleUnsuccessfulAttempt } from '../tasks/settleUnsuccessfulAttempt';
import { transitionDelegation } from '../delegations/transitionDelegation';
import type { LeaseHost } from '../../domain/process';
import type { StoreTx } from '../../store/port';

export interface ExpiredRuntime {
  runId: string;
  runtimeId: string;
  delegationId: string;
  taskId: string;
}

export interface ExpiryScope {
  /** Only this run's runtimes (a transaction scoped to the run: store/port.ts, WriteScope). */
  runId?: string;
  /** Only this runtime (a worker heartbeating or ingesting late: its own lease). */
  onlyRuntimeId?: string;
  /**
   * The machine this runs on. A worker process another host started is expired only after its
   * lease plus `foreignGraceMs`: until then its watchdog may still be ending it there, and its
   * task must not be handed out again (docs/team.md, "Failover"). Without it, every lease ends
   * at its expiry.
   */
  host?: LeaseHost;
  /**
   * Runtimes not to expire: the coordinator that drives them saw their workers end within their leases and is taking
   * their results (executor/attemptSupervisor.ts, `doneWithinLease`). Their work is done; a lease that ran out while
   * the result waited for the store is not a lost worker.
   */
  spare?: readonly string[];
}

/**
 * Reclaims stalled work (BullMQ keeps this as its own operation too): every RUNNING
 * delegation whose lease ran out becomes STALE, its runtime ends, and its task is retried
 * or failed by the run's attempt policy. Leases that were renewed in time are untouched.
 */
export async function expireStaleRuntimes(
  tx: StoreTx,
  now: number,
  scope: ExpiryScope = {},
): Promise<ExpiredRuntime[]> {
  const { runId, onlyRuntimeId, host, spare = [] } = scope;
  // A foreign spawned worker's lease counts `foreignGraceMs` longer (PostgreSQL types 1-or-0 × grace by its operands).
  const foreign = `(CASE WHEN r.pid IS NOT NULL AND r.host IS NOT NULL AND r.host <> ? THEN 1 ELSE 0 END) * ?`;
  const expiredBy = host
    ? { sql: `r.lease_expires_at + ${foreign} <= ?`, params: [host.name, host.foreignGraceMs, now] }
    : { sql: 'r.lease_expires_at <= ?', params: [now] };
  // A foreign worker whose end its watchdog handed in is not lost: its work is known, and the coordinator settles it
  // from the hand-in (usecases/handIn.ts).
  const handedIn = host
    ? {
        sql: ` AND NOT EXISTS (SELECT 1 FROM hand_ins h WHERE h.runtime_id = r.id AND r.host IS NOT NULL AND r.host <> ?)`,
        params: [host.name],
      }
    : { sql: '', params: [] };
  const expired = await tx.all<{ id: string; run_id: string; delegation_id: string; lease_expires_at: number }>(
    `SELECT r.id, r.run_id, r.delegation_id, r.lease_expires_at FROM runtimes r
     JOIN delegations d ON d.run_id = r.run_id AND d.id = r.delegation_id
     WHERE r.ended_at IS NULL AND ${expiredBy.sql} AND d.status = 'RUNNING'${runId ? ' AND r.run_id = ?' : ''}${
       onlyRuntimeId ? ' AND r.id = ?' : ''
     }${spare.length > 0 ? ` AND r.id NOT IN (${spare.map(() => '?').join(', ')})` : ''}${handedIn.sql}
     ORDER BY r.lease_expires_at`,
    [
      ...expiredBy.params,
      ...(runId ? [runId] : []),
      ...(onlyRuntimeId ? [onlyRuntimeId] : []),
      ...spare,
      ...handedIn.params,
    ],
  );
  const done: ExpiredRuntime[] = [];
  const runs = new Set<string>();
  for (const runtime of expired) {
    const delegation = (await getDelegation(tx, runtime.run_id, runtime.delegation_id))!;
    const reason = `lease expired at ${new Date(runtime.lease_expires_at).toISOString()} without a heartbeat`;
    await transitionDelegation(tx, delegation, 'STALE', { reason }, now);
    await appendEvent(tx, runtime.run_id, 'runtime:stale', now, {
      runtimeId: runtime.id,
      delegationId: delegation.id,
      taskId: delegation.taskId,
    });
    await settleUnsuccessfulAttempt(tx, runtime.run_id, delegation.taskId, `${delegation.id} went stale`, now);
    runs.add(runtime.run_id);
    done.push({ runId: runtime.run_id, runtimeId: runtime.id, delegationId: delegation.id, taskId: delegation.taskId });
  }
  for (const runId of runs) await refreshRunStatus(tx, runId, now);
  return done;
}
