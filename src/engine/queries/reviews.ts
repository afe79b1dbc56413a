import type { EventMap } from '../domain/events';
import type { ReviewComment } from '../domain/review';
import type { StoreReader } from '../store/port';
import { listFollowUps } from './followUps';

/** A review sent to a task's agent, with what became of it (docs/extension.md, "Review comments"). */
export interface ReviewRecord {
  /** The follow-up message it was sent as. */
  followUpId: string;
  by: string;
  sentAt: number;
  /** What the message did to the task when it was sent. */
  action: EventMap['review:sent']['action'];
  /** The attempt whose changes were commented on. */
  reviewed?: string;
  comments: ReviewComment[];
  /** The attempt that carried it to the agent; absent until one is claimed. */
  deliveredTo?: string;
}

/** A task's reviews, oldest first: the `review:sent` events of its run for it, with the attempt that carried each. */
export async function listReviews(r: Pick<StoreReader, 'all'>, runId: string, taskId: string): Promise<ReviewRecord[]> {
  const rows = await r.all<{ at: number; data_json: string }>(
    `SELECT at, data_json FROM events WHERE run_id = ? AND type = 'review:sent' ORDER BY seq`,
    [runId],
  );
  const sent = rows
    .map((row) => ({ at: Number(row.at), data: JSON.parse(row.data_json) as EventMap['review:sent'] }))
    .filter((e) => e.data.taskId === taskId);
  if (sent.length === 0) return [];
  const carried = new Map((await listFollowUps(r, runId, taskId)).map((f) => [f.id, f.delegationId]));
  return sent.map(({ at, data }) => {
    const deliveredTo = carried.get(data.followUpId);
    return {
      followUpId: data.followUpId,
      by: data.by,
      sentAt: at,
      action: data.action,
      ...(data.reviewed ? { reviewed: data.reviewed } : {}),
      comments: data.comments,
      ...(deliveredTo ? { deliveredTo } : {}),
    };
  });
}
