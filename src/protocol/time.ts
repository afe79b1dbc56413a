/**
 * How Baton writes a span of time, shared by the extension's views and the dashboard webview:
 * both surfaces format the same facts (started/finished timestamps, the host's shared "now")
 * with these functions, so the Runs view and the dashboard never disagree on a duration.
 * Pure: no vscode, no DOM.
 */

/** 3s, 4m 05s, 2h 03m. Whole seconds elapsed (floored, as a stopwatch shows them). */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/**
 * A task's run time as the host shows it (the engine's `taskRunTime`: the sum of its attempts'
 * run time, never a wait in the queue or at a gate), taken at an instant: `ranMs` once no attempt
 * runs, else `runningSince` — that instant less the time so far — from which it counts up with
 * the shared clock. Neither before an attempt started.
 */
export interface ShownRunTime {
  ranMs?: number;
  runningSince?: number;
}

/** The host's side: a task's run time at `now` as the views and the dashboard's feed carry it. */
export function shownRunTime(runTime: { ms: number; running: boolean } | undefined, now: number): ShownRunTime {
  if (!runTime) return {};
  return runTime.running ? { runningSince: now - runTime.ms } : { ranMs: runTime.ms };
}

/** A task's run time as of `now`, written; '' before an attempt started. */
export function runTimeText(shown: ShownRunTime, now: number): string {
  if (shown.runningSince !== undefined) return formatDuration(now - shown.runningSince);
  return shown.ranMs !== undefined ? formatDuration(shown.ranMs) : '';
}

/** A run's elapsed time as of `now`: from its start to its end once it ended, else on with the clock. */
export function runElapsed(run: { createdAt: number; endedAt?: number }, now: number): string {
  return formatDuration((run.endedAt ?? now) - run.createdAt);
}
