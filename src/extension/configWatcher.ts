import * as vscode from 'vscode';
import { BatonError, configPathOf, counted, hasErrors, loadConfig, type Issue } from '../engine/index';
import { toDiagnostic } from './diagnostics';
import { DisposableStore } from './lifecycle';
import type { BatonSession } from './session';

/**
 * `.baton/config.json` while the window is open (docs/extension.md, "Settings"): an edit is
 * applied at once — the engine reloads it for what starts from now on — and said so; an invalid
 * file shows its issues in Problems, at their lines, and Baton keeps the last valid settings. A
 * store that could not open because of the config opens by itself once the file is fixed.
 */
export class ConfigWatcher extends DisposableStore {
  private readonly diagnostics = this._register(vscode.languages.createDiagnosticCollection('baton-config'));
  private readonly uri: vscode.Uri;
  private pending: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly session: BatonSession) {
    super();
    this.uri = vscode.Uri.file(configPathOf(session.workspace));
    const watcher = this._register(
      vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(session.folder, '.baton/config.json')),
    );
    const changed = (): void => this.soon();
    this._register(watcher.onDidChange(changed));
    this._register(watcher.onDidCreate(changed));
    this._register(watcher.onDidDelete(changed));
    // A save in this window is seen at once, whatever the file watcher does.
    this._register(
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (d.uri.fsPath === this.uri.fsPath) this.soon();
      }),
    );
  }

  /** The store refused to open: show why, where it is. */
  showOpenFailure(err: unknown): boolean {
    if (!BatonError.is(err, 'config.invalid')) return false;
    this.showIssues(err.issues);
    void this.offerProblems(
      `Baton cannot open this workspace: .baton/config.json has ${counted(err.issues.filter((i) => i.severity === 'error').length, 'problem')} (see Problems). Baton opens by itself once the file is fixed.`,
    );
    return true;
  }

  override dispose(): void {
    if (this.pending) clearTimeout(this.pending);
    super.dispose();
  }

  /** A save writes the file and fires the watcher too: one reload for both. */
  private soon(): void {
    if (this.pending) clearTimeout(this.pending);
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.reload().catch((err: unknown) =>
        this.session.log.warn(`Could not reload .baton/config.json: ${(err as Error).message}`),
      );
    }, 150);
  }

  private async reload(): Promise<void> {
    const log = this.session.log;
    const engine = this.session.openedEngine;
    if (!engine) {
      // The store did not open (an invalid config refused it): try again with the file as it is now.
      const { issues } = loadConfig(this.session.workspace);
      this.showIssues(issues);
      if (hasErrors(issues)) return;
      await this.session.engine();
      log.info('.baton/config.json is valid now; the Baton store is open.');
      void vscode.window.showInformationMessage('Baton: .baton/config.json is valid now; Baton is ready.');
      return;
    }
    const outcome = engine.reloadConfig();
    this.showIssues(outcome.issues);
    // Runs that can still go on run on the settings and worker definitions they froze: the edit is told in their event
    // log (a worker may have made it), and their coordinator holds a changed worker they use at a config_changed gate.
    const told = await engine.noticeConfigChange().catch((err: unknown) => {
      log.warn(`Could not record the config change in the runs' event logs: ${(err as Error).message}`);
      return [];
    });
    if (!outcome.applied) {
      const errors = outcome.issues.filter((i) => i.severity === 'error').length;
      const message = `.baton/config.json has ${counted(errors, 'problem')} (see Problems); Baton keeps using the settings it had.`;
      log.warn(message);
      void this.offerProblems(`Baton: ${message}`);
      return;
    }
    if (!outcome.changed) return;
    const frozen = told.filter((t) => t.changes > 0).map((t) => t.runId);
    const message = `Baton reloaded .baton/config.json: new runs use it; runs already started keep the settings and worker definitions they froze${frozen.length ? ` — ${frozen.join(', ')} ${frozen.length === 1 ? 'uses' : 'use'} worker definitions that differ from the file now; a changed worker they use waits for your approval (config_changed gate)` : ''}.`;
    log.info(message);
    void vscode.window.showInformationMessage(message);
  }

  private showIssues(issues: readonly Issue[]): void {
    if (issues.length === 0) this.diagnostics.delete(this.uri);
    else
      this.diagnostics.set(
        this.uri,
        issues.map((i) => toDiagnostic(i)),
      );
  }

  private async offerProblems(message: string): Promise<void> {
    const pick = await vscode.window.showWarningMessage(message, 'Show Problems', 'Open config.json');
    if (pick === 'Show Problems') await vscode.commands.executeCommand('workbench.actions.view.problems');
    else if (pick === 'Open config.json') await vscode.window.showTextDocument(this.uri);
  }
}
