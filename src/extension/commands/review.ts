import * as vscode from 'vscode';
import type { FollowUpOutcome, Gate } from '../../engine/index';
import { describeDecision } from '../model/gateNotice';
import { reviewSent } from '../model/reviewDrafts';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { decideGateAs, gateToDecide } from './decideGate';
import { messageSent } from './sendMessage';

/**
 * Review comments on Show Changes' diffs (docs/extension.md, "Review comments"): Add Comment (the comment box's
 * button), Delete (a draft comment's title), and Send Review to Agent — a task's draft comments as ONE follow-up
 * message, the operation Send Message… uses (`Engine.sendReview` → `sendFollowUp`).
 */

/** What VS Code passes a `comments/commentThread/context` command: the thread and the text in its box. */
interface CommentReply {
  thread: vscode.CommentThread;
  text: string;
}

function isReply(arg: unknown): arg is CommentReply {
  return typeof arg === 'object' && arg !== null && 'thread' in arg && 'text' in arg;
}

function isThread(arg: unknown): arg is vscode.CommentThread {
  return typeof arg === 'object' && arg !== null && 'uri' in arg && 'comments' in arg && !('thread' in arg);
}

/** Add Comment: the text in the comment box becomes a draft on its line. */
export const addReviewComment = folderCommand((ctx, reply: CommentReply) => {
  if (!isReply(reply)) throw new UserFacingError('Add a review comment from the comment box of a Show Changes diff.');
  if (!reply.text.trim())
    throw new UserFacingError('A review comment has some text: say what the agent should change.');
  ctx.reviews.addDraft(reply.thread, reply.text);
});

/** Delete: a draft comment goes (a sent one stays: the store has it). */
export const deleteReviewComment = folderCommand((ctx, comment: vscode.Comment) => {
  ctx.reviews.deleteDraft(comment);
});

/**
 * Send Review to Agent: from a draft thread's title, the comment box (what is typed there is added first), a task or
 * attempt row of the Runs view, or the palette (a pick of the tasks with drafts). All the task's drafts go, as one
 * message; a refusal (a task being verified, one that does not run again) leaves them drafts.
 */
export const sendReview = folderCommand(async (ctx, arg: CommandNode | CommentReply | vscode.CommentThread) => {
  ctx.session.requireTrust('send a review to an agent');
  if (isReply(arg) && arg.text.trim()) ctx.reviews.addDraft(arg.thread, arg.text);
  const task = await reviewTask(ctx, arg);
  if (!task) return;
  if (!(await sendDrafts(ctx, task)))
    void vscode.window.showInformationMessage(
      `${task.taskId} has no draft review comment: open Show Changes on it and comment on a changed line first.`,
    );
});

/**
 * Request Changes, on a task that passed and waits at its review gate (`review: required`; docs/extension.md, "Review
 * required"): from the gate's row in the Gates view, Show Changes' title, or the palette. The task's draft comments go
 * as its review — or, with none, what the person types — as ONE follow-up, which at a review gate sends the work back:
 * the gate rejected, the held attempt ended, the next attempt starting from its work (`Engine.sendFollowUp`).
 */
export const requestChanges = folderCommand(async (ctx, node: CommandNode) => {
  ctx.session.requireTrust('send changes back to an agent');
  const gate = await reviewGate(ctx, node, 'Request Changes');
  if (!gate) return;
  const task = { runId: gate.runId, taskId: gate.taskId! };
  if (await sendDrafts(ctx, task)) return;
  const message = await vscode.window.showInputBox({
    title: `Request changes of ${task.taskId} (${gate.delegationId ?? gate.id})`,
    prompt: 'No draft review comment on its Show Changes: say what the agent should change.',
    placeHolder: 'What should the agent change?',
    validateInput: (v) => (v.trim() ? undefined : 'Say what the agent should change.'),
  });
  if (message === undefined) return;
  const e = await ctx.session.engine();
  const outcome = await e.sendFollowUp({ ...task, message, by: 'VS Code' });
  await told(ctx, task.runId, messageSent(task.taskId, outcome), outcome);
});

/** Approve Review: Show Changes' title (or the palette) approves the review gate of the attempt it shows. */
export const approveReview = folderCommand(async (ctx, node: CommandNode) => {
  const gate = await reviewGate(ctx, node, 'Approve Review');
  if (!gate) return;
  const outcome = await decideGateAs(ctx, { gate, decision: 'approved' });
  if (outcome.kind === 'already-decided') void vscode.window.showInformationMessage(outcome.said);
});

/**
 * Drop From Integration (issue 27; docs/extension.md, "Keep or drop files"): files of an attempt that waits at its
 * review gate leave its integration — from the editor's context menu on a changed side of its Show Changes (that file),
 * or the gate's row and the palette (a pick of its changed files). Everything not dropped is kept. The engine commits
 * the attempt's work without them (`Engine.dropFromIntegration`); its Show Changes opens again, without them.
 */
export const dropFromIntegration = folderCommand(async (ctx, arg: CommandNode | vscode.Uri) => {
  ctx.session.requireTrust('change what a task integrates');
  const e = await ctx.session.engine();
  let gate: Gate | undefined;
  let files: string[];
  if (arg instanceof vscode.Uri) {
    const target = ctx.reviews.targetOf(arg);
    if (!target)
      throw new UserFacingError('Drop From Integration works on a changed side of a diff Show Changes opened.');
    gate = (await e.listGates({ runId: target.runId, status: 'open' })).find(
      (g) => g.kind === 'review' && g.delegationId === target.delegationId,
    );
    if (!gate)
      throw new UserFacingError(`${target.delegationId} does not wait at a review gate: nothing to drop from.`);
    // The changed side of a committed attempt names the file by its repository path (attemptFileUri).
    files = [arg.path.slice(1)];
  } else {
    gate = await reviewGate(ctx, arg, 'Drop From Integration');
    if (!gate) return;
    const worktree = (await e.listWorktrees(gate.runId)).find((w) => w.delegationId === gate!.delegationId);
    if (!worktree) throw new UserFacingError(`${gate.delegationId} ran in the shared working tree: nothing to drop.`);
    const picked = await vscode.window.showQuickPick(
      worktree.changedFiles.map((f) => ({ label: f })),
      { title: `Drop which files from ${gate.taskId}'s integration? The others are kept.`, canPickMany: true },
    );
    if (!picked || picked.length === 0) return;
    files = picked.map((p) => p.label);
  }
  const outcome = await e.dropFromIntegration({ gateId: gate.id, files, by: 'VS Code' });
  const said = `Dropped ${outcome.dropped.join(', ')} from ${gate.taskId}'s integration (${outcome.delegationId}): approving ${gate.id} integrates ${outcome.kept.join(', ')}.`;
  ctx.log.info(`[${gate.runId}] ${said}`);
  void vscode.window.showInformationMessage(said);
  await ctx.session.runState?.refreshNow();
  await ctx.attemptViews.showChanges(gate.runId, outcome.delegationId);
});

/**
 * The open review gate a command is about: the Gates view row's; else the one of the attempt Show Changes showed last;
 * else a pick of the open review gates. A gate decided meanwhile, or none, is said, not guessed.
 */
async function reviewGate(ctx: CommandContext, node: CommandNode, what: string): Promise<Gate | undefined> {
  const e = await ctx.session.engine();
  if (node?.kind === 'gate') {
    const gate = await gateToDecide(ctx, node.gateId, node.runId);
    if (gate.kind !== 'review' || !gate.taskId)
      throw new UserFacingError(`${what} applies to a review gate; ${gate.id} is ${gate.kind}.`);
    if (gate.status !== 'open') throw new UserFacingError(describeDecision(gate, e.now()));
    return gate;
  }
  const open = (await e.listGates({ status: 'open' })).filter((g) => g.kind === 'review' && g.taskId);
  const shown = ctx.attemptViews.lastShown;
  const ofShown = shown && open.find((g) => g.runId === shown.runId && g.delegationId === shown.delegationId);
  if (ofShown) return ofShown;
  if (open.length === 0) {
    void vscode.window.showInformationMessage('No task waits for a review.');
    return undefined;
  }
  if (open.length === 1) return open[0];
  const pick = await vscode.window.showQuickPick(
    open.map((g) => ({ label: g.taskId!, description: `${g.id} · ${g.delegationId ?? ''} · ${g.runId}`, gate: g })),
    { title: `Baton: ${what} — which task?` },
  );
  return pick?.gate;
}

/** Sends the task's draft comments as its review; false when it has none (nothing sent). */
async function sendDrafts(ctx: CommandContext, task: { runId: string; taskId: string }): Promise<boolean> {
  const { threads, review } = await ctx.reviews.draftsOf(task.runId, task.taskId);
  if (review.comments.length === 0) return false;
  const e = await ctx.session.engine();
  const outcome = await e.sendReview({ ...task, ...review, by: 'VS Code' });
  ctx.reviews.markSent(threads, outcome);
  await told(ctx, task.runId, reviewSent(task.taskId, review.comments.length, outcome), outcome);
  return true;
}

/** What a sent review or message did, said and logged; the run driven from this window when nothing drives it. */
async function told(ctx: CommandContext, runId: string, said: string, outcome: FollowUpOutcome): Promise<void> {
  ctx.log.info(`[${runId}] ${said}`);
  const report = outcome.interrupted?.report;
  if (report && !report.confirmed)
    void vscode.window.showWarningMessage(`${said} Still alive: ${report.survivors.join(', ')}.`);
  else void vscode.window.showInformationMessage(said);
  if (!outcome.driven && outcome.action !== 'queue') await ctx.session.drive(runId);
  await ctx.session.runState?.refreshNow();
}

/** The task a review is for: the thread's, the row's, or one picked from the tasks with drafts. */
async function reviewTask(
  ctx: CommandContext,
  arg: CommandNode | CommentReply | vscode.CommentThread,
): Promise<{ runId: string; taskId: string } | undefined> {
  const thread = isReply(arg) ? arg.thread : isThread(arg) ? arg : undefined;
  if (thread) {
    const task = ctx.reviews.taskOf(thread);
    if (!task) throw new UserFacingError('This comment is not on a diff that Show Changes opened.');
    return task;
  }
  const node = arg as CommandNode;
  if (node?.kind === 'task') return { runId: node.runId, taskId: node.taskId };
  if (node?.kind === 'delegation') {
    const taskId =
      ctx.session.runState?.overview(node.runId)?.delegations.find((d) => d.id === node.delegationId)?.taskId ??
      (await (await ctx.session.engine()).overview(node.runId)).delegations.find((d) => d.id === node.delegationId)
        ?.taskId;
    if (!taskId) throw new UserFacingError(`The attempt ${node.delegationId} is not known; refresh the view.`);
    return { runId: node.runId, taskId };
  }
  const tasks = ctx.reviews.tasksWithDrafts();
  if (tasks.length === 0) {
    void vscode.window.showInformationMessage(
      'No review comment waits to be sent: open Show Changes on a task and comment on a changed line.',
    );
    return undefined;
  }
  if (tasks.length === 1) return tasks[0];
  const pick = await vscode.window.showQuickPick(
    tasks.map((t) => ({
      label: t.taskId,
      description: `${t.drafts === 1 ? '1 draft comment' : `${t.drafts} draft comments`} · ${t.runId}`,
      ...t,
    })),
    { title: "Baton: send the review to which task's agent?" },
  );
  return pick ? { runId: pick.runId, taskId: pick.taskId } : undefined;
}
