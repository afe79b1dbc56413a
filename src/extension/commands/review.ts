import * as vscode from 'vscode';
import { reviewSent } from '../model/reviewDrafts';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';

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
  const { threads, review } = await ctx.reviews.draftsOf(task.runId, task.taskId);
  if (review.comments.length === 0) {
    void vscode.window.showInformationMessage(
      `${task.taskId} has no draft review comment: open Show Changes on it and comment on a changed line first.`,
    );
    return;
  }
  const e = await ctx.session.engine();
  const outcome = await e.sendReview({ ...task, ...review, by: 'VS Code' });
  ctx.reviews.markSent(threads, outcome);
  const said = reviewSent(task.taskId, review.comments.length, outcome);
  ctx.log.info(`[${task.runId}] ${said}`);
  const report = outcome.interrupted?.report;
  if (report && !report.confirmed)
    void vscode.window.showWarningMessage(`${said} Still alive: ${report.survivors.join(', ')}.`);
  else void vscode.window.showInformationMessage(said);
  if (!outcome.driven && outcome.action !== 'queue') await ctx.session.drive(task.runId);
  await ctx.session.runState?.refreshNow();
});

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
