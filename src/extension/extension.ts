import * as vscode from 'vscode';
import { AttemptViews } from './attemptViews';
import { registerCommands } from './commands';
import { ConfigWatcher } from './configWatcher';
import { BatonCodeLenses } from './codeLens';
import { ResultDiagnostics } from './diagnostics';
import { GateNotifications } from './gateNotifications';
import { BatonSession, describeError } from './session';
import { BatonStatusBar } from './statusBar';
import { DashboardPanel } from './dashboard';
import { GatesTreeProvider, RunsTreeProvider, WorkersTreeProvider } from './views';

let session: BatonSession | undefined;

/**
 * What `activate` returns: for the integration tests (and other extensions), the live
 * session and views, and the same shutdown that deactivation runs.
 */
export interface BatonApi {
  readonly session: BatonSession | undefined;
  readonly views: { runs?: RunsTreeProvider; workers?: WorkersTreeProvider; gates?: GatesTreeProvider };
  readonly diagnostics: ResultDiagnostics | undefined;
  /** The open dashboard panel, if any. */
  readonly dashboard: () => DashboardPanel | undefined;
  whenReady(): Promise<void>;
  shutdown(): Promise<void>;
}

/**
 * Activation registers views, commands and providers and nothing heavier: the store (sql.js,
 * snapshot, journal) opens right after, off the activation path, and the views fill in
 * when it is ready.
 */
export function activate(context: vscode.ExtensionContext): BatonApi {
  const activationStarted = performance.now();
  const log = vscode.window.createOutputChannel('Baton', { log: true });
  context.subscriptions.push(log);
  context.subscriptions.push(vscode.commands.registerCommand('baton.showLog', () => log.show()));
  const views: BatonApi['views'] = {};
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    log.info('Baton needs a folder: open one to run a plan.');
    return {
      session: undefined,
      views,
      diagnostics: undefined,
      dashboard: () => undefined,
      whenReady: async () => undefined,
      shutdown: async () => undefined,
    };
  }
  session = new BatonSession(folder, log, context.extensionPath);
  const current = session;
  context.subscriptions.push(session);
  const diagnostics = new ResultDiagnostics(folder.uri.fsPath);
  context.subscriptions.push(diagnostics);
  const attemptViews = new AttemptViews(session);
  context.subscriptions.push(attemptViews);
  context.subscriptions.push(...registerCommands(session, diagnostics, attemptViews));
  const lenses = new BatonCodeLenses(() => current.runState);
  context.subscriptions.push(lenses);
  const statusBar = new BatonStatusBar();
  context.subscriptions.push(statusBar);
  context.subscriptions.push(
    vscode.commands.registerCommand('baton.createExamplePlan', async () => {
      const uri = vscode.Uri.joinPath(folder.uri, 'baton-plan.md');
      await vscode.workspace.fs.writeFile(uri, Buffer.from(EXAMPLE_PLAN));
      await vscode.window.showTextDocument(uri);
    }),
    vscode.commands.registerCommand('baton.openDashboard', async (node?: { runId?: unknown }) => {
      try {
        await DashboardPanel.show(
          context.extensionUri,
          current,
          typeof node?.runId === 'string' ? node.runId : undefined,
        );
      } catch (err) {
        void vscode.window.showErrorMessage(describeError(err));
      }
    }),
    vscode.commands.registerCommand('baton.openDocs', () =>
      vscode.env.openExternal(vscode.Uri.joinPath(vscode.Uri.file(context.extensionPath), 'README.md')),
    ),
  );
  context.subscriptions.push(
    current.onRunStateReady((cache) => {
      void current.engine().then((engine) => context.subscriptions.push(new GateNotifications(engine)));
      lenses.refresh();
      // The Workers view subscribes first: a heartbeat's refresh leaves before the Runs view's.
      const workers = new WorkersTreeProvider(cache);
      const runs = new RunsTreeProvider(cache);
      const gates = new GatesTreeProvider(cache);
      Object.assign(views, { runs, workers, gates });
      const runsView = vscode.window.createTreeView('baton.runs', { treeDataProvider: runs, showCollapseAll: true });
      const workersView = vscode.window.createTreeView('baton.workers', { treeDataProvider: workers });
      const gatesView = vscode.window.createTreeView('baton.gates', { treeDataProvider: gates });
      let hasRuns: boolean | undefined;
      const updateChrome = (): void => {
        const open = gates.count;
        gatesView.badge =
          open > 0
            ? { value: open, tooltip: `${open} gate${open === 1 ? '' : 's'} waiting for a decision` }
            : undefined;
        statusBar.update(cache, current.drivenRuns);
        if (hasRuns === cache.runs.length > 0) return;
        hasRuns = cache.runs.length > 0;
        void vscode.commands.executeCommand('setContext', 'baton.hasRuns', hasRuns);
      };
      const showIngestions = (): void =>
        diagnostics.showIngestions(
          cache,
          cache.runs.slice(0, 3).map((r) => r.id),
        );
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
          if (change.structure || change.ingestions.size) showIngestions();
        }),
        current.onDidChangeDriving(updateChrome),
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
    dashboard: () => DashboardPanel.current,
    whenReady: async () => {
      await current.engine();
    },
    shutdown: () => current.shutdown(),
  };
}

/** Ends every worker this window started, within VS Code's deactivation budget. */
export async function deactivate(): Promise<void> {
  await session?.shutdown();
}

const EXAMPLE_PLAN = `# Example plan

Each task is a \`baton-task\` block; the text after it is the task's instructions.

\`\`\`baton-task
id: T1
title: Say hello
\`\`\`
Write hello.txt with a greeting.

\`\`\`baton-task
id: T2
title: Check it
depends: [T1]
\`\`\`
Read hello.txt and report whether it is friendly.
`;
