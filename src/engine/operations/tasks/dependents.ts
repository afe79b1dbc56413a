import type { StoreTx } from '../../store/port';
import { readinessOf } from '../../queries/tasks';
import { closeOpenGates } from '../gates/closeGate';
import { setTaskStatus } from './setTaskStatus';

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

/**
 * A task that can no longer complete blocks everything that depends on it, transitively, and
 * says why; their open gates are closed (nobody needs to decide them any more).
 */
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
      await closeOpenGates(
        tx,
        { runId, taskId: id },
        { decision: 'rejected', note: `task blocked: ${current} cannot complete` },
        now,
      );
      queue.push(id);
    }
  }
}
