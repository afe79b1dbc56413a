import { discardWorktree } from '../worktrees/worktrees';
import { closeGate } from './closeGate';
import { BatonError } from '../../domain/errors';
import type { Gate } from '../../domain/types';
import { blockDependents } from '../tasks/dependents';
import { getDelegation } from '../../queries/delegations';
import { readinessOf } from '../../queries/tasks';
import { readRunSettings } from '../../queries/runs';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskStatus } from '../tasks/setTaskStatus';
import { transitionDelegation } from '../delegations/transitionDelegation';
import { getAttemptWorktree } from '../../queries/worktrees';
import { recordExpectedTargetHead, recordRunIsolation } from '../runs/recordRunIsolation';
import { raiseRunBudget } from '../runs/raiseRunBudget';
import type { BudgetCrossing } from '../../domain/agents/budget';
import { waitsAtGateReason } from './openGate';
import type { StoreTx } from '../../store/port';
import { GATE_COLUMNS, toGate, type GateRow } from '../../store/rows';
import { completeAttempt } from '../ingestions/recordIngestion';
import type { FrozenWorkers } from '../../domain/frozenWorkers';
import { freezeRunWorkers } from '../runs/runWorkers';

import type { GateDecision, GateKind } from '../../domain/types';
export type { GateDecision };

/** Gates an isolated attempt waits at before its work reaches the target branch (docs/isolation.md). */
const INTEGRATION_GATES: readonly GateKind[] = [
  'integration_conflict',
  'target_moved',
  'undeclared_files',
  'integration_failed',
];
/**
 * Gates a passed attempt is held at before its work integrates (or, in the shared tree, its task completes): the
 * integration's, and a person's review (`review: required`).
 */
const HELD_BEFORE_INTEGRATION: readonly GateKind[] = [...INTEGRATION_GATES, 'review'];
/**
 * After these the work may still be wanted (elsewhere, fixed by hand, or sent back later with `baton message`):
 * rejecting keeps the worktree for cleanup.
 */
const KEEPS_WORK_ON_REJECT: readonly GateKind[] = ['target_moved', 'integration_failed', 'review'];

export interface DecideGateInput {
  gateId: string;
  decision: GateDecision;
  by: string;
  note?: string;
  /** verification_failed only: approve by taking the result as it is, instead of retrying. */
  accept?: boolean;
  /**
   * config_changed, approve: the config's worker definitions as the deciding process read them
   * (Engine.decideGate). Adopted only when they are what the gate showed (its proposed digest).
   */
  adopt?: FrozenWorkers;
}

export interface DecideGateOutcome {
  gate: Gate;
  /** True when the gate already had this decision: nothing was written. */
  alreadyDecided: boolean;
}

/**
 * Records a person's decision and applies it (docs/architecture.md, "Gates"):
 * - risk_approval: approve releases the task; reject cancels it and blocks its dependents.
 * - ingestion_failed / manual_handoff on a BLOCKED attempt: approve ends the attempt and lets
 *   the task start a new one; reject fails the task.
 * - budget: approve raises the run's crossed limits and lets the task continue; reject fails it.
 * - integration_conflict / target_moved / undeclared_files / integration_failed: approve integrates again
 *   (target_moved: the branch as it is now becomes the expected head; integration_failed: without verifying
 *   the merged tree again); reject fails the attempt and the task.
 * - review: approve integrates (or, in the shared tree, completes); reject fails the attempt and the task, its work
 *   kept. Requesting changes is not a decision here but a follow-up message (sendFollowUp: `send-back`).
 * - config_changed: approve adopts the config's worker definitions into the run (the ones the
 *   gate showed, else nothing: `gate.config-moved`); reject keeps the frozen ones. Either way
 *   the tasks that waited at it go back to the queue.
 * Deciding a gate again the same way is a no-op; the opposite decision is refused.
 */
export async function decideGate(tx: StoreTx, input: DecideGateInput, now: number): Promise<DecideGateOutcome> {
  const row = await tx.get<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE id = ?`, [input.gateId]);
  if (!row) throw new BatonError('gate.unknown', `There is no gate ${input.gateId}.`);
  const gate = toGate(row);
  if (gate.kind === 'question')
    throw new BatonError(
      'gate.is-question',
      `Gate ${gate.id} is a question from ${gate.delegationId ?? 'an attempt'}; it takes an answer, not an approval: baton answer ${gate.id} "…".`,
    );
  if (gate.status !== 'open') {
    if (gate.status === input.decision) return { gate, alreadyDecided: true };
    throw new BatonError(
      'gate.already-decided',
      `Gate ${gate.id} was already ${gate.status} by ${gate.decidedBy ?? 'someone'}${gate.decidedAt ? ` at ${new Date(gate.decidedAt).toISOString()}` : ''}.`,
    );
  }
  const note = input.note?.trim() || null;
  if (gate.kind === 'config_changed' && input.decision === 'approved') {
    const proposed = typeof gate.details.proposedDigest === 'string' ? gate.details.proposedDigest : undefined;
    if (!input.adopt || input.adopt.digest !== proposed) {
      throw new BatonError(
        'gate.config-moved',
        `.baton/config.json changed again since ${gate.id} showed its worker definitions (${short(proposed)} then, ${short(input.adopt?.digest)} now); nothing was adopted. Resume the run: its coordinator updates ${gate.id} to the file as it is now; then decide again.`,
      );
    }
  }
  await closeGate(tx, gate, { decision: input.decision, by: input.by, note }, now);
  if (gate.kind === 'config_changed' && input.decision === 'approved') {
    await freezeRunWorkers(tx, { runId: gate.runId, workers: input.adopt!, why: 'adopted', gateId: gate.id }, now);
  }

  if (input.accept && gate.kind !== 'verification_failed') {
    throw new BatonError(
      'gate.accept-not-applicable',
      `Only a verification_failed gate can accept a result; ${gate.id} is ${gate.kind}.`,
    );
  }
  if (gate.kind === 'budget' && input.decision === 'approved') {
    await raiseRunBudget(tx, gate.runId, (gate.details.crossings ?? []) as BudgetCrossing[]);
  }
  if (gate.taskId) await applyDecision(tx, gate, input.decision, note, input.accept ?? false, now);
  // Tasks that waited at a run-wide question (isolation, the run's budget, its config) go back to the queue.
  if (gate.kind === 'isolation' || gate.kind === 'budget' || gate.kind === 'config_changed')
    await releaseTasksWaitingAt(tx, gate, now);
  await refreshRunStatus(tx, gate.runId, now);
  const decided: Gate = {
    ...gate,
    status: input.decision,
    decidedAt: now,
    decidedBy: input.by,
    ...(note ? { note } : {}),
  };
  return { gate: decided, alreadyDecided: false };
}

async function applyDecision(
  tx: StoreTx,
  gate: Gate,
  decision: GateDecision,
  note: string | null,
  accept: boolean,
  now: number,
): Promise<void> {
  const taskId = gate.taskId!;
  const why = `${decision} at ${gate.id}${note ? `: ${note}` : ''}`;
  const delegation = gate.delegationId ? await getDelegation(tx, gate.runId, gate.delegationId) : undefined;
  const isolated = delegation ? await getAttemptWorktree(tx, gate.runId, delegation.id) : undefined;
  if (accept && decision === 'approved' && delegation && gate.kind === 'verification_failed') {
    if (isolated && (delegation.status === 'BLOCKED' || delegation.status === 'RUNNING')) {
      // Taken as it is, but its work still has to reach the target branch: integrate it (verification is not run
      // again).
      // JSON is taken apart in TypeScript, not SQL (docs/architecture.md, "one portable SQL subset").
      await tx.run(`UPDATE gates SET details_json = ? WHERE id = ?`, [
        JSON.stringify({ ...gate.details, accepted: true }),
        gate.id,
      ]);
      await setTaskStatus(tx, gate.runId, taskId, 'verifying', `accepted ${why}; integrating`, now);
      return;
    }
    // Take the result although its verification failed: the attempt and the task complete.
    if (delegation.status === 'BLOCKED' || delegation.status === 'RUNNING')
      await completeAttempt(tx, delegation, { reason: `accepted ${why}` }, now);
    return;
  }
  if (HELD_BEFORE_INTEGRATION.includes(gate.kind) && delegation?.status === 'BLOCKED') {
    if (decision === 'approved') {
      // integration_conflict: "I resolved it in the worktree"; target_moved: "take the branch as it is now";
      // undeclared_files / integration_failed: "integrate it anyway" (the integration finds this approval for the same
      // commit); review: "integrate it" (verifyAttempt finds the approval, its receipts reused).
      if (gate.kind === 'target_moved' && typeof gate.details.found === 'string')
        await recordExpectedTargetHead(tx, gate.runId, gate.details.found);
      await setTaskStatus(tx, gate.runId, taskId, 'verifying', `integrating again: ${why}`, now);
      return;
    }
    const discarded = !KEEPS_WORK_ON_REJECT.includes(gate.kind);
    const reason = `${discarded ? 'discarded' : 'not integrated'}: ${why}`;
    await transitionDelegation(tx, delegation, 'FAILED', { reason }, now);
    // The work itself is not wanted (a conflict, files outside the declaration): its worktree goes at once. After a
    // target_moved rejection the work may still be wanted elsewhere: kept until baton cleanup.
    if (discarded) await discardWorktree(tx, { runId: gate.runId, delegationId: delegation.id });
    await setTaskStatus(tx, gate.runId, taskId, 'failed', why, now);
    await blockDependents(tx, gate.runId, taskId, now);
    return;
  }
  if (gate.kind === 'isolation' && decision === 'approved') {
    const settings = await readRunSettings(tx, gate.runId);
    await recordRunIsolation(
      tx,
      {
        runId: gate.runId,
        mode: 'none',
        strategy: settings.integration ?? 'merge',
        note: `approved at ${gate.id}: run in the shared working tree`,
      },
      now,
    );
  }
  if (delegation?.status === 'BLOCKED') {
    await transitionDelegation(
      tx,
      delegation,
      'FAILED',
      { reason: decision === 'approved' ? `retry ${why}` : `result ${why}` },
      now,
    );
  } else if (delegation?.status === 'RUNNING' && gate.kind === 'manual_handoff') {
    // A person's hand-off: approve hands the task out again, reject fails it.
    await transitionDelegation(
      tx,
      delegation,
      decision === 'approved' ? 'CANCELLED' : 'FAILED',
      { reason: decision === 'approved' ? `handed out again ${why}` : why },
      now,
    );
  }
  if (decision === 'rejected') {
    const to = gate.kind === 'risk_approval' || gate.kind === 'isolation' ? 'cancelled' : 'failed';
    await setTaskStatus(tx, gate.runId, taskId, to, why, now);
    await blockDependents(tx, gate.runId, taskId, now);
    return;
  }
  const stillOpen = await tx.get(
    `SELECT 1 AS x FROM gates WHERE run_id = ? AND task_id = ? AND status = 'open' LIMIT 1`,
    [gate.runId, taskId],
  );
  const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
    gate.runId,
    taskId,
  ]);
  if (!stillOpen && task?.status === 'gated')
    await setTaskStatus(tx, gate.runId, taskId, await readinessOf(tx, gate.runId, taskId), why, now);
}

function short(digest: string | undefined): string {
  return digest ? digest.replace('sha256:', '').slice(0, 12) : 'unknown';
}

/** Tasks that waited at another task's isolation gate go back to the queue once it is decided (either way). */
export async function releaseTasksWaitingAt(tx: StoreTx, gate: Gate, now: number): Promise<void> {
  const waiting = await tx.all<{ id: string }>(
    `SELECT id FROM tasks WHERE run_id = ? AND status = 'gated' AND status_reason = ?`,
    [gate.runId, waitsAtGateReason(gate.id, gate.kind)],
  );
  for (const { id } of waiting) {
    const ownGate = await tx.get(
      `SELECT 1 AS x FROM gates WHERE run_id = ? AND task_id = ? AND status = 'open' LIMIT 1`,
      [gate.runId, id],
    );
    if (!ownGate)
      await setTaskStatus(tx, gate.runId, id, await readinessOf(tx, gate.runId, id), `${gate.id} decided`, now);
  }
}
