// Helpers for tests that run inside the extension host (bundled into each test file).
import { existsSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';

export const EXTENSION_ID = 'baton-dev.baton';

/** Baton as the extension host sees it (installed or under development). */
export function batonExtension(): vscode.Extension<unknown> {
  const extension = vscode.extensions.getExtension(EXTENSION_ID);
  if (!extension) throw new Error(`${EXTENSION_ID} is not loaded in this extension host.`);
  return extension;
}

/** Activates Baton if an activation event has not done it yet. */
export async function activateBaton(): Promise<vscode.Extension<unknown>> {
  const extension = batonExtension();
  if (!extension.isActive) await extension.activate();
  return extension;
}

/** The window's (only) workspace folder. */
export function workspaceFolder(): vscode.WorkspaceFolder {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('The test window has no workspace folder.');
  return folder;
}

/** A path inside the workspace folder. */
export function workspacePath(...segments: string[]): string {
  return join(workspaceFolder().uri.fsPath, ...segments);
}

/**
 * Removes a folder of the workspace that VS Code's git extension may still be writing into (a `.git` it watches: each
 * file the removal deletes makes it run `git status` again, which writes there again, so `rm -rf` in place can keep
 * meeting a folder that is not empty). The folder is first renamed out of the workspace, where no watcher and no git
 * run started from the workspace reaches it, then removed there.
 */
export function removeFromWorkspace(...segments: string[]): void {
  const path = workspacePath(...segments);
  if (!existsSync(path)) return;
  const aside = join(
    dirname(workspaceFolder().uri.fsPath),
    `removed-${process.pid}-${Date.now()}-${segments.join('-').replace(/[^\w.]+/g, '-')}`,
  );
  renameSync(path, aside);
  rmSync(aside, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
}

/**
 * The folder test/runIntegration.ts opened (a fresh copy of
 * test/integration/fixtures/workspace), as a real path; undefined when the suite was
 * started some other way.
 */
export function expectedWorkspace(): string | undefined {
  const path = process.env.BATON_TEST_WORKSPACE;
  return path ? realpathSync(path) : undefined;
}

/** Polls until `check` returns a truthy value (returned) or fails with `what` after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  { timeoutMs = 30_000, intervalMs = 50 } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value as NonNullable<T>;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const cause = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}${cause}.`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

export interface ShownMessage {
  level: 'information' | 'warning' | 'error';
  message: string;
}

/**
 * What Baton shows with `vscode.window.show{Information,Warning,Error}Message` while `body`
 * runs, each answered as if the person dismissed it. The tests are bundled inside the
 * extension's folder, so the extension host gives them and Baton the same `vscode` object,
 * and Baton's calls come here.
 */
export async function messagesShownDuring(body: () => PromiseLike<unknown>): Promise<ShownMessage[]> {
  const window = vscode.window as unknown as Record<string, unknown>;
  const levels = { showInformationMessage: 'information', showWarningMessage: 'warning', showErrorMessage: 'error' };
  const originals = Object.keys(levels).map((name) => [name, window[name]] as const);
  const shown: ShownMessage[] = [];
  for (const [name, level] of Object.entries(levels))
    window[name] = (message: string) => {
      shown.push({ level: level as ShownMessage['level'], message });
      return Promise.resolve(undefined);
    };
  try {
    await body();
  } finally {
    for (const [name, original] of originals) window[name] = original;
  }
  return shown;
}

/** The Output panel's editor on Baton's log channel, when it is visible. */
export function visibleBatonLog(): vscode.TextEditor | undefined {
  return vscode.window.visibleTextEditors.find(
    (editor) => editor.document.uri.scheme === 'output' && /\bBaton$/.test(editor.document.uri.path),
  );
}

/**
 * Runs `baton.showLog` with the panel closed first, and returns the log it revealed: a
 * command that did nothing leaves no Baton log visible and fails here.
 */
export async function showBatonLog(): Promise<vscode.TextEditor> {
  await vscode.commands.executeCommand('workbench.action.closePanel');
  await waitFor('the Output panel to close', () => !visibleBatonLog());
  await vscode.commands.executeCommand('baton.showLog');
  return waitFor('the Baton log in the Output panel', visibleBatonLog);
}
