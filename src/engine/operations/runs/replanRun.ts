import type { RunStatus } from '../../domain/types';
import { closeOpenGates } from '../gates/closeGate';
import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import { issue, type Issue } from '../../domain/issue';
import type { PlanTask, Run } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import type { OperationContext, RunSettings } from '../../domain/runSettings';
import { createRun } from './createRun';
import { readinessOf } from '../../queries/tasks';
import { refreshRunStatus } from './refreshRunStatus';
import { setTaskStatus } from '../tasks/setTaskStatus';

export interface ReplanInput {
  oldRunId: string;
  planPath: string;
  planText: string;
  tasks: PlanTask[];
  settings: RunSettings;
  /** old task id → new task id; null drops the old task. Ids present in both plans map to themselves unless listed. */
  mapping: Record<string, string | null>;
}

export interface ReplanOutcome {
  run: Run;
  carried: Array<{ from: string; to: string; delegationId: string }>;
}

/** Checks a mapping against both plans; returns issues (never throws). */
export function checkReplanMapping(
  oldTaskIds: readonly string[],
  newTaskIds: readonly string[],
  mapping: Record<string, string | null>,
): Issue[] {
  const issues: Issue[] = [];
  const targets = new Map<string, string>();
  for (const [from, to] of Object.entries(mapping)) {
    if (!oldTaskIds.includes(from))
      issues.push(
        issue(
          'replan.unknown-old-task',
          'map',
          `--map ${from}=${to ?? ''}: the old run has no task ${from}.`,
          `Old tasks: ${oldTaskIds.join(', ')}.`,
        ),
      );
    if (to !== null && !newTaskIds.includes(to))
      issues.push(
        issue(
          'replan.unknown-new-task',
          'map',
          `--map ${from}=${to}: the new plan has no task ${to}.`,
          `New tasks: ${newTaskIds.join(', ')}.`,
        ),
      );
    if (to !== null && targets.has(to))
      issues.push(
        issue(
          'replan.duplicate-target',
          'map',
          `--map: both ${targets.get(to)} and ${from} map to ${to}.`,
          'Map at most one old task to each new task.',
        ),
      );
    if (to !== null) targets.set(to, from);
  }
  return issues;
}

/**
 * Maps an old run onto a new plan: a new run starts from the new plan; every completed old
 * task carries its completion to the task it maps to (by the mapping, else the same id);
 * the old run is superseded. Refused while a worker of the old run may still be working.
 */
export async function replanRun(tx: StoreTx, input: ReplanInput, ctx: OperationContext): Promise<ReplanOutcome> {
  const old = await tx.get<{ status: RunStatus }>(`SELECT status FROM runs WHERE id = ?`, [input.oldRunId]);
  if (!old) throw new BatonError('run.unknown', `There is no run ${input.oldRunId}.`);
  if (old.status === 'superseded')
    throw new BatonError('replan.already-superseded', `Run ${input.oldRunId} was already replanned.`);
  const live = await tx.get<{ id: string }>(
    `SELECT id FROM delegations WHERE run_id = ? AND status IN ('RUNNING', 'PENDING') LIMIT 1`,
    [input.oldRunId],
  );
  if (live) {
    throw new BatonError(
      'replan.workers-alive',
      `Run ${input.oldRunId} still has ${live.id} in flight: stop it (baton stop --run ${input.oldRunId} --mode immediate), let it finish, or run baton reconcile if its worker is gone.`,
    );
  }
  const oldTasks = await tx.all<{ id: string; status: string }>(`SELECT id, status FROM tasks WHERE run_id = ?`, [
    input.oldRunId,
  ]);
  const newIds = input.tasks.map((t) => t.id);
  const mappingIssues = checkReplanMapping(
    oldTasks.map((t) => t.id),
    newIds,
    input.mapping,
  );
  if (mappingIssues.length > 0)
    throw new BatonError('replan.invalid-mapping', mappingIssues.map((i) => i.message).join(' '), mappingIssues);

  const run = await createRun(
    tx,
    { planPath: input.planPath, planText: input.planText, tasks: input.tasks, settings: input.settings },
    ctx,
  );
  const carried: ReplanOutcome['carried'] = [];
  for (const task of oldTasks) {
    if (task.status !== 'completed') continue;
    const target = task.id in input.mapping ? input.mapping[task.id] : newIds.includes(task.id) ? task.id : null;
    if (!target) continue;
    const done = await tx.get<{ id: string }>(
      `SELECT id FROM delegations WHERE run_id = ? AND task_id = ? AND status = 'COMPLETED' ORDER BY attempt DESC LIMIT 1`,
      [input.oldRunId, task.id],
    );
    const why = `carried over from ${input.oldRunId}/${task.id}${done ? ` (${done.id})` : ''}`;
    await closeOpenGates(tx, { runId: run.id, taskId: target }, { decision: 'approved', note: why }, ctx.now);
    await setTaskStatus(tx, run.id, target, 'completed', why, ctx.now);
    carried.push({ from: task.id, to: target, delegationId: done?.id ?? '' });
  }
  const waiting = await tx.all<{ id: string }>(`SELECT id FROM tasks WHERE run_id = ? AND status = 'pending'`, [
    run.id,
  ]);
  for (const { id } of waiting)
    if ((await readinessOf(tx, run.id, id)) === 'ready') await setTaskStatus(tx, run.id, id, 'ready', null, ctx.now);

  // Nobody decides for a superseded run: its open gates would ask for a decision that moves nothing (the Gates view,
  // the status bar's "waiting").
  await closeOpenGates(
    tx,
    { runId: input.oldRunId },
    { decision: 'rejected', note: `the run was replanned as ${run.id}` },
    ctx.now,
  );
  await tx.run(`UPDATE runs SET status = 'superseded', superseded_by = ?, updated_at = ? WHERE id = ?`, [
    run.id,
    ctx.now,
    input.oldRunId,
  ]);
  await appendEvent(tx, input.oldRunId, 'run:status', ctx.now, {
    from: old.status,
    to: 'superseded',
    reason: `replanned as ${run.id}`,
  });
  await appendEvent(tx, run.id, 'run:replanned', ctx.now, { from: input.oldRunId, carried: carried.length });
  const status = await refreshRunStatus(tx, run.id, ctx.now);
  return { run: { ...run, status }, carried };
}
