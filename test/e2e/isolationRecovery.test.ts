// Isolation a new user can recover from, clicked through in a real browser: a fresh git
// repository holding the demo, its plan just written and not committed. Baton's store never
// shows in Source Control (git status before and after the first dispatch); the uncommitted
// plan opens no isolation gate, the tasks run in worktrees; a really dirty tree does open
// one, the user commits, and "Check Again" lets the task run in its worktree.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AttemptWorktree } from '../../src/engine/index';
import { Engine } from './support/engine';
import {
  chainedSteps,
  clickInlineAction,
  codeLens,
  DEMO_WORKSPACE,
  eventually,
  inlineAction,
  moveMouseAway,
  openViewContainer,
  quickOpen,
  resizeSideBar,
  screenshot,
  treeRow,
  treeRowNames,
  useBatonEditor,
  viewPane,
} from './support/index';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } }).trim();
}

/**
 * The demo in a new repository: everything committed but the plan, which the user has just
 * written. `isolation: auto` with four slots: in a git repository, each task gets a worktree.
 */
function freshRepository(): string {
  const parent = realpathSync(mkdtempSync(join(tmpdir(), 'baton-repo-')));
  const repo = join(parent, 'notes');
  cpSync(DEMO_WORKSPACE, repo, {
    recursive: true,
    filter: (path) => {
      const rel = path.slice(DEMO_WORKSPACE.length + 1).split(/[\\/]/);
      return !(rel[0] === '.baton' && rel.length > 1 && rel[1] !== 'config.json');
    },
  });
  const configPath = join(repo, '.baton', 'config.json');
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  writeFileSync(configPath, `${JSON.stringify({ ...config, isolation: 'auto', maxConcurrency: 4 }, null, 2)}\n`);
  git(repo, 'init', '--quiet', '--initial-branch=main');
  git(repo, 'config', 'user.name', 'Ana');
  git(repo, 'config', 'user.email', 'ana@example.invalid');
  git(repo, 'config', 'commit.gpgsign', 'false');
  git(repo, 'add', '--all', '--', '.', ':!plan.md');
  git(repo, 'add', '--force', '.baton/config.json');
  git(repo, 'commit', '--quiet', '-m', 'jot before the plan');
  return repo;
}

/** What Source Control lists: `git status --porcelain` of the workspace. */
const status = (workspace: string): string => git(workspace, 'status', '--porcelain=v1', '--untracked-files=all');

describe('Baton in the browser: isolation you can recover from', function () {
  const source = freshRepository();
  after(() => rmSync(join(source, '..'), { recursive: true, force: true }));
  const editor = useBatonEditor({ source, env: { DEMO_AGENT_STEP_MS: '300' } });
  const { step, check } = chainedSteps();
  const page = () => editor.current.page;
  const ws = () => editor.current.workspace;
  const runs = () => viewPane(page(), 'Runs');
  const gates = () => viewPane(page(), 'Gates');
  let firstRun = '';

  /** The worktree the store recorded for a task's first attempt in a run, once there is one. */
  async function attemptWorktree(runId: string, taskId: string): Promise<AttemptWorktree> {
    const engine = await Engine.open({ workspace: ws() });
    try {
      const found = await eventually(
        `${taskId}'s worktree in ${runId}`,
        async () => (await engine.listWorktrees(runId)).find((w) => w.delegationId === `D-${taskId}-coder-001`),
        (w) => w !== undefined,
        { timeoutMs: 90_000, intervalMs: 500 },
      );
      return found!;
    } finally {
      await engine.close();
    }
  }

  /** Opens Source Control: it lists the plan (and nothing of .baton/); a screenshot shows it. */
  async function showSourceControl(name: string): Promise<void> {
    await openViewContainer(page(), 'Source Control');
    const rows = page().locator('.part.sidebar .monaco-list-row');
    const listed = await eventually(
      'Source Control to list the changes',
      () => rows.evaluateAll((all) => all.map((row) => row.getAttribute('aria-label') ?? row.textContent ?? '')),
      (names) => names.some((n) => n.includes('plan.md')),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    assert.deepEqual(
      listed.filter((n) => /\.baton|journal|snapshot|worktrees/.test(n)),
      [],
      `Source Control lists: ${JSON.stringify(listed)}`,
    );
    await moveMouseAway(page());
    await screenshot(page(), name);
    await openViewContainer(page(), 'Baton');
  }

  step('the store opens and nothing of .baton/ shows in Source Control: only the new plan', async () => {
    await openViewContainer(page(), 'Baton');
    await resizeSideBar(page(), 520);
    await eventually('the store on disk', async () => existsSync(join(ws(), '.baton', 'store')), Boolean, {
      timeoutMs: 60_000,
    });
    assert.equal(status(ws()), '?? plan.md');
    assert.match(
      readFileSync(join(ws(), '.git', 'info', 'exclude'), 'utf8'),
      /^\*\*\/\.baton\/\*\n!\*\*\/\.baton\/config\.json$/m,
    );
    await showSourceControl('e2e-isolation-1-scm-before');
  });

  step(
    'starts the run with the plan uncommitted: no isolation gate, T1 and T6 run in worktrees of their own',
    async () => {
      const pane = await runs();
      await pane.getByRole('button', { name: 'Start Run', exact: true }).click();
      const run = treeRow(pane, /^plan\.md (running|paused) · \d+\/6 · R-/);
      await run.waitFor({ timeout: 60_000 });
      firstRun = /\b(R-\d{8}-\w+)\b/.exec((await run.getAttribute('aria-label')) ?? '')?.[1] ?? '';
      // The store records each attempt's worktree (the demo agent changes no file, so nothing is merged into main).
      for (const task of ['T1', 'T6']) await attemptWorktree(firstRun, task);
      assert.deepEqual(
        (await treeRowNames(await gates())).filter((name) => /isolation/.test(name)),
        [],
        'no isolation gate',
      );
      await eventually(
        'T1 integrated',
        async () => (await attemptWorktree(firstRun, 'T1')).status,
        (status) => status === 'integrated',
        { timeoutMs: 90_000 },
      );
    },
  );

  check('after the first dispatch Source Control still lists only the plan', async () => {
    assert.equal(status(ws()), '?? plan.md');
    await showSourceControl('e2e-isolation-2-scm-after');
  });

  step('a really dirty tree: a new run opens an isolation gate that names the README, not the plan', async () => {
    // Let the first run settle (it pauses at its gates), then edit a tracked file without committing it.
    await eventually(
      'no worker running',
      async () => (await (await viewPane(page(), 'Workers')).getByText('No worker is running.').count()) > 0,
      Boolean,
      { timeoutMs: 90_000 },
    );
    writeFileSync(join(ws(), 'README.md'), `${readFileSync(join(ws(), 'README.md'), 'utf8')}\nA draft line.\n`);
    await quickOpen(page(), 'plan.md');
    await codeLens(page(), '＋ Start new run').click({ timeout: 30_000 });
    const gate = treeRow(await gates(), /^G-\d+ isolation · T1 /);
    await gate.waitFor({ timeout: 60_000 });
    const name = (await gate.getAttribute('aria-label')) ?? '';
    assert.match(name, /uncommitted changes \(README\.md\)/);
    assert.doesNotMatch(name, /plan\.md/);
    await inlineAction(gate, 'Check Again');
    await screenshot(page(), 'e2e-isolation-3-gate');
  });

  step('the user commits; Check Again closes the gate and T1 runs in its worktree', async () => {
    git(ws(), 'commit', '--quiet', '-am', 'README draft');
    const gate = treeRow(await gates(), /^G-\d+ isolation · T1 /);
    await clickInlineAction(gate, 'Check Again');
    await gate.waitFor({ state: 'detached', timeout: 30_000 });
    const second = await eventually(
      'the second run',
      async () =>
        (await treeRowNames(await runs()))
          .map((n) => /\b(R-\d{8}-\w+)\b/.exec(n)?.[1])
          .find((id) => id && id !== firstRun),
      Boolean,
      { timeoutMs: 60_000 },
    );
    const worktree = await attemptWorktree(second!, 'T1');
    assert.match(worktree.path, new RegExp(`\\.baton/worktrees/${second}/T1-001$`));
    assert.equal(status(ws()), '?? plan.md', 'Source Control: still only the plan');
    await moveMouseAway(page());
    await screenshot(page(), 'e2e-isolation-4-rechecked');
  });
});
