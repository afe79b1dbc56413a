import type { StopMode } from '../../domain/types';
import type { StoreTx } from '../../store/port';

/**
 * A run stop takes effect for dispatch at once (`runs.stop_mode`); null lifts it. Returns
 * whether anything changed.
 */
export async function setRunStopMode(tx: StoreTx, runId: string, mode: StopMode | null, now: number): Promise<boolean> {
  const changed = await tx.run(
    mode === null
      ? `UPDATE runs SET stop_mode = NULL, updated_at = ? WHERE id = ? AND stop_mode IS NOT NULL`
      : `UPDATE runs SET stop_mode = ?, updated_at = ? WHERE id = ?`,
    mode === null ? [now, runId] : [mode, now, runId],
  );
  return changed === 1;
}
