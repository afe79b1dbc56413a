import type { HandIn } from '../domain/handIn';
import type { StoreReader } from '../store/port';
import { HELD_BY_ANOTHER_COORDINATOR } from './admission';

/** A hand-in with what settling its attempt needs to know of it. */
export interface PendingHandIn extends HandIn {
  taskId: string;
  worker: string | null;
  agent: string;
  cwd: string | null;
}

interface HandInRow {
  runtime_id: string;
  run_id: string;
  delegation_id: string;
  host: string;
  exit_code: number | null;
  signal: string | null;
  ended_at: number;
  artifact: string | null;
  log_tail: string | null;
  task_id: string;
  worker: string | null;
  agent: string;
  cwd: string | null;
}

/**
 * The hand-ins of a run's attempts that are still RUNNING under the runtime that handed in, whose worker ran on another
 * host than `host` and whose coordinator is gone (no live coordinator of the run but the asking one holds it): a
 * coordinator here settles those from the hand-in (a worker of its own host it settles from what it saw, or from the
 * exit record on its disk; a live coordinator settles its own).
 */
export async function pendingHandIns(
  r: Pick<StoreReader, 'all'>,
  runId: string,
  host: string,
  /** The coordinator asking: an attempt another live coordinator of the run drives is that one's to settle. */
  holder = '',
): Promise<PendingHandIn[]> {
  const rows = await r.all<HandInRow>(
    `SELECT h.runtime_id, h.run_id, h.delegation_id, h.host, h.exit_code, h.signal, h.ended_at, h.artifact, h.log_tail,
       d.task_id, rt.worker, d.agent, rt.cwd
     FROM hand_ins h
     JOIN delegations d ON d.run_id = h.run_id AND d.id = h.delegation_id AND d.runtime_id = h.runtime_id
     JOIN runtimes rt ON rt.run_id = h.run_id AND rt.id = h.runtime_id
     WHERE h.run_id = ? AND d.status = 'RUNNING' AND rt.ended_at IS NULL AND rt.host IS NOT NULL AND rt.host <> ?
       AND NOT ${HELD_BY_ANOTHER_COORDINATOR}
     ORDER BY h.handed_at`,
    [runId, host, holder, holder],
  );
  return rows.map((row) => ({
    runId: row.run_id,
    delegationId: row.delegation_id,
    runtimeId: row.runtime_id,
    host: row.host,
    exitCode: row.exit_code,
    signal: row.signal,
    endedAt: row.ended_at,
    ...(row.artifact !== null ? { artifact: row.artifact } : {}),
    ...(row.log_tail !== null ? { logTail: row.log_tail } : {}),
    taskId: row.task_id,
    worker: row.worker,
    agent: row.agent,
    cwd: row.cwd,
  }));
}
