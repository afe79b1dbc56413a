// Review comments on Show Changes' diffs (docs/extension.md, "Review comments", issue 24): a person comments on a
// changed line of a finished task's diff, sends the review to the agent, and the follow-up attempt starts with it.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as vscode from 'vscode';
import type { BatonApi } from '../../src/extension/extension';
import { DashboardFeed } from '../../src/extension/model/dashboardFeed';
import type { HostMessage } from '../../src/protocol/messages';
import {
  activateBaton,
  messagesShownDuring,
  removeFromWorkspace,
  visibleBatonLog,
  waitFor,
  workspacePath,
} from './support/editor';

const PLAN = '# Review\n\n```baton-task\nid: R1\ntitle: Greet\nagent: coder\n```\nWrite review/R1.txt.\n';

function git(...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=t@example.invalid', ...args], {
    cwd: workspacePath(),
    encoding: 'utf8',
  });
}

describe('review comments on Show Changes (issue 24)', function () {
  this.timeout(180_000); // hang detectors, generous enough for a machine at load 10
  let api: BatonApi;

  before(async () => {
    api = (await activateBaton()).exports as BatonApi;
    await api.whenReady();
    // Show Changes needs git: the window's folder becomes a repository for this suite, and stops being one after it.
    git('init', '--quiet', '--initial-branch=main');
    git('add', '--all');
    git('commit', '--quiet', '-m', 'start');
  });

  after(async () => {
    delete process.env.FAKE_WORKER_BEHAVIOUR;
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    // VS Code's git extension may still be writing into .git (its index lock, a status run).
    removeFromWorkspace('.git');
    removeFromWorkspace('review');
  });

  it('a comment on a changed line, sent with Send Review to Agent, is the follow-up the agent gets — file, line, quote, text — and the history shows it', async () => {
    const planPath = workspacePath('review-plan', 'review.plan.md');
    mkdirSync(dirname(planPath), { recursive: true });
    writeFileSync(planPath, PLAN);
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ R1: 'edit' });
    const engine = await api.session!.engine();
    // The shared working tree: Baton records it before and after the worker (docs/workers.md).
    const { run } = await engine.runForPlan('review-plan/review.plan.md', { settings: { isolation: 'none' } });
    await api.session!.drive(run.id);
    const first = await waitFor(
      'R1 to pass',
      async () => {
        const view = await engine.overview(run.id);
        return view.run.status === 'completed' ? view.delegations.find((d) => d.taskId === 'R1') : undefined;
      },
      { timeoutMs: 90_000 },
    );

    // Show Changes on the task: its diff's changed side is a document of the attempt's recorded commit.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('baton.showChanges', {
      kind: 'task',
      id: `task:${run.id}/R1`,
      runId: run.id,
      taskId: 'R1',
    });
    const changes = await engine.attemptChanges(run.id, first.id);
    assert.ok(changes.available && 'commit' in changes.after, JSON.stringify(changes));
    const afterCommit = (changes.after as { commit: string }).commit;
    const isSide = (d: vscode.TextDocument, commit: string) =>
      d.uri.scheme === 'baton-attempt' && d.uri.path === '/review/R1.txt' && d.uri.query.includes(`commit=${commit}`);
    const changed = await waitFor('the diff’s changed side to open', () =>
      vscode.workspace.textDocuments.find((d) => isSide(d, afterCommit)),
    );
    assert.equal(changed.lineAt(1).text, 'two wrld');
    const reviews = api.reviews!;
    const ranges = reviews.controller.commentingRangeProvider!;
    const token = new vscode.CancellationTokenSource().token;
    assert.equal(((await ranges.provideCommentingRanges(changed, token)) as vscode.Range[]).length, 1);
    // Nothing else takes comments: not a file of the workspace.
    const plan = await vscode.workspace.openTextDocument(planPath);
    assert.deepEqual(await ranges.provideCommentingRanges(plan, token), []);

    // The person clicks + on line 2 and writes in the comment box (VS Code makes the thread, the button adds it).
    const thread = reviews.controller.createCommentThread(changed.uri, new vscode.Range(1, 0, 1, 0), []);
    const comment = 'Spell it "world", and end the file with a blank line.';
    await vscode.commands.executeCommand('baton.addReviewComment', { thread, text: comment });
    assert.equal(thread.comments.length, 1);
    assert.equal(thread.comments[0]!.label, 'Draft');
    assert.equal(thread.contextValue, 'baton.review.draft');

    // Send Review to Agent, from the thread's title.
    const shown = await messagesShownDuring(() => vscode.commands.executeCommand('baton.sendReview', thread));
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.match(
      shown[0]!.message,
      /^Review sent to R1 \(1 comment, message M-\d+\): the finished task runs again as a follow-up attempt\.$/,
    );
    // Sent: read-only and resolved, saying where it went.
    assert.equal(thread.contextValue, 'baton.review.sent');
    assert.equal(thread.canReply, false);
    assert.equal(thread.state, vscode.CommentThreadState.Resolved);
    assert.match(String(thread.comments[0]!.label), /^Sent to the agent \(M-\d+\)$/);

    // The engine got one follow-up message with the file, the line, the quoted line and the comment.
    const [followUp] = await engine.listFollowUps(run.id, 'R1');
    assert.ok(followUp, 'one follow-up');
    for (const part of ['review/R1.txt, line 2:', '   > two wrld', `   ${comment}`])
      assert.ok(followUp.message.includes(part), `${part} in:\n${followUp.message}`);

    // This window drives the reopened run: the follow-up attempt's prompt starts with the review.
    const second = await waitFor(
      'the follow-up attempt to pass',
      async () => {
        const view = await engine.overview(run.id);
        const attempts = view.delegations.filter((d) => d.taskId === 'R1');
        return view.run.status === 'completed' && attempts.length === 2 ? attempts[1] : undefined;
      },
      { timeoutMs: 90_000 },
    );
    const prompt = readFileSync(workspacePath('.baton', 'runs', run.id, 'prompts', `${second.id}.md`), 'utf8');
    assert.ok(prompt.startsWith(`## Message from VS Code\n\n${followUp.message}\n`), prompt.slice(0, 600));

    // The task's history: the timeline (Show Events) and the dashboard's task details.
    // (Show Events reveals the Baton log in the Output panel; the panel may hold another view's focus before.)
    await vscode.commands.executeCommand('baton.showEvents', { kind: 'run', id: `run:${run.id}`, runId: run.id });
    const line = `VS Code sent R1 a review of ${first.id}: 1 comment (review/R1.txt:2 "Spell it "world"`;
    await waitFor('the review in Show Events', () => visibleBatonLog()?.document.getText().includes(line) || undefined);
    const posted: HostMessage[] = [];
    const feed = new DashboardFeed(
      api.session!.runState!,
      { runId: run.id, coordinatedHere: () => false, maxConcurrency: () => 1 },
      (m) => posted.push(m),
    );
    try {
      const details = await feed.taskDetails('R1');
      assert.deepEqual(details.reviews, [
        {
          followUpId: followUp.id,
          by: 'VS Code',
          sentAt: details.reviews![0]!.sentAt,
          reviewed: first.id,
          deliveredTo: second.id,
          outcome: 'COMPLETED · PASS',
          comments: [{ path: 'review/R1.txt', line: 2, quote: 'two wrld', text: comment }],
        },
      ]);
    } finally {
      feed.dispose();
    }
  });
  it('review: required — the task waits at a review gate; Request Changes on the gate sends the drafts back, Approve Review from Show Changes integrates', async () => {
    const planPath = workspacePath('review-plan', 'held.plan.md');
    mkdirSync(dirname(planPath), { recursive: true });
    writeFileSync(planPath, PLAN.replace(/R1/g, 'R2'));
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ R2: 'edit' });
    const engine = await api.session!.engine();
    const { run } = await engine.runForPlan('review-plan/held.plan.md', {
      settings: { isolation: 'none', review: 'required' },
    });
    await api.session!.drive(run.id);
    const reviewGate = (delegation: string) =>
      waitFor(
        `${delegation} at its review gate`,
        async () =>
          (await engine.listGates({ runId: run.id, status: 'open' })).find(
            (g) => g.kind === 'review' && g.delegationId === delegation,
          ),
        { timeoutMs: 90_000 },
      );
    const first = await reviewGate('D-R2-coder-001');
    assert.equal((await engine.overview(run.id)).tasks.find((t) => t.id === 'R2')!.status, 'gated');

    // A draft on the held attempt's diff, then Request Changes on the gate's row (as the Gates view passes it).
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('baton.showChanges', {
      kind: 'task',
      id: `task:${run.id}/R2`,
      runId: run.id,
      taskId: 'R2',
    });
    const changed = await waitFor('the held attempt’s changed side to open', () =>
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'baton-attempt' && d.uri.path === '/review/R2.txt'),
    );
    const reviews = api.reviews!;
    const thread = reviews.controller.createCommentThread(changed.uri, new vscode.Range(1, 0, 1, 0), []);
    await vscode.commands.executeCommand('baton.addReviewComment', { thread, text: 'Spell it "world".' });
    const gateNode = { kind: 'gate', id: `gate:${first.id}`, runId: run.id, gateId: first.id };
    const shown = await messagesShownDuring(() => vscode.commands.executeCommand('baton.requestChanges', gateNode));
    assert.equal(shown.length, 1, JSON.stringify(shown));
    assert.match(
      shown[0]!.message,
      new RegExp(
        `^Review sent to R2 \\(1 comment, message M-\\d+\\): changes requested of D-R2-coder-001 \\(review gate ${first.id}\\); the next attempt starts from its work with the review first\\.$`,
      ),
    );
    assert.equal(thread.contextValue, 'baton.review.sent');
    const decided = (await engine.listGates({ runId: run.id })).find((g) => g.id === first.id)!;
    assert.deepEqual([decided.status, decided.decidedBy], ['rejected', 'VS Code']);

    // The follow-up attempt (this window drives the run) carries the review and waits at a review gate again.
    await reviewGate('D-R2-coder-002');
    const prompt = readFileSync(workspacePath('.baton', 'runs', run.id, 'prompts', 'D-R2-coder-002.md'), 'utf8');
    assert.match(prompt, /^## Message from VS Code\n\nReview of your changes \(D-R2-coder-001\)/);
    const attempts = (await engine.overview(run.id)).delegations.filter((d) => d.taskId === 'R2');
    assert.equal(attempts[0]!.status, 'CANCELLED', 'sent back, not failed');

    // Approve Review from the title of Show Changes (no argument: the attempt it shows).
    await vscode.commands.executeCommand('baton.showChanges', {
      kind: 'task',
      id: `task:${run.id}/R2`,
      runId: run.id,
      taskId: 'R2',
    });
    await vscode.commands.executeCommand('baton.approveReview');
    await waitFor(
      'the run to complete',
      async () => ((await engine.getRun(run.id)).status === 'completed' ? true : undefined),
      { timeoutMs: 90_000 },
    );
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.filter((d) => d.taskId === 'R2').map((d) => d.status),
      ['CANCELLED', 'COMPLETED'],
    );
  });
  it('Drop From Integration on a changed side of a held attempt’s Show Changes: the target gets only the kept file', async () => {
    // Worktree isolation needs a clean tree: what the earlier tests left is committed first (Baton's state is not).
    appendFileSync(workspacePath('.git', 'info', 'exclude'), '**/.baton/*\n!**/.baton/config.json\n');
    git('add', '--all');
    git('commit', '--quiet', '-m', 'earlier tests');
    const base = git('rev-parse', 'main').trim();
    const planPath = workspacePath('review-plan', 'drop.plan.md');
    writeFileSync(planPath, PLAN.replace(/R1/g, 'R3'));
    process.env.FAKE_WORKER_BEHAVIOUR = JSON.stringify({ R3: 'edit-two' });
    const engine = await api.session!.engine();
    const { run } = await engine.runForPlan('review-plan/drop.plan.md', {
      settings: { isolation: 'worktree', review: 'required' },
    });
    await api.session!.drive(run.id);
    const gate = await waitFor(
      'R3 at its review gate',
      async () => (await engine.listGates({ runId: run.id, status: 'open' })).find((g) => g.kind === 'review'),
      { timeoutMs: 90_000 },
    );
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await vscode.commands.executeCommand('baton.showChanges', {
      kind: 'task',
      id: `task:${run.id}/R3`,
      runId: run.id,
      taskId: 'R3',
    });
    const extra = await waitFor('the extra file’s changed side to open', () =>
      vscode.workspace.textDocuments.find(
        (d) => d.uri.scheme === 'baton-attempt' && d.uri.path === '/review/R3-extra.txt',
      ),
    );
    const shown = await messagesShownDuring(() =>
      vscode.commands.executeCommand('baton.dropFromIntegration', extra.uri),
    );
    assert.deepEqual(
      shown.map((m) => m.message),
      [
        `Dropped review/R3-extra.txt from R3's integration (${gate.delegationId}): approving ${gate.id} integrates review/R3.txt.`,
      ],
    );
    await vscode.commands.executeCommand('baton.approveReview', {
      kind: 'gate',
      id: `gate:${gate.id}`,
      runId: run.id,
      gateId: gate.id,
    });
    await waitFor(
      'the run to complete',
      async () => ((await engine.getRun(run.id)).status === 'completed' ? true : undefined),
      { timeoutMs: 90_000 },
    );
    assert.deepEqual(git('diff', '--name-only', base, 'main').trim().split('\n'), ['review/R3.txt']);
  });
});
