import type { EventMap, LoggedEventType } from '../../domain/events';
import type { StoreTx } from '../../store/port';

/**
 * Appends to a run's event log inside the caller's transaction, with the payload its type
 * declares in EventMap. Sequence numbers are per run, strictly increasing, and computed in
 * SQL so that replaying the journal assigns the same ones.
 */
export async function appendEvent<K extends LoggedEventType>(
  tx: StoreTx,
  runId: string,
  type: K,
  at: number,
  data: EventMap[K],
): Promise<void> {
  await tx.run(
    `INSERT INTO events (run_id, seq, type, at, data_json)
     VALUES (?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM events WHERE run_id = ?), ?, ?, ?)`,
    [runId, runId, type, at, JSON.stringify(data)],
  );
}
