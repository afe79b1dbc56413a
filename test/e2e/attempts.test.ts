// What each attempt did, clicked through in a real browser (Chromium on code-server with the
// built extension) on a fresh git repository made from test/e2e/fixtures/attempts: T1 works in a
// worktree of its own and is integrated, T2 then works in the shared working tree, T3 runs in the
// shared tree until its worker is killed. None of the workers sends a heartbeat of its own.
//
// Proven here: Show Changes opens VS Code's diff with exactly the files each worker changed (the
// integrated commit of T1, the shared-tree before → after of T2); Show Output follows a running
// worker's log live without showing a line twice, and says when the attempt ended; a worker with
// no beats of its own shows alive with its pid and age in the Workers view and the dashboard, and
// once killed shows ended, not running; plus the small items: the run row's done count while
// running, the graceful-stop toast, config edits applied (or their issues in Problems), readable
// lines in the Baton log, and a timeline whose labels do not overlap.
import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { Engine } from './support/engine';
import { git } from '../support/gitRepo';
import {
  batonLog,
  chainedSteps,
  clearNotifications,
  clickViewTitleAction,
  eventually,
  expandRow,
  isPidAlive,
  moveMouseAway,
  notificationMessages,
  openViewContainer,
  pickQuickItem,
  problems,
  quickInput,
  resizeSideBar,
  rowDescription,
  rowText,
  runCommand,
  runContextMenuItem,
  screenshot,
  treeRow,
  treeRowByLabel,
  useBatonEditor,
  viewPane,
} from './support/index';

const FIXTURE = resolve(__dirname, 'fixtures/attempts');

/** The dashboard's document: the webview frame whose page has Baton's #root. */
async function dashboardFrame(page: Page): Promise<Frame> {
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
    { timeoutMs: 30_000 },
  ) as Promise<Frame>;
}

/** The files a multi-file diff editor lists (their headers' names). */
async function diffFiles(page: Page): Promise<string[]> {
  const names = await page.locator('.part.editor .multiDiffEntry .header .label-name').allInnerTexts();
  return names.map((n) => n.trim()).filter(Boolean);
}

/** The text of the terminal panel's visible rows (xterm's DOM renderer: one div per row). */
async function terminalLines(page: Page): Promise<string[]> {
  const rows = page.locator('.part.panel .terminal-wrapper.active .xterm-rows > div');
  return (await rows.allInnerTexts()).map((t) => t.replace(/\u00a0/g, ' ').trimEnd()).filter(Boolean);
}

describe('Baton in the browser: what each attempt changed, its output, its liveness', function () {
  const editor = useBatonEditor({
    source: FIXTURE,
    // The DOM renderer: the terminal's rows are text the test can read.
    settings: { 'terminal.integrated.gpuAcceleration': 'off', 'git.enabled': false },
  });
  const { step, check } = chainedSteps();
  let runId = '';

  const page = () => editor.current.page;
  const workspace = () => editor.current.workspace;
  const runs = () => viewPane(page(), 'Runs');
  const workers = () => viewPane(page(), 'Workers');
  const release = (task: string) => writeFileSync(join(workspace(), '.baton', `release-${task}`), '');

  /** The store as the CLI would read it, from a second engine. */
  async function withStore<T>(read: (engine: Engine) => Promise<T>): Promise<T> {
    const engine = await Engine.open({ workspace: workspace() });
    try {
      return await read(engine);
    } finally {
      await engine.close();
    }
  }

  const workerPid = (delegationId: string) =>
    withStore(async (e) => (await e.diagnose(runId)).workers.find((w) => w.delegationId === delegationId)?.pid);

  /** Runs a command on a task's row of the Runs view (its context menu). */
  async function onTask(task: string, command: string): Promise<void> {
    await runContextMenuItem(page(), treeRow(await runs(), new RegExp(`^${task} `)), command);
  }

  step('starts the plan in a fresh git repository; T1 (worktree) and T3 (shared tree) run', async () => {
    git(workspace(), 'init', '--quiet', '--initial-branch=main');
    git(workspace(), 'add', '--all');
    git(workspace(), '-c', 'user.name=Test', '-c', 'user.email=t@example.invalid', 'commit', '--quiet', '-m', 'start');
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 520);
    await clickViewTitleAction(await runs(), 'Start Run…');
    const pane = await runs();
    const picked = await eventually(
      'the run (or the plan quick pick)',
      async () =>
        (await treeRow(pane, /^plan\.md /).count()) > 0 ? 'run' : (await quickInput(page()).isVisible()) ? 'pick' : '',
      Boolean,
    );
    if (picked === 'pick') await pickQuickItem(page(), 'plan.md');
    const run = treeRow(pane, /^plan\.md running · /);
    await run.waitFor({ timeout: 30_000 });
    runId = /\b(R-\d{8}-\w+)\b/.exec((await run.getAttribute('aria-label')) ?? '')?.[1] ?? '';
    assert.match(runId, /^R-\d{8}-\w+$/);
    await treeRow(pane, /^T3 Watch the logs running · attempt 1\b/).waitFor({ timeout: 30_000 });
  });

  step(
    'a worker that sends no beats of its own shows alive, with its pid and age — in the Workers view and the dashboard',
    async () => {
      const pid = await eventually('T3’s worker pid in the store', () => workerPid('D-T3-coder-001'), Boolean);
      assert.ok(pid && isPidAlive(pid), `T3's worker runs (pid ${pid})`);
      const row = treeRow(await workers(), /^T3 D-T3-coder-001 /);
      const description = await eventually(
        'T3 alive with its pid in the Workers view',
        () => rowDescription(row),
        (d) => new RegExp(`^alive \\d+s · pid ${pid} · lease \\d+s$`).test(d),
        { timeoutMs: 20_000 },
      );
      // Its age counts up with the clock.
      const age = Number(/^alive (\d+)s/.exec(description)![1]);
      await eventually(
        'the age to count up',
        () => rowDescription(row),
        (d) => Number(/^alive (\d+)s/.exec(d)?.[1] ?? -1) > age,
        { timeoutMs: 10_000 },
      );
      await runCommand(page(), 'Baton: Open Dashboard');
      const frame = await dashboardFrame(page());
      const worker = frame.locator('.worker-row', { hasText: 'D-T3-coder-001' });
      await worker.locator('.chip', { hasText: /^alive$/ }).waitFor({ timeout: 15_000 });
      assert.match(await worker.locator('.w-age').innerText(), new RegExp(`^alive \\d+s · pid ${pid}$`));
      await moveMouseAway(page());
      await screenshot(page(), 'attempts-1-alive');
    },
  );

  check('the dashboard’s timeline labels do not run into each other', async () => {
    const frame = await dashboardFrame(page());
    await frame.locator('.timeline .ev', { hasText: 'coordinator:acquired' }).waitFor({ timeout: 15_000 });
    const overlaps = await frame.locator('.timeline .ev').evaluateAll((rows) =>
      rows.flatMap((row) => {
        const type = row.querySelector('.ev-type')!.getBoundingClientRect();
        const text = row.querySelector('.ev-text')!.getBoundingClientRect();
        const at = row.querySelector('.ev-at')!.getBoundingClientRect();
        // Side by side, or the text on a line of its own under the type (a narrow column).
        const sameLine = text.top < type.bottom - 0.5;
        return (sameLine && type.right > text.left + 0.5) || at.right > type.left + 0.5 || text.width < 1
          ? [`${row.querySelector('.ev-type')!.textContent}: type ends at ${type.right}, text starts at ${text.left}`]
          : [];
      }),
    );
    assert.deepEqual(overlaps, []);
    // And what happened is there to read, not cut to a few letters.
    const created = frame.locator('.timeline .ev', { hasText: 'run:created' }).locator('.ev-text');
    assert.match(await created.innerText(), /^run created from plan\.md \(3 tasks\)/);
    assert.ok(
      await created.evaluate((el) => el.scrollWidth <= el.clientWidth + 1),
      'the text of run:created is shown whole',
    );
    await frame.locator('.timeline').scrollIntoViewIfNeeded();
    await screenshot(page(), 'attempts-1b-timeline');
    await runCommand(page(), 'View: Close Editor');
  });

  step('once T1 is integrated, the run row counts it done while the others run', async () => {
    const pane = await runs();
    await treeRow(pane, /^T1 Add a greeting completed\b/).waitFor({ timeout: 60_000 });
    await eventually(
      'the run row to count T1 done',
      async () => rowText(treeRow(pane, /^plan\.md /)),
      (t) => /^plan\.md running · 1\/3 · R-/.test(t),
      { timeoutMs: 10_000 },
    );
  });

  step(
    'Show Changes on T1 opens the diff of the integrated commit: exactly README.md and src/greeting.txt',
    async () => {
      await onTask('T1', 'Show Changes');
      const tab = page().locator('.part.editor .tab.active');
      await tab.waitFor({ timeout: 15_000 });
      const title = await eventually(
        'the multi-file diff editor',
        async () => (await tab.getAttribute('aria-label')) ?? '',
        (t) => t.startsWith('D-T1-coder-001 (T1): integrated into main by merge: '),
        { timeoutMs: 15_000 },
      );
      assert.match(title, /^D-T1-coder-001 \(T1\): integrated into main by merge: [0-9a-f]{8} → [0-9a-f]{8}/);
      const files = await eventually(
        'the changed files',
        () => diffFiles(page()),
        (names) => names.length === 2,
        { timeoutMs: 15_000 },
      );
      assert.deepEqual([...files].sort(), ['README.md', 'greeting.txt']);
      await page()
        .locator('.part.editor .multiDiffEntry .editor.modified .view-line', { hasText: 'Hello from T1' })
        .first()
        .waitFor({ timeout: 15_000 });
      await page()
        .locator('.part.editor .multiDiffEntry .editor.modified .view-line', { hasText: 'appended by T1' })
        .first()
        .waitFor({ timeout: 15_000 });
      await moveMouseAway(page());
      await screenshot(page(), 'attempts-2-show-changes-worktree');
    },
  );

  step('Show Output on running T2 follows its log live: new lines appear, none twice', async () => {
    await treeRow(await runs(), /^T2 Write the guide running\b/).waitFor({ timeout: 30_000 });
    await onTask('T2', 'Show Output');
    await page().locator('.part.panel .terminal-wrapper.active .xterm-rows').waitFor({ timeout: 15_000 });
    // The worker has printed a line every 400 ms since it started; the terminal shows the latest rows.
    const numbers = (lines: string[]): number[] =>
      lines.flatMap((l) => {
        const m = /^T2 line (\d+)$/.exec(l);
        return m ? [Number(m[1])] : [];
      });
    const first = numbers(
      await eventually(
        'lines of T2',
        () => terminalLines(page()),
        (l) => numbers(l).length >= 4,
        {
          timeoutMs: 20_000,
        },
      ),
    );
    const later = numbers(
      await eventually(
        'new lines of T2',
        () => terminalLines(page()),
        (l) => (numbers(l).at(-1) ?? 0) >= first.at(-1)! + 3,
        { timeoutMs: 20_000 },
      ),
    );
    // Read again from the start, the log would show up twice: "… 57, 58, 1, 2, …" somewhere in the rows.
    for (const seen of [first, later]) {
      const from = seen[0]!;
      assert.deepEqual(
        seen,
        Array.from({ length: seen.length }, (_, i) => from + i),
        'each line once, in order: the log is not read again from its start',
      );
    }
    assert.ok(later.at(-1)! > first.at(-1)!, 'new lines were shown as the worker wrote them');
    await screenshot(page(), 'attempts-3-show-output-live');
  });

  step('T2 ends: the output says so', async () => {
    release('T2');
    const lines = await eventually(
      'the end line',
      () => terminalLines(page()),
      (l) => l.some((x) => x.startsWith('── D-T2-coder-001 ended')),
      { timeoutMs: 30_000 },
    );
    assert.ok(lines.includes('T2 done'));
    assert.equal(lines.at(-1), '── D-T2-coder-001 ended: COMPLETED · result PASS ──');
    const shown = lines.filter((l) => /^T2 line \d+$/.test(l));
    assert.equal(new Set(shown).size, shown.length, 'no line twice');
    await screenshot(page(), 'attempts-4-show-output-ended');
  });

  step('Show Changes on T2 (shared working tree) shows exactly the two files its worker changed', async () => {
    await onTask('T2', 'Show Changes');
    const tab = page().locator('.part.editor .tab.active');
    await eventually(
      'the diff of T2',
      async () => (await tab.getAttribute('aria-label')) ?? '',
      (t) => t.startsWith('D-T2-coder-001 (T2): in the shared working tree, before → after its worker'),
      { timeoutMs: 15_000 },
    );
    const files = await eventually(
      'the changed files of T2',
      () => diffFiles(page()),
      (names) => names.length === 2,
      { timeoutMs: 15_000 },
    );
    assert.deepEqual([...files].sort(), ['guide.md', 'notes.txt']);
    await page()
      .locator('.part.editor .multiDiffEntry .editor.original .view-line', { hasText: /^notes$/ })
      .first()
      .waitFor({ timeout: 15_000 });
    await page()
      .locator('.part.editor .multiDiffEntry .editor.modified .view-line', { hasText: 'rewritten by T2' })
      .first()
      .waitFor({ timeout: 15_000 });
    await moveMouseAway(page());
    await screenshot(page(), 'attempts-5-show-changes-shared');
  });

  check('Show Output on finished T1 shows its whole log and that it ended', async () => {
    await onTask('T1', 'Show Output');
    const lines = await eventually(
      'T1’s log',
      () => terminalLines(page()),
      (l) => l.some((x) => x.startsWith('── D-T1-coder-001 ended')),
      { timeoutMs: 20_000 },
    );
    assert.deepEqual(lines.slice(0, 3), [
      `── D-T1-coder-001: .baton/runs/${runId}/logs/D-T1-coder-001.log ──`,
      'T1 line 1',
      'T1 done',
    ]);
    // The end line may wrap in the terminal's width: compared without the spaces.
    const compact = (text: string) => text.replace(/\s+/g, '');
    assert.equal(
      compact(lines.slice(3).join('')),
      compact('── D-T1-coder-001 ended: COMPLETED · result PASS · integrated into the target (merge, 2 files) ──'),
    );
  });

  check('the dashboard’s task details: Changes opens the same diff, Output the same terminal', async () => {
    await runCommand(page(), 'Baton: Open Dashboard');
    const frame = await dashboardFrame(page());
    await frame.locator('.queue-row[data-task="T2"]').click();
    const attempt = frame.locator('.details .attempts li', { hasText: 'D-T2-coder-001' });
    await attempt.getByRole('button', { name: 'Changes' }).click();
    const tab = page().locator('.part.editor .tab.active');
    await eventually(
      'the diff of T2 from the dashboard',
      async () => (await tab.getAttribute('aria-label')) ?? '',
      (t) => t.startsWith('D-T2-coder-001 (T2): in the shared working tree, before → after its worker'),
      { timeoutMs: 15_000 },
    );
    assert.deepEqual([...(await diffFiles(page()))].sort(), ['guide.md', 'notes.txt']);
    await runCommand(page(), 'Baton: Open Dashboard');
    await (
      await dashboardFrame(page())
    )
      .locator('.details .attempts li', { hasText: 'D-T2-coder-001' })
      .getByRole('button', { name: 'Output' })
      .click();
    const lines = await eventually(
      'T2’s output from the dashboard',
      () => terminalLines(page()),
      (l) => l.some((x) => x.startsWith('── D-T2-coder-001 ended')),
      { timeoutMs: 15_000 },
    );
    assert.ok(lines.includes('T2 done'));
  });

  step('a graceful stop while T3 runs says it stops after T3 finishes, not "Stopped"', async () => {
    await clearNotifications(page());
    await runCommand(page(), 'Baton: Stop Run…');
    await pickQuickItem(page(), 'Graceful');
    const messages = await eventually(
      'the stop notification',
      () => notificationMessages(page()),
      (m) => m.some((x) => x.includes(runId)),
      { timeoutMs: 30_000 },
    );
    const said = messages.find((x) => x.includes(runId))!;
    assert.match(said, new RegExp(`^Stopping ${runId} after the running task finishes \\(D-T3-coder-001\\)`));
    await treeRow(await runs(), /^plan\.md stopping · 2\/3 · /).waitFor({ timeout: 15_000 });
    await screenshot(page(), 'attempts-6-graceful-stop');
  });

  step(
    'killing T3’s worker: it shows ended (FAILED, killed), not alive, in the Workers view and the Runs view',
    async () => {
      const pid = (await workerPid('D-T3-coder-001'))!;
      process.kill(pid, 'SIGKILL');
      await (await workers()).getByText('No worker is running.').waitFor({ timeout: 30_000 });
      const pane = await runs();
      // Its only attempt failed and nothing else is left to run: the run is failed, not paused — and, finished, it is
      // filed under the collapsed History node (its own row collapsed too).
      const history = treeRow(pane, /^History 1 finished run$/);
      await history.waitFor({ timeout: 30_000 });
      await expandRow(history);
      const run = treeRow(pane, /^plan\.md failed · 2\/3 · /);
      await run.waitFor({ timeout: 15_000 });
      await expandRow(run);
      await expandRow(treeRow(pane, /^T3 /));
      await eventually(
        'D-T3-coder-001 FAILED in the Runs view',
        () => rowText(treeRowByLabel(pane, 'D-T3-coder-001')),
        (t) => t === 'D-T3-coder-001 FAILED · the worker was killed by SIGKILL without a result',
        { timeoutMs: 30_000 },
      );
      await screenshot(page(), 'attempts-7-killed');
    },
  );

  check('an edit of .baton/config.json is applied and said; an invalid one shows its issue in Problems', async () => {
    const path = join(workspace(), '.baton', 'config.json');
    const valid = readFileSync(path, 'utf8');
    await clearNotifications(page());
    writeFileSync(path, valid.replace('"maxConcurrency": 2', '"maxConcurrency": "lots"'));
    await eventually(
      'the warning',
      () => notificationMessages(page()),
      (m) => m.some((x) => x.startsWith('Baton: .baton/config.json has 1 problem (see Problems)')),
      { timeoutMs: 20_000 },
    );
    await runCommand(page(), 'View: Focus Problems');
    const found = await eventually(
      'the config issue in Problems',
      () => problems(page()),
      (p) => p.some((x) => /maxConcurrency/.test(x)),
      { timeoutMs: 15_000 },
    );
    assert.match(
      found.find((x) => /maxConcurrency/.test(x))!,
      /at line 6 and character \d+/,
    );
    await screenshot(page(), 'attempts-8-config-problem');
    await clearNotifications(page());
    writeFileSync(path, valid.replace('"maxConcurrency": 2', '"maxConcurrency": 3'));
    await eventually(
      'the reload notice',
      () => notificationMessages(page()),
      (m) => m.some((x) => x.startsWith('Baton reloaded .baton/config.json')),
      { timeoutMs: 20_000 },
    );
    await eventually(
      'the issue to go',
      () => problems(page()),
      (p) => !p.some((x) => /maxConcurrency/.test(x)),
    );
  });

  check('the Baton log has readable lines, not JSON: Show Events and the coordinator’s outcome', async () => {
    await runContextMenuItem(page(), treeRow(await runs(), /^plan\.md /), 'Show Events');
    const log = await eventually(
      'the events in the Baton log',
      async () => batonLog(editor.current.server),
      (text) => /run:created\s+run created from plan\.md \(3 tasks\)/.test(text),
      { timeoutMs: 20_000 },
    );
    const events = log.slice(log.lastIndexOf(`── events of ${runId} ──`));
    assert.match(
      events,
      /\n.*\s+1 \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ run:created\s+run created from plan\.md \(3 tasks\)/,
    );
    assert.doesNotMatch(log, /\{"/, 'no JSON in the Baton log');
  });
});
