import * as vscode from 'vscode';
import { isFinishedRun, type RunStatus } from '../engine/index';
import { sendDesktopNotification } from './desktopNotification';
import { DisposableStore } from './lifecycle';
import {
  attentionItems,
  attentionNotices,
  runEndAttention,
  ToldLedger,
  type AttentionItem,
  type AttentionNotice,
} from './model/attention';
import type { RunStateCache } from './model/runState';

/** Where the keys of what was told are kept (the workspace's state: across reloads, per folder). */
const TOLD_KEY = 'baton.attention.told';

/** The ledger of what was told, kept in the workspace's state. */
export function toldLedger(state: vscode.Memento): ToldLedger {
  return new ToldLedger(state.get<string[]>(TOLD_KEY, []), (keys) => void state.update(TOLD_KEY, [...keys]));
}

/**
 * The host side of the attention model (docs/extension.md, "Attention"): it follows the run-state cache, keeps what
 * waits on a person (the badge and the status bar map from `items`), and tells each new thing once — in the window
 * (a run's end, a usage-limit hold; the gates are in the gate notification) and, with `baton.notifications.os`
 * while the window is not focused, as a desktop notification too.
 */
export class Attention extends DisposableStore {
  private current: AttentionItem[] = [];
  private readonly changed = this._register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;
  /** Each run's status as last seen: an end is told when it is seen happen, not when a run is first seen ended. */
  private readonly lastStatus = new Map<string, RunStatus>();
  private notifySendMissing = false;

  constructor(
    private readonly cache: RunStateCache,
    private readonly ledger: ToldLedger,
    private readonly log: vscode.LogOutputChannel,
    /** Runs this window's own coordinators drive: their end is told from the coordinator's outcome (`tellEnd`). */
    private readonly drivenHere: () => readonly string[],
  ) {
    super();
    for (const run of cache.runs) this.lastStatus.set(run.id, run.status);
    this._register(
      cache.onDidChange((change) => {
        if (change.structure || change.runs.size || change.tasks.size || change.gates.size) this.update();
      }),
    );
    this.update();
  }

  /** What waits on a person now, oldest first. */
  get waiting(): readonly AttentionItem[] {
    return this.current;
  }

  /**
   * A run this window drove has ended (its coordinator's outcome): told from the store's view of it, whether the
   * cache saw it running or not (a run that ends within one read of the cache).
   */
  async tellEnd(runId: string): Promise<void> {
    await this.cache.load(runId);
    const view = this.cache.overview(runId);
    if (!view || this.isDisposed) return;
    this.lastStatus.set(runId, view.run.status);
    const notice = runEndAttention(view, 'running');
    if (notice) this.tell(notice);
  }

  private update(): void {
    const items = attentionItems(this.cache);
    if (items.map((i) => i.key).join() !== this.current.map((i) => i.key).join()) {
      this.current = items;
      this.changed.fire();
    }
    for (const notice of attentionNotices(items, (key) => this.ledger.has(key))) this.tell(notice);
    const driven = new Set(this.drivenHere());
    for (const run of this.cache.runs) {
      const before = this.lastStatus.get(run.id);
      this.lastStatus.set(run.id, run.status);
      const view = this.cache.overview(run.id);
      if (!view || driven.has(run.id) || !isFinishedRun(run.status)) continue;
      const notice = runEndAttention(view, before, view.coordinatorLease?.holder);
      if (notice) this.tell(notice);
    }
  }

  private tell(notice: AttentionNotice): void {
    if (this.ledger.has(notice.key)) return;
    this.ledger.add(notice.key);
    this.log.info(notice.message);
    if (notice.inWindow) {
      const go = notice.target.command === 'baton.runs.focus' ? 'Show Runs' : 'Show';
      const shown =
        notice.level === 'info'
          ? vscode.window.showInformationMessage(notice.message)
          : vscode.window.showWarningMessage(notice.message, go);
      void shown.then((pick) => {
        if (pick) void vscode.commands.executeCommand(notice.target.command, notice.target.args);
      });
    }
    if (
      vscode.workspace.getConfiguration('baton').get<boolean>('notifications.os', false) &&
      !vscode.window.state.focused
    )
      this.notifyOs(notice);
  }

  /** Where `notify-send` is not installed, the window's own notifications remain; the log says so once. */
  private notifyOs(notice: AttentionNotice): void {
    if (this.notifySendMissing) return;
    void sendDesktopNotification({ title: notice.title, body: notice.body, urgent: notice.level === 'warning' }).then(
      (outcome) => {
        if (outcome.kind === 'absent' && !this.notifySendMissing) {
          this.notifySendMissing = true;
          this.log.info('baton.notifications.os: notify-send is not installed; only the window shows notifications.');
        } else if (outcome.kind === 'failed') this.log.warn(`notify-send failed: ${outcome.detail}`);
      },
    );
  }
}
