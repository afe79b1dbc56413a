import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import type { Delegation, TaskStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import type { OperationContext } from '../../domain/runSettings';
import { getDelegation } from '../../queries/delegations';
import { createRuntime } from '../runtimes/createRuntime';
import { hashToken } from '../runtimes/renewRuntimeLease';
import { nextCounter } from '../counters/nextCounter';
import { setTaskStatus } from '../tasks/setTaskStatus';

export interface ClaimDelegationInput {
  runId: string;
  delegationId: string;
  leaseMs: number;
  /** Who holds the runtime (host:pid, a person), shown in status views. */
  holder?: string;
  /**
   * What this transaction read or wrote already: the PENDING delegation, and its task's status and reason. Read here
   * otherwise; either way the updates are compare-and-set on them.
   */
  known?: { delegation: Delegation; task?: { status: TaskStatus; reason: string | null } };
}

export interface Claim {
  delegation: Delegation;
  runtimeId: string;
  /** Handed out once; only its hash is stored. */
  token: string;
  epoch: number;
  leaseExpiresAt: number;
}

/**
 * PENDING → RUNNING with a new worker runtime holding a lease (token, epoch, expiry).
 * Compare-and-set: exactly one of several concurrent claimers wins; the others get a conflict.
 */
export async function claimDelegation(tx: StoreTx, input: ClaimDelegationInput, ctx: OperationContext): Promise<Claim> {
  const delegation = input.known?.delegation ?? (await getDelegation(tx, input.runId, input.delegationId));
  if (!delegation)
    throw new BatonError('delegation.unknown', `There is no delegation ${input.delegationId} in run ${input.runId}.`);
  if (delegation.status !== 'PENDING') {
    throw new BatonError(
      'delegation.not-pending',
      `Delegation ${delegation.id} is ${delegation.status}; only a PENDING delegation can be claimed.`,
    );
  }
  const runtimeId = ctx.ids.runtimeId();
  const token = ctx.ids.token();
  const epoch = await nextCounter(tx, 'lease_epoch');
  const leaseExpiresAt = ctx.now + input.leaseMs;
  const changed = await tx.run(
    `UPDATE delegations SET status = 'RUNNING', runtime_id = ?, started_at = ?, updated_at = ? WHERE run_id = ? AND id = ? AND status = 'PENDING'`,
    [runtimeId, ctx.now, ctx.now, input.runId, delegation.id],
  );
  if (changed !== 1)
    throw new BatonError('delegation.not-pending', `Delegation ${delegation.id} was claimed by someone else.`);
  await createRuntime(
    tx,
    {
      id: runtimeId,
      runId: input.runId,
      delegationId: delegation.id,
      tokenHash: hashToken(token),
      epoch,
      leaseMs: input.leaseMs,
      ...(input.holder ? { holder: input.holder } : {}),
    },
    ctx.now,
  );
  await appendEvent(tx, input.runId, 'delegation:claimed', ctx.now, {
    delegationId: delegation.id,
    taskId: delegation.taskId,
    runtimeId,
    epoch,
    leaseExpiresAt,
    ...(input.holder ? { holder: input.holder } : {}),
  });
  await setTaskStatus(
    tx,
    input.runId,
    delegation.taskId,
    'running',
    `attempt ${delegation.attempt}: ${delegation.id}`,
    ctx.now,
    input.known?.task,
  );
  return {
    delegation: { ...delegation, status: 'RUNNING', runtimeId, startedAt: ctx.now, updatedAt: ctx.now },
    runtimeId,
    token,
    epoch,
    leaseExpiresAt,
  };
}
