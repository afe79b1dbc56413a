import type { FollowUp } from '../domain/followUp';
import type { StoreReader } from '../store/port';

type Reader = Pick<StoreReader, 'all'>;

interface FollowUpRow {
  id: string;
  run_id: string;
  task_id: string;
  message: string;
  sent_by: string;
  sent_at: number;
  interrupted_delegation_id: string | null;
  delegation_id: string | null;
}

const COLUMNS =
  'f.id, f.run_id, f.task_id, f.message, f.sent_by, f.sent_at, f.interrupted_delegation_id, f.delegation_id';
// Ids are M-<counter> without padding: at the same instant a longer id is a later one.
const ORDER = 'ORDER BY f.sent_at, LENGTH(f.id), f.id';

function toFollowUp(row: FollowUpRow): FollowUp {
  return {
    id: row.id,
    runId: row.run_id,
    taskId: row.task_id,
    message: row.message,
    by: row.sent_by,
    sentAt: Number(row.sent_at),
    ...(row.interrupted_delegation_id ? { interruptedDelegationId: row.interrupted_delegation_id } : {}),
    ...(row.delegation_id ? { delegationId: row.delegation_id } : {}),
  };
}

/** A run's follow-up messages (of one task), oldest first: what `status` and the views show. */
export async function listFollowUps(r: Reader, runId: string, taskId?: string): Promise<FollowUp[]> {
  const rows = await r.all<FollowUpRow>(
    `SELECT ${COLUMNS} FROM follow_ups f WHERE f.run_id = ?${taskId ? ' AND f.task_id = ?' : ''} ${ORDER}`,
    taskId ? [runId, taskId] : [runId],
  );
  return rows.map(toFollowUp);
}

/**
 * The messages a new attempt of a task carries: those no attempt carried yet, and those an attempt after the task's
 * last passed one carried — a retry of a follow-up that failed still has the person's words to act on. Oldest first.
 */
export async function messagesSinceLastPass(r: Reader, runId: string, taskId: string): Promise<FollowUp[]> {
  const rows = await r.all<FollowUpRow>(
    `SELECT ${COLUMNS} FROM follow_ups f LEFT JOIN delegations d ON d.run_id = f.run_id AND d.id = f.delegation_id
     WHERE f.run_id = ? AND f.task_id = ? AND (f.delegation_id IS NULL OR d.attempt > COALESCE(
       (SELECT MAX(p.attempt) FROM delegations p WHERE p.run_id = ? AND p.task_id = ? AND p.status = 'COMPLETED'), 0))
     ${ORDER}`,
    [runId, taskId, runId, taskId],
  );
  return rows.map(toFollowUp);
}
