// A run nothing drives, in a real browser (Chromium on code-server with the built extension),
// on a fresh copy of examples/demo made a git repository with `isolation: "worktree"`:
// - a coordinator lease that runs out while nothing is written flips the run from "running"
//   to "waiting for a coordinator" (with Resume) — the views never say "running" for a run
//   nothing drives;
// - a dirty working tree stops the resumed run at an isolation gate: "waiting for a decision";
// - rejecting that gate (after committing) releases T6, and this window drives it on — no
//   Resume needed;
// - replanning a run nobody drives makes this window drive the new run.
import * as assert from 'node:assert/strict';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { takeLeaseElsewhere } from './support/coordinatorStandIn';
import { Engine } from './support/engine';
import {
  batonLog,
  chainedSteps,
  clearNotifications,
  clickInlineAction,
  DEMO_WORKSPACE,
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
  treeRowNames,
  useBatonEditor,
  viewPane,
} from './support/index';

/** How long the stand-in coordinator's lease lasts: long enough for the views to show it held first. */
const LEASE_MS = 20_000;

function git(workspace: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Tester', '-c', 'user.email=tester@example.com', ...args], {
    cwd: workspace,
    encoding: 'utf8',
  });
}

/** The run's attempts and events as the store has them, read by a second engine (as the CLI would). */
async function storeFacts(workspace: string, runId: string) {
  const engine = await Engine.open({ workspace });
  try {
    const { delegations } = await engine.listDelegations(runId);
    return {
      delegations: delegations.map((d) => `${d.id}:${d.status}`).sort(),
      tasks: Object.fromEntries((await engine.overview(runId)).tasks.map((t) => [t.id, t.status])),
      events: await engine.listEvents(runId),
    };
  } finally {
    await engine.close();
  }
}

async function statusBarText(page: Page): Promise<string> {
  const text = await page.locator('.part.statusbar .statusbar-item', { hasText: 'Baton' }).first().innerText();
  return text.replace(/\s+/g, ' ').trim();
}

/** The Runs view's rows that say a run is running. */
async function runningRuns(page: Page): Promise<string[]> {
  const names = await treeRowNames(await viewPane(page, 'Runs'));
  return names.filter((n) => /^plan[\w-]*\.md running · /.test(n));
}

describe('Baton in the browser: a run nothing drives says so, and a decision taken here drives it on', function () {
  const editor = useBatonEditor({ source: DEMO_WORKSPACE, env: { DEMO_AGENT_STEP_MS: '3000' } });
  const { step, check } = chainedSteps();
  const page = () => editor.current.page;
  const ws = () => editor.current.workspace;
  let runId = '';
  let holder: ChildProcess | undefined;

  step(
    'a run whose coordinator (another process on this host) stops renewing shows running while its lease holds',
    async () => {
      // The workspace is a git repository whose tasks want worktrees, with an uncommitted change.
      const configPath = join(ws(), '.baton', 'config.json');
      const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
      writeFileSync(configPath, JSON.stringify({ ...config, isolation: 'worktree' }, null, 2));
      git(ws(), 'init', '-q', '-b', 'main');
      git(ws(), 'add', '-A');
      git(ws(), 'commit', '-q', '-m', 'the demo');
      appendFileSync(join(ws(), 'README.md'), '\nA line not committed yet.\n');
      // The views are up before the run exists, so that the lease's time is not spent loading the workbench.
      await openViewContainer(page(), 'Baton');
      await resizeSideBar(page(), 470);
      const runs = await viewPane(page(), 'Runs');
      await eventually(
        'the Baton store to be open',
        () => statusBarText(page()),
        (t) => t === 'Baton: idle',
        {
          timeoutMs: 60_000,
        },
      );

      // A coordinator elsewhere on this host creates the run, takes its lease and then renews nothing
      // (hung, not dead): a process whose identity the lease carries.
      holder = spawn('sleep', ['600'], { stdio: 'ignore' });
      const engine = await Engine.open({ workspace: ws() });
      try {
        runId = (await engine.runForPlan('plan.md')).run.id;
      } finally {
        await engine.close();
      }
      assert.ok(
        await takeLeaseElsewhere(ws(), {
          runId,
          holder: `elsewhere:${holder.pid}`,
          pid: holder.pid!,
          leaseMs: LEASE_MS,
        }),
      );

      await treeRow(runs, new RegExp(`^plan\\.md running · 0/6 · ${runId}$`)).waitFor({ timeout: LEASE_MS / 2 });
    },
  );

  step('at the lease’s expiry it says "waiting for a coordinator", with nothing written to the store', async () => {
    const eventsBefore = (await storeFacts(ws(), runId)).events.length;
    const runs = await viewPane(page(), 'Runs');
    await treeRow(runs, new RegExp(`^plan\\.md waiting for a coordinator · 0/6 · ${runId}$`)).waitFor({
      timeout: LEASE_MS + 15_000,
    });
    assert.deepEqual(await runningRuns(page()), [], 'no run says running');
    await eventually(
      'the status bar to say the run waits for a coordinator',
      () => statusBarText(page()),
      (t) => t === 'Baton: 1 gate waiting, 1 run waiting for a coordinator',
    );
    // The holder never died and nothing was logged: time alone flipped it.
    assert.equal(holder!.exitCode, null, 'the stand-in coordinator still runs');
    assert.equal((await storeFacts(ws(), runId)).events.length, eventsBefore, 'no event was written meanwhile');
    await clearNotifications(page());
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-decisions-1-lease-ran-out');
  });

  step(
    'Resume (the holder gone) drives it here until T1 asks for a worktree: "waiting for a decision (2 gates)"',
    async () => {
      holder!.kill('SIGKILL');
      await eventually('the stand-in coordinator to exit', async () => holder!.exitCode !== null || holder!.signalCode);
      const runs = await viewPane(page(), 'Runs');
      await clickInlineAction(
        treeRow(runs, new RegExp(`^plan\\.md waiting for a coordinator · 0/6 · ${runId}$`)),
        'Resume Run',
      );
      const gates = await viewPane(page(), 'Gates');
      await treeRow(gates, /^G-\d+ +isolation · T1\b/).waitFor({ timeout: 30_000 });
      await treeRow(runs, new RegExp(`^plan\\.md waiting for a decision \\(2 gates\\) · 0/6 · ${runId}$`)).waitFor({
        timeout: 30_000,
      });
      assert.deepEqual(await runningRuns(page()), [], 'no run says running while it waits at its gates');
      const facts = await storeFacts(ws(), runId);
      assert.deepEqual(facts.delegations, [], 'nothing was dispatched into the dirty tree');
      assert.ok(
        facts.events.some((e) => e.type === 'coordinator:released'),
        'the window let the paused run go: nothing drives it now',
      );
      await clearNotifications(page());
      await moveMouseAway(page());
      await screenshot(page(), 'e2e-decisions-2-isolation-gate');
    },
  );

  step(
    'rejecting the isolation gate (after committing) drives the run on from this window: T6 runs in a worktree',
    async () => {
      git(ws(), 'commit', '-q', '-am', 'the README line');
      const acquiredBefore = (await storeFacts(ws(), runId)).events.filter(
        (e) => e.type === 'coordinator:acquired',
      ).length;
      const gates = await viewPane(page(), 'Gates');
      await clickInlineAction(treeRow(gates, /^G-\d+ +isolation · T1\b/), 'Reject…');
      const input = quickInput(page()).locator('.quick-input-box input');
      await input.waitFor({ state: 'visible', timeout: 15_000 });
      await input.fill('no worktree for T1: skip it');
      await page().keyboard.press('Enter');
      const workers = await viewPane(page(), 'Workers');
      await treeRow(workers, /^T6 D-T6-coder-001 /).waitFor({ timeout: 30_000 });
      const runs = await viewPane(page(), 'Runs');
      await treeRow(runs, new RegExp(`^plan\\.md running · 0/6 · ${runId}$`)).waitFor({ timeout: 15_000 });
      const facts = await storeFacts(ws(), runId);
      assert.equal(facts.tasks.T1, 'cancelled');
      assert.equal(facts.tasks.T2, 'blocked');
      assert.ok(
        facts.delegations.some((d) => d.startsWith('D-T6-coder-001:')),
        facts.delegations.join(', '),
      );
      assert.equal(
        facts.events.filter((e) => e.type === 'coordinator:acquired').length,
        acquiredBefore + 1,
        'this window took the run again after the decision',
      );
      // The log reaches its file a little later.
      await eventually(
        'the start in the Baton log',
        async () => batonLog(editor.current.server),
        (log) => new RegExp(`\\[${runId}\\] D-T6-coder-001: started demo-agent`).test(log),
      );
      await clearNotifications(page());
      await moveMouseAway(page());
      await screenshot(page(), 'e2e-decisions-3-rejected-driven');
    },
  );

  step('T6 ends at its verification gate: the run waits for a decision again, and nothing says running', async () => {
    const runs = await viewPane(page(), 'Runs');
    await treeRow(runs, new RegExp(`^plan\\.md waiting for a decision \\(1 gate\\) · 0/6 · ${runId}$`)).waitFor({
      timeout: 90_000,
    });
    assert.deepEqual(await runningRuns(page()), []);
    await eventually(
      'the status bar to count one gate and no worker',
      () => statusBarText(page()),
      (t) => t === 'Baton: 1 gate waiting',
    );
  });

  check('replanning the run nobody drives makes this window drive the new run', async () => {
    // The new plan, committed (an untracked file would make the tree dirty for the new run's worktrees).
    writeFileSync(join(ws(), 'plan-v2.md'), readFileSync(join(ws(), 'plan.md'), 'utf8'));
    git(ws(), 'add', 'plan-v2.md');
    git(ws(), 'commit', '-q', '-m', 'plan v2');
    await clearNotifications(page());
    const runs = await viewPane(page(), 'Runs');
    await runContextMenuItem(page(), treeRow(runs, new RegExp(`^plan\\.md .* · ${runId}$`)), 'Replan Run…');
    // code-server's open dialog is VS Code's simple file dialog: a path in a quick input.
    const input = quickInput(page()).locator('.quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 15_000 });
    // The dialog puts the folder it lists into the box once it has read it, over anything typed before that: the
    // path is typed (again) until the box holds it, and only then accepted.
    const newPlan = join(ws(), 'plan-v2.md');
    await eventually(
      'the open dialog to take plan-v2.md',
      async () => {
        if (!(await input.isVisible())) return true;
        if ((await input.inputValue()) !== newPlan) await input.fill(newPlan);
        else {
          await page().keyboard.press('Enter');
          await input.waitFor({ state: 'hidden', timeout: 3_000 }).catch(() => undefined);
        }
        return !(await input.isVisible());
      },
      Boolean,
      { timeoutMs: 20_000 },
    );
    const newRow = treeRow(runs, /^plan-v2\.md running · 0\/6 · R-\d{8}-\w+$/);
    await newRow.waitFor({ timeout: 30_000 });
    const newRunId = /\b(R-\d{8}-\w+)\b/.exec((await newRow.getAttribute('aria-label')) ?? '')?.[1] ?? '';
    assert.notEqual(newRunId, runId);
    // The replanned run is finished (superseded): it is filed under the collapsed History node.
    const history = treeRow(runs, /^History 1 finished run$/);
    await history.waitFor({ timeout: 15_000 });
    await expandRow(history);
    await treeRow(runs, new RegExp(`^plan\\.md superseded · 0/6 · ${runId}$`)).waitFor({ timeout: 15_000 });
    await eventually(
      'the notice that this window drives the new run',
      () => notificationMessages(page()),
      (m) => m.some((text) => text.includes(`superseded by ${newRunId}`) && text.includes('this window drives it')),
    );
    const workers = await viewPane(page(), 'Workers');
    await treeRow(workers, /^T1 D-T1-coder-001 /).waitFor({ timeout: 30_000 });
    // The superseded run asks for nothing any more: only the new run's risk gate waits.
    const gates = await viewPane(page(), 'Gates');
    await eventually(
      'the Gates view to show only the new run’s gate',
      () => treeRowNames(gates),
      (rows) => rows.length === 1 && /^G-\d+ +risk approval · T3\b/.test(rows[0]!),
    );
    // The log reaches its file a little later.
    await eventually(
      'the start in the Baton log',
      async () => batonLog(editor.current.server),
      (log) => new RegExp(`\\[${newRunId}\\] D-T1-coder-001: started demo-agent`).test(log),
    );
    const facts = await storeFacts(ws(), newRunId);
    assert.equal(facts.events.filter((e) => e.type === 'coordinator:acquired').length, 1);
    await clearNotifications(page());
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-decisions-4-replanned-driven');
  });

  after(() => {
    if (holder && holder.exitCode === null && !holder.signalCode) holder.kill('SIGKILL');
  });
});
