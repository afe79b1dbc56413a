import { hostname } from 'node:os';
import {
  counted,
  FOLLOW_UP_TASK_STATUSES,
  isFinishedRun,
  totalUsage,
  isCoordinatorLive,
  isWaitingForLimit,
  attemptSpan,
  taskRunTime,
  thisHost,
  type CoordinatorState,
  type Delegation,
  type Run,
  type RunOverview,
  type Task,
} from '../../engine/index';
import { describeLiveness } from '../../protocol/liveness';
import { formatSpend, type SpendFigures } from '../../protocol/spend';
import { formatDuration, runTimeText, shownRunTime, type ShownRunTime } from '../../protocol/time';
import { latestStartedAttempt } from './attempts';
import { isLiveRuntime, type RunStateCache } from './runState';

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
  cancelled: ['circle-large-filled', 'disabledForeground'],
  superseded: ['history', 'disabledForeground'],
};

/** A run that is not ended shows what it does (its status alone would say "running" with nothing driving it). */
const ACTIVITY_ICONS: Partial<Record<RunActivityKind, Icon>> = {
  running: ['play-circle', 'charts.blue'],
  stopping: ['loading~spin', 'charts.orange'],
  'waiting-decision': ['shield', 'charts.yellow'],
  stopped: ['debug-pause', 'charts.yellow'],
  'waiting-coordinator': ['debug-disconnect', 'charts.orange'],
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

/**
 * A task's run time as every surface shows it — the Runs view's row and the dashboard's queue
 * (dashboardFeed.ts) — as of the shared clock: the engine's `taskRunTime`, so a wait at a gate
 * or in the queue counts nowhere.
 */
export function taskRunTimeShown(cache: RunStateCache, runId: string, taskId: string): ShownRunTime {
  return shownRunTime(taskRunTime(cache.attempts(runId, taskId), cache.attemptEnds(runId), cache.now), cache.now);
}

/** Tasks whose row shows a duration that counts up with the clock: an attempt of theirs runs. */
export function tasksCountingUp(cache: RunStateCache, runId: string): Set<string> {
  const ends = cache.attemptEnds(runId);
  const out = new Set<string>();
  for (const d of cache.overview(runId)?.delegations ?? [])
    if (d.status === 'RUNNING' && attemptSpan(d, ends.get(d.id))?.to === undefined) out.add(d.taskId);
  return out;
}

/**
 * What the agents of a run spent — all of it, one task's attempts, or one attempt — from the
 * usage rows the run-state cache holds (read with the run, moved on by each agent heartbeat).
 * Every surface (the Runs and Workers views, the dashboard) takes its figure from here and
 * writes it with `formatSpend`, so they show the same figure. Undefined where no agent ran.
 */
export function spendOf(
  view: RunOverview | undefined,
  scope: { taskId?: string; delegationId?: string } = {},
): SpendFigures | undefined {
  const rows = (view?.usage ?? []).filter(
    (u) =>
      (scope.taskId === undefined || u.taskId === scope.taskId) &&
      (scope.delegationId === undefined || u.delegationId === scope.delegationId),
  );
  if (rows.length === 0) return undefined;
  const { tokens, costUsd } = totalUsage(rows).run;
  return { tokens, ...(costUsd !== undefined ? { costUsd } : {}) };
}

/** `formatSpend` of `spendOf`, or undefined where no agent ran. */
function spentText(view: RunOverview | undefined, scope: { taskId?: string; delegationId?: string } = {}) {
  const spend = spendOf(view, scope);
  return spend ? formatSpend(spend) : undefined;
}

/**
 * What a run is doing, as every surface shows it (the Runs view, the status bar, the dashboard
 * header). The invariant (docs/extension.md, "Run states"): a run shows *running* (or
 * *stopping*) only while a live coordinator holds its lease; otherwise it says what it waits
 * for — a decision at its gates, a coordinator (nothing drives it: Resume), a Resume after a
 * stop — or that it ended.
 */
export type RunActivityKind = 'running' | 'stopping' | 'waiting-decision' | 'stopped' | 'waiting-coordinator' | 'ended';

export interface RunActivity {
  kind: RunActivityKind;
  /** The words shown: "running", "waiting for a decision (2 gates)", "waiting for a coordinator", "completed", … */
  label: string;
  /** Why, and what moves it on (a tooltip, the dashboard header). */
  detail: string;
  /** What moves it on, when a person must: Resume (drive it from this window) or a decision at its gates. */
  action?: 'resume' | 'decide';
  /** Its open gates. */
  gates: number;
}

/** Why a finished run (FINISHED_RUN_STATUSES) ended. */
const ENDED_DETAIL: Partial<Record<Run['status'], string>> = {
  completed: 'Every task completed.',
  failed: 'It ended: a task failed.',
  blocked: 'It ended: the tasks left are blocked by ones that did not complete.',
  cancelled: 'It was cancelled: its workers were ended, its gates closed and its unfinished tasks cancelled.',
  superseded: 'It was replanned: the newer run carries its finished work.',
};

/**
 * The one derivation of a run's shown state, as of `now` (the cache's shared clock): the same
 * facts give every surface the same words. A lease that runs out flips it without any store
 * change (the run-state cache reads the run again at the expiry).
 */
export function runActivity(run: Run, view: RunOverview | undefined, now: number): RunActivity {
  const gates = view?.gates.filter((g) => g.status === 'open').length ?? 0;
  const gatesText = `${gates} gate${gates === 1 ? '' : 's'}`;
  // Every finished status ends here: one left out would read "waiting for a coordinator" (with Resume) on a run
  // nothing can start again — a cancelled run did, until cancelled was added.
  if (isFinishedRun(run.status))
    return { kind: 'ended', label: run.status, detail: ENDED_DETAIL[run.status] ?? `It ended: ${run.status}.`, gates };
  const lease = view?.coordinatorLease;
  const live = isCoordinatorLive(lease, now);
  if (live && lease && (run.status === 'running' || run.status === 'stopping')) {
    const by = holderHere(lease) ? 'this window' : lease.holder;
    return run.status === 'running'
      ? { kind: 'running', label: 'running', detail: `Driven by ${by}.`, gates }
      : { kind: 'stopping', label: 'stopping', detail: `${by} applies the ${run.stopMode ?? ''} stop.`, gates };
  }
  if (run.status === 'paused' && run.stopMode)
    return {
      kind: 'stopped',
      label: 'stopped',
      detail: `Stopped (${run.stopMode}); nothing new starts. Resume continues it from this window.`,
      action: 'resume',
      gates,
    };
  if (run.status === 'paused' && gates > 0)
    return {
      kind: 'waiting-decision',
      label: `waiting for a decision (${gatesText})`,
      detail: `Nothing can run until ${gates === 1 ? 'its gate is' : 'its gates are'} decided (the Gates view). A decision taken here drives the run on from this window.`,
      action: 'decide',
      gates,
    };
  const stop = run.stopMode ? `A ${run.stopMode} stop is in force and no coordinator applies it. ` : '';
  return {
    kind: 'waiting-coordinator',
    label: 'waiting for a coordinator',
    detail: `${stop}${nobodyDrives(lease, now)} Resume continues it from this window.`,
    action: 'resume',
    gates,
  };
}

/** Why no coordinator drives a run that has work to do. */
function nobodyDrives(lease: CoordinatorState | undefined, now: number): string {
  if (!lease) return 'Nothing drives it: no coordinator has taken it yet.';
  if (lease.handedOver)
    return `Its window closed with ${counted(lease.handedOver.workers, 'worker')} left running, for the next window to adopt.`;
  if (lease.releasedAt !== undefined) return `Nothing drives it: its coordinator (${lease.holder}) let go.`;
  if (lease.holderProcess === 'gone') return `Nothing drives it: its coordinator (${lease.holder}) is gone.`;
  if (lease.holderProcess === 'stopped')
    return `Nothing drives it: its coordinator (${lease.holder}) is stopped (Ctrl-Z or a debugger); Resume takes over once its lease runs out.`;
  return `Nothing drives it: the lease of its coordinator (${lease.holder}) ran out ${formatDuration(now - lease.expiresAt)} ago.`;
}

/** Held by this process (this window's extension host)? */
function holderHere(lease: CoordinatorState): boolean {
  return lease.identity.pid === process.pid && lease.identity.host === hostname();
}

export function runRow(cache: RunStateCache, runId: string): Row {
  const view = cache.overview(runId);
  const run = view?.run ?? cache.runs.find((r) => r.id === runId);
  if (!run) return { label: runId, contextValue: 'baton.run', collapsible: 'expanded' };
  const activity = runActivity(run, view, cache.now);
  const done = view ? view.tasks.filter((t) => t.status === 'completed').length : 0;
  const spent = spentText(view);
  const finished = isFinishedRun(run.status);
  // Resume only where the state allows it and nothing drives the run now (runActivity).
  const actions = runActions(run.status).filter((a) => a !== 'canResume' || activity.action === 'resume');
  return {
    label: run.planPath,
    description: `${activity.label} · ${done}/${view?.tasks.length ?? '?'} · ${run.id}`,
    icon: ACTIVITY_ICONS[activity.kind] ?? RUN_ICONS[run.status],
    tooltip: `**Run ${run.id}** — ${activity.label}\n\n${activity.detail}\n\nPlan: \`${run.planPath}\`${spent ? `\n\nSpent: ${spent}` : ''}`,
    contextValue: `baton.run status=${run.status} activity=${activity.kind}${actions.map((a) => ` ${a}`).join('')}`,
    // A finished run is history: its tasks are there when asked for, not in the way.
    collapsible: finished ? 'collapsed' : 'expanded',
  };
}

/**
 * What can be done with a run in this state: the flags of its row's contextValue, which the
 * menus' when-clauses test (package.json). Nothing that would start, stop or cancel work is
 * offered on a finished run; a finished run can be removed from the view.
 */
export function runActions(status: Run['status']): string[] {
  if (isFinishedRun(status))
    return ['finished', 'canRemove', ...(status === 'superseded' || status === 'cancelled' ? [] : ['canReplan'])];
  return ['canResume', ...(status === 'running' || status === 'stopping' ? ['canStop'] : []), 'canCancel', 'canReplan'];
}

/**
 * The runs of the Runs view: those still going on, and the finished ones (under History),
 * newest first; the ones removed from the view are left out.
 */
export function runsByPlace(
  cache: Pick<RunStateCache, 'runs'>,
  hidden: (runId: string) => boolean,
): { current: Run[]; history: Run[] } {
  const current: Run[] = [];
  const history: Run[] = [];
  for (const run of cache.runs) {
    if (!isFinishedRun(run.status)) current.push(run);
    else if (!hidden(run.id)) history.push(run);
  }
  return { current, history };
}

/** The History node: finished runs, collapsed. */
export function historyRow(count: number): Row {
  return {
    label: 'History',
    description: `${count} finished run${count === 1 ? '' : 's'}`,
    icon: ['history'],
    tooltip:
      'Runs that completed, failed, ended blocked, were cancelled or replanned. Remove one from the view with its context menu; *Show Removed Runs* brings them back.',
    // Not a plain tooltip: VS Code would read a plain one as the row's accessible name, not "History 2 finished runs".
    contextValue: 'baton.history',
    collapsible: 'collapsed',
  };
}

/**
 * Whether an attempt has a worktree a person can open (docs/isolation.md): recorded and not removed. The rows of its
 * task (its latest started attempt), its delegation and its worker carry `hasWorktree` for the menus' when-clauses
 * (Open Worktree in New Window / in Terminal); one removed from disk since is said when the command runs.
 */
export function hasOpenWorktree(view: RunOverview | undefined, delegationId: string | undefined): boolean {
  return (
    delegationId !== undefined &&
    (view?.worktrees ?? []).some((w) => w.delegationId === delegationId && w.removedAt === undefined)
  );
}

/** A task's row; `duration` is its run time, as of the shared clock (what the dashboard shows). */
export function taskRow(cache: RunStateCache, runId: string, taskId: string): Row & { duration?: string } {
  const task = cache.overview(runId)?.tasks.find((t) => t.id === taskId);
  const attempts = cache.attempts(runId, taskId);
  const last = attempts.at(-1);
  const duration = runTimeText(taskRunTimeShown(cache, runId, taskId), cache.now) || undefined;
  // All of its attempts: what the task cost so far.
  const spent = spentText(cache.overview(runId), { taskId });
  return {
    label: `${taskId}  ${task?.title ?? ''}`,
    description: [
      task?.status,
      // A task held by its worker's usage limit says until when (docs/agents.md, "Usage limits park").
      isWaitingForLimit(task?.statusReason) ? task?.statusReason : undefined,
      attempts.length ? `attempt ${attempts.length}` : undefined,
      last?.resultStatus,
      duration,
      spent,
    ]
      .filter(Boolean)
      .join(' · '),
    ...(duration ? { duration } : {}),
    icon: TASK_ICONS[task?.status ?? 'pending'],
    tooltip: `**${taskId}** ${task?.title ?? ''}\n\n${task?.statusReason ? `_${task.statusReason}_\n\n` : ''}${task?.instructions.slice(0, 500) ?? ''}`,
    contextValue: `baton.task status=${task?.status}${task?.status === 'ready' || task?.status === 'pending' ? ' canRun' : ''}${attempts.some((a) => a.startedAt !== undefined) ? ' hasAttempts' : ''}${task && FOLLOW_UP_TASK_STATUSES.includes(task.status) ? ' canMessage' : ''}${worktreeFlag(cache.overview(runId), taskId)}`,
    collapsible: attempts.length ? 'collapsed' : 'none',
  };
}

/** ` hasWorktree` when the task's latest started attempt (what its Open Worktree opens) has one. */
function worktreeFlag(view: RunOverview | undefined, taskId: string): string {
  return view && hasOpenWorktree(view, latestStartedAttempt(view, taskId)?.id) ? ' hasWorktree' : '';
}

export function delegationRow(cache: RunStateCache, runId: string, delegationId: string): Row {
  const view = cache.overview(runId);
  const d = view?.delegations.find((x) => x.id === delegationId);
  const runtime = view?.runtimes.find((r) => r.delegationId === delegationId);
  // "result PASS" says nothing the result status does not; of "result FAIL: <summary>", the summary is the news.
  const reason =
    d?.reason && d.reason !== `result ${d.resultStatus}` ? d.reason.replace(/^result FAIL: /, '') : undefined;
  const description = [d?.status, d?.resultStatus, reason, spentText(view, { delegationId })]
    .filter(Boolean)
    .join(' · ');
  const tooltip = d?.reason ?? d?.status;
  return {
    label: delegationId,
    description,
    icon: DELEGATION_ICONS[d?.status ?? 'PENDING'],
    ...(tooltip ? { tooltip, plainTooltip: true } : {}),
    // A string tooltip would be the row's accessible name: name the delegation and its state.
    accessibilityLabel: `${delegationId} ${description}`.trim(),
    contextValue: `baton.delegation status=${d?.status}${d?.startedAt !== undefined ? ' started' : ''}${d?.artifactPath ? ' hasArtifact' : ''}${runtime ? ' hasLog' : ''}${d?.status === 'RUNNING' ? ' canStop' : ''}${d?.status === 'RUNNING' || d?.status === 'BLOCKED' ? ' canIngest' : ''}${hasOpenWorktree(view, delegationId) ? ' hasWorktree' : ''}`,
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
  return cache.liveRuntimes().map((r) => workerRowOf(cache, r));
}

/** One live runtime's row (undefined when it is not live any more). */
export function workerRow(cache: RunStateCache, runId: string, runtimeId: string): WorkerRow | undefined {
  const r = cache.liveRuntime(runId, runtimeId);
  return r ? workerRowOf(cache, r) : undefined;
}

function workerRowOf(cache: RunStateCache, r: ReturnType<RunStateCache['liveRuntimes']>[number]): WorkerRow {
  const live = describeLiveness(r, cache.now);
  const stale = live.state === 'stale';
  // An agent's attempt: what it spent so far (moved on by its heartbeats).
  const spent = spentText(cache.overview(r.runId), { delegationId: r.delegationId });
  // A worker another machine runs (a team's store: its coordinator drives the run there, or joined it from there).
  const elsewhere = r.host && r.host !== thisHost() ? `on ${r.host}` : undefined;
  return {
    id: `runtime:${r.id}`,
    runId: r.runId,
    runtimeId: r.id,
    row: {
      label: `${r.taskId}  ${r.delegationId}`,
      description: [live.summary, elsewhere, live.lease, r.progress, spent].filter(Boolean).join(' · '),
      icon: stale ? ['warning', 'errorForeground'] : ['pulse', 'charts.green'],
      tooltip: `**${r.delegationId}** (runtime ${r.id})\n\n- ${live.state}: ${live.explanation}\n- ${live.lease}\n- heartbeats: ${r.heartbeatCount}${r.holder ? `\n- holder: ${r.holder}` : ''}${spent ? `\n- spent: ${spent}` : ''}${r.progress ? `\n\n> ${r.progress}` : ''}`,
      contextValue: `baton.runtime status=${live.state}${hasOpenWorktree(cache.overview(r.runId), r.delegationId) ? ' hasWorktree' : ''}`,
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
          g.kind === 'risk_approval'
            ? 'shield'
            : g.kind === 'manual_handoff'
              ? 'person'
              : g.kind === 'config_changed'
                ? 'settings-gear'
                : g.kind === 'question'
                  ? 'question'
                  : 'warning',
          'charts.yellow',
        ],
        contextValue: `baton.gate kind=${g.kind}`,
        collapsible: 'none',
      },
    };
  });
}

/**
 * What the status bar counts, from the runs' shown states: workers running under a live
 * coordinator (a worker whose lease ran out, or of a run nothing drives, is not running),
 * open gates, and runs waiting for a coordinator.
 */
export function statusCounts(cache: RunStateCache): { running: number; gates: number; undriven: number } {
  let running = 0;
  let undriven = 0;
  for (const run of cache.runs) {
    const view = cache.overview(run.id);
    const activity = runActivity(run, view, cache.now);
    if (activity.kind === 'waiting-coordinator') undriven++;
    if (activity.kind !== 'running' && activity.kind !== 'stopping') continue;
    running += view?.runtimes.filter((r) => isLiveRuntime(r) && r.leaseExpiresAt > cache.now).length ?? 0;
  }
  return { running, gates: cache.openGates().length, undriven };
}

/** What waits on a person, as the status bar says it (model/attention.ts: `waitingText` of its items). */
export interface StatusWaiting {
  count: number;
  /** "2 gates waiting, 1 run stopped" */
  text: string;
}

/**
 * The status bar item: its text (with a codicon), tooltip line and whether it warns. `waiting`: what the attention
 * model counts (gates, questions, stopped runs, usage-limit holds); without it, the open gates.
 */
export function statusSummary(
  cache: RunStateCache,
  drivenHere: readonly string[],
  waiting?: StatusWaiting,
): { text: string; tooltip: string; warning: boolean } {
  const { running, gates, undriven } = statusCounts(cache);
  const wait = waiting ?? { count: gates, text: `${counted(gates, 'gate')} waiting` };
  const undrivenText = `${counted(undriven, 'run')} waiting for a coordinator`;
  const parts = [wait.count ? wait.text : '', undriven ? undrivenText : ''].filter(Boolean);
  const text =
    running > 0
      ? `$(sync~spin) Baton: ${running} running${wait.count ? `, ${wait.count} waiting` : ''}${undriven ? `, ${undriven} not driven` : ''}`
      : wait.count > 0
        ? `${waiting ? '$(bell-dot)' : '$(shield)'} Baton: ${parts.join(', ')}`
        : undriven > 0
          ? `$(debug-disconnect) Baton: ${undrivenText}`
          : '$(check) Baton: idle';
  const workers = `Baton — ${counted(running, 'worker')} running`;
  const waits = waiting ? (waiting.count ? `, ${waiting.text}` : ', nothing waits for you') : `, ${wait.text}`;
  const tooltip = `${workers}${waits}${undriven ? `, ${undrivenText} (Resume in the Runs view)` : ''}${drivenHere.length ? `; this window drives ${drivenHere.join(', ')}` : ''}`;
  return { text, tooltip, warning: running === 0 && (wait.count > 0 || undriven > 0) };
}
