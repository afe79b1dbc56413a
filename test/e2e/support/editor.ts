import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, openWorkbench, screenshot, type Workbench } from './browser';
import {
  EXTENSION_HOST_LAUNCHED,
  startBatonCodeServer,
  waitForLogLine,
  type BatonCodeServer,
  type BatonCodeServerOptions,
} from './codeServer';
import { batonLog } from './baton';
import { RESULTS_DIR } from './paths';
import { copyWorkspace, removeWorkspace } from './workspace';

export interface BatonEditor {
  readonly workspace: string;
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
}

/**
 * Opens Baton in a real editor: a fresh copy of a workspace, code-server with the built
 * extension installed, Chromium on the workbench, waiting for the extension host.
 * close() undoes all of it.
 */
export async function openBatonEditor(
  options: BatonEditorOptions = {},
): Promise<BatonEditor & { close(): Promise<void> }> {
  const { source, viewport, ...serverOptions } = options;
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

/**
 * Mocha hooks for an e2e suite: one editor for the suite (before/after), and a screenshot
 * in test-results/ of every failed test. Read the editor from the returned holder inside
 * tests: `const editor = useBatonEditor(); it('…', async () => editor.current.page…)`.
 */
export function useBatonEditor(options: BatonEditorOptions = {}): { readonly current: BatonEditor } {
  let opened: (BatonEditor & { close(): Promise<void> }) | undefined;
  before(async function () {
    this.timeout(120_000);
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
    this.timeout(30_000);
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
export function saveBatonLog(server: BatonCodeServer, name: string): void {
  try {
    mkdirSync(RESULTS_DIR, { recursive: true });
    writeFileSync(join(RESULTS_DIR, `${name.replace(/[^A-Za-z0-9._-]+/g, '-')}.baton.log`), batonLog(server));
  } catch {
    // a missing log must not hide the test's own failure
  }
}
