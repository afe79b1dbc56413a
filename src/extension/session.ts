import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { BatonError, Engine, type CoordinatorOutcome } from '../engine/index';
import { DisposableStore } from './lifecycle';
import { outcomeLine } from './notices';
import { RunStateCache } from './runState';

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
      const engine = await Engine.open({
        workspace: this.workspace,
        follow: true,
        ...(existsSync(cli) ? { cliPath: cli } : {}),
      });
      for (const notice of engine.recoveryNotices) this.log.warn(notice);
      this.opened = engine;
      this.cache = new RunStateCache(engine, {
        onError: (err) => this.log.warn(`Could not read the runs: ${(err as Error)?.message ?? String(err)}`),
      });
      await this.cache.refreshNow();
      this.runStateReady.fire(this.cache);
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
   * Coordinates a run from this window, in the background. Returns false when another
   * window or process already drives it (this window then observes).
   */
  async drive(runId: string, options: { tasks?: string[] } = {}): Promise<boolean> {
    this.requireTrust('run tasks');
    if (this.driving.has(runId)) throw new UserFacingError(`This window is already running ${runId}.`);
    const engine = await this.engine();
    const maxConcurrency = vscode.workspace.getConfiguration('baton', this.folder).get<number | null>('maxConcurrency');
    const taken = await engine.coordinate({
      runId,
      ...(maxConcurrency ? { maxConcurrency } : {}),
      ...(options.tasks ? { tasks: options.tasks } : {}),
      log: (line) => this.log.info(`[${runId}] ${line}`),
    });
    if ('heldBy' in taken) {
      this.log.info(`${runId} is driven by ${taken.heldBy.holder} (${taken.why}); observing.`);
      return false;
    }
    for (const entry of taken.reconcile.entries.filter((e) => e.repair))
      this.log.info(`[${runId}] reconcile ${entry.taskId}: ${entry.classification} → ${entry.repair}`);
    this.driving.set(runId, taken.coordinator);
    this.drivingChanged.fire();
    void taken.coordinator
      .run()
      .then((outcome) => this.onRunOutcome(runId, outcome))
      .catch((err: unknown) => this.log.error(`[${runId}] the coordinator stopped: ${(err as Error).message}`))
      .finally(() => {
        this.driving.delete(runId);
        this.drivingChanged.fire();
        void this.cache?.refreshNow();
      });
    return true;
  }

  private onRunOutcome(runId: string, outcome: CoordinatorOutcome): void {
    this.log.info(outcomeLine(runId, outcome));
    if (outcome.kind === 'finished') {
      const message = `Baton run ${runId} ${outcome.status}.`;
      if (outcome.status === 'completed') void vscode.window.showInformationMessage(message);
      else
        void vscode.window
          .showWarningMessage(message, 'Show Runs')
          .then((pick) => pick && vscode.commands.executeCommand('baton.runs.focus'));
    } else if (outcome.kind === 'lease-lost') {
      void vscode.window.showWarningMessage(`Another process took over run ${runId}: ${outcome.detail}`);
    }
  }

  /**
   * Ends every worker this window started (the window closes, the extension deactivates):
   * within VS Code's few-second budget, so with a short grace period.
   */
  async shutdown(): Promise<void> {
    const all = [...this.driving.values()];
    this.driving.clear();
    await Promise.all(
      all.map((c) =>
        c.shutdown('VS Code window closed').catch((err: unknown) => {
          // Its workers are then left to the next coordinator, which reconciles them.
          this.log.error(`${c.options.runId}: shutdown did not stop every worker: ${(err as Error).message}`);
          return [];
        }),
      ),
    );
  }

  override dispose(): void {
    super.dispose();
    this.cache?.dispose();
    void this.opened?.close();
  }
}

export function describeError(err: unknown): string {
  if (err instanceof UserFacingError || BatonError.is(err)) return err.message;
  return `Baton: unexpected error: ${(err as Error)?.message ?? String(err)}`;
}
