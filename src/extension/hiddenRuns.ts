import * as vscode from 'vscode';
import { DisposableStore } from './lifecycle';

const KEY = 'baton.hiddenRuns';
/** Ids kept at most: the oldest are dropped (a run that old is no longer among the runs the views hold). */
const MAX_KEPT = 500;

/**
 * Finished runs the person removed from the Runs view. They are hidden, not deleted: the
 * store keeps every run (the CLI, the dashboard and other windows still show it), and
 * "Show Removed Runs" brings them back.
 *
 * Decision: the list lives in the workspace's `workspaceState` (VS Code's per-workspace
 * storage), not in the Baton store. Removing a run from a view is this person's view of
 * the folder, like a collapsed node: it must not change what the CLI or a teammate sees, and
 * the store's journal is the shared record of what happened to runs, not of how an editor
 * shows them. It survives reloads and editor restarts, like the rest of the workbench state.
 */
export class HiddenRuns extends DisposableStore {
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;

  constructor(private readonly state: vscode.Memento) {
    super();
  }

  private get ids(): string[] {
    return this.state.get<string[]>(KEY, []);
  }

  has(runId: string): boolean {
    return this.ids.includes(runId);
  }

  get size(): number {
    return this.ids.length;
  }

  async hide(runIds: readonly string[]): Promise<void> {
    const ids = [...new Set([...this.ids, ...runIds])].slice(-MAX_KEPT);
    await this.state.update(KEY, ids);
    this.changed.fire();
  }

  async showAll(): Promise<void> {
    await this.state.update(KEY, []);
    this.changed.fire();
  }
}
