// Stopping a run immediately, clicked through in a real browser, and proven from outside
// the editor: after the Runs view shows the attempts CANCELLED, no process that Baton
// started for them is left (their environment carries BATON_RUNTIME_ID=<runtime>, and the
// store records each worker's pid). The demo agent takes a minute per step here, so the
// workers are surely running when the stop comes.
import * as assert from 'node:assert/strict';
import { Engine } from './support/engine';
import {
  clickInlineAction,
  clickViewTitleAction,
  DEMO_WORKSPACE,
  eventually,
  expandRow,
  isPidAlive,
  openViewContainer,
  pickQuickItem,
  processesCarrying,
  quickInput,
  resizeSideBar,
  rowText,
  runCommand,
  runContextMenuItem,
  screenshot,
  treeRow,
  treeRowByLabel,
  useBatonEditor,
  viewPane,
  chainedSteps,
} from './support/index';

interface WorkerProcesses {
  runtimeId: string;
  delegationId: string;
  pid?: number;
}

describe('Baton in the browser: stop a run immediately', function () {
  const editor = useBatonEditor({ source: DEMO_WORKSPACE, env: { DEMO_AGENT_STEP_MS: '60000' } });
  let runId = '';
  const { step } = chainedSteps();

  const page = () => editor.current.page;
  const runs = () => viewPane(page(), 'Runs');
  const workers = () => viewPane(page(), 'Workers');

  /** The run's worker runtimes with their pids, read from the store by a second engine (as the CLI would). */
  async function workerProcesses(): Promise<WorkerProcesses[]> {
    const engine = await Engine.open({ workspace: editor.current.workspace });
    try {
      return (await engine.diagnose(runId)).workers.map((w) => ({
        runtimeId: w.runtimeId,
        delegationId: w.delegationId,
        ...(w.pid ? { pid: w.pid } : {}),
      }));
    } finally {
      await engine.close();
    }
  }

  /** Waits until T1 and T6 (no dependencies) run attempt `attempt` and their workers beat. */
  async function waitForTwoWorkers(attempt: number): Promise<WorkerProcesses[]> {
    const pane = await runs();
    await treeRow(pane, new RegExp(`^T1 Add the notes store running · attempt ${attempt}\\b`)).waitFor({
      timeout: 30_000,
    });
    await treeRow(pane, new RegExp(`^T6 Describe notes in the README running · attempt ${attempt}\\b`)).waitFor({
      timeout: 30_000,
    });
    const live = await workers();
    // The agent beats once right after it starts (then once a minute): it surely runs.
    for (const task of ['T1', 'T6']) {
      await treeRow(
        live,
        new RegExp(`^${task} D-${task}-coder-00${attempt} beat \\d+s ago · lease \\d+s · reading the task`),
      ).waitFor({ timeout: 30_000 });
    }
    const running = (await workerProcesses()).filter((w) => w.delegationId.endsWith(`-00${attempt}`));
    assert.equal(running.length, 2, `two runtimes in the store: ${JSON.stringify(running)}`);
    for (const w of running) {
      assert.ok(w.pid && isPidAlive(w.pid), `the worker of ${w.delegationId} runs (pid ${w.pid})`);
      assert.ok(
        processesCarrying(`BATON_RUNTIME_ID=${w.runtimeId}`).length >= 1,
        `processes carry BATON_RUNTIME_ID=${w.runtimeId}`,
      );
    }
    return running;
  }

  /** The Runs view shows both attempts CANCELLED; then nothing of their workers is left. */
  async function expectCancelledAndGone(stopped: WorkerProcesses[]): Promise<void> {
    const pane = await runs();
    for (const w of stopped) {
      const task = /^D-(T\d+)-/.exec(w.delegationId)![1]!;
      await expandRow(treeRow(pane, new RegExp(`^${task} `)));
      const row = treeRowByLabel(pane, w.delegationId);
      await eventually(
        `${w.delegationId} CANCELLED in the Runs view`,
        () => rowText(row),
        (text) => text.startsWith(`${w.delegationId} CANCELLED`),
        { timeoutMs: 30_000 },
      );
    }
    // No polling from here on: Baton marks an attempt CANCELLED once its processes are gone.
    for (const w of stopped) {
      assert.deepEqual(
        processesCarrying(`BATON_RUNTIME_ID=${w.runtimeId}`),
        [],
        `no process left with BATON_RUNTIME_ID=${w.runtimeId} (${w.delegationId})`,
      );
      assert.ok(!w.pid || !isPidAlive(w.pid), `the worker process ${w.pid} of ${w.delegationId} is gone`);
    }
    await (await workers()).getByText('No worker is running.').waitFor({ timeout: 15_000 });
  }

  step('starts the demo run from the Runs view title button; two workers run', async () => {
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 470);
    await clickViewTitleAction(await runs(), 'Start Run…');
    const pane = await runs();
    const picked = await eventually(
      'the run to appear in the Runs view (or the plan quick pick)',
      async () =>
        (await treeRow(pane, /^plan\.md /).count()) > 0 ? 'run' : (await quickInput(page()).isVisible()) ? 'pick' : '',
      Boolean,
    );
    if (picked === 'pick') await pickQuickItem(page(), 'plan.md');
    const run = treeRow(pane, /^plan\.md running · /);
    await run.waitFor({ timeout: 30_000 });
    runId = /\b(R-\d{8}-\w+)\b/.exec((await run.getAttribute('aria-label')) ?? '')?.[1] ?? '';
    assert.match(runId, /^R-\d{8}-\w+$/);
    await waitForTwoWorkers(1);
    await screenshot(page(), 'e2e-7-stop-before');
  });

  step('stops the run immediately from its context menu: both attempts CANCELLED, their processes gone', async () => {
    const running = (await workerProcesses()).filter((w) => w.delegationId.endsWith('-001'));
    await runContextMenuItem(page(), treeRow(await runs(), /^plan\.md running · /), 'Stop Run Immediately');
    await expectCancelledAndGone(running);
    // A run stopped by a person says "stopped" (docs/extension.md, "Run states"), with Resume; not its store status
    // ("paused"), which a run waiting at its gates has too.
    await treeRow(await runs(), new RegExp(`^plan\\.md stopped · \\d+/6 · ${runId}$`)).waitFor({ timeout: 15_000 });
    await screenshot(page(), 'e2e-7-stop-cancelled');
  });

  step('resumes the run with its inline action, then stops it with "Baton: Stop Run…" → Immediate', async () => {
    await clickInlineAction(treeRow(await runs(), /^plan\.md stopped · /), 'Resume Run');
    const running = await waitForTwoWorkers(2);
    await runCommand(page(), 'Baton: Stop Run…');
    await pickQuickItem(page(), 'Immediate');
    await expectCancelledAndGone(running);
    await treeRow(await runs(), new RegExp(`^plan\\.md stopped · \\d+/6 · ${runId}$`)).waitFor({ timeout: 15_000 });
    await screenshot(page(), 'e2e-8-stop-palette');
  });
});
