// The README's first step, as a newcomer takes it: the editor `npm start` opens (same
// function, scripts/start.mjs) starts the demo run at the first press of ▶ Start Run. And a
// workspace that really is in Restricted Mode (trust on, folder untrusted): Baton starts
// nothing, says why, offers VS Code's trust editor, and the run starts once trusted.
import * as assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startDemo } from '../../scripts/start.mjs';
import { Engine } from './support/engine';
import {
  DEMO_WORKSPACE,
  eventually,
  launchChromium,
  moveMouseAway,
  notificationMessages,
  notificationToasts,
  openViewContainer,
  openWorkbench,
  processesCarrying,
  resizeSideBar,
  OTHER_CHECKOUT,
  RESULTS_DIR,
  ROOT,
  saveBatonLog,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
  waitUntilSteady,
} from './support/index';

/** Presses the welcome view's Start Run link and returns the run row's id once it shows running. */
async function startFromWelcome(page: Page): Promise<string> {
  await openViewContainer(page, 'Baton');
  // Wide enough for the rows and the welcome text to read whole in the README's pictures.
  await resizeSideBar(page, 520);
  const runs = await viewPane(page, 'Runs');
  await runs.getByRole('button', { name: 'Start Run', exact: true }).click({ timeout: 30_000 });
  const row = treeRow(runs, /^plan\.md running · \d+\/6 · R-/);
  await row.waitFor({ timeout: 30_000 });
  return /\b(R-\d{8}-\w+)\b/.exec((await row.getAttribute('aria-label')) ?? '')?.[1] ?? '';
}

/** Ends a demo run from outside the editor (as `baton stop --immediate` would) so no worker outlives the test. */
async function stopRun(workspace: string, runId: string): Promise<void> {
  const engine = await Engine.open({ workspace });
  try {
    await engine.requestStop({ runId, mode: 'immediate', by: 'test' });
  } finally {
    await engine.close();
  }
  await eventually(
    'the demo workers to be gone',
    async () => processesCarrying(`BATON_RUN_ID=${runId}`).length,
    (n) => n === 0,
    { timeoutMs: 20_000 },
  );
}

describe('Baton in the browser: the first start', function () {
  describe('the editor `npm start` opens', () => {
    let home = '';
    let demo: Awaited<ReturnType<typeof startDemo>> | undefined;
    let browser: Browser | undefined;
    let page: Page | undefined;

    before(async function () {
      // `npm start` is this checkout's script (scripts/start.mjs, with this checkout's build and demo): against
      // another checkout's build (OTHER_CHECKOUT) it would test this one's, so it is left out.
      if (OTHER_CHECKOUT) this.skip();
      this.timeout(120_000);
      home = mkdtempSync(join(tmpdir(), 'baton-start-'));
      demo = await startDemo({ port: 0, home, env: { DEMO_AGENT_STEP_MS: '60000' } });
      browser = await launchChromium();
      page = (await openWorkbench(browser, demo.url)).page;
    });
    afterEach(async function () {
      if (this.currentTest?.state === 'failed' && page && demo) {
        await screenshot(page, `failed-${this.currentTest.fullTitle()}`).catch(() => undefined);
        saveBatonLog(
          { userDataDir: join(home, 'user-data') } as Parameters<typeof saveBatonLog>[0],
          `failed-${this.currentTest.fullTitle()}`,
        );
      }
    });
    after(async function () {
      this.timeout(30_000);
      await browser?.close().catch(() => undefined);
      await demo?.server.stop();
      if (demo) rmSync(dirname(demo.workspace), { recursive: true, force: true });
      rmSync(home, { recursive: true, force: true });
    });

    it('starts the demo run at the first press of Start Run, with no trust prompt and no refusal', async () => {
      const runId = await startFromWelcome(page!);
      assert.match(runId, /^R-\d{8}-\w+$/);
      assert.deepEqual(
        (await notificationMessages(page!)).filter((m) => /Restricted Mode|untrusted/i.test(m)),
        [],
        'no trust refusal on the way',
      );
      // What the person sees next: both workers beating in the Workers view, T3 waiting at its risk gate.
      const workers = await viewPane(page!, 'Workers');
      for (const task of ['T1', 'T6'])
        await treeRow(workers, new RegExp(`^${task} D-${task}-coder-001 beat \\d+s ago`)).waitFor({ timeout: 60_000 });
      await treeRow(await viewPane(page!, 'Gates'), /^G-1 +risk approval · T3 /).waitFor({ timeout: 30_000 });
      await moveMouseAway(page!);
      await screenshot(page!, 'e2e-first-start');
      await stopRun(demo!.workspace, runId);
    });
  });

  describe('a workspace in Restricted Mode', () => {
    // Workspace trust is on or off for a whole code-server (`--disable-workspace-trust` when it starts): its own.
    const editor = useBatonEditor({
      source: DEMO_WORKSPACE,
      server: 'own',
      trust: true,
      env: { DEMO_AGENT_STEP_MS: '60000' },
    });
    const page = (): Page => editor.current.page;

    it('says so in the welcome view, with the way to trust it', async () => {
      await openViewContainer(page(), 'Baton');
      await resizeSideBar(page(), 520);
      const runs = await viewPane(page(), 'Runs');
      await runs.getByText(/This workspace is in Restricted Mode/).waitFor({ timeout: 30_000 });
      await runs.getByRole('button', { name: 'Manage Workspace Trust', exact: true }).waitFor();
      await screenshot(page(), 'e2e-restricted-welcome');
    });

    it('refuses Start Run with a notification that offers the trust editor, and starts nothing', async () => {
      const runs = await viewPane(page(), 'Runs');
      await runs.getByRole('button', { name: 'Start Run', exact: true }).click();
      const toast = notificationToasts(page())
        .filter({ hasText: /Restricted Mode/ })
        .first();
      await toast.waitFor({ timeout: 15_000 });
      assert.match(
        (await notificationMessages(page())).join('\n'),
        /cannot start a run\. Trust the workspace to run tasks\./,
      );
      await toast.getByRole('button', { name: 'Manage Workspace Trust', exact: true }).waitFor();
      await moveMouseAway(page());
      await waitUntilSteady(toast);
      await screenshot(page(), 'e2e-restricted-refusal');
      const engine = await Engine.open({ workspace: editor.current.workspace });
      try {
        assert.deepEqual(await engine.listRuns(), [], 'no run was created');
      } finally {
        await engine.close();
      }
    });

    it('trusting the workspace from that notification starts the run that was asked for', async () => {
      const toast = notificationToasts(page())
        .filter({ hasText: /Restricted Mode/ })
        .first();
      await toast.getByRole('button', { name: 'Manage Workspace Trust', exact: true }).click();
      // VS Code's Workspace Trust editor: its "Trust" button trusts the folder.
      const trust = page()
        .locator('.workspace-trust-editor')
        .getByRole('button', { name: /^Trust( Folder)?$/ })
        .first();
      await trust.waitFor({ timeout: 15_000 });
      await trust.click();
      const runs = await viewPane(page(), 'Runs');
      const row = treeRow(runs, /^plan\.md running · \d+\/6 · R-/);
      await row.waitFor({ timeout: 30_000 });
      const runId = /\b(R-\d{8}-\w+)\b/.exec((await row.getAttribute('aria-label')) ?? '')?.[1] ?? '';
      await treeRow(runs, /^T1 Add the notes store running · attempt 1\b/).waitFor({ timeout: 30_000 });
      await screenshot(page(), 'e2e-restricted-trusted');
      await stopRun(editor.current.workspace, runId);
    });
  });

  after(function () {
    // The README's pictures of its first step (docs/images) come from these runs when BATON_E2E_README_IMAGES=1.
    if (process.env.BATON_E2E_README_IMAGES !== '1') return;
    mkdirSync(join(ROOT, 'docs', 'images'), { recursive: true });
    for (const [from, to] of [
      ['e2e-first-start', 'first-run'],
      ['e2e-restricted-refusal', 'restricted-mode'],
    ] as const) {
      if (existsSync(join(RESULTS_DIR, `${from}.png`)))
        copyFileSync(join(RESULTS_DIR, `${from}.png`), join(ROOT, 'docs', 'images', `${to}.png`));
    }
  });
});
