import { isAbsolute, relative, sep } from 'node:path';
import { quoteOf, type FollowUpOutcome, type ReviewComment } from '../../engine/index';

/**
 * Review comments in the editor (docs/extension.md, "Review comments"), as plain data: which attempt a diff document
 * belongs to, and what a person's draft comments become when sent. No vscode: unit-tested as plain data
 * (test/unit/extension/model/reviewDrafts.test.ts); reviewComments.ts maps VS Code's comment threads to these.
 */

/** The attempt a right-hand document of Show Changes belongs to, and the file it is. */
export interface ReviewTarget {
  runId: string;
  taskId: string;
  delegationId: string;
  /** Workspace-relative, forward slashes: what the agent is told. */
  path: string;
}

/** One draft thread: where it is, the lines it is on as the document shows them, and what the person wrote. */
export interface DraftThread {
  target: ReviewTarget;
  /** 0-based, as VS Code's ranges. */
  startLine: number;
  endLine: number;
  /** The document's lines startLine..endLine. */
  lines: readonly string[];
  /** The thread's draft comments, oldest first. */
  texts: readonly string[];
}

/**
 * A file of an attempt's diff, by its path in the repository, as a path relative to the workspace. A repository
 * path under the workspace (the workspace is the repository or holds it) is made relative to it; an attempt's own
 * worktree (under `.baton/worktrees/`) mirrors the repository, so its paths are the agent's too and stay as they are;
 * so does a file outside the workspace.
 */
export function workspaceRelative(workspace: string, repoRoot: string, repoPath: string): string {
  const inWorktree = !relative(`${workspace}${sep}.baton${sep}worktrees`, repoRoot).startsWith('..');
  if (inWorktree) return repoPath;
  const rel = relative(workspace, `${repoRoot}${sep}${repoPath}`);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : repoPath;
}

/**
 * A task's draft threads as the review the engine sends: one comment per thread (its drafts joined by blank lines),
 * 1-based lines, the lines quoted; `reviewed` is the attempt whose diff they are on when all are on one.
 */
export function reviewOf(threads: readonly DraftThread[]): { reviewed?: string; comments: ReviewComment[] } {
  const comments = threads
    .filter((t) => t.texts.some((x) => x.trim()))
    .map((t) => ({
      path: t.target.path,
      line: t.startLine + 1,
      ...(t.endLine > t.startLine ? { endLine: t.endLine + 1 } : {}),
      quote: quoteOf(t.lines),
      text: t.texts
        .map((x) => x.trim())
        .filter(Boolean)
        .join('\n\n'),
    }));
  const attempts = [...new Set(threads.map((t) => t.target.delegationId))];
  return { ...(attempts.length === 1 ? { reviewed: attempts[0] } : {}), comments };
}

/** One line for what sending the review did, as Send Message… says it. */
export function reviewSent(taskId: string, comments: number, outcome: FollowUpOutcome): string {
  const head = `Review sent to ${taskId} (${comments === 1 ? '1 comment' : `${comments} comments`}, message ${outcome.followUp.id})`;
  switch (outcome.action) {
    case 'interrupt':
      return `${head}: its running attempt ${outcome.interrupted!.delegationId} was ended; the next attempt continues its session with the review first.`;
    case 'reopen':
      return `${head}: the finished task runs again as a follow-up attempt.`;
    case 'queue':
      return `${head}: its next attempt carries it.`;
    case 'send-back':
      return `${head}: changes requested of ${outcome.sentBack!.delegationId} (review gate ${outcome.sentBack!.gateId}); the next attempt starts from its work with the review first.`;
  }
}

/** The label a sent comment carries: what it became. */
export function sentLabel(followUpId: string): string {
  return `Sent to the agent (${followUpId})`;
}
