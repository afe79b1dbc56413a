// Review in the editor (issue 24, "Review comments"; issue 27, per-file keep or drop), in a real git
// repository with worktree isolation and `"review": "required"` (test/e2e/fixtures/review). The
// fixture's worker writes a greeting with a typo on line 2 and a scratch file, and passes: the task
// waits at a `review` gate and main does not move. The person opens Show Changes, clicks + in the
// gutter of line 2 of the changed side, writes a comment in VS Code's comment box, adds it and sends
// the review to the agent: the held attempt ends, and the follow-up attempt — whose prompt opens
// with the review: file, line, quoted line, comment — fixes that line and waits at a new review
// gate. On it the person drops the scratch file from the integration (the editor's context menu of
// that file's diff) and approves: main gets the fixed greeting and not the scratch file, and its
// history says what was dropped.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { existsAt, git, initRepo } from '../support/gitRepo';
import { Engine } from './support/engine';
import {
  chainedSteps,
  clearNotifications,
  eventually,
  moveMouseAway,
  notificationMessages,
  openViewContainer,
  resizeSideBar,
  runContextMenuItem,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
  waitUntilSteady,
} from './support/index';

const FIXTURE = resolve(__dirname, 'fixtures/review');
const COMMENT = 'Replace this line with "Hello, world!"';

/** The task's attempts as the store has them: id, status, follow-up or not. */
async function attempts(workspace: string): Promise<string[]> {
  const engine = await Engine.open({ workspace });
  try {
    const { delegations } = await engine.listDelegations((await engine.getRun()).id);
    return delegations.map((d) => `${d.id} ${d.status}${d.followUp ? ' follow-up' : ''}`).sort();
  } finally {
    await engine.close();
  }
}

/** A line of the changed (right-hand) side of a diff in the open multi-file diff (Show Changes); spaces render as
 * no-break spaces: match them with \s. */
function changedLine(page: Page, text: RegExp | string): Locator {
  return page.locator('.part.editor .editor.modified .view-line', { hasText: text }).first();
}

/** Waits for the message a notification starts with (as shown) and returns it whole. */
function notification(page: Page, what: string, startsWith: string): Promise<string> {
  return eventually(
    what,
    async () => (await notificationMessages(page)).find((m) => m.startsWith(startsWith)) ?? '',
    (m) => m !== '',
    { timeoutMs: 60_000 },
  );
}

/** The worktree folder a review gate's row names ("…committed in <folder>. Approve …"). */
async function heldWorktree(row: Locator): Promise<string> {
  const label = (await row.getAttribute('aria-label')) ?? '';
  const folder = /committed in (\S+)\. Approve/.exec(label)?.[1];
  assert.ok(folder, label);
  return folder;
}

describe('Baton in the browser: a review comment on a diff line goes to the agent; review holds integration', function () {
  const editor = useBatonEditor({ source: FIXTURE });
  const { step } = chainedSteps();
  const page = () => editor.current.page;
  const ws = () => editor.current.workspace;
  let base = '';

  step('Start Run: the task passes and waits at a review gate; main has not moved', async () => {
    initRepo(ws(), {});
    base = git(ws(), 'rev-parse', 'main');
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    await (await viewPane(page(), 'Runs')).getByRole('button', { name: 'Start Run', exact: true }).click();

    const gate = treeRow(await viewPane(page(), 'Gates'), /^G-\d+ +review · T1 T1 passed \(D-T1-coder-001\)/);
    await gate.waitFor({ timeout: 90_000 });
    assert.match((await gate.getAttribute('aria-label')) ?? '', /waits for your review: it changed 2 files/);
    await treeRow(await viewPane(page(), 'Runs'), /^T1 +Write the greeting gated · attempt 1 · PASS/).waitFor();
    // Held: the work is committed in the task's worktree, and neither main nor the working tree has it.
    assert.equal(git(ws(), 'rev-parse', 'main'), base, 'main did not move');
    assert.equal(readFileSync(join(ws(), 'src/greeting.txt'), 'utf8'), 'Greeting\n\nTo be written.\n');
    assert.equal(existsAt(ws(), 'main', 'notes/scratch.txt'), false);
    assert.match(readFileSync(join(await heldWorktree(gate), 'src/greeting.txt'), 'utf8'), /^Hello, wrld!$/m);
    await moveMouseAway(page());
    await screenshot(page(), 'review-1-gate');
  });

  step(
    'a comment on line 2 of Show Changes, sent to the agent: the follow-up fixes that line and waits again',
    async () => {
      await runContextMenuItem(page(), treeRow(await viewPane(page(), 'Runs'), /^T1 /), 'Show Changes');
      // The person hovers line 2 of the changed side, clicks the + VS Code shows in its gutter, writes, adds.
      const line = changedLine(page(), /^Hello,\swrld!$/);
      await line.waitFor({ timeout: 30_000 });
      // VS Code draws the + once the controller's commenting ranges for the document arrived, on a mouse move
      // over the gutter: hover again until it shows (the line may also still move while the diff lays out).
      const plus = page().locator('.part.editor .editor.modified .comment-range-glyph.line-hover');
      await eventually(
        'the + in the gutter of line 2',
        async () => {
          const box = (await line.boundingBox())!;
          await page().mouse.move(box.x + 40, box.y + box.height / 2);
          await page().mouse.move(box.x - 10, box.y + box.height / 2, { steps: 3 });
          return plus.isVisible();
        },
        Boolean,
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      await plus.click();
      const widget = page().locator('.part.editor .review-widget').first();
      await widget.waitFor({ timeout: 15_000 });
      await page().keyboard.type(COMMENT);
      await widget.getByRole('button', { name: /^Add Comment/ }).click();
      // The draft shows in the thread, as the person's, labelled a draft.
      const body = widget.locator('.review-comment .comment-body', { hasText: COMMENT });
      await body.waitFor({ timeout: 15_000 });
      await widget.locator('.review-comment', { hasText: 'Draft' }).first().waitFor();
      await clearNotifications(page());
      await moveMouseAway(page());
      await waitUntilSteady(widget);
      await screenshot(page(), 'review-2-comment');

      // Send Review to Agent from the comment box: the held attempt is sent back with the review.
      await widget
        .getByRole('button', { name: /^Send Review to Agent/ })
        .first()
        .click();
      const sent = await notification(page(), 'the review to be sent', 'Review sent to T1');
      assert.match(
        sent,
        /^Review sent to T1 \(1 comment, message M-\d+\): changes requested of D-T1-coder-001 \(review gate G-1\); the next attempt starts from its work with the review first\.$/,
      );
      const gate = treeRow(await viewPane(page(), 'Gates'), /^G-\d+ +review · T1 T1 passed \(D-T1-coder-002\)/);
      await gate.waitFor({ timeout: 90_000 });
      assert.deepEqual(await attempts(ws()), ['D-T1-coder-001 CANCELLED', 'D-T1-coder-002 BLOCKED follow-up']);

      // The agent got the review first — file, line, the line as it was, the comment — and fixed that line.
      const engine = await Engine.open({ workspace: ws() });
      try {
        const run = await engine.getRun();
        const prompt = readFileSync(join(ws(), '.baton', 'runs', run.id, 'prompts', 'D-T1-coder-002.md'), 'utf8');
        assert.match(prompt, /^## Message from VS Code\n\nReview of your changes \(D-T1-coder-001\): one comment\./);
        assert.ok(prompt.includes(`1. src/greeting.txt, line 2:\n   > Hello, wrld!\n   ${COMMENT}\n`), prompt);
        assert.deepEqual(
          (await engine.listGates({})).map((g) => [g.id, g.kind, g.status]),
          [
            ['G-1', 'review', 'rejected'],
            ['G-2', 'review', 'open'],
          ],
        );
      } finally {
        await engine.close();
      }
      assert.equal(
        readFileSync(join(await heldWorktree(gate), 'src/greeting.txt'), 'utf8'),
        'Greeting\nHello, world!\nWelcome to Baton.\n',
      );
      assert.equal(git(ws(), 'rev-parse', 'main'), base, 'still held: main did not move');
      // The sent thread stays on its line, collapsed; opened, it says which message it went in.
      await page().locator('.part.editor .editor.modified .comment-range-glyph.comment-thread').first().click();
      await widget
        .locator('.review-comment', { hasText: /Sent to the agent \(M-\d+\)/ })
        .first()
        .waitFor({ timeout: 15_000 });
      await moveMouseAway(page());
      await screenshot(page(), 'review-3-sent');
    },
  );

  step('Drop From Integration on the scratch file, then Approve: main gets the fixed greeting only', async () => {
    await runContextMenuItem(page(), treeRow(await viewPane(page(), 'Runs'), /^T1 /), 'Show Changes');
    await changedLine(page(), /^Hello,\sworld!$/).waitFor({ timeout: 30_000 });
    // The editor's context menu on the scratch file's changed side.
    await runContextMenuItem(page(), changedLine(page(), /^scratch:\sthings\sI\stried$/), 'Drop From Integration');
    const dropped = await notification(page(), 'the drop to be confirmed', 'Dropped notes/scratch.txt');
    assert.equal(
      dropped,
      "Dropped notes/scratch.txt from T1's integration (D-T1-coder-002): approving G-2 integrates src/greeting.txt.",
    );
    // Show Changes opens again without it.
    await eventually(
      'Show Changes without the scratch file',
      () => page().locator('.part.editor .editor.modified .view-line', { hasText: 'scratch' }).count(),
      (n) => n === 0,
    );
    await changedLine(page(), /^Hello,\sworld!$/).waitFor({ timeout: 30_000 });
    await moveMouseAway(page());
    await screenshot(page(), 'review-4-dropped');

    // Approve Review in the title of Show Changes.
    await page().locator('.part.editor .editor-actions').getByRole('button', { name: 'Approve Review' }).click();
    await treeRow(await viewPane(page(), 'Runs'), /^History 1 finished run/).waitFor({ timeout: 90_000 });
    assert.deepEqual(await attempts(ws()), ['D-T1-coder-001 CANCELLED', 'D-T1-coder-002 COMPLETED follow-up']);
    assert.equal(git(ws(), 'show', 'main:src/greeting.txt'), 'Greeting\nHello, world!\nWelcome to Baton.');
    assert.equal(existsAt(ws(), 'main', 'notes/scratch.txt'), false, 'the dropped file is not on main');
    assert.deepEqual(git(ws(), 'diff', '--name-only', base, 'main').split('\n'), ['src/greeting.txt']);
    const history = git(ws(), 'log', '--format=%B', `${base}..main`);
    assert.match(history, /Baton: T1 \(D-T1-coder-002\) without 1 file dropped at review/);
    assert.match(history, /Dropped by VS Code at G-2, put back as they were at [0-9a-f]{12}:\n- notes\/scratch\.txt/);
    await moveMouseAway(page());
    await screenshot(page(), 'review-5-approved');
  });
});
