import { BatonError } from '../domain/errors';
import type { LaunchCandidate, LaunchSnapshot } from '../domain/launch';
import type { RunSettings } from '../domain/runSettings';
import type { StoreReader } from '../store/port';
import { TASK_COLUMNS, toTask, type TaskRow } from '../store/rows';
import { readAdmissionShared } from './admission';
import { readQuotaHolds } from './quotaHolds';
import { spendSoFar } from './agentUsage';
import { readRunIsolation } from './worktrees';

export type { LaunchSnapshot };

/**
 * Reads the launch snapshot for these ready tasks: the run's frozen settings and isolation, the
 * open gates that hold starts, the admission facts, and per task its row, its approved
 * permission profiles and — with a budget — its spend. A handful of statements however many
 * candidates there are.
 */
export async function readLaunchSnapshot(
  r: Pick<StoreReader, 'get' | 'all'>,
  /** `holder`: the coordinator asking; the attempts another coordinator of the run drives take none of its slots. */
  input: { runId: string; now: number; taskIds: readonly string[]; holder?: string },
): Promise<LaunchSnapshot> {
  const { runId, taskIds } = input;
  const run = await r.get<{ config_json: string; plan_path: string }>(
    `SELECT config_json, plan_path FROM runs WHERE id = ?`,
    [runId],
  );
  if (!run) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  const settings = JSON.parse(run.config_json) as RunSettings;
  const inIds = taskIds.map(() => '?').join(', ');
  const rows =
    taskIds.length === 0
      ? []
      : await r.all<TaskRow & { not_before: number | null }>(
          `SELECT ${TASK_COLUMNS}, not_before FROM tasks WHERE run_id = ? AND id IN (${inIds}) AND status = 'ready'`,
          [runId, ...taskIds],
        );
  const tasks = new Map(rows.map((row) => [row.id, { task: toTask(row), notBefore: row.not_before }]));
  const gates = await r.all<{ id: string; kind: string; task_id: string | null; status: string; details_json: string }>(
    `SELECT id, kind, task_id, status, details_json FROM gates WHERE run_id = ? AND (
       (status = 'open' AND kind IN ('config_changed', 'isolation', 'budget'))
       OR (status = 'approved' AND kind = 'risk_approval' AND task_id IN (${inIds || 'NULL'})))
     ORDER BY ordinal`,
    [runId, ...taskIds],
  );
  const open = (kind: string) => gates.find((g) => g.status === 'open' && g.kind === kind)?.id;
  const budget = settings.budget;
  const hasBudget = Boolean(budget && (budget.run || budget.task || budget.agent));
  const candidates: LaunchCandidate[] = [];
  for (const taskId of taskIds) {
    const found = tasks.get(taskId);
    if (!found) continue;
    const { task, notBefore } = found;
    const approvedProfiles = gates
      .filter((g) => g.status === 'approved' && g.task_id === taskId)
      .map((g) => (JSON.parse(g.details_json) as { permissionProfile?: unknown }).permissionProfile)
      .filter((profile): profile is string => typeof profile === 'string');
    const spent = hasBudget ? await spendSoFar(r, runId, { taskId, agent: task.agent }) : undefined;
    candidates.push({ task, notBefore, approvedProfiles, ...(spent ? { spent } : {}) });
  }
  const isolation = await readRunIsolation(r, runId);
  const shared = await readAdmissionShared(r, {
    runId,
    withFiles: candidates.some((c) => c.task.files.length > 0),
    ...(input.holder !== undefined ? { holder: input.holder } : {}),
  });
  const configChanged = open('config_changed');
  const isolationGate = open('isolation');
  const quotaHolds = await readQuotaHolds(r, runId, input.now);
  return {
    now: input.now,
    settings,
    planPath: run.plan_path,
    ...(isolation ? { isolation } : {}),
    gates: {
      ...(configChanged ? { configChanged } : {}),
      ...(isolationGate ? { isolation: isolationGate } : {}),
      budget: gates
        .filter((g) => g.status === 'open' && g.kind === 'budget')
        .map((g) => ({ id: g.id, ...(g.task_id !== null ? { taskId: g.task_id } : {}) })),
    },
    ...shared,
    candidates,
    ...(quotaHolds.length > 0 ? { quotaHolds } : {}),
  };
}
