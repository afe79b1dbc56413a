import { BatonError } from '../../domain/errors';
import type { RunSettings } from '../../domain/runSettings';
import type { OperationContext } from '../../domain/runSettings';
import type { PlanTask } from '../../domain/types';
import { activeRunOf } from '../../queries/runView';
import type { StoreTx } from '../../store/port';
import { createRun, planDigest } from './createRun';

export interface PlanSnapshot {
  path: string;
  text: string;
  tasks: PlanTask[];
}

/**
 * The plan's active run (started from the same plan text), or a new one — in one
 * transaction, so two processes never start two runs of one plan. A plan that changed since
 * its active run started is refused: that run is resumed, replanned, or a new one started on
 * purpose (`fresh`).
 */
export async function openRunForPlan(
  tx: StoreTx,
  input: { plan: PlanSnapshot; settings: RunSettings; fresh?: boolean; whatNext: string },
  ctx: OperationContext,
): Promise<{ runId: string; created: boolean }> {
  const { plan } = input;
  const active = input.fresh ? undefined : await activeRunOf(tx, plan.path);
  if (active && active.plan_digest !== planDigest(plan.text)) {
    throw new BatonError(
      'run.plan-changed',
      `${plan.path} changed since run ${active.id} started from it; ${input.whatNext}.`,
    );
  }
  if (active) return { runId: active.id, created: false };
  const run = await createRun(
    tx,
    { planPath: plan.path, planText: plan.text, tasks: plan.tasks, settings: input.settings },
    ctx,
  );
  return { runId: run.id, created: true };
}
