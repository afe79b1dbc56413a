import { retryDelayMs } from '../../domain/runSettings';
import { readRunSettings } from '../../queries/runs';
import type { StoreTx } from '../../store/port';
import { blockDependents } from './dependents';
import { setTaskNotBefore, setTaskStatus } from './setTaskStatus';

/**
 * An attempt ended without success (FAILED or STALE): the task goes back to ready while
 * attempts remain (the retry is a new delegation, after the run's backoff), else it fails
 * and blocks its dependents.
 */
export async function settleUnsuccessfulAttempt(
  tx: StoreTx,
  runId: string,
  taskId: string,
  why: string,
  now: number,
): Promise<void> {
  const settings = await readRunSettings(tx, runId);
  const used = await tx.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM delegations WHERE run_id = ? AND task_id = ? AND status IN ('FAILED', 'STALE')`,
    [runId, taskId],
  );
  if ((used?.n ?? 0) < settings.maxAttempts) {
    const next = (used?.n ?? 0) + 1;
    const delay = retryDelayMs(settings, next);
    const after = delay > 0 ? ` after ${Math.round(delay / 1000)} s` : '';
    await setTaskStatus(
      tx,
      runId,
      taskId,
      'ready',
      `${why}; attempt ${next} of ${settings.maxAttempts} may start${after}`,
      now,
    );
    await setTaskNotBefore(tx, runId, taskId, delay > 0 ? now + delay : null);
  } else {
    await setTaskStatus(tx, runId, taskId, 'failed', `${why}; no attempts left (${settings.maxAttempts})`, now);
    await blockDependents(tx, runId, taskId, now);
  }
}
