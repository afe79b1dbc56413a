import { closeOpenGates } from '../gates/closeGate';
import type { GateDecision } from '../../domain/types';
import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import { canTransitionDelegation, isTerminalDelegation } from '../../domain/transitions';
import type { Delegation, DelegationStatus, ResultStatus, RunStatus, TaskStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { DELEGATION_COLUMNS, toDelegation, type DelegationRow } from '../../store/rows';
import { retryDelayMs, type RunSettings } from '../../domain/runSettings';

/**
 * The shared moves of the task state machine. Each runs inside the caller's transaction
 * and records what it did in the run's event log.
 */

export async function setTaskStatus(
  tx: StoreTx,
  runId: string,
  taskId: string,
  to: TaskStatus,
  reason: string | null,
  now: number,
): Promise<void> {
  const row = await tx.get<{ status: TaskStatus; status_reason: string | null }>(
    `SELECT status, status_reason FROM tasks WHERE run_id = ? AND id = ?`,
    [runId, taskId],
  );
  if (!row) throw new BatonError('task.unknown', `Task ${taskId} is not in run ${runId}.`);
  if (row.status === to && row.status_reason === reason) return;
  await tx.run(`UPDATE tasks SET status = ?, status_reason = ?, updated_at = ? WHERE run_id = ? AND id = ?`, [
    to,
    reason,
    now,
    runId,
    taskId,
  ]);
  await appendEvent(tx, runId, 'task:status', now, { taskId, from: row.status, to, ...(reason ? { reason } : {}) });
}

export interface DelegationChange {
  reason?: string;
  resultStatus?: ResultStatus;
  artifactPath?: string;
}

/**
 * Moves a delegation only along DELEGATION_TRANSITIONS and only from the status the caller
 * saw (compare-and-set): a transition that lost a race fails instead of overwriting.
 * Leaving RUNNING for good ends its runtime.
 */
export async function transitionDelegation(
  tx: StoreTx,
  delegation: Delegation,
  to: DelegationStatus,
  change: DelegationChange,
  now: number,
): Promise<Delegation> {
  if (!canTransitionDelegation(delegation.status, to)) {
    throw new BatonError(
      'delegation.illegal-transition',
      `Delegation ${delegation.id} is ${delegation.status}; it cannot become ${to}.`,
    );
  }
  const terminal = isTerminalDelegation(to);
  const changed = await tx.run(
    `UPDATE delegations SET status = ?, reason = COALESCE(?, reason), result_status = COALESCE(?, result_status),
       artifact_path = COALESCE(?, artifact_path), updated_at = ?, finished_at = CASE WHEN ? THEN ? ELSE finished_at END
     WHERE run_id = ? AND id = ? AND status = ?`,
    [
      to,
      change.reason ?? null,
      change.resultStatus ?? null,
      change.artifactPath ?? null,
      now,
      terminal ? 1 : 0,
      now,
      delegation.runId,
      delegation.id,
      delegation.status,
    ],
  );
  if (changed !== 1) {
    throw new BatonError(
      'delegation.changed-meanwhile',
      `Delegation ${delegation.id} changed while this was being decided; try again.`,
    );
  }
  if (terminal) {
    await tx.run(
      `UPDATE runtimes SET ended_at = ?, end_reason = ? WHERE run_id = ? AND delegation_id = ? AND ended_at IS NULL`,
      [now, change.reason ?? to.toLowerCase(), delegation.runId, delegation.id],
    );
  }
  await appendEvent(tx, delegation.runId, 'delegation:status', now, {
    delegationId: delegation.id,
    taskId: delegation.taskId,
    from: delegation.status,
    to,
    ...(change.reason ? { reason: change.reason } : {}),
  });
  return { ...delegation, status: to, updatedAt: now, ...(change.reason ? { reason: change.reason } : {}) };
}

export async function getDelegation(
  tx: Pick<StoreTx, 'get'>,
  runId: string,
  delegationId: string,
): Promise<Delegation | undefined> {
  const row = await tx.get<DelegationRow>(`SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND id = ?`, [
    runId,
    delegationId,
  ]);
  return row ? toDelegation(row) : undefined;
}

export async function readRunSettings(tx: Pick<StoreTx, 'get'>, runId: string): Promise<RunSettings> {
  const row = await tx.get<{ config_json: string }>(`SELECT config_json FROM runs WHERE id = ?`, [runId]);
  if (!row) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  return JSON.parse(row.config_json) as RunSettings;
}

/** A task whose dependencies have all completed is ready; otherwise it waits as pending. */
export async function readinessOf(tx: StoreTx, runId: string, taskId: string): Promise<'ready' | 'pending'> {
  const unmet = await tx.get(
    `SELECT 1 AS x FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.depends_on
     WHERE dep.run_id = ? AND dep.task_id = ? AND t.status <> 'completed' LIMIT 1`,
    [runId, taskId],
  );
  return unmet ? 'pending' : 'ready';
}

/** After `taskId` completed: its pending dependents whose dependencies are now all complete become ready. */
export async function promoteDependents(tx: StoreTx, runId: string, taskId: string, now: number): Promise<void> {
  const dependents = await tx.all<{ id: string }>(
    `SELECT t.id FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.task_id
     WHERE dep.run_id = ? AND dep.depends_on = ? AND t.status = 'pending'`,
    [runId, taskId],
  );
  for (const { id } of dependents) {
    if ((await readinessOf(tx, runId, id)) === 'ready') await setTaskStatus(tx, runId, id, 'ready', null, now);
  }
}

/** A task that can no longer complete blocks everything that depends on it, transitively, and says why. */
export async function blockDependents(tx: StoreTx, runId: string, taskId: string, now: number): Promise<void> {
  const queue = [taskId];
  while (queue.length > 0) {
    const current = queue.shift()!;
    const dependents = await tx.all<{ id: string }>(
      `SELECT t.id FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.task_id
       WHERE dep.run_id = ? AND dep.depends_on = ? AND t.status IN ('pending', 'ready', 'gated')`,
      [runId, current],
    );
    for (const { id } of dependents) {
      await setTaskStatus(tx, runId, id, 'blocked', `depends on ${current}, which cannot complete`, now);
      await closeGatesOfTask(tx, runId, id, 'rejected', `task blocked: ${current} cannot complete`, now);
      queue.push(id);
    }
  }
}

/** Gates that no longer need a decision are closed by Baton, with the reason as note. */
export async function closeGatesOfTask(
  tx: StoreTx,
  runId: string,
  taskId: string,
  decision: GateDecision,
  note: string,
  now: number,
  onlyDelegation?: string,
): Promise<void> {
  await closeOpenGates(
    tx,
    { runId, taskId, ...(onlyDelegation ? { delegationId: onlyDelegation } : {}) },
    { decision, note },
    now,
  );
}

/**
 * An attempt ended without success (FAILED or STALE): the task goes back to ready while
 * attempts remain (the retry is a new delegation), else it fails and blocks its dependents.
 */
export async function settleUnsuccessfulAttempt(
  tx: StoreTx,
  runId: string,
  taskId: string,
  why: string,
  now: number,
): Promise<void> {
  const settings = await readRunSettings(tx, runId);
  const used = await tx.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM delegations WHERE run_id = ? AND task_id = ? AND status IN ('FAILED', 'STALE')`,
    [runId, taskId],
  );
  if ((used?.n ?? 0) < settings.maxAttempts) {
    const next = (used?.n ?? 0) + 1;
    const delay = retryDelayMs(settings, next);
    await setTaskStatus(
      tx,
      runId,
      taskId,
      'ready',
      `${why}; attempt ${next} of ${settings.maxAttempts} may start${delay > 0 ? ` after ${Math.round(delay / 1000)} s` : ''}`,
      now,
    );
    await tx.run(`UPDATE tasks SET not_before = ? WHERE run_id = ? AND id = ?`, [
      delay > 0 ? now + delay : null,
      runId,
      taskId,
    ]);
  } else {
    await setTaskStatus(tx, runId, taskId, 'failed', `${why}; no attempts left (${settings.maxAttempts})`, now);
    await blockDependents(tx, runId, taskId, now);
  }
}

/** The run's status follows its tasks (see docs/architecture.md, "Run status"). */
export async function refreshRunStatus(tx: StoreTx, runId: string, now: number): Promise<RunStatus> {
  const run = await tx.get<{ status: string; stop_mode: string | null }>(
    `SELECT status, stop_mode FROM runs WHERE id = ?`,
    [runId],
  );
  if (!run) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  const current = run.status as RunStatus;
  if (current === 'superseded') return current;
  // The common case, a run going on with no stop: one probe settles it.
  if (!run.stop_mode && current === 'running') {
    const active = await tx.get<{ active: number }>(
      `SELECT EXISTS (SELECT 1 FROM tasks WHERE run_id = ? AND status IN ('running', 'verifying', 'ready')) AS active`,
      [runId],
    );
    if (active?.active) return current;
  }
  // One statement, each probe an index seek on (run_id, status): flat in the size of the run.
  const probe = (statuses: TaskStatus[]): string =>
    `EXISTS (SELECT 1 FROM tasks WHERE run_id = ?1 AND status IN (${statuses.map((s) => `'${s}'`).join(', ')}))`;
  const has = (await tx.get<{
    inFlight: number;
    active: number;
    gated: number;
    unfinished: number;
    open: number;
    failed: number;
  }>(
    `SELECT ${probe(['running', 'verifying'])} AS inFlight, ${probe(['running', 'verifying', 'ready'])} AS active, ${probe(['gated'])} AS gated,
       ${probe(['pending', 'ready', 'gated', 'running', 'verifying'])} AS unfinished,
       ${probe(['pending', 'failed', 'blocked', 'cancelled'])} AS open, ${probe(['failed'])} AS failed`,
    [runId],
  ))!;
  let next: RunStatus;
  // A stopped run stays stopping while work is in flight, then paused until it is resumed.
  if (run.stop_mode && has.unfinished) next = has.inFlight ? 'stopping' : 'paused';
  else if (has.active) next = 'running';
  else if (has.gated) next = 'paused';
  else if (!has.open) next = 'completed';
  else if (has.failed) next = 'failed';
  else next = 'blocked';
  if (next !== current) {
    await tx.run(`UPDATE runs SET status = ?, updated_at = ? WHERE id = ?`, [next, now, runId]);
    await appendEvent(tx, runId, 'run:status', now, { from: current, to: next });
  }
  return next;
}

export async function nextCounter(
  tx: StoreTx,
  name: 'run' | 'gate' | 'ingestion' | 'lease_epoch' | 'coordinator_epoch' | 'stop',
): Promise<number> {
  await tx.run(`UPDATE counters SET value = value + 1 WHERE name = ?`, [name]);
  const row = await tx.get<{ value: number }>(`SELECT value FROM counters WHERE name = ?`, [name]);
  return row!.value;
}

export function isDelegationLive(status: DelegationStatus): boolean {
  return status === 'PENDING' || status === 'RUNNING';
}
