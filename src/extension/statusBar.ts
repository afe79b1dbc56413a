import * as vscode from 'vscode';
import { DisposableStore } from './lifecycle';
import type { RunStateCache } from './runState';
import { statusTooltip } from './notices';
import { statusCounts } from './viewRows';

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
    const { running, gates } = statusCounts(cache);
    // Called on every publication that may change a count: the item is sent to the workbench only when it changes.
    const key = JSON.stringify([running, gates, drivenHere]);
    if (key === this.shown) return;
    this.shown = key;
    if (running > 0) {
      this.item.text = `$(sync~spin) Baton: ${running} running${gates ? `, ${gates} waiting` : ''}`;
      this.item.backgroundColor = undefined;
    } else if (gates > 0) {
      this.item.text = `$(shield) Baton: ${gates} gate${gates === 1 ? '' : 's'} waiting`;
      this.item.backgroundColor = new vscode.ThemeColor('statusBarItem.warningBackground');
    } else {
      this.item.text = '$(check) Baton: idle';
      this.item.backgroundColor = undefined;
    }
    const tooltip = new vscode.MarkdownString(
      `${statusTooltip(running, gates, drivenHere)}\n\n[$(dashboard) Open Dashboard](command:baton.openDashboard) · [Show Runs](command:baton.runs.focus)`,
      true,
    );
    tooltip.isTrusted = { enabledCommands: ['baton.openDashboard', 'baton.runs.focus'] };
    this.item.tooltip = tooltip;
  }
}
