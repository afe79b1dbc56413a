import type { Delegation, Run, Task } from '../engine/index';
import { describeLiveness } from '../protocol/liveness';
import { taskDuration } from '../protocol/time';
import type { RunStateCache } from './runState';

/**
 * What each row of the Runs, Workers and Gates views and the status bar say, mapped from the
 * run-state cache as plain data (no vscode: the unit tests compare it with the dashboard's
 * mapping). views.ts only turns a row into a TreeItem. Times are shown as of the cache's
 * shared `now`, formatted as the dashboard formats them (src/protocol/time.ts).
 */

/** A codicon id and an optional theme colour id. */
export type Icon = readonly [id: string, color?: string];

export interface Row {
  label: string;
  description?: string;
  /** Markdown, or plain text when `plainTooltip`. */
  tooltip?: string;
  plainTooltip?: boolean;
  icon?: Icon;
  contextValue: string;
  collapsible: 'none' | 'collapsed' | 'expanded';
  accessibilityLabel?: string;
  command?: { command: string; title: string };
}

const TASK_ICONS: Record<Task['status'], Icon> = {
  pending: ['circle-outline'],
  ready: ['circle-large-outline', 'charts.blue'],
  gated: ['shield', 'charts.yellow'],
  running: ['sync~spin', 'charts.blue'],
  verifying: ['beaker', 'charts.blue'],
  completed: ['pass', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  blocked: ['circle-slash', 'charts.orange'],
  skipped: ['debug-step-over'],
  cancelled: ['close', 'disabledForeground'],
};

const RUN_ICONS: Record<Run['status'], Icon> = {
  running: ['play-circle', 'charts.blue'],
  paused: ['debug-pause', 'charts.yellow'],
  stopping: ['loading~spin', 'charts.orange'],
  completed: ['pass-filled', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  blocked: ['circle-slash', 'charts.orange'],
  superseded: ['history', 'disabledForeground'],
};

const DELEGATION_ICONS: Record<Delegation['status'], Icon> = {
  PENDING: ['clock'],
  RUNNING: ['sync~spin', 'charts.blue'],
  COMPLETED: ['check', 'testing.iconPassed'],
  FAILED: ['x', 'testing.iconFailed'],
  BLOCKED: ['warning', 'charts.yellow'],
  CANCELLED: ['close', 'disabledForeground'],
  STALE: ['watch', 'charts.orange'],
};

/** Tasks whose row shows a duration that counts up with the clock. */
export function countsUp(task: Task): boolean {
  return task.status === 'running' || task.status === 'verifying';
}

export function runRow(cache: RunStateCache, runId: string): Row {
  const view = cache.overview(runId);
  const run = view?.run ?? cache.runs.find((r) => r.id === runId);
  if (!run) return { label: runId, contextValue: 'baton.run', collapsible: 'expanded' };
  const done = view ? view.tasks.filter((t) => t.status === 'completed').length : 0;
  const canResume = run.status === 'paused' || run.status === 'running' || run.status === 'stopping';
  const canStop = run.status === 'running' || run.status === 'stopping';
  return {
    label: run.planPath,
    description: `${run.status} · ${done}/${view?.tasks.length ?? '?'} · ${run.id}`,
    icon: RUN_ICONS[run.status],
    tooltip: `**Run ${run.id}** — ${run.status}\n\nPlan: \`${run.planPath}\``,
    contextValue: `baton.run status=${run.status}${canResume ? ' canResume' : ''}${canStop ? ' canStop' : ''}`,
    collapsible: 'expanded',
  };
}

/** A task's row; `duration` is its latest attempt's, as of the shared clock (what the dashboard shows). */
export function taskRow(cache: RunStateCache, runId: string, taskId: string): Row & { duration?: string } {
  const task = cache.overview(runId)?.tasks.find((t) => t.id === taskId);
  const attempts = cache.attempts(runId, taskId);
  const last = attempts.at(-1);
  const duration = last ? taskDuration(last, cache.now) || undefined : undefined;
  return {
    label: `${taskId}  ${task?.title ?? ''}`,
    description: [
      task?.status,
      attempts.length ? `attempt ${attempts.length}` : undefined,
      last?.resultStatus,
      duration,
    ]
      .filter(Boolean)
      .join(' · '),
    ...(duration ? { duration } : {}),
    icon: TASK_ICONS[task?.status ?? 'pending'],
    tooltip: `**${taskId}** ${task?.title ?? ''}\n\n${task?.statusReason ? `_${task.statusReason}_\n\n` : ''}${task?.instructions.slice(0, 500) ?? ''}`,
    contextValue: `baton.task status=${task?.status}${task?.status === 'ready' || task?.status === 'pending' ? ' canRun' : ''}${attempts.some((a) => a.startedAt !== undefined) ? ' hasAttempts' : ''}`,
    collapsible: attempts.length ? 'collapsed' : 'none',
  };
}

export function delegationRow(cache: RunStateCache, runId: string, delegationId: string): Row {
  const view = cache.overview(runId);
  const d = view?.delegations.find((x) => x.id === delegationId);
  const runtime = view?.runtimes.find((r) => r.delegationId === delegationId);
  // "result PASS" says nothing the result status does not.
  const reason = d?.reason && d.reason !== `result ${d.resultStatus}` ? d.reason : undefined;
  const description = [d?.status, d?.resultStatus, reason].filter(Boolean).join(' · ');
  const tooltip = d?.reason ?? d?.status;
  return {
    label: delegationId,
    description,
    icon: DELEGATION_ICONS[d?.status ?? 'PENDING'],
    ...(tooltip ? { tooltip, plainTooltip: true } : {}),
    // A string tooltip would be the row's accessible name: name the delegation and its state.
    accessibilityLabel: `${delegationId} ${description}`.trim(),
    contextValue: `baton.delegation status=${d?.status}${d?.startedAt !== undefined ? ' started' : ''}${d?.artifactPath ? ' hasArtifact' : ''}${runtime ? ' hasLog' : ''}${d?.status === 'RUNNING' ? ' canStop' : ''}${d?.status === 'RUNNING' || d?.status === 'BLOCKED' ? ' canIngest' : ''}`,
    collapsible: 'none',
    ...(d?.artifactPath ? { command: { command: 'baton.openArtifact', title: 'Open Artifact' } } : {}),
  };
}

export interface WorkerRow {
  id: string;
  runId: string;
  runtimeId: string;
  row: Row;
}

/**
 * Live runtimes: heartbeat age and lease as of the shared clock. A lease that ran out by that
 * clock is stale before any read says so — the rule the dashboard's Workers list applies.
 */
export function workerRows(cache: RunStateCache): WorkerRow[] {
  return cache.liveRuntimes().map((r) => workerRowOf(r, cache.now));
}

/** One live runtime's row (undefined when it is not live any more). */
export function workerRow(cache: RunStateCache, runId: string, runtimeId: string): WorkerRow | undefined {
  const r = cache.liveRuntime(runId, runtimeId);
  return r ? workerRowOf(r, cache.now) : undefined;
}

function workerRowOf(r: ReturnType<RunStateCache['liveRuntimes']>[number], now: number): WorkerRow {
  const live = describeLiveness(r, now);
  const stale = live.state === 'stale';
  return {
    id: `runtime:${r.id}`,
    runId: r.runId,
    runtimeId: r.id,
    row: {
      label: `${r.taskId}  ${r.delegationId}`,
      description: [live.summary, live.lease, r.progress].filter(Boolean).join(' · '),
      icon: stale ? ['warning', 'errorForeground'] : ['pulse', 'charts.green'],
      tooltip: `**${r.delegationId}** (runtime ${r.id})\n\n- ${live.state}: ${live.explanation}\n- ${live.lease}\n- heartbeats: ${r.heartbeatCount}${r.holder ? `\n- holder: ${r.holder}` : ''}${r.progress ? `\n\n> ${r.progress}` : ''}`,
      contextValue: `baton.runtime status=${live.state}`,
      collapsible: 'none',
    },
  };
}

export interface GateRow {
  id: string;
  runId: string;
  gateId: string;
  row: Row;
}

export function gateRows(cache: RunStateCache): GateRow[] {
  return cache.openGates().map((g) => {
    const risk = Array.isArray(g.details.risk) ? g.details.risk.filter((x): x is string => typeof x === 'string') : [];
    return {
      id: `gate:${g.id}`,
      runId: g.runId,
      gateId: g.id,
      row: {
        label: `${g.id}  ${g.kind.replace('_', ' ')}${g.taskId ? ` · ${g.taskId}` : ''}`,
        description: g.reason,
        tooltip: `**${g.id}** — ${g.kind}\n\n${g.reason}${risk.length ? `\n\nRisk: ${risk.map((r) => `\`${r}\``).join(', ')}` : ''}`,
        icon: [
          g.kind === 'risk_approval' ? 'shield' : g.kind === 'manual_handoff' ? 'person' : 'warning',
          'charts.yellow',
        ],
        contextValue: `baton.gate kind=${g.kind}`,
        collapsible: 'none',
      },
    };
  });
}

/** What the status bar counts. */
export function statusCounts(cache: RunStateCache): { running: number; gates: number } {
  return { running: cache.liveRuntimes().length, gates: cache.openGates().length };
}
