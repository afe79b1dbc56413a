import type { StoreTx } from '../../store/port';
import { claimDelegation, type Claim } from './claimDelegation';
import type { OperationContext } from '../../domain/runSettings';
import { refusalError } from '../../domain/admission';
import { readAdmission } from '../../queries/admission';
import { enqueueDelegation } from './enqueueDelegation';
import { readTaskClaimFacts } from '../../queries/tasks';
import { BatonError } from '../../domain/errors';
import { refreshRunStatus } from '../runs/refreshRunStatus';

export interface ClaimTaskInput {
  runId: string;
  taskId: string;
  agent?: string;
  leaseMs: number;
  holder?: string;
  /** The run's slots: driven and claimed attempts together never hold more. */
  maxConcurrency: number;
}

/**
 * An external, resident worker takes a task: the task's PENDING attempt if the queue has
 * one, else the next attempt, claimed in the same transaction — only when the limits a
 * driven worker obeys allow it now (retry backoff, maxConcurrency, `files:` overlap;
 * domain/admission.ts). A refusal throws, so the transaction writes nothing.
 */
export async function claimTask(tx: StoreTx, input: ClaimTaskInput, ctx: OperationContext): Promise<Claim> {
  const facts = await readTaskClaimFacts(tx, input.runId, input.taskId);
  if (!facts) throw new BatonError('task.unknown', `Task ${input.taskId} is not in run ${input.runId}.`);
  const pending = facts.attempts.find((a) => a.status === 'PENDING');
  // Readiness and a live attempt are refused first (enqueueDelegation): they say more than a limit would.
  const queued = pending ? undefined : await enqueueDelegation(tx, input, ctx.now, facts);
  const refusal = await readAdmission(tx, {
    runId: input.runId,
    taskId: input.taskId,
    now: ctx.now,
    maxConcurrency: input.maxConcurrency,
    task: facts.task,
  });
  if (refusal) throw refusalError(refusal);
  const claim = await claimDelegation(
    tx,
    {
      runId: input.runId,
      delegationId: queued?.id ?? pending!.id,
      leaseMs: input.leaseMs,
      ...(input.holder ? { holder: input.holder } : {}),
      // Enqueueing wrote the delegation and left the task as it was read.
      ...(queued
        ? { known: { delegation: queued, task: { status: facts.task.status, reason: facts.task.statusReason } } }
        : {}),
    },
    ctx,
  );
  await refreshRunStatus(tx, input.runId, ctx.now);
  return claim;
}
