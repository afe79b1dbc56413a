// The merge queue in the editor (issue 27): two tasks that each pass alone and break the build
// together, in a real git repository with worktree isolation and `verifyIntegrated`
// (test/e2e/fixtures/mergeQueue). T1 renames the library's function and integrates; T2 calls the
// old name. T2's merged tree fails `node check.js`: main does not move, and the person sees an
// `integration_failed` gate in the Gates view and a notification naming the task, the command
// and what it printed. Approving integrates T2 anyway; main then has both changes.
import * as assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { existsAt, git, initRepo } from '../support/gitRepo';
import { Engine } from './support/engine';
import {
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

const FIXTURE = resolve(__dirname, 'fixtures/mergeQueue');

describe('Baton in the browser: the merged tree fails its check, main stays, the person decides', function () {
  const editor = useBatonEditor({ source: FIXTURE });
  const { step } = chainedSteps();
  const page = () => editor.current.page;
  const ws = () => editor.current.workspace;
  let base = '';

  step('T2 passes alone but fails merged with T1: an integration_failed gate, main at T1', async () => {
    initRepo(ws(), {});
    base = git(ws(), 'rev-parse', 'main');
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    await (await viewPane(page(), 'Runs')).getByRole('button', { name: 'Start Run', exact: true }).click();

    const row = treeRow(await viewPane(page(), 'Gates'), /^G-\d+ integration failed · T2 /);
    await row.waitFor({ timeout: 120_000 });
    assert.match((await row.getAttribute('aria-label')) ?? '', /`node check\.js` exited with 1/);
    const message = await eventually(
      'the integration_failed notification',
      async () => (await notificationMessages(page())).find((m) => m.includes('T2')) ?? '',
      (m) => m !== '',
    );
    assert.match(message, /T2 “Greet on start” waits for a decision \(G-\d+, integration failed\)/);
    assert.match(message, /fails: `node check\.js` exited with 1/);

    // main holds T1's rename and nothing of T2: the target did not move for the failing tree.
    assert.equal(git(ws(), 'rev-parse', 'main~1'), base, 'T1 alone reached main');
    assert.match(git(ws(), 'show', 'main:lib.js'), /exports\.hello/);
    assert.equal(existsAt(ws(), 'main', 'use-start.js'), false, 'T2 is not on main');
    assert.equal(existsSync(join(ws(), 'use-start.js')), false, 'the working tree has nothing of T2');
    const engine = await Engine.open({ workspace: ws() });
    try {
      const [gate] = await engine.listGates({ status: 'open' });
      assert.equal(gate?.kind, 'integration_failed');
      assert.match(String(gate?.details?.output ?? ''), /greet is not a function/);
    } finally {
      await engine.close();
    }
    await moveMouseAway(page());
    await screenshot(page(), 'merge-queue-1-integration-failed');
  });

  step('Approve integrates T2 anyway: the run completes and main has both changes', async () => {
    await clickInlineAction(treeRow(await viewPane(page(), 'Gates'), /^G-\d+ integration failed · T2 /), 'Approve');
    await treeRow(await viewPane(page(), 'Runs'), /^History 1 finished run/).waitFor({ timeout: 120_000 });
    const engine = await Engine.open({ workspace: ws() });
    try {
      assert.equal((await engine.getRun()).status, 'completed');
      const gates = await engine.listGates({});
      assert.deepEqual(
        gates.map((g) => [g.kind, g.taskId, g.status]),
        [['integration_failed', 'T2', 'approved']],
      );
    } finally {
      await engine.close();
    }
    assert.equal(existsAt(ws(), 'main', 'use-start.js'), true, 'T2 is on main');
    assert.match(git(ws(), 'show', 'main:lib.js'), /exports\.hello/);
    await moveMouseAway(page());
    await screenshot(page(), 'merge-queue-2-approved');
  });
});
