import type { PlanTask } from '../../domain/types';
import type { StoreTx } from '../../store/port';

/**
 * The plan's tasks frozen into a new run, in plan order, with their dependencies: a task
 * with none starts ready, the others pending.
 */
export async function insertPlanTasks(
  tx: StoreTx,
  runId: string,
  tasks: readonly PlanTask[],
  now: number,
): Promise<void> {
  for (const [ordinalInPlan, task] of tasks.entries()) {
    await tx.run(
      `INSERT INTO tasks (run_id, id, ordinal, title, agent, worker, depends_json, risk_json, files_json, verify_json, instructions, line, status, updated_at, isolation, permissions_json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [
        runId,
        task.id,
        ordinalInPlan,
        task.title,
        task.agent,
        task.worker ?? null,
        JSON.stringify(task.depends),
        JSON.stringify(task.risk),
        JSON.stringify(task.files),
        JSON.stringify(task.verify),
        task.instructions,
        task.range.start.line,
        task.depends.length === 0 ? 'ready' : 'pending',
        now,
        task.isolation ?? null,
        task.permissions ? JSON.stringify(task.permissions) : null,
      ],
    );
    for (const dependency of task.depends) {
      await tx.run(
        `INSERT INTO task_dependencies (run_id, task_id, depends_on) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
        [runId, task.id, dependency],
      );
    }
  }
}
