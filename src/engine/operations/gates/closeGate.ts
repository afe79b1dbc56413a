import { BatonError } from '../../domain/errors';
import { canTransitionGate } from '../../domain/transitions';
import type { Gate, GateDecision } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

/**
 * The one place a gate is decided — by a person (decideGate) or by Baton when the decision
 * is no longer needed (a valid result, a stop, a blocked task, a replan). Moves the gate only
 * along GATE_TRANSITIONS and only from `open` (compare-and-set), and records one
 * `gate:decided` event of one shape.
 */
export async function closeGate(
  tx: StoreTx,
  gate: Pick<Gate, 'id' | 'runId' | 'kind' | 'status'>,
  decision: {
    decision: GateDecision;
    by: string;
    note?: string | null;
    /** The gate's details as they are to be kept with the decision (e.g. the follow-up a review was sent back with). */
    details?: Record<string, unknown>;
  },
  now: number,
): Promise<void> {
  if (!canTransitionGate(gate.status, decision.decision)) {
    throw new BatonError(
      'gate.already-decided',
      `Gate ${gate.id} is ${gate.status}; it cannot become ${decision.decision}.`,
    );
  }
  const note = decision.note?.trim() || null;
  const details = decision.details === undefined ? null : JSON.stringify(decision.details);
  const changed = await tx.run(
    `UPDATE gates SET status = ?, decided_at = ?, decided_by = ?, note = ?, details_json = COALESCE(?, details_json)
     WHERE id = ? AND status = 'open'`,
    [decision.decision, now, decision.by, note, details, gate.id],
  );
  if (changed !== 1) throw new BatonError('gate.already-decided', `Gate ${gate.id} was decided meanwhile.`);
  await appendEvent(tx, gate.runId, 'gate:decided', now, {
    gateId: gate.id,
    kind: gate.kind,
    decision: decision.decision,
    by: decision.by,
    ...(note ? { note } : {}),
  });
}

/**
 * The open gates of a task (or of one attempt of it) that Baton closes because nobody needs to decide them any more.
 */
export async function closeOpenGates(
  tx: StoreTx,
  where: { runId: string; taskId?: string; delegationId?: string; kind?: Gate['kind'] },
  decision: { decision: GateDecision; note: string },
  now: number,
): Promise<void> {
  const conditions = ['run_id = ?', "status = 'open'"];
  const params: string[] = [where.runId];
  if (where.taskId) {
    conditions.push('task_id = ?');
    params.push(where.taskId);
  }
  if (where.delegationId) {
    conditions.push('delegation_id = ?');
    params.push(where.delegationId);
  }
  if (where.kind) {
    conditions.push('kind = ?');
    params.push(where.kind);
  }
  const open = await tx.all<Pick<Gate, 'id' | 'kind'>>(
    `SELECT id, kind FROM gates WHERE ${conditions.join(' AND ')} ORDER BY ordinal`,
    params,
  );
  for (const gate of open) {
    await closeGate(tx, { ...gate, runId: where.runId, status: 'open' }, { ...decision, by: 'baton' }, now);
  }
}
