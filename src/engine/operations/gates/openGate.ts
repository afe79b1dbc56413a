import { appendEvent } from '../events/appendEvent';
import type { Gate, GateKind } from '../../domain/types';
import { nextCounter, setTaskStatus } from '../tasks/taskFlow';
import type { StoreTx } from '../../store/port';

export interface OpenGateInput {
  runId: string;
  kind: GateKind;
  reason: string;
  taskId?: string;
  delegationId?: string;
  details?: Record<string, unknown>;
}

/** Opens a decision for a person. A gate on a task holds the task at `gated` until it is decided. */
export async function openGate(tx: StoreTx, input: OpenGateInput, now: number): Promise<Gate> {
  const ordinal = await nextCounter(tx, 'gate');
  const id = `G-${ordinal}`;
  const details = input.details ?? {};
  await tx.run(
    `INSERT INTO gates (id, ordinal, run_id, task_id, delegation_id, kind, status, reason, details_json, opened_at)
     VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?, ?)`,
    [
      id,
      ordinal,
      input.runId,
      input.taskId ?? null,
      input.delegationId ?? null,
      input.kind,
      input.reason,
      JSON.stringify(details),
      now,
    ],
  );
  await appendEvent(tx, input.runId, 'gate:opened', now, {
    gateId: id,
    kind: input.kind,
    reason: input.reason,
    ...(input.taskId ? { taskId: input.taskId } : {}),
    ...(input.delegationId ? { delegationId: input.delegationId } : {}),
  });
  if (input.taskId) await setTaskStatus(tx, input.runId, input.taskId, 'gated', waitsAtGateReason(id, input.kind), now);
  return {
    id,
    runId: input.runId,
    kind: input.kind,
    status: 'open',
    reason: input.reason,
    details,
    openedAt: now,
    ...(input.taskId ? { taskId: input.taskId } : {}),
    ...(input.delegationId ? { delegationId: input.delegationId } : {}),
  };
}

/** A gated task's reason; tasks that wait at another task's gate (one isolation question per run) carry it too. */
export function waitsAtGateReason(gateId: string, kind: GateKind): string {
  return `waits at ${gateId} (${kind})`;
}
