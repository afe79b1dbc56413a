import { BatonError } from '../../domain/errors';
import type { Gate } from '../../domain/types';
import { readinessOf } from '../../queries/tasks';
import type { StoreTx } from '../../store/port';
import { GATE_COLUMNS, toGate, type GateRow } from '../../store/rows';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskStatus } from '../tasks/setTaskStatus';
import { closeGate } from './closeGate';
import { releaseTasksWaitingAt } from './decideGate';
import { updateGate } from './updateGate';

/** The open isolation gate with this id, or the error that says why it is not one. */
export async function openIsolationGate(tx: Pick<StoreTx, 'get'>, gateId: string): Promise<Gate> {
  const row = await tx.get<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE id = ?`, [gateId]);
  if (!row) throw new BatonError('gate.unknown', `There is no gate ${gateId}.`);
  const gate = toGate(row);
  if (gate.kind !== 'isolation')
    throw new BatonError(
      'gate.not-isolation',
      `Gate ${gate.id} is a ${gate.kind} gate; only an isolation gate can be checked again.`,
    );
  if (gate.status !== 'open')
    throw new BatonError(
      'gate.already-decided',
      `Gate ${gate.id} was already ${gate.status} by ${gate.decidedBy ?? 'someone'}; there is nothing to check again.`,
    );
  return gate;
}

/**
 * Checked again, the problem behind an isolation gate is gone (the tree was committed, a
 * branch checked out, …): Baton closes the gate itself — approved by `baton`, with why — and
 * its task, and the tasks that waited at it, go back to the queue. Unlike a person's approval
 * it records no isolation for the run: the next dispatch probes the repository again and
 * gives the task a worktree of its own.
 */
export async function resolveIsolationGate(
  tx: StoreTx,
  input: { gateId: string; note: string },
  now: number,
): Promise<Gate> {
  const gate = await openIsolationGate(tx, input.gateId);
  await closeGate(tx, gate, { decision: 'approved', by: 'baton', note: input.note }, now);
  if (gate.taskId) {
    const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
      gate.runId,
      gate.taskId,
    ]);
    const stillOpen = await tx.get(
      `SELECT 1 AS x FROM gates WHERE run_id = ? AND task_id = ? AND status = 'open' LIMIT 1`,
      [gate.runId, gate.taskId],
    );
    if (task?.status === 'gated' && !stillOpen)
      await setTaskStatus(
        tx,
        gate.runId,
        gate.taskId,
        await readinessOf(tx, gate.runId, gate.taskId),
        `${gate.id}: ${input.note}`,
        now,
      );
  }
  await releaseTasksWaitingAt(tx, gate, now);
  await refreshRunStatus(tx, gate.runId, now);
  return { ...gate, status: 'approved', decidedAt: now, decidedBy: 'baton', note: input.note };
}

/** Checked again, the problem is still there (perhaps other files now): the gate says what it is now. */
export async function restateIsolationGate(
  tx: StoreTx,
  input: { gateId: string; reason: string },
  now: number,
): Promise<Gate> {
  const gate = await openIsolationGate(tx, input.gateId);
  if (gate.reason === input.reason) return gate;
  await updateGate(tx, gate, { reason: input.reason }, now);
  return { ...gate, reason: input.reason };
}
