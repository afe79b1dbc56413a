// A real agent in the editor: Claude Code (the pinned binary, installed on first use into
// .cache/agents by scripts/agentClis.mjs) as the workspace's worker — the real `claude-code`
// preset — pointed at the scripted model server on loopback (ANTHROPIC_BASE_URL; no key, no
// network), clicked through in Chromium on code-server with the built extension. The script
// makes the agent write a file with its own Write tool, run a command with its own Bash tool,
// each after a few seconds of "thinking", then answer with its result block.
//
// Proven here: while it works, the Workers view shows what the agent does now with its turn and
// tool-call counts and what it spent so far, and they change as it goes (Write, then Bash); the
// dashboard's worker row shows the same, at the same moments; the task ends PASSED with the
// agent's final message as its result; the Runs view and the dashboard show the same tokens
// and cost per task and for the run — the figures the store holds, which are the tokens the
// model server served; Show Output renders the transcript (turns, tool calls, the totals), not
// the JSON stream.
//
//   npm run build && nice -n 5 npx mocha --no-config -n import=tsx --timeout 180000 test/e2e/agentActivity.test.ts
import * as assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { ensureAgentCli, isolatedEnv } from '../../scripts/agentClis.mjs';
import { Engine, type RunOverview } from '../../src/engine/index';
import { spendOf } from '../../src/extension/model/viewRows';
import { formatSpend } from '../../src/protocol/spend';
import { claudeCode, TEST_KEY } from '../support/agentClis';
import { git } from '../support/gitRepo';
import { startModelServer, type ModelServer, type RecordedRequest, type Usage } from '../support/modelServer';
import {
  chainedSteps,
  clickViewTitleAction,
  eventually,
  expandRow,
  moveMouseAway,
  openViewContainer,
  pickQuickItem,
  quickInput,
  resizeSideBar,
  RESULTS_DIR,
  rowDescription,
  runCommand,
  runContextMenuItem,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
} from './support/index';

const FIXTURE = resolve(__dirname, 'fixtures/agent');
const TASK = 'T1';
const DELEGATION = 'D-T1-coder-001';
const FILE = 'notes/hello.txt';
const CONTENT = 'Hello from the scripted model, through Claude Code’s own Write tool.\n';
const SHELL_COMMAND = 'ls notes';
const RESULT_TEXT = [
  'Done: I wrote notes/hello.txt and ran the check.',
  '',
  '```baton-result',
  'contract: baton-result-v1',
  `task: ${TASK}`,
  'agent: coder',
  'status: PASS',
  'summary: Wrote notes/hello.txt',
  'artifacts:',
  `  - ${FILE}`,
  '```',
].join('\n');
/** Distinct usage per model call, so the recorded figures can be traced to the requests that made them. */
const USAGE: Usage[] = [
  { input: 1201, output: 31 },
  { input: 1302, output: 42 },
  { input: 1403, output: 53 },
];
/** The model "thinks" this long before each answer: long enough to see each state in both surfaces. */
const THINK_MS = 6000;

/** "Write notes/hello.txt · 1 turn, 1 tool call" — what the agent does now, and how far it got. */
const WRITING = /^Write notes\/hello\.txt · \d+ turns?, 1 tool call$/;
const RUNNING_COMMAND = /^Bash: ls notes · \d+ turns, 2 tool calls$/;

/** A Workers view row's description: "alive 9s · lease 25s · <progress> · <spend>". */
function workerParts(description: string): { progress?: string; spend?: string } {
  const parts = description.split(' · ');
  const spendAt = parts.findIndex((p) => /^[\d,]+ tokens?(, \$\d+\.\d+)?$/.test(p));
  // The progress text holds " · " itself ("Write x · 1 turn, 1 tool call"): everything between the lease and the spend.
  const leaseAt = parts.findIndex((p) => p.startsWith('lease '));
  const end = spendAt < 0 ? parts.length : spendAt;
  return {
    ...(leaseAt >= 0 && end > leaseAt + 1 ? { progress: parts.slice(leaseAt + 1, end).join(' · ') } : {}),
    ...(spendAt >= 0 ? { spend: parts[spendAt] } : {}),
  };
}

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

/** The text of the terminal panel's visible rows (xterm's DOM renderer: one div per row). */
async function terminalLines(page: Page): Promise<string[]> {
  const rows = page.locator('.part.panel .terminal-wrapper.active .xterm-rows > div');
  return (await rows.allInnerTexts()).map((t) => t.replace(/\u00a0/g, ' ').trimEnd()).filter(Boolean);
}

function sumUsage(requests: RecordedRequest[]): number {
  return requests.reduce((sum, r) => sum + (r.reply?.usage?.input ?? 0) + (r.reply?.usage?.output ?? 0), 0);
}

describe('Baton in the browser: a real agent (Claude Code) at work — live activity, cost, transcript', function () {
  // The source folder the editor's workspace is copied from: the fixture plus a config naming the real
  // binary and the model server, written once both are known (before the editor opens).
  const source = join(realpathSync(mkdtempSync(join(tmpdir(), 'baton-agent-e2e-'))), 'agent-demo');
  const home = join(resolve(source, '..'), 'claude-home');
  let server: ModelServer;

  before(async function () {
    this.timeout(600_000); // the first use installs Claude Code into .cache/agents
    const claude = ensureAgentCli('claude');
    server = await startModelServer();
    cpSync(FIXTURE, source, { recursive: true });
    mkdirSync(home, { recursive: true });
    // What the CLI needs beyond the editor's environment: a home of its own, its no-phoning-home switches, the
    // endpoint and a stand-in key — isolatedEnv's additions over an empty base.
    const env: Record<string, string> = {
      ...(isolatedEnv('claude', home, {}) as Record<string, string>),
      ANTHROPIC_BASE_URL: server.url,
      ANTHROPIC_API_KEY: TEST_KEY,
      NODE_OPTIONS: '',
    };
    writeFileSync(
      join(source, '.baton', 'config.json'),
      `${JSON.stringify(
        {
          defaultWorker: 'claude',
          workers: { claude: { type: 'claude-code', executable: claude, env } },
          maxAttempts: 1,
          leaseSeconds: 30,
          isolation: 'none',
        },
        null,
        2,
      )}\n`,
    );
  });
  after(async () => {
    await server?.close();
    rmSync(resolve(source, '..'), { recursive: true, force: true });
  });

  const editor = useBatonEditor({
    source,
    // The DOM renderer: the terminal's rows are text the test can read.
    settings: { 'terminal.integrated.gpuAcceleration': 'off', 'git.enabled': false },
  });
  const { step, check } = chainedSteps();
  let runId = '';

  const page = () => editor.current.page;
  const workspace = () => editor.current.workspace;
  const runs = () => viewPane(page(), 'Runs');
  const workers = () => viewPane(page(), 'Workers');

  /** The store as the CLI would read it, from a second engine. */
  async function storeOverview(): Promise<RunOverview> {
    const engine = await Engine.open({ workspace: workspace() });
    try {
      return await engine.overview(runId);
    } finally {
      await engine.close();
    }
  }

  /** What the Workers view and the dashboard show for the agent's attempt, read together. */
  async function bothSurfaces(frame: Frame): Promise<{
    view: { progress?: string; spend?: string };
    dashboard: { progress: string; spend: string };
  }> {
    const row = treeRow(await workers(), new RegExp(`^${TASK} ${DELEGATION} `));
    const view = workerParts(await rowDescription(row));
    const worker = frame.locator('.worker-row', { hasText: DELEGATION });
    return {
      view,
      dashboard: {
        progress: (await worker.locator('.w-progress').innerText({ timeout: 2000 })).trim(),
        spend: (await worker.locator('.w-spend').innerText({ timeout: 2000 })).trim(),
      },
    };
  }

  step('starts the plan; the agent (the real Claude Code) starts working', async () => {
    git(workspace(), 'init', '--quiet', '--initial-branch=main');
    git(workspace(), 'add', '--all');
    git(workspace(), '-c', 'user.name=Test', '-c', 'user.email=t@example.invalid', 'commit', '--quiet', '-m', 'start');
    server.setScript({
      steps: [
        (request) => ({
          toolCalls: [claudeCode.writeFile(request, workspace(), FILE, CONTENT)],
          usage: USAGE[0],
          delayMs: THINK_MS,
        }),
        (request) => ({ toolCalls: [claudeCode.runShell(request, SHELL_COMMAND)], usage: USAGE[1], delayMs: THINK_MS }),
        { text: RESULT_TEXT, usage: USAGE[2], delayMs: THINK_MS },
      ],
      side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
    });
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 700);
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
    await treeRow(pane, /^T1 Write the greeting running · attempt 1\b/).waitFor({ timeout: 30_000 });
    // The dashboard beside the sidebar: both surfaces are watched at once from here on.
    await runCommand(page(), 'Baton: Open Dashboard');
    await dashboardFrame(page());
  });

  step(
    'while it writes, the Workers view and the dashboard show "Write notes/hello.txt", its turn and tool-call counts and its tokens',
    async () => {
      const frame = await dashboardFrame(page());
      const seen = await eventually(
        'the Write tool call in both surfaces',
        () => bothSurfaces(frame),
        (s) => WRITING.test(s.view.progress ?? '') && s.dashboard.progress === s.view.progress,
        { timeoutMs: 90_000, intervalMs: 100 },
      );
      // What it spent so far: Claude Code's running estimate of the tokens (its cost comes with its result).
      assert.match(seen.view.spend ?? '', /^[\d,]+ tokens$/, JSON.stringify(seen));
      await moveMouseAway(page());
      await screenshot(page(), 'agent-1-writing');
      await page()
        .locator('.part.sidebar')
        .screenshot({ path: join(RESULTS_DIR, 'agent-1b-sidebar.png') });
    },
  );

  step('then it runs a command: both surfaces move on to "Bash: …" and two tool calls, live', async () => {
    const frame = await dashboardFrame(page());
    const seen = await eventually(
      'the Bash tool call in both surfaces',
      () => bothSurfaces(frame),
      (s) =>
        RUNNING_COMMAND.test(s.view.progress ?? '') &&
        s.dashboard.progress === s.view.progress &&
        s.dashboard.spend === s.view.spend,
      { timeoutMs: 60_000, intervalMs: 100 },
    );
    // The tokens went up with the second model call; the same figure in both surfaces.
    const tokens = Number((seen.view.spend ?? '').replace(/[^\d]/g, ''));
    assert.ok(tokens > USAGE[0]!.input, JSON.stringify(seen));
    await moveMouseAway(page());
    await screenshot(page(), 'agent-2-running-command');
    // The side bar alone: the Runs view's task with its tokens, the Workers view with what the agent does now
    // (docs/images/agent-activity.png is taken from these).
    const bar = await page().locator('.part.sidebar').boundingBox();
    const row = await treeRow(await workers(), new RegExp(`^${TASK} ${DELEGATION} `)).boundingBox();
    if (bar && row)
      await page().screenshot({
        path: join(RESULTS_DIR, 'agent-2b-sidebar.png'),
        clip: { x: bar.x, y: bar.y, width: bar.width, height: row.y + row.height + 16 - bar.y },
      });
  });

  step('the task ends PASSED with the agent’s result; the worker leaves the Workers view', async () => {
    const pane = await runs();
    // A finished run moves under History (collapsed, its own row too).
    const history = treeRow(pane, /^History 1 finished run$/);
    await history.waitFor({ timeout: 120_000 });
    await (await workers()).getByText('No worker is running.').waitFor({ timeout: 30_000 });
    await expandRow(history);
    const runRow = treeRow(pane, /^plan\.md completed · 1\/1 · /);
    await runRow.waitFor({ timeout: 15_000 });
    await expandRow(runRow);
    await treeRow(pane, /^T1 Write the greeting completed · attempt 1 · PASS\b/).waitFor({ timeout: 15_000 });
    assert.equal(readFileSync(join(workspace(), FILE), 'utf8'), CONTENT, 'written by the agent’s own Write tool');
    const view = await storeOverview();
    const delegation = view.delegations.find((d) => d.id === DELEGATION)!;
    assert.equal(delegation.resultStatus, 'PASS');
    assert.equal(readFileSync(join(workspace(), delegation.artifactPath!), 'utf8').trim(), RESULT_TEXT);
    assert.deepEqual(server.errors, []);
  });

  step(
    'the Runs view and the dashboard show the same tokens and cost — per task and for the run — as the store holds',
    async () => {
      const view = await storeOverview();
      const usage = view.usage.find((u) => u.delegationId === DELEGATION);
      assert.ok(usage, 'usage recorded');
      assert.equal(usage.costSource, 'cli');
      assert.ok((usage.costUsd ?? 0) > 0, 'Claude Code priced its calls');
      // The tokens the model server served (Claude Code counts its main requests, or all of them).
      assert.ok(
        [sumUsage(server.mainRequests()), sumUsage(server.requests)].includes(usage.inputTokens + usage.outputTokens),
        JSON.stringify({ usage, served: server.requests.map((r) => r.reply?.usage) }),
      );
      const task = formatSpend(spendOf(view, { taskId: TASK })!);
      const attempt = formatSpend(spendOf(view, { delegationId: DELEGATION })!);
      const total = formatSpend(spendOf(view)!);
      assert.match(task, /^[\d,]+ tokens, \$\d+\.\d{2,4}$/);

      // The Runs view: the task row, and its attempt.
      const pane = await runs();
      const taskRow = treeRow(pane, /^T1 Write the greeting completed\b/);
      assert.equal((await rowDescription(taskRow)).split(' · ').at(-1), task);
      await expandRow(taskRow);
      const attemptRow = treeRow(pane, new RegExp(`^${DELEGATION} `));
      await eventually(
        'the attempt row',
        () => rowDescription(attemptRow),
        (d) => d.endsWith(attempt),
        {
          timeoutMs: 10_000,
        },
      );

      // The dashboard: the run's total in its header, the task's in its queue row.
      await runCommand(page(), 'Baton: Open Dashboard');
      const frame = await dashboardFrame(page());
      await eventually(
        'the run’s spend in the dashboard header',
        () => frame.locator('.run-header .facts .spend').innerText(),
        (t) => t === `spent ${total}`,
        { timeoutMs: 15_000 },
      );
      assert.equal((await frame.locator(`.queue-row[data-task="${TASK}"] .q-spend`).innerText()).trim(), task);
      await moveMouseAway(page());
      await screenshot(page(), 'agent-3-spend');
    },
  );

  check('Show Output renders the agent’s transcript readably, not its JSON stream', async () => {
    await runCommand(page(), 'View: Close Editor');
    await runContextMenuItem(page(), treeRow(await runs(), /^T1 /), 'Show Output');
    await page().locator('.part.panel .terminal-wrapper.active .xterm-rows').waitFor({ timeout: 15_000 });
    // Room for the whole transcript: the terminal shows its visible rows only.
    await runCommand(page(), 'View: Toggle Maximized Panel');
    const lines = await eventually(
      'the transcript and its end line',
      () => terminalLines(page()),
      (l) =>
        l.some((x) => x.startsWith(`── ${DELEGATION} ended`)) && l.some((x) => x.startsWith('── claude-code session')),
      { timeoutMs: 20_000 },
    );
    const text = lines.join('\n');
    assert.match(text, /── claude-code session [0-9a-f-]{8,}/);
    assert.match(text, /▸ turn 1/);
    assert.match(text, /→ Write notes\/hello\.txt/);
    assert.match(text, /→ Bash: ls notes/);
    assert.match(text, /Done: I wrote notes\/hello\.txt and ran the check\./);
    assert.match(text, /■ finished · \d+ tokens in, \d+ out, \$\d+\.\d{4}/);
    assert.ok(!lines.some((l) => l.startsWith('{')), `no raw JSON line:\n${text}`);
    assert.ok(existsSync(join(workspace(), '.baton', 'runs', runId, 'logs', `${DELEGATION}.log`)));
    await screenshot(page(), 'agent-4-show-output');
  });
});
