import type { BudgetCrossing } from '../../domain/agents/budget';
import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { openGate } from '../gates/openGate';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { transitionDelegation } from './transitionDelegation';

/**
 * An attempt whose agent crossed a budget line was ended: it is CANCELLED (it does not count
 * against the task's attempts — it was stopped, not failed) and its task waits at a budget
 * gate that names what was spent. Deciding the gate: docs/workers.md, "Budgets".
 */
export async function endAttemptOverBudget(
  tx: StoreTx,
  input: { runId: string; delegationId: string; crossings: BudgetCrossing[]; why: string },
  now: number,
): Promise<void> {
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!delegation || delegation.status !== 'RUNNING') return; // decided elsewhere meanwhile
  await transitionDelegation(tx, delegation, 'CANCELLED', { reason: `stopped: ${input.why}` }, now);
  await openGate(
    tx,
    {
      runId: input.runId,
      kind: 'budget',
      taskId: delegation.taskId,
      delegationId: delegation.id,
      reason: `Task ${delegation.taskId} was stopped: ${input.why}. Approve to raise the limit and continue the task, reject to fail it.`,
      details: { crossings: input.crossings },
    },
    now,
  );
  await refreshRunStatus(tx, input.runId, now);
}
