import { appendEvent } from '../events/appendEvent';
import type { Delegation, Gate, GateKind } from '../../domain/types';
import { nextCounter } from '../counters/nextCounter';
import { setTaskStatus } from '../tasks/setTaskStatus';
import type { StoreTx } from '../../store/port';
import { updateGate } from './updateGate';

export interface OpenGateInput {
  runId: string;
  kind: GateKind;
  reason: string;
  taskId?: string;
  delegationId?: string;
  details?: Record<string, unknown>;
}

/**
 * Opens a decision for a person. A gate on a task holds the task at `gated` until it is decided — except a question:
 * its attempt goes on running while it waits for the answer (openQuestion).
 */
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
  if (input.taskId && input.kind !== 'question')
    await setTaskStatus(tx, input.runId, input.taskId, 'gated', waitsAtGateReason(id, input.kind), now);
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

/** One open gate per kind and attempt: a second rejection updates the open gate instead of stacking gates. */
export async function openGateOnce(
  tx: StoreTx,
  delegation: Delegation,
  kind: 'ingestion_failed' | 'manual_handoff',
  reason: string,
  details: Record<string, unknown>,
  now: number,
): Promise<void> {
  const open = await tx.get<{ id: string }>(
    `SELECT id FROM gates WHERE run_id = ? AND delegation_id = ? AND kind = ? AND status = 'open'`,
    [delegation.runId, delegation.id, kind],
  );
  if (open) {
    await updateGate(tx, { id: open.id, runId: delegation.runId, kind }, { reason, details }, now);
    return;
  }
  await openGate(
    tx,
    { runId: delegation.runId, kind, reason, taskId: delegation.taskId, delegationId: delegation.id, details },
    now,
  );
}
