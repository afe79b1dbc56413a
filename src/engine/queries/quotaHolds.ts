import type { EventMap } from '../domain/events';
import { MAX_PARK_MS, PARKED_REASON_PREFIX, type QuotaHold } from '../domain/parking';
import type { StoreReader } from '../store/port';

/**
 * The run's workers held by a usage limit at `now` (domain/parking.ts): from the `attempt:parked` events whose hold
 * has not run out — the event log is where a park is recorded, so a hold needs no table of its own. The log is read
 * only when an attempt of the run was parked within the longest hold (a look through the delegations' status index):
 * a pass of a run that never parked reads no events.
 */
export async function readQuotaHolds(
  r: Pick<StoreReader, 'get' | 'all'>,
  runId: string,
  now: number,
): Promise<QuotaHold[]> {
  const parked = await r.get(
    `SELECT 1 AS x FROM delegations WHERE run_id = ? AND status = 'CANCELLED'
       AND substr(reason, 1, ${PARKED_REASON_PREFIX.length}) = ? AND finished_at > ? LIMIT 1`,
    [runId, PARKED_REASON_PREFIX, now - MAX_PARK_MS],
  );
  if (!parked) return [];
  const rows = await r.all<{ data_json: string }>(
    `SELECT data_json FROM events WHERE run_id = ? AND type = 'attempt:parked' AND at > ? ORDER BY seq`,
    [runId, now - MAX_PARK_MS],
  );
  const holds: QuotaHold[] = [];
  for (const row of rows) {
    const event = JSON.parse(row.data_json) as EventMap['attempt:parked'];
    if (event.cause === 'usage-limit' && event.until > now) holds.push({ worker: event.worker, until: event.until });
  }
  return holds;
}
