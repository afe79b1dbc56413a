// The demo run, clicked through in a real browser: Chromium (playwright-core) on code-server
// with the built extension installed, on a fresh copy of examples/demo. The tests chain
// (one editor for the file): welcome → start → running tasks → heartbeats → approve the
// risk gate → the invalid artifact of T2 with its diagnostics and quick fixes → re-ingest.
//
// The demo agent (examples/demo/agent/fake-agent.js) heartbeats with progress text every
// DEMO_AGENT_STEP_MS for four steps and writes its result: T2's is invalid (wrong task,
// status DONE), T6 fails its verify command, T3 waits at a risk gate (database).
import * as assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from './support/engine';
import {
  activeEditor,
  chainedSteps,
  clearNotifications,
  clickInlineAction,
  codeActions,
  codeLens,
  cursorLine,
  DEMO_WORKSPACE,
  editorLine,
  editorText,
  eventually,
  expandRow,
  focusEditor,
  hoverText,
  inlineAction,
  moveMouseAway,
  notificationMessages,
  openViewContainer,
  problems,
  quickOpen,
  resizeSideBar,
  ROOT,
  rowDescription,
  rowText,
  runCommand,
  screenshot,
  squiggleOnLine,
  treeRow,
  treeRowByLabel,
  treeRowNames,
  useBatonEditor,
  viewPane,
} from './support/index';

/** Each of the agent's four steps: T1 and T6 run for ~10 s, long enough to watch them beat. */
const STEP_MS = 2500;
const ARTIFACT = 'D-T2-coder-001';

describe('Baton in the browser: the demo run', function () {
  // Once the risk gate is approved (the last step that needs workers running at the demo's pace), the hurry file lets
  // every worker's steps left take no time (examples/demo/agent/fake-agent.js).
  const hurry = join(tmpdir(), `baton-e2e-demo-hurry-${process.pid}`);
  rmSync(hurry, { force: true });
  const editor = useBatonEditor({
    source: DEMO_WORKSPACE,
    env: { DEMO_AGENT_STEP_MS: String(STEP_MS), DEMO_AGENT_HURRY_FILE: hurry },
  });
  let runId = '';

  const { step, check } = chainedSteps();

  const page = () => editor.current.page;
  const runs = () => viewPane(page(), 'Runs');
  const workers = () => viewPane(page(), 'Workers');
  const gates = () => viewPane(page(), 'Gates');
  const artifactPath = () => join(editor.current.workspace, '.baton', 'runs', runId, 'artifacts', `${ARTIFACT}.md`);
  /** 1-based number of the first line of the artifact that matches. */
  const artifactLine = (pattern: RegExp): number =>
    readFileSync(artifactPath(), 'utf8')
      .split('\n')
      .findIndex((line) => pattern.test(line)) + 1;

  step('opens the Baton view container; the Runs view shows its welcome before any run', async () => {
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    const pane = await runs();
    await pane.getByText('No Baton run in this workspace yet.').waitFor({ timeout: 30_000 });
    for (const link of ['Start Run', 'Create Example Plan', 'Open Documentation']) {
      await pane.getByRole('button', { name: link, exact: true }).waitFor();
    }
    await (await workers()).getByText('No worker is running.').waitFor();
    await (await gates()).getByText('No gate is waiting for a decision.').waitFor();
    assert.deepEqual(await treeRowNames(pane), [], 'no run rows yet');
    // The plan's CodeLenses: "▶ Start run" above the first task, "▶ Run task T…" on each.
    await quickOpen(page(), 'plan.md');
    await codeLens(page(), '▶ Start run').waitFor({ timeout: 15_000 });
    // (Lenses below the fold are rendered but hidden.)
    for (const id of ['T1', 'T2', 'T3', 'T4', 'T5', 'T6'])
      await codeLens(page(), `▶ Run task ${id}`).waitFor({ state: 'attached', timeout: 5_000 });
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-1-welcome');
  });

  step('starts the demo run from the welcome link and shows its tasks running in the Runs view', async () => {
    const pane = await runs();
    await pane.getByRole('button', { name: 'Start Run', exact: true }).click();
    // With several plans in the workspace a quick pick asks which one; the demo has one.
    const picked = await eventually(
      'the run to appear in the Runs view (or the plan quick pick)',
      async () =>
        (await treeRow(pane, /^plan\.md /).count()) > 0
          ? 'run'
          : (await page().locator('.quick-input-widget').isVisible())
            ? 'pick'
            : '',
      Boolean,
    );
    if (picked === 'pick') {
      await page()
        .locator('.quick-input-widget')
        .getByRole('option', { name: /plan\.md/ })
        .first()
        .click();
    }
    const run = treeRow(pane, /^plan\.md running · \d+\/6 · R-/);
    await run.waitFor({ timeout: 30_000 });
    runId = /\b(R-\d{8}-\w+)\b/.exec((await run.getAttribute('aria-label')) ?? '')?.[1] ?? '';
    assert.match(runId, /^R-\d{8}-\w+$/);
    // T1 and T6 depend on nothing: both start at once; T3 waits at its risk gate.
    await treeRow(pane, /^T1 Add the notes store running · attempt 1\b/).waitFor({ timeout: 30_000 });
    await treeRow(pane, /^T6 Describe notes in the README running · attempt 1\b/).waitFor({ timeout: 30_000 });
    await treeRow(pane, /^T3 Store notes in SQLite gated/).waitFor();
    await treeRow(pane, /^T2 Add the notes commands pending/).waitFor();
    await page()
      .locator('.part.statusbar')
      .getByText(/Baton: 2 running/)
      .waitFor({ timeout: 15_000 });
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-2-runs-running');
  });

  step('shows a heartbeat age in the Workers view that changes while the worker runs', async () => {
    const pane = await workers();
    const row = treeRow(pane, /^T1 D-T1-coder-001 /);
    await row.waitFor({ timeout: 30_000 });
    const beat = /^beat (\d+)s ago · lease (\d+)s · (.+)$/;
    const first = await eventually(
      'a heartbeat with progress text on T1',
      () => rowDescription(row),
      (d) => beat.test(d),
      { timeoutMs: 15_000 },
    );
    // The age ticks every second; a new beat sets it back to 0 and may change the progress text.
    const changed = await eventually(
      'the heartbeat age of T1 to change',
      () => rowDescription(row),
      (d) => beat.test(d) && d !== first && beat.exec(d)![1] !== beat.exec(first)![1],
      { timeoutMs: 10_000 },
    );
    assert.match(beat.exec(first)![3]!, /reading the task|looking at the code|making the change|checking the result/);
    assert.match(changed, beat);
    // Both workers show, each with its heartbeat.
    await treeRow(pane, /^T6 D-T6-coder-001 beat \d+s ago · lease \d+s/).waitFor({ timeout: 10_000 });
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-3-workers-heartbeat');
  });

  check("counts a running task's duration up in the Runs view", async () => {
    const pane = await runs();
    const row = treeRow(pane, /^T1 Add the notes store running\b/);
    const seconds = async (): Promise<number> => Number(/ · (\d+)s$/.exec(await rowText(row))?.[1] ?? Number.NaN);
    const before = await eventually('T1 running with a duration', seconds, (s) => Number.isFinite(s), {
      timeoutMs: 5_000,
    });
    // The Workers view's ages tick every second; the running task's duration should too.
    await eventually(`the duration of running T1 to count up from ${before}s`, seconds, (s) => s > before, {
      timeoutMs: 4_000,
    });
  });

  step('approves the risk gate G-1 with its inline ✓ in the Gates view, and T3 dispatches', async () => {
    const pane = await gates();
    const gate = treeRow(pane, /^G-1 risk approval · T3 Task T3 is tagged database/);
    await gate.waitFor({ timeout: 30_000 });
    // The open gates are counted on the Baton icon of the activity bar (the Gates view's badge).
    const badge = page()
      .locator('.part.activitybar li.action-item', { has: page().locator('a.action-label[aria-label^="Baton"]') })
      .locator('.badge-content');
    await eventually(
      'a gate count on the Baton icon',
      async () => Number(await badge.textContent()),
      (n) => n >= 1,
      { timeoutMs: 10_000 },
    );
    await clearNotifications(page());
    await moveMouseAway(page());
    await inlineAction(gate, 'Approve');
    await screenshot(page(), 'e2e-4-gate-approve');
    await clickInlineAction(gate, 'Approve');
    await gate.waitFor({ state: 'detached', timeout: 15_000 });
    // T3 depended only on T1: it runs once T1 is done (or has already, on a fast machine).
    const runsPane = await runs();
    await treeRow(runsPane, /^T3 Store notes in SQLite (running|verifying|completed) · attempt 1\b/).waitFor({
      timeout: 60_000,
    });
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-4-gate-approved');
    writeFileSync(hurry, '');
  });

  check('keeps one gate notification that lists exactly the gates the Gates view shows, with their tasks', async () => {
    // G-2 (T6's verification failed) opens when T6 ends; G-3 (T2's result rejected) about ten
    // seconds later: the one notification names both, as the Gates view does.
    const pane = await gates();
    await treeRow(pane, /^G-3 ingestion failed · T2 /).waitFor({ timeout: 60_000 });
    const inView = async (): Promise<string[]> =>
      (await treeRowNames(pane)).map((name) => /^(G-\d+)\b/.exec(name)?.[1] ?? '').sort();
    const notified = async (): Promise<string[]> => {
      const message = (await notificationMessages(page())).find((m) => /\bwaits? for a decision\b/.test(m)) ?? '';
      return [...message.matchAll(/\bG-\d+\b/g)].map((m) => m[0]).sort();
    };
    const [view, toast] = await eventually(
      'the gate notification to list the gates of the Gates view',
      async () => [await inView(), await notified()] as const,
      ([v, n]) => v.length > 0 && JSON.stringify(v) === JSON.stringify(n),
      { timeoutMs: 15_000 },
    );
    assert.deepEqual(toast, view);
    assert.ok(view.includes('G-3') && !view.includes('G-1'), `open gates: ${view.join(', ')}`);
    const message = (await notificationMessages(page())).find((m) => m.includes('G-3'))!;
    assert.match(message, /G-3 T2 “Add the notes commands” \(rejected result\)/);
  });

  step(
    'opens the invalid artifact of T2 from the Runs view with diagnostics on its task: and status: lines',
    async () => {
      // T2 starts after T1; the agent's result names task T3 with status DONE: ingestion rejects it.
      await treeRow(await gates(), /^G-3 ingestion failed · T2 /).waitFor({ timeout: 60_000 });
      const pane = await runs();
      // The run settles first (T3 ends, the run waits at its two gates): a click on a row's inline action while the
      // view refreshes its run reaches the command without the row (VS Code drops the tree's handles it re-reads).
      await treeRow(pane, /^plan\.md waiting for a decision \(2 gates\) · /).waitFor({ timeout: 60_000 });
      const task = treeRow(pane, /^T2 Add the notes commands gated · attempt 1\b/);
      await task.waitFor({ timeout: 15_000 });
      await expandRow(task);
      const delegation = treeRowByLabel(pane, ARTIFACT);
      await delegation.waitFor({ timeout: 15_000 });
      // What was rejected and why, in words (no record id a person would not know).
      assert.match(
        await rowText(delegation),
        new RegExp(
          `^${ARTIFACT} BLOCKED · result rejected: The result is for task "T3", but this delegation is for task "T2"`,
        ),
      );
      await clickInlineAction(delegation, 'Open Artifact');
      await page()
        .locator('.part.editor .tab.active', { hasText: `${ARTIFACT}.md` })
        .waitFor({ timeout: 15_000 });
      // Its CodeLens offers to ingest it again. (Wait for it before moving the focus: VS Code
      // drops a pending CodeLens request when the focus moves to a panel that is opening.)
      await codeLens(page(), `↻ Re-ingest for ${ARTIFACT}`).waitFor({ timeout: 15_000 });
      const taskLine = artifactLine(/^task:/);
      const statusLine = artifactLine(/^status:/);
      assert.ok(taskLine > 0 && statusLine > 0, 'the artifact has task: and status: lines');

      // The Problems panel lists both issues at their lines.
      await runCommand(page(), 'View: Focus Problems');
      const listed = await eventually(
        'both ingestion issues in the Problems panel',
        () => problems(page()),
        (list) => list.length === 2,
        { timeoutMs: 15_000 },
      );
      const mismatch = listed.find((p) =>
        p.includes('The result is for task "T3", but this delegation is for task "T2"'),
      );
      const status = listed.find((p) => p.includes('The status "DONE" is not one of PASS, FAIL, BLOCKED'));
      assert.ok(mismatch, `a task-mismatch problem in ${JSON.stringify(listed)}`);
      assert.ok(status, `an invalid-status problem in ${JSON.stringify(listed)}`);
      assert.match(mismatch, new RegExp(`^Error: .* at line ${taskLine} and character \\d+\\. generated by baton$`));
      assert.match(status, new RegExp(`^Error: .* at line ${statusLine} and character \\d+\\. generated by baton$`));
      // Each row shows the diagnostic's source and stable code, and its position.
      const rows = (await page().locator('.part.panel [role=treeitem]').allInnerTexts()).map((text) =>
        text.replace(/\s+/g, ' '),
      );
      assert.ok(
        rows.some((r) => /\bbaton\W+result\.task-mismatch\b/.test(r) && r.includes(`[Ln ${taskLine}, Col`)),
        `task-mismatch row at line ${taskLine}: ${JSON.stringify(rows)}`,
      );
      assert.ok(
        rows.some((r) => /\bbaton\W+result\.invalid-status\b/.test(r) && r.includes(`[Ln ${statusLine}, Col`)),
        `invalid-status row at line ${statusLine}: ${JSON.stringify(rows)}`,
      );

      // The squiggle on the task: line carries the message and offers the quick fix.
      await clearNotifications(page());
      const box = await squiggleOnLine(page(), editorLine(page(), /^task:\s+T3$/));
      const hover = await hoverText(page(), { x: box.x + box.width / 2, y: box.y + box.height / 2 }, /Quick Fix/);
      assert.match(hover, /The result is for task "T3", but this delegation is for task "T2"/);
      assert.match(hover, /result\.task-mismatch/);
      await screenshot(page(), 'e2e-5-artifact-hover');
    },
  );

  check('names delegation rows for screen readers by their id and status', async () => {
    const row = treeRowByLabel(await runs(), ARTIFACT);
    const name = (await row.getAttribute('aria-label')) ?? '';
    assert.ok(
      name.includes(ARTIFACT) && name.includes('BLOCKED'),
      `aria-label of the ${ARTIFACT} row is "${name}": it should name the delegation and its status like its label and description do`,
    );
  });

  check('puts the Re-ingest CodeLens on the ```baton-result fence', async () => {
    const lens = codeLens(page(), `↻ Re-ingest for ${ARTIFACT}`);
    await lens.waitFor({ timeout: 15_000 });
    const fence = await editorLine(page(), /^.{3}baton-result\s*$/).boundingBox();
    const lensBox = await lens.boundingBox();
    assert.ok(fence && lensBox);
    // A CodeLens shows in a zone right above its line: nothing but that zone between them.
    const gap = fence.y - (lensBox.y + lensBox.height);
    assert.ok(
      gap >= -1 && gap < fence.height,
      `the CodeLens should sit right above the fence line (gap ${gap.toFixed(0)} px; one line is ${fence.height} px)`,
    );
  });

  step('fixes both issues with Ctrl+. quick fixes; re-ingesting clears the diagnostics', async () => {
    const listed = () => page().locator('.part.panel [role=treeitem]');
    // The task: line. Selecting a problem moves the editor's cursor to it.
    await moveMouseAway(page());
    await listed().filter({ hasText: 'The result is for task "T3"' }).click();
    await eventually(
      'the cursor on the task: line',
      () => cursorLine(page()),
      (line) => line === artifactLine(/^task:/),
      { timeoutMs: 10_000 },
    );
    await focusEditor(page());
    await page().keyboard.press('Control+.');
    await page().locator('.action-widget').getByRole('option', { name: 'Set task: T2' }).waitFor({ timeout: 15_000 });
    await screenshot(page(), 'e2e-5-quick-fix');
    await page().keyboard.press('Escape');
    const taskFixes = await codeActions(page(), 'Set task: T2');
    assert.ok(taskFixes.includes('Set task: T2'), `quick fixes: ${taskFixes.join(', ')}`);
    await eventually(
      'task: T2 in the editor',
      () => editorText(page()),
      (text) => /^task:\s+T2$/m.test(text),
      { timeoutMs: 10_000 },
    );

    // The status: line: three statuses of the contract are offered. (The mouse leaves the
    // task: line first: a hover left open there would cover the Problems panel.)
    await moveMouseAway(page());
    await listed().filter({ hasText: 'The status "DONE"' }).click();
    await eventually(
      'the cursor on the status: line',
      () => cursorLine(page()),
      (line) => line === artifactLine(/^status:/),
      { timeoutMs: 10_000 },
    );
    const statusFixes = await codeActions(page(), 'Set status: PASS');
    for (const fix of ['Set status: PASS', 'Set status: FAIL', 'Set status: BLOCKED'])
      assert.ok(statusFixes.includes(fix), `${fix} in ${statusFixes.join(', ')}`);
    await eventually(
      'status: PASS in the editor',
      () => editorText(page()),
      (text) => /^status:\s+PASS$/m.test(text),
      { timeoutMs: 10_000 },
    );

    // Re-ingest from the CodeLens (it saves the document first): accepted, no issue left.
    await codeLens(page(), `↻ Re-ingest for ${ARTIFACT}`).click();
    await eventually(
      'the ingestion issues to go from the Problems panel',
      () => problems(page()),
      (list) => list.length === 0,
      { timeoutMs: 30_000 },
    );
    await activeEditor(page()).locator('.squiggly-error').first().waitFor({ state: 'detached', timeout: 10_000 });
    // COMPLETED comes after the accepted result is integrated (T2 runs in a worktree: a merge into the target by git),
    // so the wait holds real work, not only a redraw: a hang detector sized for a machine at load 10 and more (a run
    // beside two busy processes and other work, at load 14, took longer than 15 s here).
    await codeLens(page(), `${ARTIFACT}: COMPLETED`).waitFor({ timeout: 45_000 });
    const saved = readFileSync(artifactPath(), 'utf8');
    assert.match(saved, /^task: T2$/m);
    assert.match(saved, /^status: PASS$/m);
    const pane = await runs();
    await eventually(
      `${ARTIFACT} COMPLETED in the Runs view`,
      () => rowText(treeRowByLabel(pane, ARTIFACT)),
      (text) => text.startsWith(`${ARTIFACT} COMPLETED · PASS`),
      { timeoutMs: 15_000 },
    );
    await treeRow(pane, /^T2 Add the notes commands completed · attempt 1 · PASS\b/).waitFor({ timeout: 15_000 });
    await treeRow(await gates(), /^G-3 /).waitFor({ state: 'detached', timeout: 15_000 });
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-6-reingested');
  });

  check('goes on with the run once the corrected result is accepted: T4 (after T2 and T3) dispatches', async () => {
    const pane = await runs();
    await treeRow(pane, /^T3 Store notes in SQLite completed\b/).waitFor({ timeout: 60_000 });
    await treeRow(pane, /^T4 Help text and an end-to-end check (running|verifying|completed) · attempt 1\b/).waitFor({
      timeout: 30_000,
    });
  });

  check(
    'T4, then T5 (the reviewer’s task) pass: only T2’s result and T6’s verification stopped, as the README promises',
    async () => {
      const pane = await runs();
      for (const task of ['T4 Help text and an end-to-end check', 'T5 Review the notes feature'])
        await treeRow(pane, new RegExp(`^${task} completed · attempt 1 · PASS\\b`)).waitFor({ timeout: 90_000 });
      await eventually(
        'the Gates view to show T6’s verification gate alone',
        async () => treeRowNames(await gates()),
        (rows) => rows.length === 1 && /^G-\d+ +verification failed · T6 /.test(rows[0]!),
        { timeoutMs: 15_000 },
      );
      // The store agrees: of every result handed in, only T2's first was rejected.
      const engine = await Engine.open({ workspace: editor.current.workspace });
      try {
        const rejected = (await engine.listIngestions(runId)).filter((i) => !i.accepted).map((i) => i.delegationId);
        assert.deepEqual(rejected, [ARTIFACT]);
        const tasks = Object.fromEntries((await engine.overview(runId)).tasks.map((t) => [t.id, t.status]));
        assert.deepEqual(tasks, {
          T1: 'completed',
          T2: 'completed',
          T3: 'completed',
          T4: 'completed',
          T5: 'completed',
          T6: 'gated',
        });
      } finally {
        await engine.close();
      }
      await moveMouseAway(page());
      await screenshot(page(), 'e2e-7-only-the-promised-failures');
    },
  );

  after(function () {
    rmSync(hurry, { force: true });
    // The README's screenshots (docs/images) come from this run when BATON_E2E_README_IMAGES=1.
    if (process.env.BATON_E2E_README_IMAGES !== '1') return;
    mkdirSync(join(ROOT, 'docs', 'images'), { recursive: true });
    for (const [from, to] of [
      ['e2e-3-workers-heartbeat', 'sidebar-running'],
      ['e2e-4-gate-approve', 'gate-approve'],
      ['e2e-5-quick-fix', 'artifact-diagnostic'],
    ] as const) {
      if (existsSync(join(ROOT, 'test-results', `${from}.png`)))
        copyFileSync(join(ROOT, 'test-results', `${from}.png`), join(ROOT, 'docs', 'images', `${to}.png`));
    }
  });
});
