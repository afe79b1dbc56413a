import type { StoreTx } from '../../store/port';
import { claimDelegation, type Claim } from './claimDelegation';
import type { OperationContext } from '../../domain/runSettings';
import { refusalError } from '../../domain/admission';
import { readAdmission } from '../../queries/admission';
import { enqueueDelegation } from './enqueueDelegation';
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
  const pending = await tx.get<{ id: string }>(
    `SELECT id FROM delegations WHERE run_id = ? AND task_id = ? AND status = 'PENDING' ORDER BY attempt LIMIT 1`,
    [input.runId, input.taskId],
  );
  // Readiness and a live attempt are refused first (enqueueDelegation): they say more than a limit would.
  const delegationId = pending?.id ?? (await enqueueDelegation(tx, input, ctx.now)).id;
  const refusal = await readAdmission(tx, {
    runId: input.runId,
    taskId: input.taskId,
    now: ctx.now,
    maxConcurrency: input.maxConcurrency,
  });
  if (refusal) throw refusalError(refusal);
  const claim = await claimDelegation(
    tx,
    { runId: input.runId, delegationId, leaseMs: input.leaseMs, ...(input.holder ? { holder: input.holder } : {}) },
    ctx,
  );
  await refreshRunStatus(tx, input.runId, ctx.now);
  return claim;
}
