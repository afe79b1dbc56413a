import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { BatonError, counted, Engine, systemClock, type CoordinatorOutcome } from '../engine/index';
import { DisposableStore } from './lifecycle';
import { outcomeLine } from './model/notices';
import { RunStateCache } from './model/runState';

type Coordination = Awaited<ReturnType<Engine['coordinate']>>;
type DrivingCoordinator = Extract<Coordination, { coordinator: unknown }>['coordinator'];

/** Raised for a command's own precondition: shown as a message, never as a stack trace. */
export class UserFacingError extends Error {
  override readonly name = 'UserFacingError';
}

/**
 * Raised when a command would start a process in a workspace in Restricted Mode. The
 * command wrapper offers VS Code's own trust editor and runs the command again once the
 * workspace is trusted (docs/extension.md, "Workspace trust").
 */
export class TrustRequiredError extends UserFacingError {
  constructor(action: string) {
    super(
      `This workspace is in Restricted Mode: Baton starts no worker or verify command here, so it cannot ${action}. Trust the workspace to run tasks.`,
    );
  }
}

/** What closing (or reloading) the window does to the runs it drives: the `baton.onWindowClose` setting. */
export type WindowCloseBehaviour = 'keepRunning' | 'stopGracefully' | 'stopImmediately';
const WINDOW_CLOSE_BEHAVIOURS: readonly WindowCloseBehaviour[] = ['keepRunning', 'stopGracefully', 'stopImmediately'];

/**
 * With `stopImmediately`, how long a worker gets between SIGTERM and SIGKILL: VS Code gives all
 * extensions 5 s in all to deactivate, so the config's stopGraceSeconds (5 s by default) cannot be.
 */
const CLOSING_GRACE_MS = 1000;

/**
 * The extension's hold on one workspace folder: the engine (opened on first need, off the
 * activation path), the run-state cache, and the runs this window coordinates. Spawning
 * anything requires a trusted workspace.
 */
export class BatonSession extends DisposableStore {
  private opening: Promise<Engine> | undefined;
  private opened: Engine | undefined;
  private cache: RunStateCache | undefined;
  private readonly driving = new Map<string, DrivingCoordinator>();
  /** The window is closing: what it does with its runs, which the store must outlive. */
  private closing: Promise<void> | undefined;
  private storeClosed: Promise<void> | undefined;
  /** Hand-overs this window tried to take (run@epoch): each once; if another window won it, this one observes. */
  private readonly takeOversTried = new Set<string>();
  private readonly runFinished = this._register(new vscode.EventEmitter<string>());
  /** A run this window drove ended (its coordinator's outcome): the attention model tells it (attention.ts). */
  readonly onDidFinishRun = this.runFinished.event;
  private readonly runStateReady = this._register(new vscode.EventEmitter<RunStateCache>());
  readonly onRunStateReady = this.runStateReady.event;
  private readonly drivingChanged = this._register(new vscode.EventEmitter<void>());
  readonly onDidChangeDriving = this.drivingChanged.event;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    readonly log: vscode.LogOutputChannel,
    private readonly extensionPath: string,
  ) {
    super();
  }

  get workspace(): string {
    return this.folder.uri.fsPath;
  }

  /** The run-state cache every view and the dashboard map from (once the store is open). */
  get runState(): RunStateCache | undefined {
    return this.cache;
  }

  /** The engine once the store is open (undefined before, or while it cannot open). */
  get openedEngine(): Engine | undefined {
    return this.opened;
  }

  get drivenRuns(): string[] {
    return [...this.driving.keys()];
  }

  /** Opens the store once; every later call gets the same engine. */
  engine(): Promise<Engine> {
    this.opening ??= (async () => {
      const started = performance.now();
      const cli = join(this.extensionPath, 'dist', 'cli.js');
      // One clock for the engine and the run-state cache: the cache's publications carry the engine's time.
      const engine = await Engine.open({
        workspace: this.workspace,
        clock: systemClock,
        follow: true,
        ...(existsSync(cli) ? { cliPath: cli } : {}),
      });
      for (const notice of engine.recoveryNotices) this.log.warn(notice);
      this.opened = engine;
      this.cache = new RunStateCache(engine, {
        clock: systemClock,
        onError: (err) => this.log.warn(`Could not read the runs: ${(err as Error)?.message ?? String(err)}`),
      });
      await this.cache.refreshNow();
      this.runStateReady.fire(this.cache);
      const cache = this.cache;
      this._register(
        cache.onDidChange((change) => {
          if (change.structure || change.runs.size > 0) this.takeOverHandedOverRuns(cache);
        }),
      );
      // Trust granted after the store opened (a fresh trust prompt on reopening): a run handed over is taken now,
      // not at the next activation.
      this._register(vscode.workspace.onDidGrantWorkspaceTrust(() => this.takeOverHandedOverRuns(cache)));
      this.takeOverHandedOverRuns(cache);
      this.log.info(`Opened the Baton store of ${this.workspace} in ${(performance.now() - started).toFixed(0)} ms.`);
      return engine;
    })();
    this.opening.catch((err: unknown) => {
      this.opening = undefined;
      this.log.error(`Could not open the Baton store: ${(err as Error).message}`);
    });
    return this.opening;
  }

  requireTrust(action: string): void {
    if (!vscode.workspace.isTrusted) throw new TrustRequiredError(action);
  }

  /**
   * Coordinates a run from this window, in the background: `drives` it (its coordinator lease), or — asked to `join`,
   * when another machine drives a run on a team store that can be joined — `joined` it beside that coordinator,
   * running its tasks too, as `baton resume` does (docs/team.md, "Every machine works"). False when another window or
   * process drives it and this window does not join (it observes).
   */
  async drive(runId: string, options: { tasks?: string[]; join?: boolean } = {}): Promise<false | 'drives' | 'joined'> {
    this.requireTrust('run tasks');
    if (this.driving.has(runId)) throw new UserFacingError(`This window is already running ${runId}.`);
    const engine = await this.engine();
    const maxConcurrency = vscode.workspace.getConfiguration('baton', this.folder).get<number | null>('maxConcurrency');
    const take = (join: boolean) =>
      engine.coordinate({
        runId,
        ...(maxConcurrency ? { maxConcurrency } : {}),
        ...(options.tasks ? { tasks: options.tasks } : {}),
        ...(join ? { join } : {}),
        log: (line) => this.log.info(`[${runId}] ${line}`),
      });
    let taken = await take(false);
    let joined = false;
    if ('heldBy' in taken && options.join) {
      const whyNot = await engine.whyNotJoin(runId);
      if (whyNot === undefined) {
        const holder = taken.heldBy.holder;
        taken = await take(true);
        joined = !('heldBy' in taken);
        if (joined) this.log.info(`${runId} is driven by ${holder}; this window joins it and runs its tasks too.`);
      } else this.log.info(`${runId}: this window does not join it: ${whyNot}.`);
    }
    if ('heldBy' in taken) {
      this.log.info(`${runId} is driven by ${taken.heldBy.holder} (${taken.why}); observing.`);
      return false;
    }
    for (const entry of taken.reconcile.entries.filter((e) => e.repair))
      this.log.info(`[${runId}] reconcile ${entry.taskId}: ${entry.classification} → ${entry.repair}`);
    const { coordinator } = taken;
    this.driving.set(runId, coordinator);
    this.drivingChanged.fire();
    void coordinator
      .run()
      .then((outcome) => {
        this.onRunOutcome(runId, outcome);
        if (outcome.kind !== 'holder-gone' || this.closing || this.isDisposed) return;
        // The coordinator this window joined beside is gone: this one takes the run over (or joins who did first).
        this.driving.delete(runId);
        return this.drive(runId, { ...options, join: true }).catch((err: unknown) => {
          this.log.warn(`Could not take over ${runId}: ${describeError(err)}`);
          this.drivingChanged.fire();
        });
      })
      .catch((err: unknown) => this.log.error(`[${runId}] the coordinator stopped: ${(err as Error).message}`))
      .finally(() => {
        // Handed over or stopped by a closing window (the window is going), or taken over after a joined run's holder
        // went: nothing to update.
        if (this.driving.get(runId) !== coordinator) return;
        this.driving.delete(runId);
        this.drivingChanged.fire();
        void this.cache?.refreshNow();
      });
    return joined ? 'joined' : 'drives';
  }

  /**
   * Takes over the runs a closing window handed over with their workers running (a reload, or
   * the last window closed with `keepRunning`): at activation, when the workspace is trusted
   * later (a fresh trust prompt), and whenever one is handed over while this window is open.
   * Its reconcile adopts the live workers — same attempt, same pid — and settles what finished
   * meanwhile from disk. Only in a trusted workspace, and each hand-over once: when another
   * window takes it first, this one observes.
   */
  private takeOverHandedOverRuns(cache: RunStateCache): void {
    if (!vscode.workspace.isTrusted || this.closing || this.isDisposed) return;
    for (const run of cache.runs) {
      if (run.status !== 'running' && run.status !== 'stopping') continue;
      const lease = cache.overview(run.id)?.coordinatorLease;
      // Not one this very process handed over (the API's shutdown in a test): a window that closes is going anyway.
      if (!lease?.handedOver || this.driving.has(run.id) || lease.identity.pid === process.pid) continue;
      const key = `${run.id}@${lease.epoch}`;
      if (this.takeOversTried.has(key)) continue;
      this.takeOversTried.add(key);
      const { workers, tasks } = lease.handedOver;
      this.log.info(
        `Taking over ${run.id}: ${lease.holder} handed it over with ${counted(workers, 'worker')} running.`,
      );
      void this.drive(run.id, tasks ? { tasks } : {}).catch((err: unknown) =>
        this.log.warn(`Could not take over ${run.id}: ${describeError(err)}`),
      );
    }
  }

  private onRunOutcome(runId: string, outcome: CoordinatorOutcome): void {
    this.log.info(outcomeLine(runId, outcome));
    if (outcome.kind === 'finished') this.runFinished.fire(runId);
    else if (outcome.kind === 'lease-lost') {
      void vscode.window.showWarningMessage(`Another process took over run ${runId}: ${outcome.detail}`);
    }
  }

  /**
   * The window closes or reloads — the extension deactivates, and VS Code cannot tell which — so
   * each run this window drives gets what `baton.onWindowClose` says, within the few seconds VS
   * Code gives (docs/extension.md, "Reload and window close"):
   * - `keepRunning` (default): handed over — the lease is released at once, marked so, and the
   *   workers run on; the next window (this one reloaded) takes the run over and adopts them.
   *   A reload is never destructive.
   * - `stopGracefully`: the same, under a graceful stop: nothing new starts; the next window
   *   lets the running attempts finish.
   * - `stopImmediately`: every worker is ended (TERM, 1 s, KILL, proof), the attempts cancelled,
   *   the lease released.
   * The store stays open until this is done (VS Code disposes the subscriptions right after it
   * calls `deactivate`, without waiting).
   */
  windowClosing(): Promise<void> {
    if (this.closing) return this.closing;
    const setting = vscode.workspace.getConfiguration('baton', this.folder).get<string>('onWindowClose');
    const behaviour = WINDOW_CLOSE_BEHAVIOURS.find((b) => b === setting) ?? 'keepRunning';
    const all = [...this.driving.values()];
    this.driving.clear();
    this.closing = Promise.all(
      all.map(async (c) => {
        const runId = c.options.runId;
        try {
          if (behaviour === 'stopImmediately') {
            const report = await c.shutdown('VS Code window closed', { graceMs: CLOSING_GRACE_MS });
            const unconfirmed = report.filter((e) => !e.confirmed).length;
            this.log.info(
              `[${runId}] window closing: stopped ${counted(report.length, 'attempt')}${unconfirmed ? `, ${unconfirmed} NOT confirmed` : ''}.`,
            );
          } else {
            const { workers } = await c.handOver({
              by: 'VS Code window closed',
              ...(behaviour === 'stopGracefully' ? { stop: 'graceful' as const } : {}),
            });
            this.log.info(`[${runId}] window closing: handed over with ${counted(workers, 'worker')} running.`);
          }
        } catch (err) {
          // Its workers are then left to the next coordinator, which reconciles them.
          this.log.error(`[${runId}] window closing (${behaviour}): ${(err as Error).message}`);
        }
      }),
    ).then(() => {
      // Still here (the API's shutdown, not a deactivation): the window may drive runs again.
      if (!this.isDisposed) this.closing = undefined;
    });
    return this.closing;
  }

  override dispose(): void {
    super.dispose();
    this.cache?.dispose();
    const close = async (): Promise<void> => {
      await this.opened?.close().catch((err: unknown) => this.log.warn(`Closing the store: ${(err as Error).message}`));
    };
    this.storeClosed = this.closing ? this.closing.then(close, close) : close();
  }

  /** Settles once the store is closed after disposal (deactivation waits for it: a clean close, no torn snapshot). */
  whenStoreClosed(): Promise<void> {
    return this.storeClosed ?? Promise.resolve();
  }
}

export function describeError(err: unknown): string {
  if (err instanceof UserFacingError || BatonError.is(err)) return err.message;
  return `Baton: unexpected error: ${(err as Error)?.message ?? String(err)}`;
}
