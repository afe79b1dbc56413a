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

/** A task's (latest attempt's) duration: to its end, or to `now` while it runs; '' before it started. */
export function taskDuration(attempt: { startedAt?: number; finishedAt?: number }, now: number): string {
  if (attempt.startedAt === undefined) return '';
  return formatDuration((attempt.finishedAt ?? now) - attempt.startedAt);
}
