import { BatonError } from '../../domain/errors';
import { acceptAnswer, questionGateReason, type Question } from '../../domain/question';
import type { Gate } from '../../domain/types';
import { getDelegation } from '../../queries/delegations';
import type { StoreTx } from '../../store/port';
import { GATE_COLUMNS, toGate, type GateRow } from '../../store/rows';
import { appendEvent } from '../events/appendEvent';
import { closeGate } from './closeGate';
import { openGate } from './openGate';

/**
 * Opens a `question` gate for a RUNNING attempt (checked in this transaction: an attempt that
 * ended meanwhile asks nothing). Its task stays `running`: a question holds no task and no
 * other task waits for it; the attempt's agent waits for the answer itself (awaitAnswer).
 */
export async function openQuestion(
  tx: StoreTx,
  input: { runId: string; delegationId: string; question: Question },
  now: number,
): Promise<Gate> {
  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!delegation) throw new BatonError('delegation.unknown', `There is no delegation ${input.delegationId}.`);
  if (delegation.status !== 'RUNNING')
    throw new BatonError('runtime.not-live', `${delegation.id} is ${delegation.status}: it asks nothing any more.`);
  return openGate(
    tx,
    {
      runId: input.runId,
      kind: 'question',
      reason: questionGateReason(delegation.id, input.question),
      taskId: delegation.taskId,
      delegationId: delegation.id,
      details: {
        question: input.question.text,
        ...(input.question.choices ? { choices: input.question.choices } : {}),
      },
    },
    now,
  );
}

/**
 * A person's answer to a question gate: taken only while it is open (compare-and-set), so the
 * first answer wins and a second — or one from a view that went stale — is refused naming the
 * first (acceptAnswer). Recorded like a decision: status `answered`, who, when, the answer as
 * its note, and a `gate:answered` event.
 */
export async function answerQuestion(
  tx: StoreTx,
  input: { gateId: string; answer: string; by: string },
  now: number,
): Promise<Gate> {
  const gate = await readGate(tx, input.gateId);
  const answer = acceptAnswer(gate, input.answer);
  const changed = await tx.run(
    `UPDATE gates SET status = 'answered', decided_at = ?, decided_by = ?, note = ? WHERE id = ? AND status = 'open'`,
    [now, input.by, answer, gate.id],
  );
  if (changed !== 1) throw new BatonError('gate.already-decided', `Gate ${gate.id} was answered meanwhile.`);
  await appendEvent(tx, gate.runId, 'gate:answered', now, {
    gateId: gate.id,
    delegationId: gate.delegationId ?? '',
    taskId: gate.taskId ?? '',
    answer,
    by: input.by,
  });
  return { ...gate, status: 'answered', decidedAt: now, decidedBy: input.by, note: answer };
}

/**
 * The asking call gave up before an answer came (its client cancelled, its lease was lost): the
 * question closes — rejected by baton, with why — so it is not left waiting for a person. A
 * question no longer open is left as it is.
 */
export async function withdrawQuestion(
  tx: StoreTx,
  input: { gateId: string; delegationId: string; note: string },
  now: number,
): Promise<void> {
  const gate = await readGate(tx, input.gateId);
  if (gate.kind !== 'question' || gate.status !== 'open' || gate.delegationId !== input.delegationId) return;
  await closeGate(tx, gate, { decision: 'rejected', by: 'baton', note: input.note }, now);
}

async function readGate(tx: StoreTx, gateId: string): Promise<Gate> {
  const row = await tx.get<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE id = ?`, [gateId]);
  if (!row) throw new BatonError('gate.unknown', `There is no gate ${gateId}.`);
  return toGate(row);
}
