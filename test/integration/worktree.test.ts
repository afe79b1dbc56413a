// A task's worktree from the editor (docs/extension.md, "An attempt's worktree", issue 24): Open Worktree in Terminal,
// the menus only where a worktree is, a clear refusal where it went; and Resolve Conflict on an integration_conflict
// gate — the merge editor in the task's worktree, then Approve integrates; or the conflict sent to the agent.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { Engine, Gate } from '../../src/engine/index';
import { mergeResultOf } from '../../src/extension/commands/resolveConflict';
import type { BatonApi } from '../../src/extension/extension';
import type { RunsNode } from '../../src/extension/views';
import { activateBaton, removeFromWorkspace, messagesShownDuring, waitFor, workspacePath } from './support/editor';

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=t@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

function plan(ids: string[]): string {
  return ids
    .map((id) => `\`\`\`baton-task\nid: ${id}\ntitle: Sign ${id}\nagent: coder\n\`\`\`\nSign the file.\n`)
    .join('\n');
}

describe("a task's worktree: open it, resolve its conflict (issue 24)", function () {
  this.timeout(240_000); // hang detectors, generous enough for a machine at load 10
  let api: BatonApi;
  let engine: Engine;

  before(async () => {
    api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
    engine = await api.session!.engine();
    // Worktrees need a repository: the window's folder becomes one for this suite (Baton's state excluded as Baton
    // excludes it), and stops being one after it.
    const root = workspacePath();
    git(root, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(root, '.git', 'info', 'exclude'), '**/.baton/*\n!**/.baton/config.json\n');
    mkdirSync(workspacePath('conflict'), { recursive: true });
    writeFileSync(workspacePath('conflict', 'shared.txt'), 'base\n');
    for (const [folder, ids] of [
      ['worktree-plan', ['W1', 'W2']],
      ['agent-plan', ['S1', 'S2']],
    ] as const) {
      mkdirSync(workspacePath(folder), { recursive: true });
      writeFileSync(workspacePath(folder, 'conflict.plan.md'), plan([...ids]));
    }
    git(root, 'add', '--all');
    git(root, 'commit', '--quiet', '-m', 'start');
  });

  after(async () => {
    delete process.env.FAKE_WORKER_BEHAVIOUR;
    for (const terminal of vscode.window.terminals) if (terminal.name.startsWith('Baton: D-')) terminal.dispose();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // VS Code's git extension may still be writing into .git (its index lock, a status run).
    for (const path of ['.git', '.baton/worktrees', 'conflict', 'worktree-plan', 'agent-plan'])
      removeFromWorkspace(path);
  });

  /** Runs a plan whose second task conflicts with the first; resolves at the integration_conflict gate it opens. */
  async function conflictOf(planPath: string, [first, second]: [string, string]) {
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ [first]: 'conflict', [second]: 'conflictLast' });
    const { run } = await engine.runForPlan(planPath, { settings: { isolation: 'worktree' } });
    await api.session!.drive(run.id);
    const gate = await waitFor(
      `${second} to stop at an integration conflict`,
      async () =>
        (await engine.listGates({ runId: run.id, status: 'open' })).find((g) => g.kind === 'integration_conflict'),
      { timeoutMs: 120_000 },
    );
    assert.equal(gate.taskId, second);
    assert.deepEqual(gate.details.files, ['conflict/shared.txt']);
    return { run, gate };
  }

  function gateNode(gate: Gate) {
    return { kind: 'gate', id: `gate:${gate.id}`, runId: gate.runId, gateId: gate.id };
  }

  it('Open Worktree in Terminal opens a terminal in the worktree, offered only on rows with one; a removed worktree is said; Resolve Conflict → Merge Editor, then Approve, integrates', async () => {
    const { run, gate } = await conflictOf('worktree-plan/conflict.plan.md', ['W1', 'W2']);
    const worktrees = await engine.listWorktrees(run.id);
    const w2 = worktrees.find((w) => w.taskId === 'W2')!;
    const w1 = worktrees.find((w) => w.taskId === 'W1')!;

    // The menus' when-clauses test `hasWorktree`: W2's worktree is kept at its gate, W1's went with its integration.
    await api.session!.runState!.refreshNow();
    const runs = api.views.runs!;
    const taskNode = (taskId: string): RunsNode => ({
      kind: 'task',
      id: `task:${run.id}/${taskId}`,
      runId: run.id,
      taskId,
    });
    const delegationNode = (delegationId: string): RunsNode => ({
      kind: 'delegation',
      id: `delegation:${run.id}/${delegationId}`,
      runId: run.id,
      delegationId,
    });
    assert.match(runs.getTreeItem(taskNode('W2')).contextValue!, / hasWorktree\b/);
    assert.match(runs.getTreeItem(delegationNode(w2.delegationId)).contextValue!, / hasWorktree\b/);
    assert.doesNotMatch(runs.getTreeItem(taskNode('W1')).contextValue!, /hasWorktree/);

    // Open Worktree in Terminal on W2's row: a terminal whose shell works in the worktree.
    await vscode.commands.executeCommand('baton.openWorktreeInTerminal', taskNode('W2'));
    const terminal = await waitFor('the worktree terminal', () =>
      vscode.window.terminals.find((t) => t.name === `Baton: ${w2.delegationId} worktree`),
    );
    assert.equal((terminal.creationOptions as vscode.TerminalOptions).cwd, w2.path);
    const said = join(tmpdir(), `baton-pwd-${process.pid}-${Date.now()}.txt`);
    terminal.sendText(`pwd > '${said}'`);
    const pwd = await waitFor(
      'the shell to say where it is',
      () => (existsSync(said) ? readFileSync(said, 'utf8').trim() : undefined),
      {
        timeoutMs: 60_000,
      },
    );
    assert.equal(realpathSync(pwd), realpathSync(w2.path));
    rmSync(said, { force: true });

    // W1's worktree went when it was integrated: asked from the palette's way in (its attempt), the refusal says so.
    const refused = await messagesShownDuring(() =>
      vscode.commands.executeCommand('baton.openWorktree', delegationNode(w1.delegationId)),
    );
    assert.deepEqual(
      refused.map((m) => m.level),
      ['error'],
      JSON.stringify(refused),
    );
    assert.match(
      refused[0]!.message,
      new RegExp(`The worktree of ${w1.delegationId} .* was removed once its work was integrated`),
    );

    // Resolve Conflict → Open in Merge Editor: main merged into W2's worktree, stopped at the conflict.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const shown = await messagesShownDuring(() =>
      vscode.commands.executeCommand('baton.resolveConflict', gateNode(gate), 'mergeEditor'),
    );
    const file = join(w2.path, 'conflict', 'shared.txt');
    assert.deepEqual(
      git(w2.path, 'ls-files', '-u')
        .split('\n')
        .map((line) => line.split(/\s+/).slice(2).join(' ')),
      ['1 conflict/shared.txt', '2 conflict/shared.txt', '3 conflict/shared.txt'],
      'the index holds the three versions',
    );
    assert.match(readFileSync(file, 'utf8'), /^<<<<<<< HEAD\nW2 was here\n=======\nW1 was here\n>>>>>>> /m);
    assert.equal(shown.length, 1, JSON.stringify(shown));
    const mergeEditorOpen = () =>
      vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => mergeResultOf(t)?.fsPath === file));
    assert.ok(mergeEditorOpen(), `a merge editor on ${file}: ${JSON.stringify(shown)}`);
    assert.match(
      shown[0]!.message,
      new RegExp(
        `^main merged into ${w2.delegationId}'s worktree: resolve conflict/shared.txt in the merge editor, choose Complete Merge, then approve ${gate.id}`,
      ),
    );

    // The person resolves (Complete Merge stages the file) and approves: Baton commits the merge and integrates W2.
    // Here the file is resolved on disk, so the merge editor is closed unsaved first (it holds the file's text).
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    await waitFor('the merge editor to close', () => !mergeEditorOpen() || undefined);
    writeFileSync(file, 'W1 was here\nW2 was here\n');
    git(w2.path, 'add', 'conflict/shared.txt');
    await vscode.commands.executeCommand('baton.approveGate', gateNode(gate));
    await waitFor(
      'the run to complete',
      async () => ((await engine.getRun(run.id)).status === 'completed' ? true : undefined),
      { timeoutMs: 90_000 },
    );
    assert.equal(readFileSync(workspacePath('conflict', 'shared.txt'), 'utf8'), 'W1 was here\nW2 was here\n');
  });

  it('Resolve Conflict → Send to Agent: the gate closes, the agent gets the files and the target as a follow-up, and its next attempt resolves and integrates', async () => {
    const { run, gate } = await conflictOf('agent-plan/conflict.plan.md', ['S1', 'S2']);
    const shown = await messagesShownDuring(() =>
      vscode.commands.executeCommand('baton.resolveConflict', gateNode(gate), 'agent'),
    );
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.match(
      shown[0]!.message,
      new RegExp(
        `^${gate.id} sent to S2's agent as message M-\\d+: D-S2-coder-001 ended, and the next attempt merges its work with the target and resolves conflict/shared\\.txt\\.$`,
      ),
    );
    const [followUp] = await engine.listFollowUps(run.id, 'S2');
    assert.ok(followUp, 'the follow-up is recorded');
    assert.match(followUp.message, /does not integrate cleanly into `main`: main changed `conflict\/shared\.txt`/);
    const decided = (await engine.listGates({ runId: run.id })).find((g) => g.id === gate.id)!;
    assert.equal(decided.status, 'rejected');

    // This window drives the run on: the follow-up attempt starts with the message, resolves, and is integrated.
    await waitFor(
      'the run to complete',
      async () => ((await engine.getRun(run.id)).status === 'completed' ? true : undefined),
      { timeoutMs: 90_000 },
    );
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.filter((d) => d.taskId === 'S2').map((d) => `${d.id}:${d.status}`),
      ['D-S2-coder-001:CANCELLED', 'D-S2-coder-002:COMPLETED'],
    );
    const prompt = readFileSync(workspacePath('.baton', 'runs', run.id, 'prompts', 'D-S2-coder-002.md'), 'utf8');
    assert.ok(prompt.startsWith(`## Message from VS Code\n\n${followUp.message}\n`), prompt.slice(0, 600));
    assert.match(readFileSync(workspacePath('conflict', 'shared.txt'), 'utf8'), /S1 was here\nS2 was here\n$/);
  });
});
