// What a window on the shared code-server (sharedCodeServer.ts) gets that a code-server of its
// own would get from its start: the environment of its extension host. code-server starts every
// window's extension host with its own environment, and VS Code 1.99's web workbench passes
// none of its own (its payload has no `extensionEnvironment`). So a small test-only extension,
// installed beside Baton on the shared server only, sets the window's variables in its extension
// host, read from a file beside the workspace copy (outside the folder, so the workspace stays as
// the test made it). Baton reads those variables when it starts a process (DEMO_AGENT_STEP_MS
// reaches the demo agent through the worker's environment), never while it activates. A variable
// Baton reads while it activates (BATON_STORE_URL, BATON_HOST_ID, BATON_USER: team.test.ts) needs
// a code-server of its own.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const ID = 'baton-e2e.window-env';
const ENV_FILE = 'baton-e2e-window-env.json';
const APPLIED = /^baton-e2e-window-env\.(\d+)\.applied$/;

/**
 * The extension: at load (its activation event is `*`, VS Code's earliest), it merges the
 * variables into process.env (null removes one), then leaves a marker `<parent>/<name>.<pid>.applied`:
 * the test waits for it, and it names the window's extension host (a reload starts a new one).
 */
const EXTENSION_JS = `'use strict';
const fs = require('fs');
const path = require('path');
const vscode = require('vscode');
const folder = vscode.workspace.workspaceFolders && vscode.workspace.workspaceFolders[0];
if (folder && folder.uri.scheme === 'file') {
  const parent = path.dirname(folder.uri.fsPath);
  const file = path.join(parent, ${JSON.stringify(ENV_FILE)});
  if (fs.existsSync(file)) {
    const env = JSON.parse(fs.readFileSync(file, 'utf8'));
    for (const [name, value] of Object.entries(env)) {
      if (value === null) delete process.env[name];
      else process.env[name] = String(value);
    }
    fs.writeFileSync(path.join(parent, ${JSON.stringify(ENV_FILE.replace(/\.json$/, ''))} + '.' + process.pid + '.applied'), '');
  }
}
exports.activate = function () {};
exports.deactivate = function () {};
`;

/** Installs the extension into an extensions folder (the shared code-server's). */
export function installWindowEnvExtension(extensionsDir: string): void {
  const target = join(extensionsDir, `${ID}-0.0.1`);
  mkdirSync(target, { recursive: true });
  const manifest = {
    name: 'window-env',
    publisher: 'baton-e2e',
    version: '0.0.1',
    private: true,
    description: 'Test-only: sets a window’s extension host environment (test/e2e/support/windowEnv.ts).',
    engines: { vscode: '^1.99.0' },
    activationEvents: ['*'],
    main: './extension.js',
    capabilities: { untrustedWorkspaces: { supported: true }, virtualWorkspaces: true },
  };
  writeFileSync(join(target, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(target, 'extension.js'), EXTENSION_JS);
}

/**
 * Writes the environment a window on `workspace` (a copyWorkspace() copy) gets, beside the copy.
 * `undefined` removes a variable, as startBatonCodeServer's `env` does.
 */
export function writeWindowEnv(workspace: string, env: Record<string, string | undefined>): void {
  const values = Object.fromEntries(Object.entries(env).map(([name, value]) => [name, value ?? null]));
  writeFileSync(join(dirname(workspace), ENV_FILE), `${JSON.stringify(values, null, 2)}\n`);
}

/** The pids of the extension hosts that have taken a window's environment (oldest reload first is not promised). */
export function windowExtensionHosts(workspace: string): number[] {
  const parent = dirname(workspace);
  if (!existsSync(parent)) return [];
  return readdirSync(parent).flatMap((name) => {
    const match = APPLIED.exec(name);
    return match ? [Number(match[1])] : [];
  });
}

/** True while the window-env file of this workspace has not been read by any extension host. */
export function windowEnvPending(workspace: string): boolean {
  return existsSync(join(dirname(workspace), ENV_FILE)) && windowExtensionHosts(workspace).length === 0;
}

/** The variables written for a workspace's window, if any (for failure messages). */
export function readWindowEnv(workspace: string): Record<string, string | null> | undefined {
  const file = join(dirname(workspace), ENV_FILE);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string | null>) : undefined;
}
