// What waits on a person, seen in the browser (docs/extension.md, "Attention"): a gate that opens is counted on the
// Baton icon of the activity bar and in the status bar; rejecting it ends the run, and the notification says which
// decision ended it and by whom — the run does not end silently.
import * as assert from 'node:assert/strict';
import { resolve } from 'node:path';
import type { Page } from 'playwright-core';
import {
  answerInputBox,
  chainedSteps,
  clickInlineAction,
  eventually,
  moveMouseAway,
  notificationMessages,
  openViewContainer,
  resizeSideBar,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
} from './support/index';

const FIXTURE = resolve(__dirname, 'fixtures/attention');

/** The number on the Baton icon of the activity bar (0 when it has none). */
async function batonBadge(page: Page): Promise<number> {
  const badge = page
    .locator('.part.activitybar li.action-item', { has: page.locator('a.action-label[aria-label^="Baton"]') })
    .locator('.badge-content');
  return (await badge.count()) && (await badge.isVisible()) ? Number(await badge.textContent()) : 0;
}

async function statusBarText(page: Page): Promise<string> {
  const text = await page.locator('.part.statusbar .statusbar-item', { hasText: 'Baton' }).first().innerText();
  return text.replace(/\s+/g, ' ').trim();
}

describe('Baton in the browser: attention — the badge, and the decision that ends a run', function () {
  const editor = useBatonEditor({ source: FIXTURE });
  const { step } = chainedSteps();
  const page = () => editor.current.page;

  step('a gate that opens is counted on the Baton icon and in the status bar', async () => {
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    await (await viewPane(page(), 'Runs')).getByRole('button', { name: 'Start Run', exact: true }).click();
    await treeRow(await viewPane(page(), 'Gates'), /^G-1 risk approval · T1 /).waitFor({ timeout: 60_000 });
    const run = treeRow(await viewPane(page(), 'Runs'), /^attention\.plan\.md waiting for a decision \(1 gate\)/);
    await run.waitFor({ timeout: 30_000 });
    await eventually(
      'the count on the Baton icon',
      () => batonBadge(page()),
      (n) => n === 1,
    );
    await eventually(
      'the status bar',
      () => statusBarText(page()),
      (t) => t === 'Baton: 1 gate waiting',
    );
    await moveMouseAway(page());
    await screenshot(page(), 'attention-1-gate-counted');
  });

  step('rejecting it ends the run: the notification names the gate and who rejected it; the count goes', async () => {
    await clickInlineAction(treeRow(await viewPane(page(), 'Gates'), /^G-1 risk approval · T1 /), 'Reject…');
    await answerInputBox(page(), 'not now');
    const told = await eventually(
      'the notification of the end',
      async () => (await notificationMessages(page())).find((m) => m.startsWith('Baton run ')) ?? '',
      (m) => m !== '',
      { timeoutMs: 30_000 },
    );
    assert.match(
      told,
      /^Baton run R-\S+ \(attention\.plan\.md\) blocked: G-1 \(risk approval of T1\) was rejected by .+ \(“not now”\); 0 of 1 task completed, 1 cancelled\.$/,
    );
    await eventually(
      'no count on the Baton icon',
      () => batonBadge(page()),
      (n) => n === 0,
    );
    await eventually(
      'the status bar',
      () => statusBarText(page()),
      (t) => t === 'Baton: idle',
    );
    await moveMouseAway(page());
    await screenshot(page(), 'attention-2-ended-by-decision');
  });
});
