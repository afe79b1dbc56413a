import * as vscode from 'vscode';
import { isFinishedRun, type Run } from '../engine/index';
import type { RunStateCache, RunStateChange } from './model/runState';
import type { HiddenRuns } from './hiddenRuns';
import {
  tasksCountingUp,
  delegationRow,
  gateRows,
  historyRow,
  runRow,
  runsByPlace,
  taskRow,
  workerRow,
  type Row,
} from './model/viewRows';

/** Tree nodes are plain data with stable ids; providers only map them to TreeItems (rows: viewRows.ts). */
export type RunsNode =
  | { kind: 'history'; id: 'history' }
  | { kind: 'run'; id: string; runId: string }
  | { kind: 'task'; id: string; runId: string; taskId: string }
  | { kind: 'delegation'; id: string; runId: string; delegationId: string };

const COLLAPSIBLE: Record<Row['collapsible'], vscode.TreeItemCollapsibleState> = {
  none: vscode.TreeItemCollapsibleState.None,
  collapsed: vscode.TreeItemCollapsibleState.Collapsed,
  expanded: vscode.TreeItemCollapsibleState.Expanded,
};

function treeItem(id: string, row: Row, commandArgument?: unknown): vscode.TreeItem {
  const item = new vscode.TreeItem(row.label, COLLAPSIBLE[row.collapsible]);
  item.id = id;
  if (row.description !== undefined) item.description = row.description;
  if (row.icon) {
    const [icon, color] = row.icon;
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
  }
  if (row.tooltip !== undefined) item.tooltip = row.plainTooltip ? row.tooltip : new vscode.MarkdownString(row.tooltip);
  if (row.accessibilityLabel) item.accessibilityInformation = { label: row.accessibilityLabel };
  item.contextValue = row.contextValue;
  if (row.command)
    item.command = { ...row.command, ...(commandArgument !== undefined ? { arguments: [commandArgument] } : {}) };
  return item;
}

/**
 * Runs → tasks → delegations; finished runs under a collapsed History node, those the person
 * removed left out. Refreshes only the nodes the cache says changed — in one event per
 * publication, since VS Code holds back a change that follows another within 200 ms — and the
 * running tasks, whose durations count up with every publication's clock. A run that moves
 * to History (it finished) changes the tree's structure: the root is refreshed.
 */
export class RunsTreeProvider implements vscode.TreeDataProvider<RunsNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<RunsNode | RunsNode[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly nodes = new Map<string, RunsNode>();
  private readonly subscriptions: vscode.Disposable[];
  private readonly history: RunsNode = { kind: 'history', id: 'history' };
  /** Where each run was last listed: true under History. */
  private readonly placed = new Map<string, boolean>();

  constructor(
    private readonly cache: RunStateCache,
    private readonly hidden?: Pick<HiddenRuns, 'has' | 'onDidChange'>,
  ) {
    this.subscriptions = [
      cache.onDidChange((change) => this.onCacheChange(change)),
      ...(hidden ? [hidden.onDidChange(() => this.changed.fire(undefined))] : []),
    ];
  }

  private places(): { current: Run[]; history: Run[] } {
    return runsByPlace(this.cache, (runId) => this.hidden?.has(runId) ?? false);
  }

  private node<T extends RunsNode>(node: T): T {
    const existing = this.nodes.get(node.id);
    if (existing) return existing as T;
    this.nodes.set(node.id, node);
    return node;
  }

  private onCacheChange(change: RunStateChange): void {
    const moved = [...change.runs].some((runId) => {
      const run = this.cache.runs.find((r) => r.id === runId);
      return run !== undefined && this.placed.has(runId) && this.placed.get(runId) !== isFinishedRun(run.status);
    });
    if (change.structure || moved) {
      this.changed.fire(undefined);
      return;
    }
    const refresh = new Set<RunsNode>();
    const add = (id: string): void => {
      const node = this.nodes.get(id);
      if (node) refresh.add(node);
    };
    for (const runId of change.runs) add(`run:${runId}`);
    for (const key of change.tasks) {
      if (change.runs.has(key.slice(0, key.indexOf('/')))) continue; // the run node refreshes its children anyway
      add(`task:${key}`);
    }
    for (const run of this.cache.runs) {
      if (change.runs.has(run.id)) continue;
      for (const taskId of tasksCountingUp(this.cache, run.id)) add(`task:${run.id}/${taskId}`);
    }
    if (refresh.size > 0) this.changed.fire([...refresh]);
  }

  getChildren(element?: RunsNode): RunsNode[] {
    if (!element || element.kind === 'history') {
      const { current, history } = this.places();
      const runs = element ? history : current;
      for (const run of runs) this.placed.set(run.id, element !== undefined);
      const nodes: RunsNode[] = runs.map((run) => this.node({ kind: 'run', id: `run:${run.id}`, runId: run.id }));
      return !element && history.length > 0 ? [...nodes, this.history] : nodes;
    }
    const view = this.cache.overview(element.runId);
    if (!view) return [];
    if (element.kind === 'run')
      return view.tasks.map((t) =>
        this.node({ kind: 'task', id: `task:${t.runId}/${t.id}`, runId: t.runId, taskId: t.id }),
      );
    if (element.kind === 'task') {
      return this.cache
        .attempts(element.runId, element.taskId)
        .map((d) =>
          this.node({ kind: 'delegation', id: `delegation:${d.runId}/${d.id}`, runId: d.runId, delegationId: d.id }),
        );
    }
    return [];
  }

  getParent(element: RunsNode): RunsNode | undefined {
    if (element.kind === 'history') return undefined;
    if (element.kind === 'run') {
      const run = this.cache.runs.find((r) => r.id === element.runId);
      return run && isFinishedRun(run.status) ? this.history : undefined;
    }
    if (element.kind === 'task') return this.nodes.get(`run:${element.runId}`);
    const d = this.cache.overview(element.runId)?.delegations.find((x) => x.id === element.delegationId);
    return d ? this.nodes.get(`task:${element.runId}/${d.taskId}`) : undefined;
  }

  getTreeItem(element: RunsNode): vscode.TreeItem {
    if (element.kind === 'history') return treeItem(element.id, historyRow(this.places().history.length));
    if (element.kind === 'run') return treeItem(element.id, runRow(this.cache, element.runId));
    if (element.kind === 'task') return treeItem(element.id, taskRow(this.cache, element.runId, element.taskId));
    return treeItem(element.id, delegationRow(this.cache, element.runId, element.delegationId), element);
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.changed.dispose();
  }
}

export type WorkerNode = { kind: 'runtime'; id: string; runId: string; runtimeId: string };

/**
 * Live worker runtimes with their heartbeat age; stale ones stand out. Every publication
 * changes the rows while there are any (a heartbeat, or at least their ages as of its clock):
 * when the same workers are live, their rows are refreshed in place — VS Code then takes the
 * new items from this change and does not ask for the children again, one round trip less
 * between the extension host and the workbench — else the list is refreshed from the root.
 */
export class WorkersTreeProvider implements vscode.TreeDataProvider<WorkerNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<WorkerNode | WorkerNode[] | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscription;
  /** The nodes last listed, by runtime id: the same objects every time (VS Code knows its nodes by identity). */
  private nodes = new Map<string, WorkerNode>();

  constructor(private readonly cache: RunStateCache) {
    this.subscription = cache.onDidChange((change) => {
      if (change.structure || change.runtimes.size > 0) {
        const live = cache.liveRuntimes().map((r) => r.id);
        if (live.length !== this.nodes.size || live.some((id) => !this.nodes.has(id))) {
          this.changed.fire(undefined);
          return;
        }
      }
      if (this.nodes.size > 0) this.changed.fire([...this.nodes.values()]);
    });
  }

  getChildren(element?: WorkerNode): WorkerNode[] {
    if (element) return [];
    const nodes = new Map<string, WorkerNode>();
    for (const r of this.cache.liveRuntimes())
      nodes.set(
        r.id,
        this.nodes.get(r.id) ?? { kind: 'runtime', id: `runtime:${r.id}`, runId: r.runId, runtimeId: r.id },
      );
    this.nodes = nodes;
    return [...nodes.values()];
  }

  getTreeItem(element: WorkerNode): vscode.TreeItem {
    const row = workerRow(this.cache, element.runId, element.runtimeId)?.row ?? {
      label: element.runtimeId,
      contextValue: 'baton.runtime',
      collapsible: 'none' as const,
    };
    return treeItem(element.id, row);
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
  private rows = new Map<string, Row>();

  constructor(private readonly cache: RunStateCache) {
    this.subscription = cache.onDidChange((change) => {
      if (change.gates.size > 0 || change.structure) this.changed.fire(undefined);
    });
  }

  getChildren(element?: GateNode): GateNode[] {
    if (element) return [];
    const rows = gateRows(this.cache);
    this.rows = new Map(rows.map((r) => [r.gateId, r.row]));
    return rows.map((r) => ({ kind: 'gate', id: r.id, runId: r.runId, gateId: r.gateId }));
  }

  getTreeItem(element: GateNode): vscode.TreeItem {
    const row = this.rows.get(element.gateId) ?? {
      label: element.gateId,
      contextValue: 'baton.gate',
      collapsible: 'none' as const,
    };
    return treeItem(element.id, row);
  }

  get count(): number {
    return this.cache.openGates().length;
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
