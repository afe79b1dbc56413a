import { BatonError } from '../domain/errors';
import type { RunStatus, StopMode } from '../domain/types';
import { MANUAL_HOLDER } from '../domain/workerLaunch';
import type { StoreReader } from '../store/port';
import { HELD_BY_ANOTHER_COORDINATOR } from './admission';

/** A worktree of an attempt discarded at a gate, still on disk. */
export interface DiscardedWorktree {
  delegationId: string;
  path: string;
  branch: string;
}

/**
 * What one coordinator pass reads, in one read: a handful of rows however large the run is
 * (only as many ready tasks as could start now, plus the next one waiting on a backoff).
 */
export async function readDispatchSnapshot(
  r: StoreReader,
  /** `holder`: the coordinator asking (the attempts of the run's other coordinators are told apart). */
  input: { runId: string; now: number; readyLimit: number; tasks?: readonly string[]; holder?: string },
): Promise<{
  now: number;
  run: { status: RunStatus; stopMode: StopMode | null };
  ready: Array<{ id: string; notBefore: number | null }>;
  verifying: string[];
  openGates: number;
  leased: Array<{ delegationId: string; taskId: string; leaseExpiresAt: number; handOff?: boolean; driven?: boolean }>;
  discarded: DiscardedWorktree[];
}> {
  const holder = input.holder ?? '';
  const { runId, now } = input;
  // `--task`: only these (bound as parameters after the run id and time).
  const only = input.tasks?.length ? ` AND id IN (${input.tasks.map(() => '?').join(', ')})` : '';
  const tasks = input.tasks ?? [];
  const run = await r.get<{ status: RunStatus; stop_mode: StopMode | null }>(
    `SELECT status, stop_mode FROM runs WHERE id = ?`,
    [runId],
  );
  if (!run) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  const ready = await r.all<{ id: string; not_before: number | null }>(
    `SELECT id, not_before FROM tasks WHERE run_id = ? AND status = 'ready' AND (not_before IS NULL OR not_before <= ?)${only}
     ORDER BY ordinal LIMIT ?`,
    [runId, now, ...tasks, input.readyLimit],
  );
  const backingOff = await r.all<{ id: string; not_before: number | null }>(
    `SELECT id, not_before FROM tasks WHERE run_id = ? AND status = 'ready' AND not_before > ?${only} ORDER BY not_before LIMIT 1`,
    [runId, now, ...tasks],
  );
  // A task another coordinator of the run verifies (its attempt's) is that one's to finish.
  const verifying = await r.all<{ id: string }>(
    `SELECT t.id FROM tasks t WHERE t.run_id = ? AND t.status = 'verifying' AND NOT EXISTS (
       SELECT 1 FROM delegations d JOIN runtimes rt ON rt.run_id = d.run_id AND rt.id = d.runtime_id
       WHERE d.run_id = t.run_id AND d.task_id = t.id AND d.status IN ('RUNNING', 'BLOCKED') AND ${HELD_BY_ANOTHER_COORDINATOR})`,
    [runId, holder, holder],
  );
  // Almost always none.
  const discarded = await r.all<{ delegation_id: string; path: string; branch: string }>(
    `SELECT delegation_id, path, branch FROM worktrees WHERE run_id = ? AND status = 'discarded' AND removed_at IS NULL`,
    [runId],
  );
  const openGates = await openGateCount(r, runId);
  const leased = await r.all<{
    id: string;
    task_id: string;
    lease_expires_at: number;
    hand_off: number;
    driven: number;
  }>(
    `SELECT d.id, d.task_id, rt.lease_expires_at, rt.holder = ? AS hand_off, ${HELD_BY_ANOTHER_COORDINATOR} AS driven
     FROM delegations d JOIN runtimes rt ON rt.run_id = d.run_id AND rt.id = d.runtime_id
     WHERE d.run_id = ? AND d.status = 'RUNNING' AND rt.ended_at IS NULL`,
    [MANUAL_HOLDER, holder, holder, runId],
  );
  return {
    now,
    run: { status: run.status, stopMode: run.stop_mode },
    ready: [...ready, ...backingOff].map((t) => ({ id: t.id, notBefore: t.not_before })),
    verifying: verifying.map((t) => t.id),
    openGates,
    leased: leased.map((d) => ({
      delegationId: d.id,
      taskId: d.task_id,
      leaseExpiresAt: d.lease_expires_at,
      ...(d.hand_off ? { handOff: true } : {}),
      ...(d.driven ? { driven: true } : {}),
    })),
    discarded: discarded.map((w) => ({ delegationId: w.delegation_id, path: w.path, branch: w.branch })),
  };
}

/** How many gates of the run wait for a person. */
export async function openGateCount(r: Pick<StoreReader, 'get'>, runId: string): Promise<number> {
  const row = await r.get<{ n: number }>(`SELECT COUNT(*) AS n FROM gates WHERE run_id = ? AND status = 'open'`, [
    runId,
  ]);
  return Number(row?.n ?? 0);
}
