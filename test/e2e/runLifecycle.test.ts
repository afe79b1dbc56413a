// A run's life in the editor, clicked through in a real browser (Chromium on code-server,
// the built extension, a fresh copy of examples/demo): the demo run driven to its end with
// exactly T2 and T6 failing, the run filed under History with no Stop or Resume on it, a new
// run started from the Runs view and another from the plan's CodeLens, a finished run
// removed from the view; then, in a second editor whose demo agent takes a minute per step,
// a running run cancelled from the Runs view: its workers proven gone from outside the
// editor, its gate closed, the run cancelled and filed under History.
import * as assert from 'node:assert/strict';
import { Engine } from './support/engine';
import {
  answerInputBox,
  chainedSteps,
  clickDialogButton,
  clickInlineAction,
  clickViewTitleAction,
  codeLens,
  contextMenuItems,
  DEMO_WORKSPACE,
  eventually,
  expandRow,
  gateNotification,
  isPidAlive,
  moveMouseAway,
  notificationMessages,
  openViewContainer,
  pickQuickItem,
  processesCarrying,
  quickInput,
  quickOpen,
  resizeSideBar,
  runContextMenuItem,
  screenshot,
  treeRow,
  treeRowNames,
  useBatonEditor,
  viewPane,
} from './support/index';

const RUN_ID = /\b(R-\d{8}-\w+)\b/;
const runIdOf = async (row: ReturnType<typeof treeRow>): Promise<string> =>
  RUN_ID.exec((await row.getAttribute('aria-label')) ?? '')?.[1] ?? '';

describe('Baton in the browser: a run from start to History, new runs, cancel', function () {
  describe('the demo to its end, then new runs', function () {
    const editor = useBatonEditor({ source: DEMO_WORKSPACE, env: { DEMO_AGENT_STEP_MS: '300' } });
    const { step, check } = chainedSteps();
    const page = () => editor.current.page;
    const runs = () => viewPane(page(), 'Runs');
    const gates = () => viewPane(page(), 'Gates');
    let firstRun = '';

    /** The run dispatches: an attempt of it is recorded (read from the store, as the CLI would). */
    async function runsWork(runId: string): Promise<void> {
      const engine = await Engine.open({ workspace: editor.current.workspace });
      try {
        await eventually(
          `an attempt of ${runId}`,
          async () => (await engine.overview(runId)).delegations.length,
          (n) => n > 0,
          { timeoutMs: 60_000, intervalMs: 500 },
        );
      } finally {
        await engine.close();
      }
    }

    /** Rejects the open gate whose row matches, with a note, from its inline ✗. */
    async function reject(row: RegExp, note: string): Promise<void> {
      const gate = treeRow(await gates(), row);
      await gate.waitFor({ timeout: 90_000 });
      await clickInlineAction(gate, 'Reject…');
      await answerInputBox(page(), note);
      await gate.waitFor({ state: 'detached', timeout: 15_000 });
    }

    step(
      'runs the demo to its end: approve the risk gate and T2’s retry (it repairs itself), turn down T6’s verification',
      async () => {
        await openViewContainer(page(), 'Baton');
        await resizeSideBar(page(), 520);
        const pane = await runs();
        await pane.getByRole('button', { name: 'Start Run', exact: true }).click();
        const run = treeRow(pane, /^plan\.md (running|paused) · \d+\/6 · R-/);
        await run.waitFor({ timeout: 60_000 });
        firstRun = await runIdOf(run);
        assert.match(firstRun, RUN_ID);

        const risk = treeRow(await gates(), /^G-1 risk approval · T3 /);
        await risk.waitFor({ timeout: 30_000 });
        await clickInlineAction(risk, 'Approve');
        await risk.waitFor({ state: 'detached', timeout: 15_000 });
        // T2's first result names the wrong task: approving its gate retries it, and the retry's prompt says what went
        // wrong (docs/workers.md, "What went wrong before"), so the demo agent hands in a valid result.
        const rejected = treeRow(await gates(), /^G-\d+ ingestion failed · T2 /);
        await rejected.waitFor({ timeout: 90_000 });
        await clickInlineAction(rejected, 'Approve');
        await rejected.waitFor({ state: 'detached', timeout: 15_000 });
        await treeRow(pane, /^T2 Add the notes commands completed · attempt 2 · PASS\b/).waitFor({ timeout: 60_000 });
        assert.equal(
          await treeRow(await gates(), /^G-\d+ ingestion failed · T2 /).count(),
          0,
          'the retry opened no second gate',
        );
        await moveMouseAway(page());
        await screenshot(page(), 'e2e-lifecycle-0-t2-repaired');
        await reject(/^G-\d+ verification failed · T6 /, 'the README is not written');
      },
    );

    step(
      'files the failed run under a collapsed History node: T6 failed, the rest done (T2 at its second attempt)',
      async () => {
        const pane = await runs();
        const history = treeRow(pane, /^History 1 finished run$/);
        await history.waitFor({ timeout: 90_000 });
        assert.equal(await history.getAttribute('aria-expanded'), 'false', 'History starts collapsed');
        assert.equal(
          (await treeRowNames(pane)).filter((name) => name.includes(firstRun)).length,
          0,
          'the finished run is not at the top any more',
        );
        await expandRow(history);
        const run = treeRow(pane, new RegExp(`^plan\\.md failed · 5/6 · ${firstRun}$`));
        await run.waitFor({ timeout: 15_000 });
        await expandRow(run);
        const expected: Array<[string, string]> = [
          ['T1', 'completed'],
          ['T2', 'completed'],
          ['T3', 'completed'],
          ['T4', 'completed'],
          ['T5', 'completed'],
          ['T6', 'failed'],
        ];
        for (const [task, status] of expected) await treeRow(pane, new RegExp(`^${task} .* ${status}\\b`)).waitFor();
        await moveMouseAway(page());
        await screenshot(page(), 'e2e-lifecycle-1-history');
      },
    );

    check(
      'offers neither Stop nor Resume nor Cancel on the finished run (its context menu and inline actions)',
      async () => {
        const run = treeRow(await runs(), new RegExp(`^plan\\.md failed · 5/6 · ${firstRun}$`));
        const items = await contextMenuItems(page(), run);
        for (const absent of ['Stop Run…', 'Stop Run Immediately', 'Resume Run', 'Cancel Run…'])
          assert.ok(!items.includes(absent), `"${absent}" is not in the menu: ${JSON.stringify(items)}`);
        for (const present of ['Start New Run…', 'Remove from View', 'Show Events'])
          assert.ok(items.includes(present), `"${present}" is in the menu: ${JSON.stringify(items)}`);
        await run.hover();
        const inline = await run
          .getByRole('button')
          .evaluateAll((buttons) => buttons.map((b) => b.getAttribute('aria-label')));
        assert.ok(
          !inline.includes('Resume Run') && !inline.includes('Stop Run…'),
          `inline actions: ${JSON.stringify(inline)}`,
        );
        await run.click({ button: 'right' });
        await page().locator('.context-view .monaco-menu').waitFor();
        await screenshot(page(), 'e2e-lifecycle-2-finished-menu');
        await page().keyboard.press('Escape');
      },
    );

    let secondRun = '';
    step(
      'starts a new run of the plan from the finished run’s context menu: a second run appears and runs',
      async () => {
        const pane = await runs();
        await runContextMenuItem(
          page(),
          treeRow(pane, new RegExp(`^plan\\.md failed · 5/6 · ${firstRun}$`)),
          'Start New Run…',
        );
        const run = treeRow(pane, /^plan\.md (running|paused) · \d+\/6 · R-/);
        await run.waitFor({ timeout: 30_000 });
        secondRun = await runIdOf(run);
        assert.notEqual(secondRun, firstRun);
        await runsWork(secondRun);
      },
    );

    step('starts another from the plan’s CodeLens “＋ Start new run” while the second one goes on', async () => {
      await quickOpen(page(), 'plan.md');
      const lens = codeLens(page(), '＋ Start new run');
      await lens.waitFor({ timeout: 30_000 });
      await lens.click();
      const pane = await runs();
      const third = await eventually(
        'a third run at the top of the Runs view',
        async () =>
          (await treeRowNames(pane))
            .map((name) => RUN_ID.exec(name)?.[1])
            .filter((id): id is string => id !== undefined && id !== firstRun && id !== secondRun),
        (ids) => ids.length > 0,
        { timeoutMs: 60_000 },
      );
      await treeRow(pane, new RegExp(`^plan\\.md (running|paused) · \\d+/6 · ${third[0]}$`)).waitFor({
        timeout: 30_000,
      });
      await runsWork(third[0]!);
      await moveMouseAway(page());
      await screenshot(page(), 'e2e-lifecycle-3-new-runs');
    });

    step('removes the finished run from the view: History goes; the run stays in the store', async () => {
      const pane = await runs();
      // Two running runs fill the pane: collapse everything so History is in view (the tree renders only what shows).
      await clickViewTitleAction(pane, 'Collapse All');
      await expandRow(treeRow(pane, /^History 1 finished run$/));
      const run = treeRow(pane, new RegExp(`^plan\\.md failed · 5/6 · ${firstRun}$`));
      await clickInlineAction(run, 'Remove from View');
      await run.waitFor({ state: 'detached', timeout: 15_000 });
      await treeRow(pane, /^History /).waitFor({ state: 'detached', timeout: 15_000 });
      const engine = await Engine.open({ workspace: editor.current.workspace });
      try {
        assert.equal((await engine.getRun(firstRun)).status, 'failed', 'hidden, not deleted');
      } finally {
        await engine.close();
      }
    });
  });

  describe('cancel a running run', function () {
    const editor = useBatonEditor({ source: DEMO_WORKSPACE, env: { DEMO_AGENT_STEP_MS: '60000' } });
    const { step } = chainedSteps();
    const page = () => editor.current.page;
    const runs = () => viewPane(page(), 'Runs');
    let runId = '';
    let workers: Array<{ runtimeId: string; delegationId: string; pid?: number }> = [];

    step('starts the demo run; two workers run, T3 waits at its risk gate', async () => {
      await openViewContainer(page(), 'Baton');
      await resizeSideBar(page(), 520);
      await clickViewTitleAction(await runs(), 'Start Run…');
      const pane = await runs();
      if (await quickInput(page()).isVisible()) await pickQuickItem(page(), 'plan.md');
      const run = treeRow(pane, /^plan\.md running · /);
      await run.waitFor({ timeout: 60_000 });
      runId = await runIdOf(run);
      const live = await viewPane(page(), 'Workers');
      for (const task of ['T1', 'T6'])
        await treeRow(live, new RegExp(`^${task} D-${task}-coder-001 beat \\d+s ago`)).waitFor({ timeout: 60_000 });
      await treeRow(await viewPane(page(), 'Gates'), /^G-1 risk approval · T3 /).waitFor({ timeout: 15_000 });
      // The gate reaches the person: the gate notification names it.
      await gateNotification(page()).waitFor({ timeout: 15_000 });
      assert.match(
        (await notificationMessages(page())).find((m) => m.includes('G-1')) ?? '',
        /^Baton: T3 .* waits for a decision \(G-1, risk approval\)/,
      );
      const engine = await Engine.open({ workspace: editor.current.workspace });
      try {
        workers = (await engine.diagnose(runId)).workers.map((w) => ({
          runtimeId: w.runtimeId,
          delegationId: w.delegationId,
          ...(w.pid ? { pid: w.pid } : {}),
        }));
      } finally {
        await engine.close();
      }
      assert.equal(workers.length, 2, JSON.stringify(workers));
      for (const w of workers)
        assert.ok(processesCarrying(`BATON_RUNTIME_ID=${w.runtimeId}`).length > 0, `${w.delegationId} runs`);
    });

    step(
      'cancels it from its context menu (confirmed): workers gone, gate closed, the run cancelled under History',
      async () => {
        const pane = await runs();
        await runContextMenuItem(page(), treeRow(pane, new RegExp(`^plan\\.md running · .* ${runId}$`)), 'Cancel Run…');
        await page().locator('.monaco-dialog-box').waitFor({ state: 'visible', timeout: 15_000 });
        await screenshot(page(), 'e2e-lifecycle-4-cancel-confirm');
        await clickDialogButton(page(), new RegExp(`Cancel run ${runId}\\?`), 'Cancel Run');
        const history = treeRow(pane, /^History 1 finished run$/);
        await history.waitFor({ timeout: 60_000 });
        await expandRow(history);
        const run = treeRow(pane, new RegExp(`^plan\\.md cancelled · 0/6 · ${runId}$`));
        await run.waitFor({ timeout: 15_000 });
        // Proven from outside the editor: nothing carries the workers' markers, their pids are gone.
        for (const w of workers) {
          assert.deepEqual(
            processesCarrying(`BATON_RUNTIME_ID=${w.runtimeId}`),
            [],
            `${w.delegationId}: no process left`,
          );
          assert.ok(!w.pid || !isPidAlive(w.pid), `the worker ${w.pid} of ${w.delegationId} is gone`);
        }
        await (
          await viewPane(page(), 'Gates')
        )
          .getByText('No gate is waiting for a decision.')
          .waitFor({ timeout: 15_000 });
        // Its gate closed with the run: the notification that asked for a decision on it goes too, not left stale.
        await gateNotification(page()).waitFor({ state: 'detached', timeout: 15_000 });
        assert.deepEqual(
          (await notificationMessages(page())).filter((m) => /\bwaits? for a decision\b/.test(m)),
          [],
          'no notification asks for a decision on the cancelled run',
        );
        await (await viewPane(page(), 'Workers')).getByText('No worker is running.').waitFor({ timeout: 15_000 });
        await expandRow(run);
        for (const task of ['T1', 'T2', 'T3', 'T4', 'T5', 'T6'])
          await treeRow(pane, new RegExp(`^${task} .* cancelled\\b`)).waitFor({ timeout: 15_000 });
        const items = await contextMenuItems(page(), run);
        assert.ok(!items.includes('Cancel Run…') && !items.includes('Resume Run'), JSON.stringify(items));
        await moveMouseAway(page());
        await screenshot(page(), 'e2e-lifecycle-5-cancelled');
      },
    );

    step('removes the cancelled run from the view; the view says how to bring it back', async () => {
      const pane = await runs();
      await clickInlineAction(treeRow(pane, new RegExp(`^plan\\.md cancelled · 0/6 · ${runId}$`)), 'Remove from View');
      await pane.getByText('Every run of this workspace is removed from this view').waitFor({ timeout: 15_000 });
      await pane.getByRole('button', { name: 'Show Removed Runs', exact: true }).click();
      await treeRow(pane, /^History 1 finished run$/).waitFor({ timeout: 15_000 });
    });
  });
});
