import * as vscode from 'vscode';
import type { Engine, EngineEvent } from '../engine/index';
import { gateNoticeMessage, type OpenGateNotice } from './model/gateNotice';
import { DisposableStore } from './lifecycle';
import type { RunStateCache, RunStateChange } from './model/runState';
import type { ToldLedger } from './model/attention';

/** Gates that open together (a run's risk gates, in one transaction) make one notification, not several. */
const GATHER_MS = 150;

/**
 * One notification that lists exactly the open gates, in any process, and stays current
 * (docs/extension.md, "Gate notifications"): a gate that opens brings it up (again, if it was
 * hidden); a gate decided anywhere leaves it at once; with none open it closes. It is a
 * progress notification because that is the only kind VS Code lets an extension change or
 * close; its links approve, reject or show. Silenced with `baton.notifyOnGate`.
 */
export class GateNotifications extends DisposableStore {
  private readonly open = new Map<string, OpenGateNotice>();
  /** Gates decided while the first read of the open ones was under way: that read must not bring them back. */
  private readonly decidedEarly = new Set<string>();
  private seeded = false;
  private shown: { report(message: string): void; close(): void; message: string } | undefined;
  /** A gate opened since the notification was shown: show a new one, so that it pops up even if hidden. */
  private fresh = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Updates run one after the other: one may wait for the cache to read a run. */
  private updating: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: Engine,
    private readonly cache: RunStateCache,
    private readonly log: vscode.LogOutputChannel,
    /** What was told before this window started: gates told then do not bring the notification back by themselves. */
    private readonly told?: ToldLedger,
  ) {
    super();
    this._register(engine.onEvent((e) => this.onEvent(e)));
    this._register(cache.onDidChange((change) => this.onCacheChange(change)));
    this._register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('baton.notifyOnGate')) this.schedule(true);
      }),
    );
    this._register({
      dispose: () => {
        if (this.timer) clearTimeout(this.timer);
        this.close();
      },
    });
    void this.seed();
  }

  /**
   * Gates already open when this window starts (a reload, another window's run) are in the notification from the
   * start; it comes up for them only when one was not told yet (docs/extension.md, "Attention": told once, not again
   * after a reload). The badge and the status bar count them meanwhile.
   */
  private async seed(): Promise<void> {
    let untold = false;
    try {
      const open = await this.engine.listGates({ status: 'open' });
      const held = new Set(this.cache.runs.map((r) => r.id));
      for (const gate of open) {
        if (this.decidedEarly.has(gate.id) || this.open.has(gate.id) || !held.has(gate.runId)) continue;
        this.open.set(gate.id, this.notice({ ...gate, gateId: gate.id }));
        untold ||= !this.told?.toldBefore(`gate:${gate.id}@${gate.openedAt}`);
      }
    } catch (err) {
      this.log.warn(`Could not read the open gates: ${(err as Error).message}`);
    }
    this.seeded = true;
    this.decidedEarly.clear();
    // A gate that opened meanwhile (its event came during the read) is news all the same.
    if (this.fresh || untold) this.schedule(true);
  }

  private onEvent(e: EngineEvent): void {
    if (e.type === 'gate:opened') {
      this.open.set(e.data.gateId, this.notice({ ...e.data, runId: e.runId }));
      this.schedule(true);
    } else if (e.type === 'gate:decided') {
      if (!this.seeded) this.decidedEarly.add(e.data.gateId);
      if (this.open.delete(e.data.gateId)) this.schedule(false);
    } else if (e.type === 'gate:updated') {
      const gate = this.open.get(e.data.gateId);
      if (gate) {
        this.open.set(gate.gateId, { ...gate, reason: e.data.reason });
        this.schedule(false);
      }
    }
  }

  /**
   * The run-state cache read runs again. A gate that opened before the cache had read its run
   * (a run just started: its gates open in its first pass) was told without its task's title;
   * the title is known now. And a gate the cache reads as decided leaves, however its decision
   * reached this window: the notification never outlives its gate.
   */
  private onCacheChange(change: RunStateChange): void {
    if (!change.structure && change.runs.size === 0 && change.tasks.size === 0 && change.gates.size === 0) return;
    let changed = false;
    for (const [gateId, gate] of this.open) {
      const view = this.cache.overview(gate.runId);
      if (!view) continue;
      const read = view.gates.find((g) => g.id === gateId);
      if (read && read.status !== 'open') {
        this.open.delete(gateId);
        changed = true;
      } else if (!gate.taskTitle && gate.taskId) {
        const told = this.notice(gate);
        if (told.taskTitle) {
          this.open.set(gateId, told);
          changed = true;
        }
      }
    }
    if (changed) this.schedule(false);
  }

  private notice(gate: Omit<OpenGateNotice, 'taskTitle'>): OpenGateNotice {
    const title = gate.taskId
      ? this.cache.overview(gate.runId)?.tasks.find((t) => t.id === gate.taskId)?.title
      : undefined;
    return {
      gateId: gate.gateId,
      runId: gate.runId,
      kind: gate.kind,
      reason: gate.reason,
      ...(gate.taskId ? { taskId: gate.taskId } : {}),
      ...(title ? { taskTitle: title } : {}),
    };
  }

  /** `fresh`: something new to tell (a gate opened, notifications turned on). */
  private schedule(fresh: boolean): void {
    this.fresh ||= fresh;
    if (!this.seeded || this.timer) return;
    // Leaving is immediate (a decided gate is never shown as waiting); arriving is gathered.
    const wait = this.fresh ? GATHER_MS : 0;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.updating = this.updating
        .then(() => this.update())
        .catch((err: unknown) => {
          this.log.warn(`The gate notification was not updated: ${(err as Error).message}`);
        });
    }, wait);
  }

  private async update(): Promise<void> {
    // A run this window has not read yet — one just started, whose gates open in its first pass — is read first,
    // so that the notification names each gate's task by its title from the start.
    const unread = new Set(
      [...this.open.values()]
        .filter((g) => g.taskId && !g.taskTitle && !this.cache.overview(g.runId))
        .map((g) => g.runId),
    );
    if (unread.size > 0) await Promise.all([...unread].map((runId) => this.cache.load(runId)));
    if (this.isDisposed) return;
    const enabled = vscode.workspace.getConfiguration('baton').get<boolean>('notifyOnGate', true);
    // A run this window had not read when its gate opened: its task titles are known by now.
    const gates = [...this.open.values()].map((g) => (g.taskTitle ? g : this.notice(g)));
    const fresh = this.fresh;
    this.fresh = false;
    if (!enabled || gates.length === 0) return this.close();
    const message = gateNoticeMessage(gates);
    // Nothing new since the window started (only gates told before a reload): no notification comes up for them.
    if (!this.shown && !fresh) return;
    if (this.shown && !fresh) {
      if (this.shown.message !== message) this.shown.report(message);
      return;
    }
    this.close();
    this.show(message);
  }

  private show(message: string): void {
    let finish: () => void = () => undefined;
    let progress: vscode.Progress<{ message?: string; increment?: number }> | undefined;
    const shown = {
      message,
      report: (next: string) => {
        shown.message = next;
        progress?.report({ message: next });
      },
      close: () => finish(),
    };
    this.shown = shown;
    void vscode.window.withProgress({ location: vscode.ProgressLocation.Notification }, (p) => {
      progress = p;
      // A progress of 0 (not an endless bar): the notification waits for a person, nothing is working.
      p.report({ message: shown.message, increment: 0 });
      return new Promise<void>((resolve) => (finish = resolve));
    });
  }

  private close(): void {
    const shown = this.shown;
    this.shown = undefined;
    shown?.close();
  }
}
