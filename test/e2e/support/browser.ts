import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Frame, type Locator, type Page } from 'playwright-core';
import { RESULTS_DIR } from './paths';

/**
 * Chromium for the real-editor tests is Debian's (`apt-get install -y chromium`):
 * `npx playwright install` cannot download browsers here. BATON_CHROMIUM overrides the path.
 */
export function chromiumExecutable(): string {
  const path = process.env.BATON_CHROMIUM || '/usr/bin/chromium';
  if (!existsSync(path)) {
    throw new Error(
      `Chromium not found at ${path}: install Debian's package (apt-get install -y chromium) or set BATON_CHROMIUM.`,
    );
  }
  return path;
}

export const CHROMIUM_ARGS: readonly string[] = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/**
 * Launches headless Chromium. Signals are left to the caller, which must close the
 * browser (playwright's own handlers would exit the process before its cleanup runs).
 */
export async function launchChromium(options: { headless?: boolean } = {}): Promise<Browser> {
  // Chromium keeps its crash database under $XDG_CONFIG_HOME/chromium whatever its profile
  // folder: point it at a temporary folder so nothing lands in ~/.config.
  const home = mkdtempSync(join(tmpdir(), 'baton-chromium-'));
  const removeHome = (): void => rmSync(home, { recursive: true, force: true });
  try {
    const browser = await chromium.launch({
      executablePath: chromiumExecutable(),
      args: [...CHROMIUM_ARGS],
      headless: options.headless ?? true,
      env: { ...process.env, XDG_CONFIG_HOME: join(home, 'config'), XDG_CACHE_HOME: join(home, 'cache') },
      handleSIGINT: false,
      handleSIGTERM: false,
      handleSIGHUP: false,
    });
    browser.on('disconnected', removeHome);
    return browser;
  } catch (err) {
    removeHome();
    throw err;
  }
}

export interface Workbench {
  readonly context: BrowserContext;
  readonly page: Page;
  close(): Promise<void>;
}

/**
 * Opens a workbench URL (see BatonCodeServer.workbenchUrl) in a fresh browser context;
 * with `waitUntilReady` (default) returns once the workbench shows.
 */
export async function openWorkbench(
  browser: Browser,
  url: string,
  options: { viewport?: { width: number; height: number }; waitUntilReady?: boolean; timeoutMs?: number } = {},
): Promise<Workbench> {
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1400, height: 900 } });
  const page = await context.newPage();
  // The workbench's first load can take well over playwright's default 30 s on a loaded machine.
  await page.goto(url, { timeout: 120_000 });
  if (options.waitUntilReady !== false) await waitForWorkbench(page, options.timeoutMs);
  return { context, page, close: () => context.close() };
}

/**
 * Waits until the workbench shows: `.monaco-workbench` visible with its activity bar and
 * status bar. The extension host starts a moment later: wait for it with
 * waitForLogLine(server, EXTENSION_HOST_LAUNCHED) or for the UI the test needs.
 */
export async function waitForWorkbench(page: Page, timeoutMs = 60_000): Promise<void> {
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: timeoutMs });
  await page.locator('.monaco-workbench .part.activitybar').waitFor({ state: 'visible', timeout: timeoutMs });
  await page.locator('.monaco-workbench .part.statusbar').waitFor({ state: 'visible', timeout: timeoutMs });
}

/** Saves a full-window screenshot to test-results/<name>.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name.replace(/[^A-Za-z0-9._-]+/g, '-')}.png`);
  await page.screenshot({ path });
  return path;
}

/**
 * Runs a command by its palette title (e.g. "Baton: Show Log") through the command palette;
 * returns once the palette has closed or the command's own quick pick replaced it.
 * The palette closes when the focus moves (an editor that finishes opening takes it), and
 * F1 can get lost meanwhile: then it tries again, up to three times. Every step waits until
 * its condition holds (a loaded machine can take seconds for each), and a command that ran
 * although its click reported a failure (its quick pick shows, or the window reloads) is not
 * run a second time.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 30_000): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
  let navigated = false;
  const onNavigated = (frame: Frame): void => {
    if (frame === page.mainFrame()) navigated = true;
  };
  /** What the palette shows now: the command's row, still loading, closed, or something else's quick input. */
  const paletteState = async (): Promise<'row' | 'loading' | 'closed' | 'replaced'> => {
    if (!(await input.isVisible())) return 'closed';
    if (!(await input.inputValue().catch(() => '')).startsWith('>')) return 'replaced';
    return (await row.isVisible()) ? 'row' : 'loading';
  };
  page.on('framenavigated', onNavigated);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        // F1 opens the palette; a press that got lost is repeated (F1 on an open palette keeps it open).
        await until(`the command palette to open for "${title}"`, timeoutMs, async () => {
          if (await input.isVisible()) return true;
          await page.keyboard.press('F1');
          return input.waitFor({ state: 'visible', timeout: 5_000 }).then(
            () => true,
            () => false,
          );
        });
        await input.fill(`>${title}`, { timeout: timeoutMs });
        let state = 'loading' as Awaited<ReturnType<typeof paletteState>>;
        await until(`"${title}" to show in the command palette`, timeoutMs, async () => {
          state = await paletteState();
          return state !== 'loading';
        });
        if (state !== 'row') throw new Error(`The command palette closed before "${title}" showed (${state}).`);
        await row.click({ timeout: timeoutMs });
        break;
      } catch (err) {
        // The command ran all the same: the window reloads, or its own quick pick took the palette's place.
        if (navigated || (await paletteState().catch(() => 'closed')) === 'replaced') break;
        if (attempt >= 3) throw err;
      }
    }
    if (navigated) return;
    // The palette closes, or gives way to the command's own quick pick (an empty input).
    await until(`the command palette to run "${title}"`, timeoutMs, async () => {
      if (navigated) return true;
      const state = await paletteState().catch(() => 'closed' as const);
      return state === 'closed' || state === 'replaced';
    });
  } finally {
    page.off('framenavigated', onNavigated);
  }
}

/** Polls `done` every 100 ms until it says true; fails with `what` after `timeoutMs`. */
async function until(what: string, timeoutMs: number, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what}.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Opens a view container from the activity bar by its title (e.g. "Baton"). */
export async function openViewContainer(page: Page, title: string, timeoutMs = 30_000): Promise<void> {
  // The item's <a> carries the title ("Baton", or "Baton (2)" with a badge) from the start;
  // its <li> gets class `checked` while the container shows.
  const label = page
    .locator(
      `.part.activitybar li.action-item > a.action-label[aria-label="${title}"], .part.activitybar li.action-item > a.action-label[aria-label^="${title} "]`,
    )
    .first();
  const deadline = Date.now() + timeoutMs;
  await label.waitFor({ state: 'visible', timeout: timeoutMs });
  const exact = new RegExp(`^${title.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'i');
  const heading = page.locator('.part.sidebar .composite.title h2', { hasText: exact }).first();
  // While a reloaded workbench restores, the container can show by itself just after its item was read
  // unchecked: the click then toggles it closed again. So look again until its title shows; an item that
  // stays checked while its title stays hidden is asked for by the container's command.
  for (let round = 0; ; round++) {
    const checked = await label.evaluate((a) => a.parentElement?.classList.contains('checked') ?? false);
    // Its item, not the icon: a badge (gates waiting, pending changes) lies over the icon and takes the pointer.
    if (!checked) await label.locator('xpath=..').click();
    else if (round > 0) await runCommand(page, `View: Show ${title}`).catch(() => page.keyboard.press('Escape'));
    const left = deadline - Date.now();
    const shown = await heading.waitFor({ state: 'visible', timeout: Math.max(1, Math.min(5_000, left)) }).then(
      () => true,
      () => false,
    );
    if (shown) return;
    if (left <= 5_000) throw new Error(`The ${title} view container did not show within ${timeoutMs} ms.`);
  }
}

/** A pane (view) in the side bar by its title, e.g. "Runs"; expanded if it was collapsed. */
export async function viewPane(page: Page, title: string, timeoutMs = 30_000): Promise<Locator> {
  const pane = page
    .locator('.part.sidebar .pane', { has: page.locator(`.pane-header[aria-label^="${title}"]`) })
    .first();
  await pane.waitFor({ state: 'visible', timeout: timeoutMs });
  const header = pane.locator('.pane-header').first();
  if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  return pane;
}
