import type { ProcessIdentity } from '../domain/process';
import type { StoreReader } from '../store/port';

export interface OpenVerifyProcess {
  id: string;
  delegationId: string;
  command: string[];
  marker: string;
  identity: ProcessIdentity;
  /** A lease watchdog guards it (operations/verifyProcesses: recordVerifyProcess). */
  watched: boolean;
}

/** Verify processes recorded as started and not yet recorded as over: of one attempt, or of every attempt of a run. */
export async function openVerifyProcesses(
  r: Pick<StoreReader, 'all'>,
  runId: string,
  delegationId?: string,
): Promise<OpenVerifyProcess[]> {
  const rows = await r.all<{
    id: string;
    delegation_id: string;
    command_json: string;
    marker: string;
    pid: number;
    pid_start: string | null;
    host: string;
    watched: number | null;
  }>(
    `SELECT id, delegation_id, command_json, marker, pid, pid_start, host, watched FROM verify_processes
     WHERE run_id = ?${delegationId ? ' AND delegation_id = ?' : ''} AND ended_at IS NULL ORDER BY started_at`,
    delegationId ? [runId, delegationId] : [runId],
  );
  return rows.map((row) => ({
    id: row.id,
    delegationId: row.delegation_id,
    command: JSON.parse(row.command_json) as string[],
    marker: row.marker,
    identity: { pid: row.pid, startTime: row.pid_start, host: row.host },
    watched: Boolean(row.watched),
  }));
}
