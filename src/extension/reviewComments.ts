import * as vscode from 'vscode';
import type { FollowUpOutcome } from '../engine/index';
import { DisposableStore } from './lifecycle';
import { UserFacingError } from './session';
import { reviewOf, sentLabel, type DraftThread, type ReviewTarget } from './model/reviewDrafts';

/** The comment controller's id: package.json's comment menus name it (`commentController == baton.review`). */
export const REVIEW_CONTROLLER_ID = 'baton.review';
/** A thread's and a comment's contextValue while a draft, and once sent (read-only). */
export const DRAFT = 'baton.review.draft';
export const SENT = 'baton.review.sent';

/** A draft comment: the person's text, shown as theirs, until the review is sent. */
class ReviewNote implements vscode.Comment {
  mode = vscode.CommentMode.Preview;
  author: vscode.CommentAuthorInformation = { name: 'You' };
  label: string | undefined = 'Draft';
  contextValue: string | undefined = DRAFT;
  body: string | vscode.MarkdownString;

  constructor(
    readonly text: string,
    readonly thread: vscode.CommentThread,
  ) {
    this.body = text;
  }
}

/**
 * Review comments on Show Changes' diffs (docs/extension.md, "Review comments"): one comment controller whose
 * commenting ranges are the right-hand (changed) documents of the diffs Show Changes opened — nothing else is
 * commentable — and the draft threads a person adds there, per task, until *Send Review to Agent* sends them all as one
 * follow-up message. A sent thread stays where it was, read-only, resolved and collapsed, saying which message it went
 * in; the store keeps the review (`review:sent`).
 */
export class ReviewComments extends DisposableStore {
  readonly controller: vscode.CommentController;
  /** The right-hand documents of the diffs Show Changes opened, by URI. */
  private readonly targets = new Map<string, ReviewTarget>();
  /** Every thread of the controller with the attempt it is on; drafts are those whose contextValue is DRAFT. */
  private readonly threads = new Map<vscode.CommentThread, ReviewTarget>();

  constructor() {
    super();
    this.controller = this._register(vscode.comments.createCommentController(REVIEW_CONTROLLER_ID, 'Baton review'));
    this.controller.options = {
      prompt: 'Comment for the agent…',
      placeHolder: 'What should the agent change here? Sent with the file, the line and the line itself.',
    };
    this.controller.commentingRangeProvider = {
      provideCommentingRanges: (document) =>
        this.targets.has(document.uri.toString())
          ? [new vscode.Range(0, 0, Math.max(0, document.lineCount - 1), 0)]
          : [],
    };
  }

  /** Show Changes opened these right-hand documents: they take comments from now on. */
  track(documents: ReadonlyArray<{ uri: vscode.Uri; target: ReviewTarget }>): void {
    for (const { uri, target } of documents) this.targets.set(uri.toString(), target);
  }

  /** The attempt and file a document of Show Changes is, if it is one. */
  targetOf(uri: vscode.Uri): ReviewTarget | undefined {
    return this.targets.get(uri.toString());
  }

  /**
   * Adds a draft comment to a thread (VS Code's new-thread template or one with drafts); refused on a document that is
   * not the changed side of a diff Show Changes opened, and on a thread already sent.
   */
  addDraft(thread: vscode.CommentThread, text: string): void {
    const target = this.threads.get(thread) ?? this.targets.get(thread.uri.toString());
    if (!target)
      throw new UserFacingError('Review comments go on the changed side of a diff that Show Changes opened.');
    if (thread.contextValue === SENT)
      throw new UserFacingError('This comment was sent to the agent already; add a new one.');
    this.threads.set(thread, target);
    thread.comments = [...thread.comments, new ReviewNote(text, thread)];
    thread.contextValue = DRAFT;
    thread.canReply = true;
    thread.label = `Draft for ${target.taskId}'s agent · ${target.path}`;
    this.changed();
  }

  /** Removes a draft comment; a thread left without one goes. */
  deleteDraft(comment: vscode.Comment): void {
    if (!(comment instanceof ReviewNote) || comment.contextValue !== DRAFT) return;
    const thread = comment.thread;
    thread.comments = thread.comments.filter((c) => c !== comment);
    if (thread.comments.length === 0) {
      this.threads.delete(thread);
      thread.dispose();
    }
    this.changed();
  }

  /** The task a thread's drafts are for. */
  taskOf(thread: vscode.CommentThread): { runId: string; taskId: string } | undefined {
    const target = this.threads.get(thread) ?? this.targets.get(thread.uri.toString());
    return target ? { runId: target.runId, taskId: target.taskId } : undefined;
  }

  /** The tasks with draft comments. */
  tasksWithDrafts(): Array<{ runId: string; taskId: string; drafts: number }> {
    const byTask = new Map<string, { runId: string; taskId: string; drafts: number }>();
    for (const thread of this.draftThreads()) {
      const target = this.threads.get(thread)!;
      const key = `${target.runId}/${target.taskId}`;
      const entry = byTask.get(key) ?? { runId: target.runId, taskId: target.taskId, drafts: 0 };
      entry.drafts += thread.comments.length;
      byTask.set(key, entry);
    }
    return [...byTask.values()];
  }

  /** A task's draft threads as the review the engine sends (the lines quoted as the documents show them). */
  async draftsOf(
    runId: string,
    taskId: string,
  ): Promise<{ threads: vscode.CommentThread[]; review: ReturnType<typeof reviewOf> }> {
    const threads = this.draftThreads().filter((t) => {
      const target = this.threads.get(t)!;
      return target.runId === runId && target.taskId === taskId;
    });
    const drafts: DraftThread[] = [];
    for (const thread of threads) {
      const document = await vscode.workspace.openTextDocument(thread.uri);
      const range = thread.range ?? new vscode.Range(0, 0, 0, 0);
      const last = Math.min(range.end.line, document.lineCount - 1);
      const lines: string[] = [];
      for (let line = range.start.line; line <= last; line++) lines.push(document.lineAt(line).text);
      drafts.push({
        target: this.threads.get(thread)!,
        startLine: range.start.line,
        endLine: Math.max(range.start.line, last),
        lines,
        texts: thread.comments.map((c) => (c instanceof ReviewNote ? c.text : String(c.body))),
      });
    }
    return { threads, review: reviewOf(drafts) };
  }

  /**
   * The review went to the agent: its threads stay where they are, read-only and resolved, collapsed, each comment
   * labelled with the message it went in.
   */
  markSent(threads: readonly vscode.CommentThread[], outcome: FollowUpOutcome): void {
    for (const thread of threads) {
      for (const comment of thread.comments) {
        comment.label = sentLabel(outcome.followUp.id);
        comment.contextValue = SENT;
      }
      thread.comments = [...thread.comments];
      thread.contextValue = SENT;
      thread.canReply = false;
      thread.state = vscode.CommentThreadState.Resolved;
      thread.collapsibleState = vscode.CommentThreadCollapsibleState.Collapsed;
      thread.label = `${sentLabel(outcome.followUp.id)} · ${this.threads.get(thread)?.path ?? ''}`;
    }
    this.changed();
  }

  override dispose(): void {
    for (const thread of this.threads.keys()) thread.dispose();
    this.threads.clear();
    super.dispose();
  }

  private draftThreads(): vscode.CommentThread[] {
    return [...this.threads.keys()].filter((t) => t.contextValue === DRAFT && t.comments.length > 0);
  }

  /** The Runs view offers Send Review to Agent while some task has drafts. */
  private changed(): void {
    void vscode.commands.executeCommand('setContext', 'baton.hasReviewDrafts', this.draftThreads().length > 0);
  }
}
