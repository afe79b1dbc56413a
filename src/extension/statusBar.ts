import * as vscode from 'vscode';
import { DisposableStore } from './lifecycle';
import type { RunStateCache } from './model/runState';
import { statusSummary } from './model/viewRows';

/** Running / waiting on gates / idle, at a glance; a click opens the Runs view, the tooltip links the dashboard. */
export class BatonStatusBar extends DisposableStore {
  private readonly item = this._register(
    vscode.window.createStatusBarItem('baton.status', vscode.StatusBarAlignment.Left, 50),
  );

  constructor() {
    super();
    this.item.name = 'Baton';
    this.item.command = 'baton.runs.focus';
    this.item.text = '$(circle-outline) Baton';
    this.item.tooltip = 'Baton: no run yet';
    this.item.show();
  }

  private shown = '';

  update(cache: RunStateCache, drivenHere: readonly string[]): void {
    const summary = statusSummary(cache, drivenHere);
    // Called on every publication that may change it: the item is sent to the workbench only when it changes.
    const key = JSON.stringify(summary);
    if (key === this.shown) return;
    this.shown = key;
    this.item.text = summary.text;
    this.item.backgroundColor = summary.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    const tooltip = new vscode.MarkdownString(
      `${summary.tooltip}\n\n[$(dashboard) Open Dashboard](command:baton.openDashboard) · [Show Runs](command:baton.runs.focus)`,
      true,
    );
    tooltip.isTrusted = { enabledCommands: ['baton.openDashboard', 'baton.runs.focus'] };
    this.item.tooltip = tooltip;
  }
}
