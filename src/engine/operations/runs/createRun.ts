import { insertPlanTasks } from '../tasks/insertPlanTasks';
import { createHash } from 'node:crypto';
import { appendEvent } from '../events/appendEvent';
import { openGate } from '../gates/openGate';
import type { PlanTask, Run } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import type { OperationContext, RunSettings } from '../../domain/runSettings';
import { nextCounter } from '../counters/nextCounter';
import { refreshRunStatus } from './refreshRunStatus';

export interface CreateRunInput {
  planPath: string;
  planText: string;
  /** Already validated: no error issues. */
  tasks: PlanTask[];
  settings: RunSettings;
}

export function planDigest(planText: string): string {
  return `sha256:${createHash('sha256').update(planText).digest('hex')}`;
}

/**
 * Freezes a plan into a new run: the plan text and digest, every task, and the settings.
 * Tasks with a configured risk tag start behind a risk_approval gate.
 */
export async function createRun(tx: StoreTx, input: CreateRunInput, ctx: OperationContext): Promise<Run> {
  const id = ctx.ids.runId();
  const ordinal = await nextCounter(tx, 'run');
  const digest = planDigest(input.planText);
  await tx.run(
    `INSERT INTO runs (id, ordinal, plan_path, plan_digest, plan_text, status, config_json, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?)`,
    [id, ordinal, input.planPath, digest, input.planText, JSON.stringify(input.settings), ctx.now, ctx.now],
  );
  await appendEvent(tx, id, 'run:created', ctx.now, {
    planPath: input.planPath,
    planDigest: digest,
    tasks: input.tasks.length,
  });
  await insertPlanTasks(tx, id, input.tasks, ctx.now);
  for (const task of input.tasks) {
    const risky = task.risk.filter((tag) => input.settings.riskTags.includes(tag));
    if (risky.length === 0) continue;
    await openGate(
      tx,
      {
        runId: id,
        kind: 'risk_approval',
        taskId: task.id,
        reason: `Task ${task.id} is tagged ${risky.join(', ')}; approve it before it runs.`,
        details: { risk: risky },
      },
      ctx.now,
    );
  }
  const status = await refreshRunStatus(tx, id, ctx.now);
  return { id, planPath: input.planPath, planDigest: digest, status, createdAt: ctx.now, updatedAt: ctx.now };
}
