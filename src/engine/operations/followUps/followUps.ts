import type { FollowUp, FollowUpAction } from '../../domain/followUp';
import type { StoreTx } from '../../store/port';
import { nextCounter } from '../counters/nextCounter';
import { markFollowUp } from '../delegations/markFollowUp';
import { appendEvent } from '../events/appendEvent';

/** How much of a message its `follow-up:sent` event keeps: the whole text stays in follow_ups. */
const MESSAGE_IN_EVENT = 200;

/**
 * Records a person's follow-up message to a task (docs/agents.md, "Follow-up messages") with what it does — the
 * caller has decided that (decideFollowUp) and carries it out in the same transaction — and tells it in the run's
 * event log (`follow-up:sent`, with who sent it).
 */
export async function recordFollowUp(
  tx: StoreTx,
  input: {
    runId: string;
    taskId: string;
    message: string;
    by: string;
    action: Exclude<FollowUpAction['kind'], 'refuse'>;
    interruptedDelegationId?: string;
    sentBack?: { delegationId: string; gateId: string; gateKind: 'review' | 'integration_failed' };
  },
  now: number,
): Promise<FollowUp> {
  const id = `M-${await nextCounter(tx, 'follow_up')}`;
  const interrupted = input.interruptedDelegationId;
  await tx.run(
    `INSERT INTO follow_ups (id, run_id, task_id, message, sent_by, sent_at, interrupted_delegation_id, delegation_id)
     VALUES (?, ?, ?, ?, ?, ?, ?, NULL)`,
    [id, input.runId, input.taskId, input.message, input.by, now, interrupted ?? null],
  );
  const text = input.message.trim();
  await appendEvent(tx, input.runId, 'follow-up:sent', now, {
    followUpId: id,
    taskId: input.taskId,
    by: input.by,
    action: input.action,
    message: text.length > MESSAGE_IN_EVENT ? `${text.slice(0, MESSAGE_IN_EVENT - 1)}…` : text,
    ...(interrupted ? { interruptedDelegationId: interrupted } : {}),
    ...(input.sentBack ? { sentBack: input.sentBack } : {}),
  });
  return {
    id,
    runId: input.runId,
    taskId: input.taskId,
    message: input.message,
    by: input.by,
    sentAt: now,
    ...(interrupted ? { interruptedDelegationId: interrupted } : {}),
  };
}

/**
 * A claimed attempt carries the task's follow-ups no attempt carried yet: each is marked with it, and it is marked a
 * follow-up (`delegations.follow_up`; `attempt:follow-up`, with the senders and the session it continues). Returns
 * their ids; none, no mark and no event.
 */
export async function deliverFollowUps(
  tx: StoreTx,
  input: { runId: string; taskId: string; delegationId: string; pending: readonly FollowUp[]; sessionId?: string },
  now: number,
): Promise<string[]> {
  const ids: string[] = [];
  for (const followUp of input.pending) {
    const changed = await tx.run(
      `UPDATE follow_ups SET delegation_id = ? WHERE id = ? AND run_id = ? AND delegation_id IS NULL`,
      [input.delegationId, followUp.id, input.runId],
    );
    if (changed === 1) ids.push(followUp.id);
  }
  if (ids.length === 0) return ids;
  await markFollowUp(tx, { runId: input.runId, delegationId: input.delegationId }, now);
  const by = [...new Set(input.pending.filter((f) => ids.includes(f.id)).map((f) => f.by))];
  await appendEvent(tx, input.runId, 'attempt:follow-up', now, {
    delegationId: input.delegationId,
    taskId: input.taskId,
    followUpIds: ids,
    by,
    ...(input.sessionId ? { sessionId: input.sessionId } : {}),
  });
  return ids;
}
