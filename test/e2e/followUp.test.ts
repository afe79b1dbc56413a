// Follow-up messages from the editor (issue 24, "Steering"), in a real git repository with worktree
// isolation (test/e2e/fixtures/followUp). The fixture's worker does nothing until it is told: its
// first attempt waits. *Send Message…* on the running task ends that attempt and the next one starts
// with the message first; the worker writes it down and passes, and its work reaches main. Then the
// same on the finished task: a follow-up attempt runs, and its work is integrated on top of the
// earlier one — main's file has both messages. On the way, Open Worktree in Terminal on the running worker opens a
// terminal in the attempt's worktree.
import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { git, initRepo } from '../support/gitRepo';
import { Engine } from './support/engine';
import {
  chainedSteps,
  eventually,
  expandRow,
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

const FIXTURE = resolve(__dirname, 'fixtures/followUp');

/** Types a message into Send Message…'s input box and sends it. */
async function typeMessage(page: Page, text: string): Promise<void> {
  const input = quickInput(page).locator('.quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(text);
  await page.keyboard.press('Enter');
}

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

describe('Baton in the browser: Send Message… steers a running agent and reopens a finished one', function () {
  const editor = useBatonEditor({ source: FIXTURE });
  const { step } = chainedSteps();
  const page = () => editor.current.page;
  const ws = () => editor.current.workspace;

  step('a message to the running task ends its attempt; the next starts with it, passes and reaches main', async () => {
    initRepo(ws(), {});
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    await (await viewPane(page(), 'Runs')).getByRole('button', { name: 'Start Run', exact: true }).click();
    await treeRow(await viewPane(page(), 'Workers'), /^T1 D-T1-coder-001 /).waitFor({ timeout: 60_000 });

    // Open Worktree in Terminal on the running worker: a terminal whose folder is the attempt's worktree.
    const engine = await Engine.open({ workspace: ws() });
    const worktree = await engine
      .listWorktrees((await engine.getRun()).id)
      .then((all) => all.find((w) => w.delegationId === 'D-T1-coder-001')!.path)
      .finally(() => engine.close());
    await runContextMenuItem(
      page(),
      treeRow(await viewPane(page(), 'Workers'), /^T1 D-T1-coder-001 /),
      'Open Worktree in Terminal',
    );
    const pwdFile = join(ws(), '.baton', 'pwd.txt');
    await page().locator('.terminal-wrapper.active .xterm').waitFor({ timeout: 30_000 });
    await page().locator('.terminal-wrapper.active .xterm').click();
    await page().keyboard.type(`pwd > ${pwdFile}`);
    await page().keyboard.press('Enter');
    const cwd = await eventually(
      'the terminal to say where it is',
      async () => (existsSync(pwdFile) ? readFileSync(pwdFile, 'utf8').trim() : ''),
      (text) => text !== '',
    );
    assert.equal(realpathSync(cwd), realpathSync(worktree));
    await screenshot(page(), 'follow-up-0-worktree-terminal');

    await runContextMenuItem(page(), treeRow(await viewPane(page(), 'Runs'), /^T1 /), 'Send Message…');
    await typeMessage(page(), 'Bonjour');
    const said = await eventually(
      'the message to be acknowledged',
      async () => (await notificationMessages(page())).find((m) => m.includes('sent to T1')) ?? '',
      (m) => m !== '',
    );
    assert.match(
      said,
      /Message M-\d+ sent to T1: its running attempt D-T1-coder-001 was ended; the next attempt continues its session with the message first\./,
    );
    await treeRow(await viewPane(page(), 'Runs'), /^History 1 finished run/).waitFor({ timeout: 90_000 });
    assert.deepEqual(await attempts(ws()), ['D-T1-coder-001 CANCELLED', 'D-T1-coder-002 COMPLETED follow-up']);
    assert.equal(git(ws(), 'show', 'main:notes/messages.txt'), 'Messages:\nBonjour');
    await moveMouseAway(page());
    await screenshot(page(), 'follow-up-1-running');
  });

  step('a message to the finished task runs a follow-up attempt, integrated on top of the first', async () => {
    const runs = await viewPane(page(), 'Runs');
    await expandRow(treeRow(runs, /^History 1 finished run/));
    await expandRow(treeRow(runs, /^plan\.md completed/));
    await runContextMenuItem(page(), treeRow(runs, /^T1 /), 'Send Message…');
    await typeMessage(page(), 'Hallo');
    await eventually(
      'the finished task to run again',
      async () => (await notificationMessages(page())).find((m) => m.includes('runs again as a follow-up')) ?? '',
      (m) => m !== '',
    );
    await eventually(
      'the follow-up attempt to be integrated',
      () => attempts(ws()),
      (a) => a.includes('D-T1-coder-003 COMPLETED follow-up'),
      { timeoutMs: 90_000 },
    );
    await eventually(
      'main to have both messages',
      async () => git(ws(), 'show', 'main:notes/messages.txt'),
      (text) => text === 'Messages:\nBonjour\nHallo',
      { timeoutMs: 30_000 },
    );
    // The view follows: the run is finished again, its one task at attempt 3.
    await treeRow(runs, /^History 1 finished run/).waitFor({ timeout: 30_000 });
    await expandRow(treeRow(runs, /^History 1 finished run/));
    await expandRow(treeRow(runs, /^plan\.md completed/));
    await treeRow(runs, /^T1 .*completed · attempt 3\b/).waitFor({ timeout: 30_000 });
    await moveMouseAway(page());
    await screenshot(page(), 'follow-up-2-finished');
  });
});
