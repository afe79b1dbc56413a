import type { StoreReader } from '../store/port';

/** The run each of these runtimes belongs to (those the store knows). */
export function runsOfRuntimes(
  r: Pick<StoreReader, 'all'>,
  runtimeIds: readonly string[],
): Promise<Array<{ id: string; run_id: string }>> {
  return r.all<{ id: string; run_id: string }>(
    `SELECT id, run_id FROM runtimes WHERE id IN (${runtimeIds.map(() => '?').join(', ')})`,
    runtimeIds,
  );
}
