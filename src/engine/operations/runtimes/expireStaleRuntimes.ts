import { appendEvent } from '../events/appendEvent';
import { getDelegation } from '../../queries/delegations';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { settleUnsuccessfulAttempt } from '../tasks/settleUnsuccessfulAttempt';
import { transitionDelegation } from '../delegations/transitionDelegation';
import type { StoreTx } from '../../store/port';

export interface ExpiredRuntime {
  runId: string;
  runtimeId: string;
  delegationId: string;
  taskId: string;
}

/**
 * Reclaims stalled work (BullMQ keeps this as its own operation too): every RUNNING
 * delegation whose lease ran out becomes STALE, its runtime ends, and its task is retried
 * or failed by the run's attempt policy. Leases that were renewed in time are untouched.
 */
export async function expireStaleRuntimes(tx: StoreTx, now: number, onlyRuntimeId?: string): Promise<ExpiredRuntime[]> {
  const expired = await tx.all<{ id: string; run_id: string; delegation_id: string; lease_expires_at: number }>(
    `SELECT r.id, r.run_id, r.delegation_id, r.lease_expires_at FROM runtimes r
     JOIN delegations d ON d.run_id = r.run_id AND d.id = r.delegation_id
     WHERE r.ended_at IS NULL AND r.lease_expires_at <= ? AND d.status = 'RUNNING'${onlyRuntimeId ? ' AND r.id = ?' : ''}
     ORDER BY r.lease_expires_at`,
    onlyRuntimeId ? [now, onlyRuntimeId] : [now],
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
