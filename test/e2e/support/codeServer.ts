import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CODE_SERVER_VERSION,
  ensureCodeServer,
  startCodeServer,
  type RunningCodeServer,
} from '../../../scripts/codeServer.mjs';
import { CHECKOUT_UNDER_TEST, ROOT } from './paths';

export { CODE_SERVER_VERSION, ensureCodeServer };

/**
 * User settings for a test editor: no welcome page, no gallery or update checks (the
 * network is closed here and they only add noise and time), no tips or walkthroughs.
 * Used by both hosts: desktop VS Code and code-server read `<user-data-dir>/User/settings.json`.
 */
export const TEST_USER_SETTINGS: Readonly<Record<string, unknown>> = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'chat.commandCenter.enabled': false,
  'git.openRepositoryInParentFolders': 'never',
  'security.workspace.trust.startupPrompt': 'never',
  'window.dialogStyle': 'custom',
};

/** Writes `<userDataDir>/User/settings.json` (TEST_USER_SETTINGS plus `extra`). */
export function writeUserSettings(userDataDir: string, extra: Record<string, unknown> = {}): void {
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  writeFileSync(
    join(userDataDir, 'User', 'settings.json'),
    `${JSON.stringify({ ...TEST_USER_SETTINGS, ...extra }, null, 2)}\n`,
  );
}

interface Manifest {
  publisher: string;
  name: string;
  version: string;
}

/** Baton's package.json: `<publisher>.<name>` is the extension id. */
export function batonManifest(): Manifest {
  return JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Manifest;
}

/**
 * Installs the built extension into an extensions folder the way a `.vsix` would land:
 * `<extensionsDir>/<publisher>.<name>-<version>` with package.json, dist/, media/,
 * schemas/ and docs/ (and README.md), what .vscodeignore ships. code-server loads such a
 * folder without an `extensions.json`.
 * Needs `npm run build` first.
 */
export function installBatonExtension(extensionsDir: string, root = CHECKOUT_UNDER_TEST): string {
  const manifest = batonManifest();
  if (!existsSync(join(root, 'dist', 'extension.js')))
    throw new Error(`${join(root, 'dist', 'extension.js')} is missing: run \`npm run build\` first.`);
  const target = join(extensionsDir, `${manifest.publisher}.${manifest.name}-${manifest.version}`);
  rmSync(target, { recursive: true, force: true });
  mkdirSync(target, { recursive: true });
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'dist', 'media', 'schemas', 'docs']) {
    const source = join(root, entry);
    if (existsSync(source))
      cpSync(source, join(target, entry), { recursive: true, filter: (path) => !path.endsWith('.map') });
  }
  return target;
}

export interface BatonCodeServerOptions {
  /** The folder to open; usually a copyWorkspace() copy. */
  folder?: string;
  /** Keep workspace trust on (default: off, i.e. `--disable-workspace-trust`). */
  trust?: boolean;
  /** Install the built extension (default true); false for a bare editor. */
  installExtension?: boolean;
  /** Settings on top of TEST_USER_SETTINGS. */
  settings?: Record<string, unknown>;
  /** Write the user settings (default true); false keeps a settings.json already there. */
  writeSettings?: boolean;
  /** Environment for code-server and its extension host. */
  env?: Record<string, string | undefined>;
  /** Use these folders instead of temporary ones (they are then kept on stop()). */
  userDataDir?: string;
  extensionsDir?: string;
  extraArgs?: string[];
  onLine?: (line: string) => void;
}

export interface BatonCodeServer {
  /** http://127.0.0.1:<port> */
  readonly url: string;
  /** host:port, the authority of vscode-remote:// URIs. */
  readonly authority: string;
  readonly userDataDir: string;
  readonly extensionsDir: string;
  readonly process: RunningCodeServer['child'];
  /** Every line code-server has logged. */
  readonly lines: readonly string[];
  /** On the shared code-server (sharedCodeServer.ts): the Baton log files of earlier windows, not this editor's. */
  readonly logFilesBefore?: ReadonlySet<string>;
  /** The last `count` lines of its log, for failure messages. */
  logTail(count?: number): string;
  /** The workbench URL for a folder (default: the folder it was started on). */
  workbenchUrl(folder?: string, payload?: ReadonlyArray<readonly [string, string]>): string;
  /** Kills code-server's process group and removes the temporary folders. */
  stop(): Promise<void>;
}

/**
 * Starts code-server (installed on demand into .cache/) with its own temporary user data
 * and extensions folders, Baton installed, and quiet settings.
 */
export async function startBatonCodeServer(options: BatonCodeServerOptions = {}): Promise<BatonCodeServer> {
  const owned =
    options.userDataDir && options.extensionsDir ? undefined : mkdtempSync(join(tmpdir(), 'baton-code-server-'));
  const userDataDir = options.userDataDir ?? join(owned ?? '', 'user-data');
  const extensionsDir = options.extensionsDir ?? join(owned ?? '', 'extensions');
  mkdirSync(userDataDir, { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  if (options.writeSettings !== false) writeUserSettings(userDataDir, options.settings);
  if (options.installExtension !== false) installBatonExtension(extensionsDir);
  let running: RunningCodeServer;
  try {
    running = await startCodeServer({
      folder: options.folder,
      extensionsDir,
      userDataDir,
      trust: options.trust ?? false,
      extraArgs: options.extraArgs ?? [],
      env: options.env ?? {},
      onLine: options.onLine,
    });
  } catch (err) {
    if (owned) rmSync(owned, { recursive: true, force: true });
    throw err;
  }
  const authority = new URL(running.url).host;
  let stopping: Promise<void> | undefined;
  return {
    url: running.url,
    authority,
    userDataDir,
    extensionsDir,
    process: running.child,
    lines: running.lines,
    logTail: (count = 40) => running.lines.slice(-count).join('\n'),
    workbenchUrl: (folder = options.folder, payload) => workbenchUrl(running.url, folder, payload),
    stop: () =>
      (stopping ??= running.stop().finally(() => {
        if (owned) rmSync(owned, { recursive: true, force: true });
      })),
  };
}

/**
 * `<url>/?folder=<folder>&payload=<json>`: code-server's workbench on a folder. The payload
 * is VS Code's web "workspace provider" payload, e.g. testPayload(…) to run extension tests.
 */
export function workbenchUrl(url: string, folder?: string, payload?: ReadonlyArray<readonly [string, string]>): string {
  const query = new URLSearchParams();
  if (folder) query.set('folder', folder);
  if (payload?.length) query.set('payload', JSON.stringify(payload));
  const search = query.toString();
  return `${url}/${search ? `?${search}` : ''}`;
}

/**
 * The payload that makes code-server's extension host load a development extension and
 * run extension tests (paths on the code-server machine).
 */
export function testPayload(
  authority: string,
  extensionDevelopmentPaths: readonly string[],
  extensionTestsPath?: string,
): Array<[string, string]> {
  const remote = (path: string): string => `vscode-remote://${authority}${encodeURI(path)}`;
  return [
    ...extensionDevelopmentPaths.map((path): [string, string] => ['extensionDevelopmentPath', remote(path)]),
    ...(extensionTestsPath ? [['extensionTestsPath', remote(extensionTestsPath)] as [string, string]] : []),
  ];
}

/** code-server logs this when an extension host process starts. */
export const EXTENSION_HOST_LAUNCHED = /\[ExtensionHostConnection\] <(\d+)> Launched Extension Host Process/;
/** …and this when it ends: the exit code of an extension test run. */
export const EXTENSION_HOST_EXITED =
  /\[ExtensionHostConnection\] <(\d+)> Extension Host Process exited with code: (-?\d+|null), signal: (\w+)/;

/**
 * Resolves with the first log line (from `from` on) that matches, polling every 100 ms;
 * rejects after `timeoutMs` with the log tail, or if code-server exits first.
 */
export async function waitForLogLine(
  server: Pick<BatonCodeServer, 'lines' | 'process' | 'logTail'>,
  pattern: RegExp,
  options: { timeoutMs?: number; from?: number } = {},
): Promise<RegExpExecArray> {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  let index = options.from ?? 0;
  for (;;) {
    for (; index < server.lines.length; index++) {
      const match = pattern.exec(server.lines[index] ?? '');
      if (match) return match;
    }
    if (server.process.exitCode !== null || server.process.signalCode !== null) {
      throw new Error(`code-server exited before logging ${pattern}:\n${server.logTail()}`);
    }
    if (Date.now() > deadline) throw new Error(`code-server did not log ${pattern} in time:\n${server.logTail()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
