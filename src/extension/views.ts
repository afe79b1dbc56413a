import * as vscode from 'vscode';
import type { Delegation, Gate, Run, Task, WorkerRuntime } from '../engine/index';
import type { ModelChange, RunsModel } from './runsModel';

/** Tree nodes are plain data with stable ids; providers only map them to TreeItems. */
export type RunsNode =
  | { kind: 'run'; id: string; runId: string }
  | { kind: 'task'; id: string; runId: string; taskId: string }
  | { kind: 'delegation'; id: string; runId: string; delegationId: string };

const TASK_ICONS: Record<Task['status'], [string, string?]> = {
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

const RUN_ICONS: Record<Run['status'], [string, string?]> = {
  running: ['play-circle', 'charts.blue'],
  paused: ['debug-pause', 'charts.yellow'],
  stopping: ['loading~spin', 'charts.orange'],
  completed: ['pass-filled', 'testing.iconPassed'],
  failed: ['error', 'testing.iconFailed'],
  blocked: ['circle-slash', 'charts.orange'],
  superseded: ['history', 'disabledForeground'],
};

const DELEGATION_ICONS: Record<Delegation['status'], [string, string?]> = {
  PENDING: ['clock'],
  RUNNING: ['sync~spin', 'charts.blue'],
  COMPLETED: ['check', 'testing.iconPassed'],
  FAILED: ['x', 'testing.iconFailed'],
  BLOCKED: ['warning', 'charts.yellow'],
  CANCELLED: ['close', 'disabledForeground'],
  STALE: ['watch', 'charts.orange'],
};

function icon([id, color]: [string, string?]): vscode.ThemeIcon {
  return new vscode.ThemeIcon(id, color ? new vscode.ThemeColor(color) : undefined);
}

export function formatAge(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** Runs → tasks → delegations. Refreshes only the nodes the model says changed. */
export class RunsTreeProvider implements vscode.TreeDataProvider<RunsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<RunsNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly nodes = new Map<string, RunsNode>();
  private readonly subscription;

  constructor(private readonly model: RunsModel) {
    this.subscription = model.onDidChange((change) => this.onModelChange(change));
  }

  private node<T extends RunsNode>(node: T): T {
    const existing = this.nodes.get(node.id);
    if (existing) return existing as T;
    this.nodes.set(node.id, node);
    return node;
  }

  private onModelChange(change: ModelChange): void {
    if (change.structure) {
      this.changed.fire(undefined);
      return;
    }
    for (const runId of change.runs) this.changed.fire(this.nodes.get(`run:${runId}`));
    for (const key of change.tasks) {
      const [runId] = key.split('/');
      if (change.runs.has(runId!)) continue; // the run node refreshes its children anyway
      const node = this.nodes.get(`task:${key}`);
      if (node) this.changed.fire(node);
    }
  }

  /** Durations of running tasks tick: the view calls this once a second while it is visible. */
  tick(): void {
    for (const run of this.model.allRuns) {
      for (const task of this.model.overview(run.id)?.tasks ?? []) {
        if (task.status !== 'running' && task.status !== 'verifying') continue;
        const node = this.nodes.get(`task:${run.id}/${task.id}`);
        if (node) this.changed.fire(node);
      }
    }
  }

  getChildren(element?: RunsNode): RunsNode[] {
    if (!element)
      return this.model.allRuns.map((run) => this.node({ kind: 'run', id: `run:${run.id}`, runId: run.id }));
    const view = this.model.overview(element.runId);
    if (!view) return [];
    if (element.kind === 'run')
      return view.tasks.map((t) =>
        this.node({ kind: 'task', id: `task:${t.runId}/${t.id}`, runId: t.runId, taskId: t.id }),
      );
    if (element.kind === 'task') {
      return view.delegations
        .filter((d) => d.taskId === element.taskId)
        .map((d) =>
          this.node({ kind: 'delegation', id: `delegation:${d.runId}/${d.id}`, runId: d.runId, delegationId: d.id }),
        );
    }
    return [];
  }

  getParent(element: RunsNode): RunsNode | undefined {
    if (element.kind === 'run') return undefined;
    if (element.kind === 'task') return this.nodes.get(`run:${element.runId}`);
    const d = this.model.overview(element.runId)?.delegations.find((x) => x.id === element.delegationId);
    return d ? this.nodes.get(`task:${element.runId}/${d.taskId}`) : undefined;
  }

  getTreeItem(element: RunsNode): vscode.TreeItem {
    const view = this.model.overview(element.runId);
    if (element.kind === 'run') {
      const run = view?.run ?? this.model.allRuns.find((r) => r.id === element.runId)!;
      const done = view ? view.tasks.filter((t) => t.status === 'completed').length : 0;
      const item = new vscode.TreeItem(run.planPath, vscode.TreeItemCollapsibleState.Expanded);
      item.id = element.id;
      item.description = `${run.status} · ${done}/${view?.tasks.length ?? '?'} · ${run.id}`;
      item.iconPath = icon(RUN_ICONS[run.status]);
      item.tooltip = new vscode.MarkdownString(`**Run ${run.id}** — ${run.status}\n\nPlan: \`${run.planPath}\``);
      const canResume = run.status === 'paused' || run.status === 'running' || run.status === 'stopping';
      item.contextValue = `baton.run status=${run.status}${canResume ? ' canResume' : ''}${run.status === 'running' || run.status === 'stopping' ? ' canStop' : ''}`;
      return item;
    }
    if (element.kind === 'task') {
      const task = view?.tasks.find((t) => t.id === element.taskId);
      const attempts = view?.delegations.filter((d) => d.taskId === element.taskId) ?? [];
      const last = attempts[attempts.length - 1];
      const item = new vscode.TreeItem(
        `${element.taskId}  ${task?.title ?? ''}`,
        attempts.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
      );
      item.id = element.id;
      const duration = last?.startedAt ? formatAge((last.finishedAt ?? this.model.now()) - last.startedAt) : undefined;
      item.description = [
        task?.status,
        attempts.length ? `attempt ${attempts.length}` : undefined,
        last?.resultStatus,
        duration,
      ]
        .filter(Boolean)
        .join(' · ');
      item.iconPath = icon(TASK_ICONS[task?.status ?? 'pending']);
      item.tooltip = new vscode.MarkdownString(
        `**${element.taskId}** ${task?.title ?? ''}\n\n${task?.statusReason ? `_${task.statusReason}_\n\n` : ''}${task?.instructions.slice(0, 500) ?? ''}`,
      );
      item.contextValue = `baton.task status=${task?.status}${task?.status === 'ready' || task?.status === 'pending' ? ' canRun' : ''}`;
      return item;
    }
    const d = view?.delegations.find((x) => x.id === element.delegationId);
    const runtime = view?.runtimes.find((r) => r.delegationId === element.delegationId);
    const item = new vscode.TreeItem(element.delegationId, vscode.TreeItemCollapsibleState.None);
    item.id = element.id;
    // "result PASS" says nothing the result status does not.
    const reason = d?.reason && d.reason !== `result ${d.resultStatus}` ? d.reason : undefined;
    item.description = [d?.status, d?.resultStatus, reason].filter(Boolean).join(' · ');
    item.iconPath = icon(DELEGATION_ICONS[d?.status ?? 'PENDING']);
    item.tooltip = d?.reason ?? d?.status;
    // A string tooltip would be the row's accessible name: name the delegation and its state.
    item.accessibilityInformation = { label: `${element.delegationId} ${item.description ?? ''}`.trim() };
    item.contextValue = `baton.delegation status=${d?.status}${d?.artifactPath ? ' hasArtifact' : ''}${runtime ? ' hasLog' : ''}${d?.status === 'RUNNING' ? ' canStop' : ''}${d?.status === 'RUNNING' || d?.status === 'BLOCKED' ? ' canIngest' : ''}`;
    item.command = d?.artifactPath
      ? { command: 'baton.openArtifact', title: 'Open Artifact', arguments: [element] }
      : undefined;
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

export type WorkerNode = { kind: 'runtime'; id: string; runId: string; runtimeId: string };

/** Live worker runtimes with their heartbeat age ticking; stale ones stand out. */
export class WorkersTreeProvider implements vscode.TreeDataProvider<WorkerNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<WorkerNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription;
  private live: Array<WorkerRuntime & { taskId: string }> = [];

  constructor(private readonly model: RunsModel) {
    this.subscription = model.onDidChange((change) => {
      if (change.runtimes || change.structure) this.changed.fire(undefined);
    });
  }

  /** Ages tick: the view calls this once a second while it is visible. */
  tick(): void {
    if (this.live.length > 0) this.changed.fire(undefined);
  }

  getChildren(element?: WorkerNode): WorkerNode[] {
    if (element) return [];
    this.live = this.model.liveRuntimes();
    return this.live.map((r) => ({ kind: 'runtime', id: `runtime:${r.id}`, runId: r.runId, runtimeId: r.id }));
  }

  getTreeItem(element: WorkerNode): vscode.TreeItem {
    const r = this.live.find((x) => x.id === element.runtimeId);
    const now = this.model.now();
    const item = new vscode.TreeItem(
      `${r?.taskId ?? '?'}  ${r?.delegationId ?? element.runtimeId}`,
      vscode.TreeItemCollapsibleState.None,
    );
    item.id = element.id;
    if (!r) return item;
    const beat = r.lastHeartbeatAt ? `beat ${formatAge(now - r.lastHeartbeatAt)} ago` : 'no beat yet';
    const lease =
      r.leaseExpiresAt > now
        ? `lease ${formatAge(r.leaseExpiresAt - now)}`
        : `lease expired ${formatAge(now - r.leaseExpiresAt)} ago`;
    item.description = [r.status === 'stale' ? 'STALE' : undefined, beat, lease, r.progress]
      .filter(Boolean)
      .join(' · ');
    item.iconPath =
      r.status === 'stale'
        ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('errorForeground'))
        : new vscode.ThemeIcon('pulse', new vscode.ThemeColor('charts.green'));
    item.tooltip = new vscode.MarkdownString(
      `**${r.delegationId}** (runtime ${r.id})\n\n- status: ${r.status}\n- ${beat}\n- ${lease}\n- heartbeats: ${r.heartbeatCount}${r.holder ? `\n- holder: ${r.holder}` : ''}${r.progress ? `\n\n> ${r.progress}` : ''}`,
    );
    item.contextValue = `baton.runtime status=${r.status}`;
    return item;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

export type GateNode = { kind: 'gate'; id: string; runId: string; gateId: string };

/** Open decisions with inline Approve / Reject; the count is the view's badge. */
export class GatesTreeProvider implements vscode.TreeDataProvider<GateNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<GateNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription;
  private gates: Gate[] = [];

  constructor(private readonly model: RunsModel) {
    this.subscription = model.onDidChange((change) => {
      if (change.gates || change.structure) this.changed.fire(undefined);
    });
  }

  getChildren(element?: GateNode): GateNode[] {
    if (element) return [];
    this.gates = this.model.openGates();
    return this.gates.map((g) => ({ kind: 'gate', id: `gate:${g.id}`, runId: g.runId, gateId: g.id }));
  }

  getTreeItem(element: GateNode): vscode.TreeItem {
    const g = this.gates.find((x) => x.id === element.gateId);
    const item = new vscode.TreeItem(
      `${element.gateId}  ${g?.kind.replace('_', ' ') ?? ''}${g?.taskId ? ` · ${g.taskId}` : ''}`,
      vscode.TreeItemCollapsibleState.None,
    );
    item.id = element.id;
    item.description = g?.reason;
    const risk = Array.isArray(g?.details.risk) ? (g!.details.risk as string[]) : [];
    item.tooltip = new vscode.MarkdownString(
      `**${element.gateId}** — ${g?.kind}\n\n${g?.reason ?? ''}${risk.length ? `\n\nRisk: ${risk.map((r) => `\`${r}\``).join(', ')}` : ''}`,
    );
    item.iconPath = new vscode.ThemeIcon(
      g?.kind === 'risk_approval' ? 'shield' : g?.kind === 'manual_handoff' ? 'person' : 'warning',
      new vscode.ThemeColor('charts.yellow'),
    );
    item.contextValue = `baton.gate kind=${g?.kind}`;
    return item;
  }

  get count(): number {
    return this.model.openGates().length;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
