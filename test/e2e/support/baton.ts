// Helpers for the end-to-end flows: waiting on the workbench's state, Baton's tree views,
// menus, quick picks, code actions and the worker processes behind them. Everything waits
// on a condition (polling), never on a fixed delay.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { runCommand } from './browser';
import type { BatonCodeServer } from './codeServer';

/**
 * Polls `probe` until `accept` holds for its value (returned), like `expect.poll`: errors
 * thrown by the probe count as "not yet". Fails after `timeoutMs` with `what` and the last
 * value seen.
 */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T>,
  accept: (value: T) => boolean = Boolean,
  { timeoutMs = 30_000, intervalMs = 150 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: { value?: T; error?: unknown };
  for (;;) {
    try {
      const value = await probe();
      if (accept(value)) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() > deadline) {
      const seen =
        'error' in last
          ? `last error: ${(last.error as Error)?.message ?? String(last.error)}`
          : `last value: ${JSON.stringify(last.value)}`;
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${what} (${seen}).`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

// ── tree views ───────────────────────────────────────────────────────────────

/**
 * A row of a tree view by its accessible name (VS Code's aria-label of a tree item is its
 * label and description, e.g. "T1  Add the notes store running · attempt 1 · 3s").
 */
export function treeRow(pane: Locator, name: RegExp | string): Locator {
  return pane.getByRole('treeitem', { name });
}

/** A row of a tree view by the exact text of its label (what a sighted user reads). */
export function treeRowByLabel(pane: Locator, label: string): Locator {
  const exact = new RegExp(`^${escapeRegExp(label)}$`);
  return pane.getByRole('treeitem').filter({ has: pane.page().locator('.label-name', { hasText: exact }) });
}

/** The accessible names of every row a tree view shows. */
export async function treeRowNames(pane: Locator): Promise<string[]> {
  return pane.getByRole('treeitem').evaluateAll((rows) => rows.map((row) => row.getAttribute('aria-label') ?? ''));
}

/** The label and the description of a row as shown: "label description". */
export async function rowText(row: Locator): Promise<string> {
  const label = (await row.locator('.label-name').first().textContent()) ?? '';
  const description =
    (await row
      .locator('.label-description')
      .first()
      .textContent()
      .catch(() => '')) ?? '';
  return `${label.trim()} ${description.trim()}`.trim();
}

/** The description of a row (e.g. the heartbeat age of a worker). */
export async function rowDescription(row: Locator): Promise<string> {
  return ((await row.locator('.label-description').first().textContent()) ?? '').trim();
}

/** Expands a collapsible row (by its twistie, so that no item command runs). */
export async function expandRow(row: Locator): Promise<void> {
  // A click can land while the tree renders the row again (a refresh, frequent on a loaded machine): it then selects
  // the row without expanding it. A row still collapsed two seconds after a click gets another.
  let clickedAt = 0;
  await eventually(
    'the row to expand',
    async () => {
      const expanded = await row.getAttribute('aria-expanded');
      if (expanded === 'false' && Date.now() - clickedAt > 2_000) {
        clickedAt = Date.now();
        await row.locator('.monaco-tl-twistie').click({ timeout: 5_000 });
      }
      return expanded;
    },
    (v) => v === 'true',
    { timeoutMs: 15_000 },
  );
}

/** Clicks one of a row's inline actions (they show on hover), by its title. */
export async function clickInlineAction(row: Locator, title: string): Promise<void> {
  await (await inlineAction(row, title)).click();
}

/**
 * A row's inline action, shown: the row is hovered until its button is visible. A tree that renders the row again (a
 * refresh, frequent on a loaded machine) drops the hover, and the button hides with it.
 */
export async function inlineAction(row: Locator, title: string, timeoutMs = 30_000): Promise<Locator> {
  const button = row.getByRole('button', { name: title, exact: true });
  await eventually(
    `the row's ${title} action`,
    async () => {
      await row.hover({ timeout: 5_000 });
      return button.isVisible();
    },
    Boolean,
    { timeoutMs },
  );
  return button;
}

/** Opens a row's context menu and runs one of its entries. */
export async function runContextMenuItem(page: Page, row: Locator, item: string): Promise<void> {
  await row.click({ button: 'right' });
  const entry = page.locator('.context-view .monaco-menu').getByRole('menuitem', { name: item, exact: true });
  await entry.waitFor({ state: 'visible', timeout: 10_000 });
  // A click right after the menu opens can go unheard; hovering focuses the entry, Enter runs it.
  await entry.hover();
  await eventually(
    'the menu entry to take the focus',
    () => entry.evaluate((e) => e.closest('.action-item')?.classList.contains('focused') ?? false),
    Boolean,
    { timeoutMs: 5_000 },
  );
  await page.keyboard.press('Enter');
  await page.locator('.context-view .monaco-menu').waitFor({ state: 'hidden', timeout: 10_000 });
}

/** The entries of a row's context menu (their titles, in order); the menu is closed again. */
export async function contextMenuItems(page: Page, row: Locator): Promise<string[]> {
  await row.click({ button: 'right' });
  const menu = page.locator('.context-view .monaco-menu');
  await menu.waitFor({ state: 'visible', timeout: 10_000 });
  const items = await menu
    .getByRole('menuitem')
    .evaluateAll((entries) => entries.map((e) => (e.querySelector('.action-label')?.textContent ?? '').trim()));
  await page.keyboard.press('Escape');
  await menu.waitFor({ state: 'hidden', timeout: 10_000 });
  return items;
}

/** Clicks a button of the notification toast whose message matches, once it shows. */
export async function clickNotificationButton(page: Page, message: RegExp, button: string): Promise<void> {
  const toast = page.locator('.notifications-toasts .notification-toast', {
    has: page.locator('.notification-list-item-message', { hasText: message }),
  });
  await toast.first().waitFor({ state: 'visible', timeout: 30_000 });
  await toast.first().getByRole('button', { name: button, exact: true }).click();
}

/** Clicks a button of the modal dialog (window.dialogStyle "custom") whose message matches. */
export async function clickDialogButton(page: Page, message: RegExp, button: string): Promise<void> {
  const dialog = page.locator('.monaco-dialog-box', { hasText: message });
  await dialog.waitFor({ state: 'visible', timeout: 15_000 });
  await dialog.getByRole('button', { name: button, exact: true }).click();
  await dialog.waitFor({ state: 'hidden', timeout: 15_000 });
}

/** Answers the open input box (e.g. the note a Reject asks for). */
export async function answerInputBox(page: Page, text: string): Promise<void> {
  const input = quickInput(page).locator('.quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(text);
  await page.keyboard.press('Enter');
  await quickInput(page).waitFor({ state: 'hidden', timeout: 15_000 });
}

/** Clicks a button of a view's title bar (e.g. "Start Run…" of the Runs view). */
export async function clickViewTitleAction(pane: Locator, title: string): Promise<void> {
  const header = pane.locator('.pane-header').first();
  await header.hover();
  await header.getByRole('button', { name: title, exact: true }).click();
}

// ── quick input, notifications, panel ────────────────────────────────────────

/** The open quick pick (or input box). */
export function quickInput(page: Page): Locator {
  return page.locator('.quick-input-widget');
}

/** Picks an entry of the open quick pick by (the start of) its label. */
export async function pickQuickItem(page: Page, label: string, timeoutMs = 15_000): Promise<void> {
  const widget = quickInput(page);
  const item = widget
    .getByRole('option')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(label)}`) }) })
    .first();
  await item.waitFor({ state: 'visible', timeout: timeoutMs });
  await item.click();
  await widget.waitFor({ state: 'hidden', timeout: timeoutMs });
}

/**
 * Clears every notification that can be cleared, shown or not (the command "Notifications:
 * Clear All Notifications"): toasts would cover part of the editor in screenshots. Baton's gate
 * notification stays while a gate is open: it is a progress notification (docs/extension.md,
 * "Gate notifications"), which VS Code does not clear — it has no close button.
 */
export async function clearNotifications(page: Page): Promise<void> {
  await runCommand(page, 'Notifications: Clear All Notifications');
  await eventually(
    'the notifications to close',
    () =>
      notificationToasts(page)
        .filter({ has: page.locator('.codicon-notifications-clear') })
        .count(),
    (n) => n === 0,
    { timeoutMs: 10_000 },
  );
}

/** Baton's gate notification (the one that lists the open gates), if it shows. */
export function gateNotification(page: Page): Locator {
  return notificationToasts(page).filter({ hasText: /Baton: .*\bwaits? for a decision\b/ });
}

/** The notification toasts on screen. */
export function notificationToasts(page: Page): Locator {
  return page.locator('.notifications-toasts .notification-toast');
}

/** The messages of the notification toasts on screen. */
export async function notificationMessages(page: Page): Promise<string[]> {
  return (await notificationToasts(page).locator('.notification-list-item-message').allInnerTexts()).map((text) =>
    text.replace(/\s+/g, ' ').trim(),
  );
}

/**
 * Problems panel rows (markers) of a source, by accessible name ("Error: <message> at line L and character C. generated
 * by <source>").
 */
export async function problems(page: Page, source = 'baton'): Promise<string[]> {
  const rows = page.locator('.part.panel [role=treeitem]');
  const names = await rows.evaluateAll((elements) => elements.map((e) => e.getAttribute('aria-label') ?? ''));
  return names.filter((name) => name.endsWith(`generated by ${source}`));
}

// ── editor ───────────────────────────────────────────────────────────────────

/** The active text editor (the one whose tab is active). */
export function activeEditor(page: Page): Locator {
  return page.locator('.part.editor .editor-group-container.active .monaco-editor').first();
}

/**
 * A rendered line of the active editor whose text matches. Monaco renders spaces as
 * no-break spaces: match them with \s.
 */
export function editorLine(page: Page, text: RegExp | string): Locator {
  return activeEditor(page).locator('.view-lines .view-line', { hasText: text }).first();
}

/** Text of the active editor as rendered (every line is rendered for a short file). */
export async function editorText(page: Page): Promise<string> {
  return activeEditor(page).locator('.view-lines').innerText();
}

/** Gives the active editor the keyboard focus without moving its cursor. */
export async function focusEditor(page: Page): Promise<void> {
  await activeEditor(page).locator('textarea').first().focus();
}

/** The error squiggle drawn on a rendered editor line. */
export async function squiggleOnLine(
  page: Page,
  line: Locator,
): Promise<{ x: number; y: number; width: number; height: number }> {
  const lineBox = await eventually(
    'the line to render',
    () => line.boundingBox({ timeout: 1_000 }),
    (b) => b !== null,
    { timeoutMs: 15_000 },
  );
  const squiggles = activeEditor(page).locator('.squiggly-error');
  return eventually(
    'an error squiggle on the line',
    async () => {
      for (const squiggle of await squiggles.all()) {
        const box = await squiggle.boundingBox({ timeout: 1_000 });
        if (box && Math.abs(box.y - lineBox!.y) < lineBox!.height / 2) return box;
      }
      return undefined;
    },
    (box) => box !== undefined,
  ) as Promise<{ x: number; y: number; width: number; height: number }>;
}

/** The line number the editor's status bar item shows for the cursor ("Ln 7, Col 9"). */
export async function cursorLine(page: Page): Promise<number> {
  const text = await page
    .locator('.part.statusbar .statusbar-item', { hasText: /^Ln \d+, Col \d+/ })
    .first()
    .innerText();
  return Number(/^Ln (\d+)/.exec(text)?.[1]);
}

/**
 * Opens the code actions at the cursor (Ctrl+.) and returns the titles it offers; with
 * `apply`, applies that one (with the keyboard: the widget blocks pointer events while it
 * opens) and waits for the widget to close. Right after an edit the editor may answer "No
 * code actions available" while it recomputes: then it asks again (three times at most), the
 * cursor where it was.
 */
export async function codeActions(page: Page, apply?: string): Promise<string[]> {
  const widget = page.locator('.action-widget');
  const none = activeEditor(page).locator('.monaco-editor-overlaymessage', { hasText: 'No code actions available' });
  let titles: string[] = [];
  for (let attempt = 1; ; attempt++) {
    await focusEditor(page);
    await page.keyboard.press('Control+.');
    const shown = await eventually(
      'the code actions (or "No code actions available")',
      async () => ((await widget.isVisible()) ? 'widget' : (await none.isVisible()) ? 'none' : ''),
      Boolean,
      { timeoutMs: 15_000 },
    );
    if (shown === 'widget') {
      titles = await eventually(
        'the code actions',
        () =>
          widget
            .locator('.monaco-list-row.action')
            .evaluateAll((rows) => rows.map((row) => row.getAttribute('aria-label') ?? '')),
        (list) => list.length > 0,
      );
      if (!apply || titles.includes(apply)) break;
    }
    if (attempt >= 3) throw new Error(`No code action "${apply ?? 'at all'}"; offered: ${titles.join(', ') || 'none'}`);
    await page.keyboard.press('Escape');
    await widget.waitFor({ state: 'hidden', timeout: 5_000 });
    // The message closes when the cursor moves (Escape may leave it; under load it stayed 10 s): there and back.
    if (await none.isVisible()) {
      await page.keyboard.press('ArrowRight');
      await page.keyboard.press('ArrowLeft');
    }
    await none.waitFor({ state: 'hidden', timeout: 10_000 });
  }
  if (!apply) return titles;
  for (let i = 0; i <= titles.length; i++) {
    const focused = await widget.locator('.monaco-list-row.action.focused').getAttribute('aria-label');
    if (focused === apply) break;
    await page.keyboard.press('ArrowDown');
  }
  await page.keyboard.press('Enter');
  await widget.waitFor({ state: 'hidden', timeout: 10_000 });
  return titles;
}

/** Hovers a point and returns the text of the hover that shows. */
export async function hoverText(page: Page, at: { x: number; y: number }, expected: RegExp): Promise<string> {
  await page.mouse.move(at.x, at.y);
  return eventually(
    'the hover',
    async () => (await page.locator('.monaco-hover:not(.hidden)').allInnerTexts()).join('\n'),
    (text) => expected.test(text),
    { timeoutMs: 15_000 },
  );
}

/** A CodeLens of the active editor by its title (a link, or plain text when it has no command). */
export function codeLens(page: Page, title: RegExp | string): Locator {
  return activeEditor(page)
    .locator('.codelens-decoration > a, .codelens-decoration > span', { hasText: title })
    .first();
}

// ── layout, logs, processes ──────────────────────────────────────────────────

/**
 * Moves the mouse to an empty spot of the activity bar and waits (a little) for hovers and
 * tooltips to close: for screenshots without a stray tooltip.
 */
export async function moveMouseAway(page: Page): Promise<void> {
  const size = page.viewportSize() ?? { width: 1400, height: 900 };
  await page.mouse.move(24, Math.round(size.height * 0.6));
  const hovers = page.locator('.workbench-hover-container:visible, .monaco-hover:not(.hidden):visible');
  await eventually(
    'hovers to close',
    () => hovers.count(),
    (n) => n === 0,
    { timeoutMs: 5_000 },
  ).catch(() => undefined);
}

/**
 * Waits until an element stops moving and fading in (a notification toast slides up and fades
 * in for a moment after it shows): for screenshots that show it as the person reads it.
 */
export async function waitUntilSteady(element: Locator, timeoutMs = 5_000): Promise<void> {
  let last = '';
  await eventually(
    'the element to stop moving',
    async () => {
      const now = await element.evaluate((e) => {
        const box = e.getBoundingClientRect();
        return `${box.x},${box.y},${box.width},${box.height},${getComputedStyle(e).opacity}`;
      });
      const steady = now === last && now.endsWith(',1');
      last = now;
      return steady;
    },
    Boolean,
    { timeoutMs, intervalMs: 200 },
  );
}

/** Opens a workspace file by name with Quick Open (Ctrl+P). */
export async function quickOpen(page: Page, name: string): Promise<void> {
  const widget = quickInput(page);
  const input = widget.locator('.quick-input-box input');
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press('Control+P');
      await input.waitFor({ state: 'visible', timeout: 3_000 });
      await input.fill(name);
      await widget
        .getByRole('option')
        .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(name)}$`) }) })
        .first()
        .click({ timeout: 10_000 });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
      await page.keyboard.press('Escape');
    }
  }
  await page.locator('.part.editor .tab.active', { hasText: name }).waitFor({ timeout: 15_000 });
}

/** Drags the sash between the side bar and the editor so that the side bar is `width` wide. */
export async function resizeSideBar(page: Page, width: number): Promise<void> {
  const sidebar = page.locator('.part.sidebar');
  const box = await sidebar.boundingBox();
  if (!box || Math.abs(box.width - width) < 4) return;
  const edge = box.x + box.width;
  const sashes = await page.locator('.monaco-sash.vertical').all();
  for (const sash of sashes) {
    const s = await sash.boundingBox();
    if (!s || Math.abs(s.x + s.width / 2 - edge) > 4 || s.height < box.height / 2) continue;
    const y = s.y + s.height / 2;
    await page.mouse.move(s.x + s.width / 2, y);
    await page.mouse.down();
    await page.mouse.move(box.x + width, y, { steps: 8 });
    await page.mouse.up();
    return;
  }
}

/**
 * The Baton output channel's log of an editor session: its log files (one per extension host,
 * oldest first), or '' if none yet. On the shared code-server the files of earlier windows
 * (`logFilesBefore`) are left out.
 */
export function batonLog(server: Pick<BatonCodeServer, 'userDataDir' | 'logFilesBefore'>): string {
  return batonLogFiles(server.userDataDir)
    .filter((path) => !server.logFilesBefore?.has(path))
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

/** Every Baton.log (the Baton output channel's file) under a user data folder's logs, sorted. */
export function batonLogFiles(userDataDir: string): string[] {
  const logs = join(userDataDir, 'logs');
  if (!existsSync(logs)) return [];
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name === 'Baton.log') found.push(path);
    }
  };
  walk(logs);
  return found.sort();
}

export { processesCarrying } from '../../support/processes';

/** True while a process with this pid exists and is not a zombie. */
export function isPidAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
