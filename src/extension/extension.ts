import { access, mkdir, writeFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import * as vscode from 'vscode';
import { AttemptViews } from './attemptViews';
import { ReviewComments } from './reviewComments';
import { offerMcpServerToChat, registerChatTools, registerChatToolsWithoutFolder } from './chatTools';
import { registerCommands } from './commands/register';
import { ConfigWatcher } from './configWatcher';
import { BatonCodeLenses } from './codeLens';
import { ResultDiagnostics } from './diagnostics';
import { STORED_ARTIFACT_SCHEME, StoredArtifactProvider } from './storedArtifacts';
import { GateNotifications } from './gateNotifications';
import { Attention, toldLedger } from './attention';
import { attentionBadge } from './model/attention';
import { BatonSession, describeError } from './session';
import { BatonStatusBar } from './statusBar';
import { DashboardPanel } from './dashboard';
import { GatesTreeProvider, RunsTreeProvider, WorkersTreeProvider } from './views';
import { HiddenRuns } from './hiddenRuns';
import { runsByPlace } from './model/viewRows';
import { cliShim } from './model/cliShim';

let session: BatonSession | undefined;

/**
 * What `activate` returns: for the integration tests (and other extensions), the live
 * session and views, and the same shutdown that deactivation runs.
 */
export interface BatonApi {
  readonly session: BatonSession | undefined;
  readonly views: { runs?: RunsTreeProvider; workers?: WorkersTreeProvider; gates?: GatesTreeProvider };
  readonly diagnostics: ResultDiagnostics | undefined;
  /** Review comments on Show Changes' diffs. */
  readonly reviews: ReviewComments | undefined;
  /** The open dashboard panel, if any. */
  readonly dashboard: () => DashboardPanel | undefined;
  /** What waits on a person, as the Baton views' badge and the status bar show it (docs/extension.md, "Attention"). */
  readonly attention: () => { waiting: number; badge: vscode.ViewBadge | undefined; statusBar: string } | undefined;
  whenReady(): Promise<void>;
  /** What deactivation does with the runs this window drives (`baton.onWindowClose`). */
  shutdown(): Promise<void>;
}

/**
 * Activation registers views, commands and providers and nothing heavier: the store (sql.js,
 * snapshot, journal) opens right after, off the activation path, and the views fill in
 * when it is ready.
 */
export function activate(context: vscode.ExtensionContext): BatonApi {
  const activationStarted = performance.now();
  const channel = vscode.window.createOutputChannel('Baton', { log: true });
  context.subscriptions.push(channel);
  const log = silentOnceClosed(channel);
  context.subscriptions.push(...registerCommands('window', { log, extensionUri: context.extensionUri }));
  const views: BatonApi['views'] = {};
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    log.info('Baton needs a folder: open one to run a plan.');
    context.subscriptions.push(...registerChatToolsWithoutFolder());
    // A dashboard kept from a window that had a folder has nothing to show here.
    context.subscriptions.push(
      vscode.window.registerWebviewPanelSerializer(DashboardPanel.viewType, {
        deserializeWebviewPanel: async (panel) => panel.dispose(),
      }),
    );
    return {
      session: undefined,
      views,
      diagnostics: undefined,
      reviews: undefined,
      dashboard: () => undefined,
      attention: () => undefined,
      whenReady: async () => undefined,
      shutdown: async () => undefined,
    };
  }
  // Off the activation path: a few file writes in the extension's storage.
  void putCliOnTerminalPath(context, log);
  session = new BatonSession(folder, log, context.extensionPath);
  const current = session;
  context.subscriptions.push(session);
  const diagnostics = new ResultDiagnostics(
    folder.uri.fsPath,
    () => current.engine(),
    (line) => log.warn(line),
    context.extensionUri,
  );
  context.subscriptions.push(diagnostics);
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(
      STORED_ARTIFACT_SCHEME,
      new StoredArtifactProvider(() => current.engine()),
    ),
  );
  const reviews = new ReviewComments();
  context.subscriptions.push(reviews);
  const attemptViews = new AttemptViews(session, reviews);
  context.subscriptions.push(attemptViews);
  const hidden = new HiddenRuns(context.workspaceState);
  context.subscriptions.push(hidden);
  const updateHiddenContext = (): Thenable<unknown> =>
    vscode.commands.executeCommand('setContext', 'baton.hasRemovedRuns', hidden.size > 0);
  void updateHiddenContext();
  context.subscriptions.push(hidden.onDidChange(() => void updateHiddenContext()));
  const commandContext = {
    log,
    extensionUri: context.extensionUri,
    session,
    diagnostics,
    attemptViews,
    reviews,
    hidden,
  };
  context.subscriptions.push(...registerCommands('folder', commandContext));
  // The same operations for Copilot Chat and other chat participants (docs/extension.md, "Chat tools").
  context.subscriptions.push(...registerChatTools(commandContext));
  // The same tools over MCP, for the editor's chat where VS Code takes MCP server providers (1.101+).
  context.subscriptions.push(
    ...offerMcpServerToChat(log, {
      cliPath: join(context.extensionPath, 'dist', 'cli.js'),
      workspace: folder.uri.fsPath,
      version: String((context.extension.packageJSON as { version?: unknown }).version ?? '0.0.0'),
    }),
  );
  const lenses = new BatonCodeLenses(() => current.runState);
  context.subscriptions.push(lenses);
  const statusBar = new BatonStatusBar();
  context.subscriptions.push(statusBar);
  // What was told is told once, in this window and after a reload (docs/extension.md, "Attention").
  const told = toldLedger(context.workspaceState);
  let attentionState: ReturnType<BatonApi['attention']>;
  context.subscriptions.push(
    // The dashboard comes back after a reload, on the run it showed (activation event onWebviewPanel:baton.dashboard).
    vscode.window.registerWebviewPanelSerializer(DashboardPanel.viewType, {
      deserializeWebviewPanel: async (panel, saved: unknown) => {
        try {
          await DashboardPanel.revive(panel, context.extensionUri, current, saved);
        } catch (err) {
          panel.dispose();
          void vscode.window.showErrorMessage(describeError(err));
        }
      },
    }),
  );
  context.subscriptions.push(
    current.onRunStateReady((cache) => {
      const attention = new Attention(cache, told, log, () => current.drivenRuns);
      context.subscriptions.push(
        attention,
        current.onDidFinishRun(
          (runId) =>
            void attention
              .tellEnd(runId)
              .catch((err: unknown) => log.warn(`Could not tell the end of ${runId}: ${describeError(err)}`)),
        ),
      );
      void current
        .engine()
        .then((engine) => context.subscriptions.push(new GateNotifications(engine, cache, log, told)));
      lenses.refresh();
      // The Workers view subscribes first: a heartbeat's refresh leaves before the Runs view's.
      const workers = new WorkersTreeProvider(cache);
      const runs = new RunsTreeProvider(cache, hidden);
      const gates = new GatesTreeProvider(cache);
      Object.assign(views, { runs, workers, gates });
      const runsView = vscode.window.createTreeView('baton.runs', { treeDataProvider: runs, showCollapseAll: true });
      const workersView = vscode.window.createTreeView('baton.workers', { treeDataProvider: workers });
      const gatesView = vscode.window.createTreeView('baton.gates', { treeDataProvider: gates });
      let hasRuns: boolean | undefined;
      let hasVisibleRuns: boolean | undefined;
      const updateChrome = (): void => {
        // One view's badge is the Baton icon's on the activity bar (VS Code shows a view's badge on its container):
        // everything that waits on a person, counted once.
        gatesView.badge = attentionBadge(attention.waiting);
        statusBar.update(cache, current.drivenRuns, attention.waiting);
        attentionState = { waiting: attention.waiting.length, badge: gatesView.badge, statusBar: statusBar.text };
        const places = runsByPlace(cache, (id) => hidden.has(id));
        const visible = places.current.length + places.history.length > 0;
        if (visible !== hasVisibleRuns) {
          hasVisibleRuns = visible;
          void vscode.commands.executeCommand('setContext', 'baton.hasVisibleRuns', visible);
        }
        if (hasRuns === cache.runs.length > 0) return;
        hasRuns = cache.runs.length > 0;
        void vscode.commands.executeCommand('setContext', 'baton.hasRuns', hasRuns);
      };
      const showIngestions = (): void => diagnostics.showCurrentProblems(cache);
      // The cache skips work while no Baton view (nor the dashboard) shows, and catches up when one does.
      const treeViews = [runsView, workersView, gatesView];
      const onVisibility = (): void => {
        treeViews.forEach((view, i) => cache.setVisible(['runs', 'workers', 'gates'][i]!, view.visible));
      };
      context.subscriptions.push(
        runs,
        workers,
        gates,
        ...treeViews,
        ...treeViews.map((v) => v.onDidChangeVisibility(onVisibility)),
        cache.onDidChange((change) => {
          // A heartbeat or a tick changes no count, no lens and no diagnostic.
          if (change.structure || change.runs.size || change.runtimes.size || change.gates.size) updateChrome();
          if (change.structure || change.runs.size || change.tasks.size || change.ingestions.size) lenses.refresh();
          // A result's problems go when its ingestion_failed gate closes, and come when one opens.
          if (change.structure || change.ingestions.size || change.gates.size || change.runs.size) showIngestions();
        }),
        current.onDidChangeDriving(updateChrome),
        attention.onDidChange(updateChrome),
        hidden.onDidChange(updateChrome),
      );
      onVisibility();
      updateChrome();
      showIngestions();
    }),
  );
  const configWatcher = new ConfigWatcher(current);
  context.subscriptions.push(configWatcher);
  // Off the activation path: open the store once VS Code is done activating.
  setTimeout(
    () =>
      void current.engine().catch((err: unknown) => {
        if (!configWatcher.showOpenFailure(err)) void vscode.window.showErrorMessage(describeError(err));
      }),
    0,
  );
  // The activation path's own cost (docs/benchmarks.md, activation row): the store opens after it.
  log.info(
    `Baton activated for ${folder.uri.fsPath} (workspace trusted: ${vscode.workspace.isTrusted}) in ${(performance.now() - activationStarted).toFixed(1)} ms.`,
  );
  return {
    session: current,
    views,
    diagnostics,
    reviews,
    dashboard: () => DashboardPanel.current,
    attention: () => attentionState,
    whenReady: async () => {
      await current.engine();
    },
    shutdown: () => current.windowClosing(),
  };
}

/** The window closes or reloads: the runs it drives are handed over or stopped, as `baton.onWindowClose` says. */
export async function deactivate(): Promise<void> {
  await session?.windowClosing();
  // VS Code disposed the session meanwhile (it does not wait for deactivate to do so): the store closes after the runs.
  await session?.whenStoreClosed();
}

/**
 * The log channel, whose methods never throw. VS Code disposes an extension's subscriptions —
 * the channel among them — right after it calls `deactivate`, without waiting for it; a closed
 * channel throws on every line. The window's closing work (handing runs over, stopping
 * workers) logs as it goes and must not be cut short by that.
 */
function silentOnceClosed(channel: vscode.LogOutputChannel): vscode.LogOutputChannel {
  return new Proxy(channel, {
    get(target, key, receiver): unknown {
      const value: unknown = Reflect.get(target, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        try {
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch {
          return undefined; // closed at deactivation: the line has nowhere to go
        }
      };
    },
  });
}

/**
 * `baton` on the PATH of this workspace's integrated terminals: a script (model/cliShim.ts) in the extension's storage
 * that runs the CLI it ships, prepended to PATH through the terminal environment VS Code manages for extensions
 * (new terminals get it; VS Code offers to relaunch open ones). Off with `baton.terminalPath: false`.
 */
async function putCliOnTerminalPath(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<void> {
  const collection = context.environmentVariableCollection;
  if (!vscode.workspace.getConfiguration('baton').get<boolean>('terminalPath', true)) return collection.clear();
  const cli = join(context.extensionPath, 'dist', 'cli.js');
  const bin = join(context.globalStorageUri.fsPath, 'bin');
  const shim = cliShim(process.execPath, cli, process.platform);
  try {
    await access(cli);
    await mkdir(bin, { recursive: true });
    await writeFile(join(bin, shim.name), shim.text, { mode: 0o755 });
    collection.description = 'Puts `baton` (the CLI of this Baton extension) on PATH.';
    collection.prepend('PATH', `${bin}${delimiter}`);
  } catch (err) {
    collection.clear();
    log.warn(`Could not put baton on the terminals' PATH: ${describeError(err)}`);
  }
}
