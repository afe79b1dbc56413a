import type { ProcessIdentity } from '../domain/process';
import type { StopMode } from '../domain/types';
import type { StopReportEntry, StopRequest } from '../domain/stops';
import { MANUAL_HOLDER } from '../domain/workerLaunch';
import type { StoreReader } from '../store/port';

export interface StopRow {
  id: string;
  run_id: string;
  delegation_id: string | null;
  mode: string;
  status: string;
  requested_at: number;
  requested_by: string;
  applied_at: number | null;
  report_json: string;
}

export const STOP_COLUMNS =
  'id, run_id, delegation_id, mode, status, requested_at, requested_by, applied_at, report_json';

export function toStop(r: StopRow): StopRequest {
  return {
    id: r.id,
    runId: r.run_id,
    ...(r.delegation_id ? { delegationId: r.delegation_id } : {}),
    mode: r.mode as StopMode,
    status: r.status as StopRequest['status'],
    requestedAt: r.requested_at,
    requestedBy: r.requested_by,
    ...(r.applied_at !== null ? { appliedAt: r.applied_at } : {}),
    report: JSON.parse(r.report_json) as StopReportEntry[],
  };
}

export async function readStop(tx: Pick<StoreReader, 'get'>, stopId: string): Promise<StopRequest | undefined> {
  const row = await tx.get<StopRow>(`SELECT ${STOP_COLUMNS} FROM stop_requests WHERE id = ?`, [stopId]);
  return row ? toStop(row) : undefined;
}

export async function pendingStops(tx: Pick<StoreReader, 'all'>, runId: string): Promise<StopRequest[]> {
  return (
    await tx.all<StopRow>(
      `SELECT ${STOP_COLUMNS} FROM stop_requests WHERE run_id = ? AND status = 'requested' ORDER BY ordinal`,
      [runId],
    )
  ).map(toStop);
}

/** The live processes a runtime recorded, for whoever applies a stop without having spawned them. */
export async function recordedWorker(
  tx: Pick<StoreReader, 'get'>,
  runId: string,
  delegationId: string,
): Promise<{ runtimeId: string; identity?: ProcessIdentity } | undefined> {
  const row = await tx.get<{ id: string; pid: number | null; pid_start: string | null; host: string | null }>(
    `SELECT id, pid, pid_start, host FROM runtimes WHERE run_id = ? AND delegation_id = ? ORDER BY claimed_at DESC LIMIT 1`,
    [runId, delegationId],
  );
  if (!row) return undefined;
  return {
    runtimeId: row.id,
    ...(row.pid !== null && row.host ? { identity: { pid: row.pid, startTime: row.pid_start, host: row.host } } : {}),
  };
}

/**
 * The attempts a stop ends that nobody here drives: RUNNING or PENDING in the run (a stop of one attempt also a
 * BLOCKED one), each with whether a person holds it (a manual hand-off).
 */
export async function stoppableAttempts(
  r: Pick<StoreReader, 'all'>,
  runId: string,
  delegationId?: string,
): Promise<Array<{ delegationId: string; handOff: boolean }>> {
  const statuses = delegationId ? "'RUNNING', 'PENDING', 'BLOCKED'" : "'RUNNING', 'PENDING'";
  const rows = await r.all<{ id: string; hand_off: number | boolean | null }>(
    `SELECT d.id, rt.holder = ? AS hand_off FROM delegations d LEFT JOIN runtimes rt ON rt.run_id = d.run_id AND rt.id = d.runtime_id
     WHERE d.run_id = ? AND d.status IN (${statuses})${delegationId ? ' AND d.id = ?' : ''}`,
    delegationId ? [MANUAL_HOLDER, runId, delegationId] : [MANUAL_HOLDER, runId],
  );
  return rows.map((row) => ({ delegationId: row.id, handOff: Boolean(row.hand_off) }));
}

/**
 * Whether the run's stop in force is a cancel's (its first step: usecases/cancelRun.ts): a coordinator that pauses on
 * it leaves a run that is being cancelled, not one waiting for a person.
 */
export async function isBeingCancelled(r: Pick<StoreReader, 'get'>, runId: string): Promise<boolean> {
  const row = await r.get(
    `SELECT 1 AS x FROM stop_requests WHERE run_id = ? AND delegation_id IS NULL AND purpose = 'cancel' AND status IN ('requested', 'applied')`,
    [runId],
  );
  return row !== undefined;
}
