import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import type { RunStatus, TaskStatus } from '../../domain/types';
import type { StoreTx } from '../../store/port';

/**
 * The run's status follows its tasks (see docs/architecture.md, "Tasks and the run"), except
 * `superseded` (a replan) and `cancelled` (a person's cancel): those are ends that nothing
 * the tasks do afterwards can undo.
 */
export async function refreshRunStatus(tx: StoreTx, runId: string, now: number): Promise<RunStatus> {
  // The common case, a run going on with no stop, is settled by the probe read with the run (one round trip).
  const run = await tx.get<{ status: string; stop_mode: string | null; active: number }>(
    `SELECT status, stop_mode,
       EXISTS (SELECT 1 FROM tasks WHERE run_id = runs.id AND status IN ('running', 'verifying', 'ready')) AS active
     FROM runs WHERE id = ?`,
    [runId],
  );
  if (!run) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  const current = run.status as RunStatus;
  if (current === 'superseded' || current === 'cancelled') return current;
  if (!run.stop_mode && current === 'running' && run.active) return current;
  // One statement, each probe an index seek on (run_id, status): flat in the size of the run.
  const probe = (statuses: TaskStatus[]): string =>
    `EXISTS (SELECT 1 FROM tasks WHERE run_id = ?1 AND status IN (${statuses.map((s) => `'${s}'`).join(', ')}))`;
  const has = (await tx.get<{
    in_flight: number;
    active: number;
    gated: number;
    unfinished: number;
    open: number;
    failed: number;
  }>(
    `SELECT ${probe(['running', 'verifying'])} AS in_flight, ${probe(['running', 'verifying', 'ready'])} AS active, ${probe(['gated'])} AS gated,
       ${probe(['pending', 'ready', 'gated', 'running', 'verifying'])} AS unfinished,
       ${probe(['pending', 'failed', 'blocked', 'cancelled'])} AS open, ${probe(['failed'])} AS failed`,
    [runId],
  ))!;
  let next: RunStatus;
  // A stopped run stays stopping while work is in flight, then paused until it is resumed.
  if (run.stop_mode && has.unfinished) next = has.in_flight ? 'stopping' : 'paused';
  else if (has.active) next = 'running';
  else if (has.gated) next = 'paused';
  else if (!has.open) next = 'completed';
  else if (has.failed) next = 'failed';
  else next = 'blocked';
  if (next !== current) {
    await tx.run(`UPDATE runs SET status = ?, updated_at = ? WHERE id = ?`, [next, now, runId]);
    await appendEvent(tx, runId, 'run:status', now, { from: current, to: next });
  }
  return next;
}
