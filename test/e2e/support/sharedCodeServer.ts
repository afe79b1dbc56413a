// One code-server and one Chromium for a whole e2e run (issue #28): started on first use, with
// Baton installed and the test user settings, and stopped after the run's last test. Each suite
// opens its own window on them (openBatonEditor): its own copy of a workspace (so its own
// workspace storage on the server), its own page, on an origin whose browser storage — where a
// web workbench keeps VS Code's global and workspace state — is cleared first (freshPage), its
// own extension host with its own environment (windowEnv.ts), and its settings in the copy's
// .vscode/settings.json. What stays from one window to the next is the browser's HTTP cache:
// the workbench's scripts load in about half the time. A suite that must test what happens when
// code-server starts (trust, `npm start`) or whose variables Baton reads while it activates
// starts its own: see test/README.md, "One code-server for the e2e run".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from './browser';
import { startBatonCodeServer, type BatonCodeServer } from './codeServer';
import { installWindowEnvExtension } from './windowEnv';

let shared: Promise<BatonCodeServer> | undefined;
let running: { server: BatonCodeServer; dir: string } | undefined;

/** The run's shared code-server, started on the first call (and again should it have ended meanwhile). */
export function sharedCodeServer(): Promise<BatonCodeServer> {
  if (running && (running.server.process.exitCode !== null || running.server.process.signalCode !== null)) {
    process.stderr.write(
      `The shared code-server ended (its log ends with:\n${running.server.logTail()}\n); starting another.\n`,
    );
    rmSync(running.dir, { recursive: true, force: true });
    running = undefined;
    shared = undefined;
  }
  shared ??= start().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

async function start(): Promise<BatonCodeServer> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-code-server-shared-'));
  const extensionsDir = join(dir, 'extensions');
  installWindowEnvExtension(extensionsDir);
  let server: BatonCodeServer;
  try {
    server = await startBatonCodeServer({ userDataDir: join(dir, 'user-data'), extensionsDir });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // It must not keep a test process alive by itself (mocha without --exit waits for open handles):
  // the root hook below stops it, and the exit handler kills it should the hook not run.
  server.process.unref();
  for (const stream of [server.process.stdout, server.process.stderr]) (stream as { unref?(): void } | null)?.unref?.();
  running = { server, dir };
  return server;
}

let browser: Promise<{ browser: Browser; context: BrowserContext }> | undefined;

/**
 * A new page in the run's browser, on nothing yet, with the shared code-server's origin emptied
 * of what earlier windows stored there (IndexedDB, local storage, service workers, cookies: all
 * of Chromium's storage types for the origin; not the HTTP cache). The browser is started on
 * the first call, and again should it have gone.
 */
export async function freshPage(
  origin: string,
  viewport = { width: 1400, height: 900 },
): Promise<{ browser: Browser; context: BrowserContext; page: Page }> {
  const current = await browser?.catch(() => undefined);
  if (!current?.browser.isConnected()) browser = undefined;
  browser ??= (async () => {
    const launched = await launchChromium();
    return { browser: launched, context: await launched.newContext() };
  })().catch((err: unknown) => {
    browser = undefined;
    throw err;
  });
  const { browser: chromium, context } = await browser;
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  const cdp = await context.newCDPSession(page);
  try {
    await cdp.send('Storage.clearDataForOrigin', { origin, storageTypes: 'all' });
  } finally {
    await cdp.detach().catch(() => undefined);
  }
  return { browser: chromium, context, page };
}

/** Stops the shared code-server and browser, if they were started, and removes their folders. */
export async function stopSharedCodeServer(): Promise<void> {
  const opened = await browser?.catch(() => undefined);
  browser = undefined;
  await opened?.browser.close().catch(() => undefined);
  await shared?.catch(() => undefined);
  const stopping = running;
  shared = undefined;
  running = undefined;
  await stopping?.server.stop();
  if (stopping) rmSync(stopping.dir, { recursive: true, force: true, maxRetries: 5 });
}

// Whatever ends the process (a failed hook, Ctrl-C, an uncaught error): no code-server is left behind.
process.on('exit', () => {
  if (!running) return;
  try {
    process.kill(-running.server.process.pid!, 'SIGKILL');
  } catch {
    // gone
  }
  rmSync(running.dir, { recursive: true, force: true });
});

// Inside mocha, a hook at a module's top level belongs to the root suite: it runs once, after the
// last test of the run, however many files import this module.
if (typeof after === 'function') {
  after('stop the shared code-server', async function () {
    this.timeout(60_000);
    await stopSharedCodeServer();
  });
}
