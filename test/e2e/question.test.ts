// An agent's question answered in the editor: the fixture's worker (test/e2e/fixtures/question)
// asks with the `baton_ask` tool of its attempt's MCP server (`baton mcp`, through the MCP SDK's
// client, as an agent CLI calls it) and waits; the question shows in the Gates view and in a
// notification with Answer…, the person picks a choice, and the answer comes back as the tool's
// result to the waiting worker, which writes it down and passes.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from './support/engine';
import {
  chainedSteps,
  clickInlineAction,
  eventually,
  moveMouseAway,
  notificationMessages,
  openViewContainer,
  pickQuickItem,
  resizeSideBar,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
} from './support/index';

const FIXTURE = resolve(__dirname, 'fixtures/question');

describe('Baton in the browser: an agent asks through baton_ask, the person answers', function () {
  // The worker takes the MCP SDK's client from this checkout.
  const editor = useBatonEditor({
    source: FIXTURE,
    env: { BATON_E2E_NODE_MODULES: resolve(__dirname, '../../node_modules') },
  });
  const { step } = chainedSteps();
  const page = () => editor.current.page;

  step('the question waits in the Gates view and in a notification that offers Answer…, not Approve', async () => {
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    await (await viewPane(page(), 'Runs')).getByRole('button', { name: 'Start Run', exact: true }).click();
    const row = treeRow(await viewPane(page(), 'Gates'), /^G-1 question · T1 /);
    await row.waitFor({ timeout: 60_000 });
    assert.match(
      (await row.getAttribute('aria-label')) ?? '',
      /asks: Which database should the app use\? Choices: sqlite \| postgres\./,
    );
    const message = await eventually(
      'the question notification',
      async () => (await notificationMessages(page())).find((m) => m.includes('asks a question')) ?? '',
      (m) => m !== '',
    );
    assert.match(message, /^Baton: T1 “Pick the database” asks a question \(G-1\): .* Answer… · Show Gates$/);
    assert.doesNotMatch(message, /Approve|Reject/);
    await moveMouseAway(page());
    await screenshot(page(), 'question-1-asked');
  });

  step('Answer… offers the choices; the pick reaches the worker, which writes it down and passes', async () => {
    await clickInlineAction(treeRow(await viewPane(page(), 'Gates'), /^G-1 question · T1 /), 'Answer…');
    await pickQuickItem(page(), 'postgres');
    // A finished run moves under History: it completed, and the worker wrote the answer it was given.
    await treeRow(await viewPane(page(), 'Runs'), /^History 1 finished run/).waitFor({ timeout: 60_000 });
    const engine = await Engine.open({ workspace: editor.current.workspace });
    try {
      assert.equal((await engine.getRun()).status, 'completed');
      const [gate] = await engine.listGates({});
      assert.deepEqual([gate?.status, gate?.note], ['answered', 'postgres']);
    } finally {
      await engine.close();
    }
    assert.equal(readFileSync(join(editor.current.workspace, 'notes', 'answer.txt'), 'utf8'), 'postgres\n');
    await moveMouseAway(page());
    await screenshot(page(), 'question-2-answered');
  });
});
