import type { FollowUpAction } from '../../domain/followUp';
import type { ReviewComment } from '../../domain/review';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

/**
 * Records a person's review (docs/extension.md, "Review comments") in the run's event log, every comment in full
 * (`review:sent`), in the transaction that records the follow-up message it was sent as (`followUpId`): the comments
 * and what became of them — the attempt that carried the message and its result — stay in the store together.
 */
export async function recordReview(
  tx: StoreTx,
  input: {
    runId: string;
    taskId: string;
    followUpId: string;
    by: string;
    action: Exclude<FollowUpAction['kind'], 'refuse'>;
    reviewed?: string;
    comments: readonly ReviewComment[];
  },
  now: number,
): Promise<void> {
  await appendEvent(tx, input.runId, 'review:sent', now, {
    followUpId: input.followUpId,
    taskId: input.taskId,
    by: input.by,
    action: input.action,
    ...(input.reviewed ? { reviewed: input.reviewed } : {}),
    comments: input.comments.map((c) => ({
      path: c.path,
      line: c.line,
      ...(c.endLine !== undefined ? { endLine: c.endLine } : {}),
      quote: c.quote,
      text: c.text,
    })),
  });
}
