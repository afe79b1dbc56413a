import type { DelegationStatus, TaskStatus } from '../domain/types';
import { BatonError } from '../domain/errors';
import type { RunSettings } from '../domain/runSettings';
import type { StoreReader } from '../store/port';

/** A task whose dependencies have all completed is ready; otherwise it waits as pending. */
export async function readinessOf(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  taskId: string,
): Promise<'ready' | 'pending'> {
  const unmet = await r.get(
    `SELECT 1 AS x FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.depends_on
     WHERE dep.run_id = ? AND dep.task_id = ? AND t.status <> 'completed' LIMIT 1`,
    [runId, taskId],
  );
  return unmet ? 'pending' : 'ready';
}

/** The tasks a task builds on, with their titles (its prompt names them). */
export async function dependencyTitles(
  r: Pick<StoreReader, 'all'>,
  runId: string,
  taskId: string,
): Promise<Array<{ id: string; title: string }>> {
  return r.all<{ id: string; title: string }>(
    `SELECT t.id, t.title FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.depends_on
     WHERE dep.run_id = ? AND dep.task_id = ?`,
    [runId, taskId],
  );
}

/** A task's status now (undefined: not in the run). */
export async function taskStatusOf(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  taskId: string,
): Promise<TaskStatus | undefined> {
  const row = await r.get<{ status: TaskStatus }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
    runId,
    taskId,
  ]);
  return row?.status;
}

/** What starting a new attempt of a task decides on: its row and its attempts so far (queries/tasks.ts). */
export interface TaskClaimFacts {
  task: { status: TaskStatus; agent: string; statusReason: string | null; files: string[]; notBefore: number | null };
  /** Every attempt of the task, oldest first. */
  attempts: Array<{ id: string; attempt: number; status: DelegationStatus; runtimeId: string | null }>;
}

/**
 * The task's row and its attempts in one statement, read in the transaction that starts its next attempt: the claim's
 * readiness, its live attempt, its next attempt number and its admission facts all come from it (undefined: no
 * such task in the run).
 */
export async function readTaskClaimFacts(
  r: Pick<StoreReader, 'all'>,
  runId: string,
  taskId: string,
): Promise<TaskClaimFacts | undefined> {
  const rows = await r.all<{
    status: TaskStatus;
    agent: string;
    status_reason: string | null;
    files_json: string;
    not_before: number | null;
    d_id: string | null;
    d_attempt: number | null;
    d_status: DelegationStatus | null;
    d_runtime_id: string | null;
  }>(
    `SELECT t.status, t.agent, t.status_reason, t.files_json, t.not_before,
       d.id AS d_id, d.attempt AS d_attempt, d.status AS d_status, d.runtime_id AS d_runtime_id
     FROM tasks t LEFT JOIN delegations d ON d.run_id = t.run_id AND d.task_id = t.id
     WHERE t.run_id = ? AND t.id = ? ORDER BY d.attempt`,
    [runId, taskId],
  );
  const [first] = rows;
  if (!first) return undefined;
  return {
    task: {
      status: first.status,
      agent: first.agent,
      statusReason: first.status_reason,
      files: JSON.parse(first.files_json) as string[],
      notBefore: first.not_before,
    },
    attempts: rows
      .filter((row) => row.d_id !== null)
      .map((row) => ({ id: row.d_id!, attempt: row.d_attempt!, status: row.d_status!, runtimeId: row.d_runtime_id })),
  };
}

/** What a passed result decides on (operations/ingestions/recordIngestion.ts): in one statement. */
export interface PassFacts {
  /** The task's verify commands (none: nothing to verify). */
  verify: unknown[];
  /** The attempt worked in a worktree of its own: its work waits to be integrated. */
  isolated: boolean;
  /** The run's settings (`review: required` makes a person look first). */
  settings: RunSettings;
  /** The task's status and reason now. */
  task: { status: TaskStatus; reason: string | null };
}

export async function readPassFacts(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  taskId: string,
  delegationId: string,
): Promise<PassFacts> {
  const row = await r.get<{
    verify_json: string;
    status: TaskStatus;
    status_reason: string | null;
    config_json: string;
    isolated: number | boolean;
  }>(
    `SELECT t.verify_json, t.status, t.status_reason, ru.config_json,
       EXISTS (SELECT 1 FROM worktrees w WHERE w.run_id = t.run_id AND w.delegation_id = ?) AS isolated
     FROM tasks t JOIN runs ru ON ru.id = t.run_id WHERE t.run_id = ? AND t.id = ?`,
    [delegationId, runId, taskId],
  );
  if (!row) throw new BatonError('task.unknown', `Task ${taskId} is not in run ${runId}.`);
  return {
    verify: JSON.parse(row.verify_json) as unknown[],
    isolated: Boolean(row.isolated),
    settings: JSON.parse(row.config_json) as RunSettings,
    task: { status: row.status, reason: row.status_reason },
  };
}
