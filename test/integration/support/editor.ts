// Helpers for tests that run inside the extension host (bundled into each test file).
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
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
  { timeoutMs = 10_000, intervalMs = 50 } = {},
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
