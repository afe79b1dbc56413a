import * as vscode from 'vscode';
import type { Engine, EngineEvent, EventMap } from '../engine/index';
import { DisposableStore } from './lifecycle';

/**
 * A notification when a gate opens (in any process): Approve / Reject / Show. At most one
 * at a time; gates that open meanwhile are summed up in the next one. Silenced with the
 * `baton.notifyOnGate` setting (the notification offers it).
 */
export class GateNotifications extends DisposableStore {
  private showing = false;
  private queued: Array<EventMap['gate:opened'] & { runId: string }> = [];

  constructor(engine: Engine) {
    super();
    this._register(engine.onEvent((e) => this.onEvent(e)));
  }

  private onEvent(e: EngineEvent): void {
    if (e.type !== 'gate:opened') return;
    if (!vscode.workspace.getConfiguration('baton').get<boolean>('notifyOnGate', true)) return;
    this.queued.push({ ...e.data, runId: e.runId });
    if (!this.showing) void this.showNext();
  }

  private async showNext(): Promise<void> {
    this.showing = true;
    try {
      while (this.queued.length > 0) {
        const events = this.queued.splice(0);
        const e = events[0]!; // each message speaks of its own gate(s), never of the one that started the loop
        const gates = events.map((x) => x.gateId);
        const single = gates.length === 1;
        const message = single
          ? `Baton: ${gates[0]} waits for a decision — ${e.reason}`
          : `Baton: ${gates.length} gates wait for a decision (${gates.join(', ')}).`;
        const actions = single ? ['Approve', 'Reject', 'Show', "Don't Notify"] : ['Show', "Don't Notify"];
        const pick = await vscode.window.showInformationMessage(message, ...actions);
        const node = { kind: 'gate', id: `gate:${gates[0]}`, runId: e.runId, gateId: gates[0] };
        if (pick === 'Approve') await vscode.commands.executeCommand('baton.approveGate', node);
        else if (pick === 'Reject') await vscode.commands.executeCommand('baton.rejectGate', node);
        else if (pick === 'Show') await vscode.commands.executeCommand('baton.gates.focus');
        else if (pick === "Don't Notify")
          await vscode.workspace
            .getConfiguration('baton')
            .update('notifyOnGate', false, vscode.ConfigurationTarget.Global);
      }
    } finally {
      this.showing = false;
    }
  }
}
