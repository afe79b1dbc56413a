import type { StoreTx } from '../../store/port';

export type CounterName = 'run' | 'gate' | 'ingestion' | 'lease_epoch' | 'coordinator_epoch' | 'stop' | 'follow_up';

/** The next value of a store-wide counter (ids of runs, gates, ingestions, stops, follow-ups; lease epochs). */
export async function nextCounter(tx: StoreTx, name: CounterName): Promise<number> {
  const [row] = await tx.runReturning<{ value: number }>(
    `UPDATE counters SET value = value + 1 WHERE name = ? RETURNING value`,
    [name],
  );
  return row!.value;
}
