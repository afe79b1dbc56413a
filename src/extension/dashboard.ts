import { randomBytes } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import * as vscode from 'vscode';
import { parseWebviewMessage, type HostMessage, type WebviewMessage } from '../protocol/messages';
import { DashboardFeed } from './model/dashboardFeed';
import { DisposableStore } from './lifecycle';
import type { RunStateCache } from './model/runState';
import { describeError, UserFacingError, type BatonSession } from './session';

const VISIBILITY_SOURCE = 'dashboard';

/**
 * The dashboard webview panel (docs/extension.md, "Dashboard"): a live picture of one run.
 * One panel per window; opening it again reveals it. The webview is a separate bundle
 * (dist/webview) under a strict CSP; the host validates every message it receives and
 * answers only the ones the protocol defines. Not kept alive while hidden: on show, the
 * webview says `ready` again and gets a fresh snapshot.
 */
export class DashboardPanel extends DisposableStore {
  static current: DashboardPanel | undefined;
  static readonly viewType = 'baton.dashboard';
  private readonly feed: DashboardFeed;
  /** Messages the webview sent that were rejected (for tests and the log). */
  rejected = 0;

  static async show(extensionUri: vscode.Uri, session: BatonSession, runId?: string): Promise<DashboardPanel> {
    await session.engine();
    const cache = session.runState!;
    const existing = DashboardPanel.current;
    if (existing) {
      // One panel per window: another run is shown in it, not in a second tab.
      if (runId) await existing.feed.showRun(runId);
      existing.panel.reveal();
      return existing;
    }
    const panel = vscode.window.createWebviewPanel(
      DashboardPanel.viewType,
      'Baton Dashboard',
      vscode.ViewColumn.Active,
      webviewOptions(extensionUri),
    );
    DashboardPanel.current = new DashboardPanel(panel, extensionUri, session, cache, runId);
    return DashboardPanel.current;
  }

  /**
   * The panel VS Code kept across a reload (or a restart), handed back by the serializer: the
   * dashboard comes back on the run it showed — the webview saved its id with its filter and
   * selection, which it finds again in its state. A run that is gone gives way to the newest.
   */
  static async revive(
    panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    session: BatonSession,
    saved: unknown,
  ): Promise<DashboardPanel> {
    panel.webview.options = webviewOptions(extensionUri);
    const engine = await session.engine();
    const savedRunId = (saved as { runId?: unknown } | undefined)?.runId;
    const runId =
      typeof savedRunId === 'string' && (await engine.listRuns()).some((r) => r.id === savedRunId)
        ? savedRunId
        : undefined;
    if (DashboardPanel.current && DashboardPanel.current.panel !== panel) DashboardPanel.current.panel.dispose();
    DashboardPanel.current = new DashboardPanel(panel, extensionUri, session, session.runState!, runId);
    session.log.info(`Dashboard restored${runId ? ` on ${runId}` : ''}.`);
    return DashboardPanel.current;
  }

  private constructor(
    readonly panel: vscode.WebviewPanel,
    extensionUri: vscode.Uri,
    private readonly session: BatonSession,
    cache: RunStateCache,
    runId: string | undefined,
  ) {
    super();
    panel.iconPath = vscode.Uri.joinPath(extensionUri, 'media', 'baton.svg');
    this.feed = this._register(
      new DashboardFeed(
        cache,
        {
          ...(runId ? { runId } : {}),
          coordinatedHere: (id) => session.drivenRuns.includes(id),
          maxConcurrency: () =>
            vscode.workspace.getConfiguration('baton', session.folder).get<number | null>('maxConcurrency') ??
            cache.config.maxConcurrency,
          log: (line) => session.log.warn(line),
        },
        (message) => this.post(message),
      ),
    );
    panel.webview.html = dashboardHtml(panel.webview, extensionUri);
    this._register(panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)));
    // The panel counts as a surface of the cache: while it shows, the cache follows at full pace.
    cache.setVisible(VISIBILITY_SOURCE, panel.visible);
    this._register({ dispose: () => cache.setVisible(VISIBILITY_SOURCE, false) });
    this._register(
      panel.onDidChangeViewState(() => {
        cache.setVisible(VISIBILITY_SOURCE, panel.visible);
        // Hidden: the webview's document is gone; it says `ready` again when shown.
        if (!panel.visible) this.feed.pause();
      }),
    );
    this._register(session.onDidChangeDriving(() => this.feed.touch()));
    this._register(
      panel.onDidDispose(() => {
        if (DashboardPanel.current === this) DashboardPanel.current = undefined;
        this.dispose();
      }),
    );
  }

  get runId(): string | undefined {
    return this.feed.currentRunId;
  }

  private post(message: HostMessage): void {
    void this.panel.webview.postMessage(message);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = parseWebviewMessage(raw);
    if (!parsed.ok) {
      this.rejected++;
      this.session.log.warn(`Dashboard: ${parsed.error}; ignored.`);
      return;
    }
    try {
      await this.handle(parsed.message);
    } catch (err) {
      const message = describeError(err);
      this.session.log.warn(`Dashboard ${parsed.message.type}: ${message}`);
      this.post({ type: 'notice', level: 'error', message });
    }
  }

  private async handle(message: WebviewMessage): Promise<void> {
    const runId = this.feed.currentRunId;
    const runNode = runId ? { kind: 'run', id: `run:${runId}`, runId } : undefined;
    switch (message.type) {
      case 'ready':
        await this.feed.sendSnapshot();
        return;
      case 'requestTaskDetails':
        this.post(await this.feed.taskDetails(message.taskId));
        return;
      case 'approveGate':
        await vscode.commands.executeCommand('baton.approveGate', {
          kind: 'gate',
          id: `gate:${message.gateId}`,
          gateId: message.gateId,
          ...(message.note ? { note: message.note } : {}),
        });
        break;
      case 'answerQuestion':
        await vscode.commands.executeCommand('baton.answerQuestion', {
          kind: 'gate',
          id: `gate:${message.gateId}`,
          gateId: message.gateId,
        });
        break;
      case 'resolveConflict':
        await vscode.commands.executeCommand('baton.resolveConflict', {
          kind: 'gate',
          id: `gate:${message.gateId}`,
          ...(runId ? { runId } : {}),
          gateId: message.gateId,
        });
        break;
      case 'rejectGate':
        await vscode.commands.executeCommand('baton.rejectGate', {
          kind: 'gate',
          id: `gate:${message.gateId}`,
          gateId: message.gateId,
          note: message.note,
        });
        break;
      case 'stopRun':
        if (!runNode) throw new UserFacingError('There is no run to stop.');
        await vscode.commands.executeCommand(
          message.mode === 'immediate' ? 'baton.stopRunImmediately' : 'baton.stopRun',
          runNode,
          message.mode,
        );
        break;
      case 'resumeRun':
        if (!runNode) throw new UserFacingError('There is no run to resume.');
        await vscode.commands.executeCommand('baton.resumeRun', runNode);
        break;
      case 'showRun':
        if (!(await (await this.session.engine()).listRuns()).some((r) => r.id === message.runId))
          throw new UserFacingError(`There is no run ${message.runId} in this workspace.`);
        await this.feed.showRun(message.runId);
        return;
      case 'openArtifact':
        await this.openInWorkspace(message.path, message.line, message.column);
        return;
      case 'showChanges':
      case 'showOutput':
        if (!runId) throw new UserFacingError('There is no run shown.');
        await vscode.commands.executeCommand(
          message.type === 'showChanges' ? 'baton.showChanges' : 'baton.showOutput',
          {
            kind: 'delegation',
            id: `delegation:${runId}/${message.delegationId}`,
            runId,
            delegationId: message.delegationId,
          },
        );
        return;
    }
    this.feed.touch();
  }

  /** Opens a file the dashboard named — only inside this workspace folder — at the given position. */
  private async openInWorkspace(path: string, line?: number, column?: number): Promise<void> {
    const root = this.session.workspace;
    const absolute = isAbsolute(path) ? resolve(path) : resolve(join(root, path));
    let real: string;
    try {
      real = realpathSync(absolute);
    } catch {
      throw new UserFacingError(`${path} does not exist (any more).`);
    }
    const inside = relative(realpathSync(root), real);
    if (inside.startsWith('..') || isAbsolute(inside))
      throw new UserFacingError(`The dashboard opens files of this workspace only; ${path} is outside it.`);
    const position = new vscode.Position(Math.max(0, (line ?? 1) - 1), Math.max(0, (column ?? 1) - 1));
    // Beside the dashboard, so that it stays in view.
    await vscode.window.showTextDocument(vscode.Uri.file(real), {
      selection: new vscode.Range(position, position),
      preview: false,
      viewColumn: vscode.ViewColumn.Beside,
    });
  }
}

/** Scripts on, and only the webview bundle and media/ to load from (also set again on a restored panel). */
function webviewOptions(extensionUri: vscode.Uri): vscode.WebviewPanelOptions & vscode.WebviewOptions {
  return {
    enableScripts: true,
    localResourceRoots: [
      vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      vscode.Uri.joinPath(extensionUri, 'media'),
    ],
  };
}

/** The webview's document: its own script with a nonce, the stylesheet from media/, nothing else may load. */
export function dashboardHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = randomBytes(16).toString('base64');
  const script = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'dist', 'webview', 'dashboard.js'));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, 'media', 'dashboard.css'));
  const csp = [
    `default-src 'none'`,
    `style-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
    `script-src 'nonce-${nonce}'`,
  ].join('; ');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="${style.toString()}">
<title>Baton Dashboard</title>
</head>
<body>
<div id="root"></div>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
