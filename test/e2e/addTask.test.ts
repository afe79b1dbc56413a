// Add Task… from the editor (issue 24, "Add a task without editing markdown"), on a run that goes
// on (test/e2e/fixtures/addTask: T1 waits at a risk gate). The person adds T2 from the run's context
// menu — title, instructions, no dependency — and the plan gets a well-formed `baton-task` block as
// an unsaved edit; the notification offers Save and Replan, which saves the plan and maps the run onto
// it: the new run runs T2 (its worker gets the instructions typed), and T1 still waits at its gate.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { parsePlan } from '../../src/engine/index';
import { Engine } from './support/engine';
import {
  chainedSteps,
  clickNotificationButton,
  editorText,
  eventually,
  moveMouseAway,
  notificationMessages,
  openViewContainer,
  quickInput,
  resizeSideBar,
  runContextMenuItem,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
} from './support/index';

const FIXTURE = resolve(__dirname, 'fixtures/addTask');

/** Answers the input box whose title matches (Add Task… asks several in a row). */
async function answer(page: Page, title: RegExp, text: string): Promise<void> {
  const widget = quickInput(page);
  await widget.locator('.quick-input-title', { hasText: title }).waitFor({ state: 'visible', timeout: 15_000 });
  await widget.locator('.quick-input-box input').fill(text);
  await page.keyboard.press('Enter');
}

describe('Baton in the browser: Add Task… appends a task to the plan, Save and Replan runs it', function () {
  // Auto save off, as desktop VS Code has it: VS Code for the web saves an edit after a second, so on a loaded machine
  // the added task could be on disk before the test looks (newRun.test.ts does the same).
  const editor = useBatonEditor({ source: FIXTURE, settings: { 'files.autoSave': 'off' } });
  const { step } = chainedSteps();
  const page = () => editor.current.page;
  const ws = () => editor.current.workspace;
  let firstRun = '';

  step('Add Task… on the running run writes a T2 block into the plan, unsaved, and offers to replan', async () => {
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    await (await viewPane(page(), 'Runs')).getByRole('button', { name: 'Start Run', exact: true }).click();
    await treeRow(await viewPane(page(), 'Gates'), /^G-1 risk approval · T1 /).waitFor({ timeout: 60_000 });
    const engine = await Engine.open({ workspace: ws() });
    try {
      firstRun = (await engine.getRun()).id;
    } finally {
      await engine.close();
    }

    await runContextMenuItem(page(), treeRow(await viewPane(page(), 'Runs'), /^plan\.md /), 'Add Task…');
    await answer(page(), /^Add Task T2 to plan\.md/, 'Write the changelog');
    await answer(page(), /^Add Task T2: Write the changelog/, 'List what changed in CHANGES.md.');
    // It starts after: nothing picked is "at once".
    await quickInput(page())
      .locator('.quick-input-title', { hasText: /it starts after/ })
      .waitFor({ state: 'visible', timeout: 15_000 });
    await page().keyboard.press('Enter');
    await quickInput(page()).waitFor({ state: 'hidden', timeout: 15_000 });

    const message = await eventually(
      'the notification that T2 was added',
      async () => (await notificationMessages(page())).find((m) => m.includes('T2 is added')) ?? '',
      (m) => m !== '',
    );
    assert.match(
      message,
      new RegExp(
        `T2 is added to plan\\.md \\(not saved yet; Ctrl\\+Z takes it back\\)\\. Run ${firstRun} runs the plan as it started; replan it to run T2 too\\.`,
      ),
    );
    // The edit is in the editor, not on disk yet; the text with it is a valid plan with T1 and T2.
    const text = await eventually(
      'the plan editor to show T2',
      () => editorText(page()),
      (t) => /^id:\s*T2$/m.test(t),
    );
    assert.doesNotMatch(readFileSync(join(ws(), 'plan.md'), 'utf8'), /id: T2/);
    await moveMouseAway(page());
    await screenshot(page(), 'add-task-1-added');
    assert.match(text, /^title:\s*"Write\sthe\schangelog"$/m);
  });

  step(
    'Save and Replan saves the plan and replans the run: T2 runs with its instructions, T1 still waits',
    async () => {
      await clickNotificationButton(page(), /T2 is added to plan\.md/, 'Save and Replan');
      // The click returns before the editor has written the file: wait for the save, then judge it.
      const saved = await eventually(
        'plan.md saved with T2',
        async () => readFileSync(join(ws(), 'plan.md'), 'utf8'),
        (t) => /^id:\s*T2$/m.test(t),
      );
      const plan = parsePlan(saved);
      assert.deepEqual(plan.issues, [], 'the saved plan has no issues');
      assert.deepEqual(
        plan.tasks.map((t) => [t.id, t.title, t.depends]),
        [
          ['T1', 'Migrate the users table', []],
          ['T2', 'Write the changelog', []],
        ],
      );
      const engine = await Engine.open({ workspace: ws() });
      try {
        const tasks = await eventually(
          'T2 to complete in the new run',
          async () => {
            const run = await engine.getRun();
            return run.id === firstRun
              ? {}
              : Object.fromEntries((await engine.overview(run.id)).tasks.map((t) => [t.id, t.status]));
          },
          (t) => t.T2 === 'completed',
          { timeoutMs: 60_000 },
        );
        assert.equal(tasks.T1, 'gated', 'T1 still waits at its risk gate');
        const first = (await engine.listRuns()).find((r) => r.id === firstRun);
        assert.equal(first?.status, 'superseded');
      } finally {
        await engine.close();
      }
      assert.match(readFileSync(join(ws(), 'notes', 'T2.txt'), 'utf8'), /List what changed in CHANGES\.md\./);
      await treeRow(await viewPane(page(), 'Runs'), /^T2 .*completed/).waitFor({ timeout: 30_000 });
      await moveMouseAway(page());
      await screenshot(page(), 'add-task-2-replanned');
    },
  );
});
