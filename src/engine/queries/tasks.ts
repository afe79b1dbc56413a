import type { TaskStatus } from '../domain/types';
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
