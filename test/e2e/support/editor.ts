import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { batonLog, batonLogFiles, eventually, isPidAlive } from './baton';
import { launchChromium, openWorkbench, screenshot, waitForWorkbench, type Workbench } from './browser';
import {
  EXTENSION_HOST_LAUNCHED,
  startBatonCodeServer,
  waitForLogLine,
  type BatonCodeServer,
  type BatonCodeServerOptions,
} from './codeServer';
import { RESULTS_DIR } from './paths';
import { freshPage, sharedCodeServer } from './sharedCodeServer';
import { windowExtensionHosts, writeWindowEnv } from './windowEnv';
import { copyWorkspace, removeWorkspace } from './workspace';

export interface BatonEditor {
  readonly workspace: string;
  /** The code-server the window is on: the run's shared one, or the editor's own. */
  readonly server: BatonCodeServer;
  readonly browser: Browser;
  readonly workbench: Workbench;
  readonly page: Page;
}

export interface BatonEditorOptions extends Omit<BatonCodeServerOptions, 'folder'> {
  /** The folder to copy and open (default: test/integration/fixtures/workspace). */
  source?: string;
  /** Viewport of the page (default 1400×900). */
  viewport?: { width: number; height: number };
  /**
   * 'shared' (the default): a window on the run's one code-server (sharedCodeServer.ts), with
   * `settings` written to the workspace copy's .vscode/settings.json and `env` given to the window's
   * extension host (windowEnv.ts). 'own': a code-server of its own, for a test of what happens when
   * code-server starts (`trust`, and the other server options) or of variables Baton reads while it
   * activates; `settings` are then user settings.
   */
  server?: 'shared' | 'own';
}

/** Options only a code-server of the editor's own can honour (they are fixed when code-server starts). */
const OWN_SERVER_OPTIONS = [
  'trust',
  'installExtension',
  'writeSettings',
  'userDataDir',
  'extensionsDir',
  'extraArgs',
  'onLine',
] as const;

/**
 * Opens Baton in a real editor: a fresh copy of a workspace, a window on code-server with the
 * built extension installed (the run's shared code-server, or one of its own), Chromium on the
 * workbench, waiting for the window's extension host. close() undoes all of it.
 */
export async function openBatonEditor(
  options: BatonEditorOptions = {},
): Promise<BatonEditor & { close(): Promise<void> }> {
  return options.server === 'own' ? openOnOwnServer(options) : openOnSharedServer(options);
}

async function openOnOwnServer(options: BatonEditorOptions): Promise<BatonEditor & { close(): Promise<void> }> {
  const { source, viewport, server: _server, ...serverOptions } = options;
  const workspace = copyWorkspace(source);
  let server: BatonCodeServer | undefined;
  let browser: Browser | undefined;
  const close = async (): Promise<void> => {
    await browser?.close().catch(() => undefined);
    await server?.stop();
    removeWorkspace(workspace);
  };
  try {
    server = await startBatonCodeServer({ ...serverOptions, folder: workspace });
    browser = await launchChromium();
    const workbench = await openWorkbench(browser, server.workbenchUrl(), viewport ? { viewport } : {});
    await waitForLogLine(server, EXTENSION_HOST_LAUNCHED);
    return { workspace, server, browser, workbench, page: workbench.page, close };
  } catch (err) {
    await close();
    throw err;
  }
}

async function openOnSharedServer(options: BatonEditorOptions): Promise<BatonEditor & { close(): Promise<void> }> {
  const misplaced = OWN_SERVER_OPTIONS.filter((name) => options[name] !== undefined);
  if (misplaced.length)
    throw new Error(`${misplaced.join(', ')}: set when code-server starts, so only with server: 'own'.`);
  const shared = await sharedCodeServer();
  const workspace = copyWorkspace(options.source);
  if (options.settings) writeWorkspaceSettings(workspace, options.settings);
  // Always written, also empty: the window-env extension's marker names the window's extension host.
  writeWindowEnv(workspace, options.env ?? {});
  // Earlier windows' logs are not this editor's (batonLog leaves them out).
  const logFilesBefore = new Set(batonLogFiles(shared.userDataDir));
  const server: BatonCodeServer = {
    url: shared.url,
    authority: shared.authority,
    userDataDir: shared.userDataDir,
    extensionsDir: shared.extensionsDir,
    process: shared.process,
    lines: shared.lines,
    logFilesBefore,
    logTail: (count) => shared.logTail(count),
    workbenchUrl: (folder = workspace, payload) => shared.workbenchUrl(folder, payload),
    // The code-server is the run's: stopping it is closing this editor's window.
    stop: () => close(),
  };
  let page: Page | undefined;
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      await closeWindow(workspace, page);
      await page?.close().catch(() => undefined);
      removeWorkspace(workspace);
    })());
  try {
    const opened = await freshPage(shared.url, options.viewport);
    page = opened.page;
    // The workbench's first load can take well over playwright's default 30 s on a loaded machine.
    await page.goto(server.workbenchUrl(), { timeout: 120_000 });
    await waitForWorkbench(page);
    await eventually(
      'the window’s extension host to start',
      async () => windowExtensionHosts(workspace).length,
      (n) => n > 0,
      { timeoutMs: 120_000, intervalMs: 200 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\ncode-server's log ends with:\n${shared.logTail()}`);
    });
    const workbench: Workbench = { context: opened.context, page, close: () => page!.close() };
    return { workspace, server, browser: opened.browser, workbench, page, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/**
 * Closes a window on the shared code-server so that nothing of it is left for the next suite:
 * the page leaves the workbench as a closing tab does (VS Code then ends the window's extension
 * host and connection at once; a page that just vanished would keep them for reconnection,
 * 5 minutes to 3 hours), and an extension host still there after 20 s (one frozen by a test, or
 * slow to deactivate under load) is killed. Every extension host of the window is waited for,
 * reloads included (each left its marker).
 */
async function closeWindow(workspace: string, page: Page | undefined): Promise<void> {
  // A "leave this page?" question (unsaved files) is answered yes, as closing the tab would be.
  page?.on('dialog', (dialog) => void dialog.accept().catch(() => undefined));
  await page?.goto('about:blank', { timeout: 30_000 }).catch(() => undefined);
  const hosts = (): number[] => windowExtensionHosts(workspace).filter(isExtensionHost);
  const gone = await eventually(
    'the window’s extension hosts to end',
    async () => hosts(),
    (left) => left.length === 0,
    {
      timeoutMs: 20_000,
      intervalMs: 200,
    },
  ).then(
    () => true,
    () => false,
  );
  if (gone) return;
  for (const pid of hosts()) {
    try {
      process.kill(pid, 'SIGCONT');
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  await eventually(
    'the killed extension hosts to be gone',
    async () => hosts(),
    (left) => left.length === 0,
    {
      timeoutMs: 10_000,
    },
  );
}

/** True while `pid` is a live extension host (not a later process that took its pid). */
function isExtensionHost(pid: number): boolean {
  try {
    return isPidAlive(pid) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('--type=extensionHost');
  } catch {
    return false;
  }
}

/** Writes settings into a workspace copy's .vscode/settings.json (merged with what it holds). */
export function writeWorkspaceSettings(workspace: string, settings: Record<string, unknown>): void {
  const file = join(workspace, '.vscode', 'settings.json');
  const before = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  mkdirSync(join(workspace, '.vscode'), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ ...before, ...settings }, null, 2)}\n`);
}

/**
 * Mocha hooks for an e2e suite: one editor for the suite (before/after), and a screenshot
 * in test-results/ of every failed test. Read the editor from the returned holder inside
 * tests: `const editor = useBatonEditor(); it('…', async () => editor.current.page…)`.
 */
export function useBatonEditor(options: BatonEditorOptions = {}): { readonly current: BatonEditor } {
  let opened: (BatonEditor & { close(): Promise<void> }) | undefined;
  before(async function () {
    // The first window also starts the run's code-server.
    this.timeout(180_000);
    opened = await openBatonEditor(options);
  });
  afterEach(async function () {
    const test = this.currentTest;
    if (opened && test?.state === 'failed') {
      await screenshot(opened.page, `failed-${test.fullTitle()}`).catch(() => undefined);
      saveBatonLog(opened.server, `failed-${test.fullTitle()}`);
    }
  });
  after(async function () {
    this.timeout(90_000);
    await opened?.close();
  });
  return {
    get current(): BatonEditor {
      if (!opened) throw new Error('The editor is not open (useBatonEditor opens it in a before hook).');
      return opened;
    },
  };
}

/** Saves the Baton output channel's log next to the failure screenshot: test-results/<name>.baton.log. */
export function saveBatonLog(server: Parameters<typeof batonLog>[0], name: string): void {
  try {
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, `${name.replace(/[^A-Za-z0-9._-]+/g, '-')}.baton.log`), batonLog(server));
  } catch {
    // a missing log must not hide the test's own failure
  }
}
