import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import { canTransitionDelegation, isTerminalDelegation } from '../../domain/transitions';
import type { Delegation, DelegationStatus, ResultStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { endRuntimesOf } from '../runtimes/endRuntime';
import { closeOpenGates } from '../gates/closeGate';

export interface DelegationChange {
  reason?: string;
  resultStatus?: ResultStatus;
  artifactPath?: string;
  /** Every open gate of the attempt was closed earlier in this transaction: leaving RUNNING has none left to close. */
  gatesClosed?: boolean;
}

/**
 * Moves a delegation only along DELEGATION_TRANSITIONS and only from the status the caller
 * saw (compare-and-set): a transition that lost a race fails instead of overwriting.
 * Leaving RUNNING for good ends its runtime; leaving RUNNING at all closes the attempt's open
 * questions (nobody is left to take their answer).
 */
export async function transitionDelegation(
  tx: StoreTx,
  delegation: Delegation,
  to: DelegationStatus,
  change: DelegationChange,
  now: number,
): Promise<Delegation> {
  if (!canTransitionDelegation(delegation.status, to)) {
    throw new BatonError(
      'delegation.illegal-transition',
      `Delegation ${delegation.id} is ${delegation.status}; it cannot become ${to}.`,
    );
  }
  const terminal = isTerminalDelegation(to);
  const changed = await tx.run(
    `UPDATE delegations SET status = ?, reason = COALESCE(?, reason), result_status = COALESCE(?, result_status),
       artifact_path = COALESCE(?, artifact_path), updated_at = ?, finished_at = CASE WHEN ? THEN ? ELSE finished_at END
     WHERE run_id = ? AND id = ? AND status = ?`,
    [
      to,
      change.reason ?? null,
      change.resultStatus ?? null,
      change.artifactPath ?? null,
      now,
      terminal ? 1 : 0,
      now,
      delegation.runId,
      delegation.id,
      delegation.status,
    ],
  );
  if (changed !== 1) {
    throw new BatonError(
      'delegation.changed-meanwhile',
      `Delegation ${delegation.id} changed while this was being decided; try again.`,
    );
  }
  if (terminal) await endRuntimesOf(tx, delegation, change.reason ?? to.toLowerCase(), now);
  if (delegation.status === 'RUNNING' && to !== 'RUNNING' && !change.gatesClosed)
    await closeOpenGates(
      tx,
      { runId: delegation.runId, delegationId: delegation.id, kind: 'question' },
      { decision: 'rejected', note: `closed: ${delegation.id} ended (${change.reason ?? to.toLowerCase()})` },
      now,
    );
  await appendEvent(tx, delegation.runId, 'delegation:status', now, {
    delegationId: delegation.id,
    taskId: delegation.taskId,
    from: delegation.status,
    to,
    ...(change.reason ? { reason: change.reason } : {}),
  });
  return { ...delegation, status: to, updatedAt: now, ...(change.reason ? { reason: change.reason } : {}) };
}
