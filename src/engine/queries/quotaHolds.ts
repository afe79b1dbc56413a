import type { EventMap } from '../domain/events';
import type { QuotaHold } from '../domain/parking';
import type { StoreReader } from '../store/port';

/**
 * The run's workers held by a usage limit at `now` (domain/parking.ts): from the `attempt:parked` events whose hold
 * has not run out — the event log is where a park is recorded, so a hold needs no table of its own.
 */
export async function readQuotaHolds(r: Pick<StoreReader, 'all'>, runId: string, now: number): Promise<QuotaHold[]> {
  const rows = await r.all<{ data_json: string }>(
    `SELECT data_json FROM events WHERE run_id = ? AND type = 'attempt:parked' ORDER BY seq`,
    [runId],
  );
  const holds: QuotaHold[] = [];
  for (const row of rows) {
    const parked = JSON.parse(row.data_json) as EventMap['attempt:parked'];
    if (parked.cause === 'usage-limit' && parked.until > now)
      holds.push({ worker: parked.worker, until: parked.until });
  }
  return holds;
}
