import { followUpReason } from '../../domain/followUp';
import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { setTaskNotBefore, setTaskStatus } from '../tasks/setTaskStatus';
import { transitionDelegation } from './transitionDelegation';
import { closeGate } from '../gates/closeGate';
import { GATE_COLUMNS, toGate, type GateRow } from '../../store/rows';

/**
 * A RUNNING attempt a person sent a follow-up message to (domain/followUp.ts) is ended, as a parked one is: CANCELLED
 * with a `follow-up:` reason — so it does not count against the task's attempts — and its task back to ready at once,
 * its next attempt continuing the session with the message first. Decided here, in the store; whoever drives the
 * attempt sees it decided elsewhere and ends its processes, gracefully first (AttemptSupervisor.endDecidedElsewhere).
 * An attempt that ended meanwhile is left as it is. Returns whether it ended it.
 */
export async function endAttemptForFollowUp(
  tx: StoreTx,
  input: { runId: string; delegationId: string; by: string },
  now: number,
): Promise<boolean> {
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!delegation || delegation.status !== 'RUNNING') return false;
  const reason = followUpReason(input.by);
  await transitionDelegation(tx, delegation, 'CANCELLED', { reason }, now);
  const why = `a message from ${input.by} ended ${delegation.id}; the next attempt continues with it`;
  await setTaskStatus(tx, input.runId, delegation.taskId, 'ready', why, now);
  await setTaskNotBefore(tx, input.runId, delegation.taskId, null);
  return true;
}

/**
 * A passed attempt held before integration sent back to its agent (domain/followUp.ts `send-back`: changes requested
 * at its review gate, or its failure at an integration_failed gate),
 * in the follow-up's transaction: the gate rejected with the message's id (its details say it was sent back, which is
 * how the next attempt's claim finds the work to start from), the held attempt ended as a follow-up ends one
 * (CANCELLED, not counted against maxAttempts; its committed worktree kept), and the task ready at once.
 */
export async function sendBackHeldAttempt(
  tx: StoreTx,
  input: { runId: string; delegationId: string; gateId: string; by: string; followUpId: string },
  now: number,
): Promise<void> {
  const row = await tx.get<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE id = ?`, [input.gateId]);
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!row || !delegation) return;
  const gate = toGate(row);
  await closeGate(
    tx,
    gate,
    {
      decision: 'rejected',
      by: input.by,
      note:
        gate.kind === 'review'
          ? `changes requested (${input.followUpId})`
          : `sent back to the agent (${input.followUpId})`,
      details: { ...gate.details, sentBack: input.followUpId },
    },
    now,
  );
  if (delegation.status === 'BLOCKED')
    await transitionDelegation(tx, delegation, 'CANCELLED', { reason: followUpReason(input.by) }, now);
  const asked = gate.kind === 'review' ? 'requested changes of' : 'sent the failure of';
  const why = `${input.by} ${asked} ${delegation.id} at ${gate.id} back to its agent; the next attempt starts from its work`;
  await setTaskStatus(tx, input.runId, delegation.taskId, 'ready', why, now);
  await setTaskNotBefore(tx, input.runId, delegation.taskId, null);
}
