// Reloading the window mid-run, in a real browser: Chromium on code-server with the built
// extension, on a fresh copy of examples/demo whose agent takes a long step. VS Code cannot
// tell a reload from a close, so what happens is what `baton.onWindowClose` says:
// - keepRunning (the default): the window hands the run over and the reloaded window takes it
//   over — the same attempts go on (no second attempt, the workers' pids unchanged and alive
//   through the reload), the views say "running" within seconds, the status bar is true, and
//   the dashboard tab comes back on the same run;
// - stopImmediately: the closing window ends its workers (proven gone from outside the editor)
//   and the run says it is stopped.
import * as assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { Engine } from './support/engine';
import {
  batonLog,
  chainedSteps,
  clearNotifications,
  clickViewTitleAction,
  DEMO_WORKSPACE,
  eventually,
  EXTENSION_HOST_EXITED,
  EXTENSION_HOST_LAUNCHED,
  isPidAlive,
  moveMouseAway,
  openViewContainer,
  pickQuickItem,
  processesCarrying,
  quickInput,
  resizeSideBar,
  rowText,
  runCommand,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
  waitForLogLine,
  waitForWorkbench,
  type BatonEditor,
} from './support/index';

interface Worker {
  runtimeId: string;
  delegationId: string;
  pid: number;
}

/** The run's live workers and attempts as the store has them, read by a second engine (as the CLI would). */
async function storeFacts(workspace: string, runId: string) {
  const engine = await Engine.open({ workspace });
  try {
    const diagnosis = await engine.diagnose(runId);
    return {
      workers: diagnosis.workers
        .filter((w) => w.pid && w.alive)
        .map((w) => ({ runtimeId: w.runtimeId, delegationId: w.delegationId, pid: w.pid! })),
      delegations: diagnosis.delegations.map((d) => `${d.id}:${d.status}`).sort(),
      lease: diagnosis.coordinatorLease,
      events: await engine.listEvents(runId),
    };
  } finally {
    await engine.close();
  }
}

/** The dashboard's document: the webview frame whose page has Baton's #root. */
async function dashboardFrame(page: Page, timeoutMs = 30_000): Promise<Frame> {
  return eventually(
    'the dashboard webview',
    async () => {
      for (const frame of page.frames()) {
        const found = await frame
          .locator('#root .run-header')
          .count()
          .catch(() => 0);
        if (found > 0) return frame;
      }
      return undefined;
    },
    (f) => f !== undefined,
    { timeoutMs },
  ) as Promise<Frame>;
}

/** Starts the demo run from the Runs view title; returns its id once T1 and T6 run with workers that beat. */
async function startDemoRun(editor: BatonEditor): Promise<string> {
  const page = editor.page;
  await openViewContainer(page, 'Baton');
  await resizeSideBar(page, 470);
  const runs = await viewPane(page, 'Runs');
  await clickViewTitleAction(runs, 'Start Run…');
  const picked = await eventually(
    'the run to appear in the Runs view (or the plan quick pick)',
    async () =>
      (await treeRow(runs, /^plan\.md /).count()) > 0 ? 'run' : (await quickInput(page).isVisible()) ? 'pick' : '',
    Boolean,
  );
  if (picked === 'pick') await pickQuickItem(page, 'plan.md');
  const row = treeRow(runs, /^plan\.md running · /);
  await row.waitFor({ timeout: 30_000 });
  const runId = /\b(R-\d{8}-\w+)\b/.exec((await row.getAttribute('aria-label')) ?? '')?.[1] ?? '';
  assert.match(runId, /^R-\d{8}-\w+$/);
  const workers = await viewPane(page, 'Workers');
  for (const task of ['T1', 'T6'])
    await treeRow(workers, new RegExp(`^${task} D-${task}-coder-001 beat \\d+s ago · lease \\d+s`)).waitFor({
      timeout: 30_000,
    });
  return runId;
}

/**
 * Reloads the window (Developer: Reload Window) and waits for the workbench and a new extension
 * host; returns when that host was launched (ms since the epoch) and how the old one ended.
 */
async function reloadWindow(editor: BatonEditor): Promise<{ launchedAt: number; oldHostExit: RegExpExecArray }> {
  const from = editor.server.lines.length;
  await runCommand(editor.page, 'Developer: Reload Window');
  const oldHostExit = await waitForLogLine(editor.server, EXTENSION_HOST_EXITED, { from, timeoutMs: 60_000 });
  await waitForLogLine(editor.server, EXTENSION_HOST_LAUNCHED, { from, timeoutMs: 60_000 });
  const launchedAt = Date.now();
  await waitForWorkbench(editor.page);
  return { launchedAt, oldHostExit };
}

/** The text of Baton's status bar item, e.g. "Baton: 2 running, 1 waiting" (its codicon is not text). */
async function statusBarText(page: Page): Promise<string> {
  const text = await page.locator('.part.statusbar .statusbar-item', { hasText: 'Baton' }).first().innerText();
  return text.replace(/\s+/g, ' ').trim();
}

/** Watches pids every 100 ms until stopped; reports any that were ever seen dead. */
function watchAlive(pids: number[]): { stop(): number[] } {
  const died = new Set<number>();
  const timer = setInterval(() => {
    for (const pid of pids) if (!isPidAlive(pid)) died.add(pid);
  }, 100);
  return {
    stop: () => {
      clearInterval(timer);
      return [...died];
    },
  };
}

describe('Baton in the browser: reloading the window mid-run keeps the run going (baton.onWindowClose: keepRunning)', function () {
  // Four steps of 20 s: T1 and T6 take ~80 s, long enough to reload in the middle of them even when a loaded
  // machine takes most of a minute to bring the window back. Once the new window has taken them over, the hurry file
  // lets them finish at once (examples/demo/agent/fake-agent.js).
  const hurry = join(tmpdir(), `baton-e2e-reload-hurry-${process.pid}`);
  rmSync(hurry, { force: true });
  const editor = useBatonEditor({
    source: DEMO_WORKSPACE,
    env: { DEMO_AGENT_STEP_MS: '20000', DEMO_AGENT_HURRY_FILE: hurry },
  });
  const { step, check } = chainedSteps();
  const page = () => editor.current.page;
  let runId = '';
  let before: Worker[] = [];
  let reloaded: { launchedAt: number; oldHostExit: RegExpExecArray } | undefined;
  let alive: { stop(): number[] } | undefined;

  step('starts the demo run and opens its dashboard; T1 and T6 run', async () => {
    runId = await startDemoRun(editor.current);
    await clickViewTitleAction(await viewPane(page(), 'Runs'), 'Open Dashboard');
    const frame = await dashboardFrame(page());
    await frame.locator('.run-header .run-id', { hasText: runId }).waitFor({ timeout: 15_000 });
    await frame.locator('.run-header .chip', { hasText: /^running$/ }).waitFor({ timeout: 15_000 });
    before = (await storeFacts(editor.current.workspace, runId)).workers;
    assert.deepEqual(before.map((w) => w.delegationId).sort(), ['D-T1-coder-001', 'D-T6-coder-001']);
    for (const w of before) assert.ok(isPidAlive(w.pid), `the worker of ${w.delegationId} runs (pid ${w.pid})`);
    await clearNotifications(page());
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-reload-1-before');
  });

  step('reloads the window: the old extension host hands the run over and ends by itself', async () => {
    alive = watchAlive(before.map((w) => w.pid));
    reloaded = await reloadWindow(editor.current);
    // It deactivated within VS Code's budget and exited; it was not killed.
    assert.equal(reloaded.oldHostExit[3], 'null', `the old extension host ended with ${reloaded.oldHostExit[0]}`);
    const facts = await eventually(
      'the hand-over in the run log',
      () => storeFacts(editor.current.workspace, runId),
      (f) => f.events.some((e) => e.type === 'coordinator:released' && e.data.handedOver?.workers === 2),
    );
    assert.ok(facts);
  });

  step('the reloaded window takes the run over within seconds: the Runs view, the status bar', async () => {
    const runs = await viewPane(page(), 'Runs', 60_000);
    await openViewContainer(page(), 'Baton', 90_000);
    const row = treeRow(runs, new RegExp(`^plan\\.md running · \\d+/6 · ${runId}$`));
    await row.waitFor({ timeout: 30_000 });
    const seconds = (Date.now() - reloaded!.launchedAt) / 1000;
    // On a loaded 2-core machine the workbench alone takes a while to come up; the bound is loose, the figure logged.
    process.stdout.write(
      `      (the Runs view said "running" ${seconds.toFixed(1)} s after the new extension host launched)\n`,
    );
    assert.ok(seconds < 60, `the Runs view said "running" ${seconds.toFixed(1)} s after the extension host launched`);
    // T3 waits at its risk gate all along: "1 waiting".
    await eventually(
      'the status bar to count the two workers',
      () => statusBarText(page()),
      (t) => /^Baton: 2 running, 1 waiting$/.test(t),
    );
    const workers = await viewPane(page(), 'Workers');
    for (const task of ['T1', 'T6'])
      await treeRow(workers, new RegExp(`^${task} D-${task}-coder-001 beat \\d+s ago · lease \\d+s`)).waitFor({
        timeout: 15_000,
      });
  });

  check('the same attempts go on: no second attempt, the same worker pids, never dead through the reload', async () => {
    const facts = await storeFacts(editor.current.workspace, runId);
    assert.deepEqual(
      facts.delegations.filter((d) => /^D-T[16]-/.test(d)),
      ['D-T1-coder-001:RUNNING', 'D-T6-coder-001:RUNNING'],
    );
    assert.deepEqual(
      facts.workers.map((w) => `${w.delegationId}:${w.pid}`).sort(),
      before.map((w) => `${w.delegationId}:${w.pid}`).sort(),
      'the workers of the reloaded window are the ones started before the reload',
    );
    const acquired = facts.events.filter((e) => e.type === 'coordinator:acquired');
    assert.equal(acquired.length, 2, 'coordinated twice: before the reload and after');
    assert.equal(facts.lease?.releasedAt, undefined, 'the new window holds the lease');
    assert.match(
      batonLog(editor.current.server),
      /reconcile T1: running \(pid \d+\) after its coordinator went away → adopted/,
    );
  });

  check('the dashboard tab is restored on the same run', async () => {
    await page().locator('.part.editor .tab', { hasText: 'Baton Dashboard' }).waitFor({ timeout: 30_000 });
    const frame = await dashboardFrame(page(), 60_000);
    await frame.locator('.run-header .run-id', { hasText: runId }).waitFor({ timeout: 15_000 });
    await frame.locator('.run-header .chip', { hasText: /^running$/ }).waitFor({ timeout: 15_000 });
    await frame.locator('.worker-row', { hasText: 'D-T1-coder-001' }).waitFor({ timeout: 15_000 });
    await clearNotifications(page());
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-reload-2-after');
  });

  check('the adopted attempt finishes as attempt 1: its result is taken by the new window', async () => {
    writeFileSync(hurry, '');
    const runs = await viewPane(page(), 'Runs');
    await treeRow(runs, /^T1 Add the notes store completed · attempt 1\b/).waitFor({ timeout: 150_000 });
    const died = alive!.stop();
    const t1 = before.find((w) => w.delegationId === 'D-T1-coder-001')!;
    // T1's worker ends when it is done; until then it was never seen dead.
    assert.ok(!died.includes(t1.pid) || !isPidAlive(t1.pid), 'T1 ended by finishing, not by the reload');
    const facts = await storeFacts(editor.current.workspace, runId);
    assert.ok(facts.delegations.includes('D-T1-coder-001:COMPLETED'), facts.delegations.join(', '));
    assert.ok(!facts.delegations.some((d) => d.startsWith('D-T1-coder-002')), 'no second attempt of T1');
    await screenshot(page(), 'e2e-reload-3-adopted-finished');
  });

  after(async function () {
    alive?.stop();
    rmSync(hurry, { force: true });
  });
});

describe('Baton in the browser: closing the window with baton.onWindowClose: stopImmediately ends the workers', function () {
  const editor = useBatonEditor({
    source: DEMO_WORKSPACE,
    env: { DEMO_AGENT_STEP_MS: '60000' },
    settings: { 'baton.onWindowClose': 'stopImmediately' },
  });
  const { step, check } = chainedSteps();
  const page = () => editor.current.page;
  let runId = '';
  let before: Worker[] = [];

  step('starts the demo run; T1 and T6 run', async () => {
    runId = await startDemoRun(editor.current);
    before = (await storeFacts(editor.current.workspace, runId)).workers;
    assert.equal(before.length, 2);
    for (const w of before) {
      assert.ok(isPidAlive(w.pid), `the worker of ${w.delegationId} runs`);
      assert.ok(processesCarrying(`BATON_RUNTIME_ID=${w.runtimeId}`).length >= 1);
    }
  });

  step('reloads the window (a close, as far as VS Code tells the extension)', async () => {
    const { oldHostExit } = await reloadWindow(editor.current);
    assert.equal(oldHostExit[3], 'null', `the old extension host ended with ${oldHostExit[0]}`);
  });

  check('the workers are gone — no process carries their marker — and their attempts are cancelled', async () => {
    // Proven from outside the editor, with no polling: the closing window ended them before it exited.
    for (const w of before) {
      assert.deepEqual(processesCarrying(`BATON_RUNTIME_ID=${w.runtimeId}`), [], `nothing left of ${w.delegationId}`);
      assert.ok(!isPidAlive(w.pid), `the worker process ${w.pid} of ${w.delegationId} is gone`);
    }
    const facts = await storeFacts(editor.current.workspace, runId);
    assert.deepEqual(
      facts.delegations.filter((d) => /^D-T[16]-/.test(d)),
      ['D-T1-coder-001:CANCELLED', 'D-T6-coder-001:CANCELLED'],
    );
    assert.ok(facts.lease?.releasedAt !== undefined, 'the lease was released');
    assert.ok(!facts.lease?.handedOver, 'not handed over');
  });

  check('the reloaded window says the run is stopped (Resume), and takes nothing over', async () => {
    await openViewContainer(page(), 'Baton', 90_000);
    const runs = await viewPane(page(), 'Runs', 60_000);
    const row = treeRow(runs, new RegExp(`^plan\\.md stopped · \\d+/6 · ${runId}$`));
    await row.waitFor({ timeout: 30_000 });
    assert.match(await rowText(row), /stopped/);
    // Nothing runs; T3 still waits at its risk gate, and the stopped run waits for Resume
    // (docs/extension.md, "Attention").
    await eventually(
      'the status bar to count no worker',
      () => statusBarText(page()),
      (t) => /^Baton: 1 gate waiting, 1 run stopped$/.test(t),
    );
    await clearNotifications(page());
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-reload-stop-immediately');
    const facts = await storeFacts(editor.current.workspace, runId);
    assert.equal(facts.events.filter((e) => e.type === 'coordinator:acquired').length, 1, 'nobody took it over');
  });
});
