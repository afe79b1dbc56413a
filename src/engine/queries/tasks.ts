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
