import { BatonError } from '../domain/errors';
import type { RunSettings } from '../domain/runSettings';
import type { RunStatus } from '../domain/types';
import type { StoreReader } from '../store/port';

/** The settings frozen into a run when it started. */
export async function readRunSettings(r: Pick<StoreReader, 'get'>, runId: string): Promise<RunSettings> {
  const row = await r.get<{ config_json: string }>(`SELECT config_json FROM runs WHERE id = ?`, [runId]);
  if (!row) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  return JSON.parse(row.config_json) as RunSettings;
}

export async function readRunStatus(r: Pick<StoreReader, 'get'>, runId: string): Promise<RunStatus> {
  const row = await r.get<{ status: RunStatus }>(`SELECT status FROM runs WHERE id = ?`, [runId]);
  if (!row) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  return row.status;
}
