import * as vscode from 'vscode';
import { DisposableStore } from './lifecycle';
import { attentionTarget, waitingText, type AttentionItem } from './model/attention';
import { commandLink } from './model/gateNotice';
import type { RunStateCache } from './model/runState';
import { statusSummary } from './model/viewRows';

/** At most this many waiting things are listed in the tooltip; the rest are counted. */
const LISTED = 8;

/**
 * Running / waiting on a person / idle, at a glance. The tooltip lists what waits (docs/extension.md, "Attention"),
 * each a link to it; a click leads to the oldest thing that waits, or opens the Runs view when nothing does.
 */
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

  /** What it shows (the integration tests read it). */
  get text(): string {
    return this.item.text;
  }

  update(cache: RunStateCache, drivenHere: readonly string[], waiting: readonly AttentionItem[]): void {
    const summary = statusSummary(cache, drivenHere, { count: waiting.length, text: waitingText(waiting) });
    const target = attentionTarget(waiting);
    const listed = waiting.slice(0, LISTED).map((i) => {
      const link = commandLink('Show', i.target.command, i.target.args);
      return `- ${i.text.replace(/[\\`*_{}<>#|!]/g, '\\$&')} ${link}`;
    });
    // Called on every publication that may change it: the item is sent to the workbench only when it changes.
    const key = JSON.stringify([summary, target, listed]);
    if (key === this.shown) return;
    this.shown = key;
    this.item.text = summary.text;
    this.item.command = { title: 'Show', command: target.command, arguments: target.args ? [target.args] : [] };
    this.item.backgroundColor = summary.warning ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    const more = waiting.length > LISTED ? [`- and ${waiting.length - LISTED} more`] : [];
    const tooltip = new vscode.MarkdownString(
      [
        summary.tooltip,
        ...(listed.length ? ['', ...listed, ...more] : []),
        '',
        '[$(dashboard) Open Dashboard](command:baton.openDashboard) · [Show Runs](command:baton.runs.focus)',
      ].join('\n'),
      true,
    );
    tooltip.isTrusted = {
      enabledCommands: ['baton.openDashboard', 'baton.runs.focus', 'baton.gates.focus', 'baton.answerQuestion'],
    };
    this.item.tooltip = tooltip;
  }
}
