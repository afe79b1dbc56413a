/**
 * How often an attempt's progress notes become heartbeats (`baton_progress`, docs/agents.md). An
 * agent may call the tool in a tight loop; each heartbeat is a store commit, so at most one per
 * window is sent, and a note that comes within the window waits for its end — replacing any note
 * already waiting there, since only the newest says what the agent does now. A pure decision;
 * the server keeps the state and the timer.
 */

/** At most one progress heartbeat a second per attempt, as the agent presets' stream follower does. */
export const PROGRESS_WINDOW_MS = 1000;

export interface ProgressWindowState {
  /** When the last note was sent as a heartbeat. */
  lastSentAt?: number;
  /** A note waiting for the end of the window, and when that is. */
  pending?: { note: string; sendAt: number };
}

export type ProgressAdmission =
  /** Send it now. */
  | { kind: 'send' }
  /** Keep it until `sendAt`; `replaced`: it takes the place of a note that was waiting. */
  | { kind: 'coalesce'; sendAt: number; replaced: boolean };

export function admitProgress(
  state: ProgressWindowState,
  now: number,
  windowMs = PROGRESS_WINDOW_MS,
): ProgressAdmission {
  if (state.lastSentAt === undefined || now - state.lastSentAt >= windowMs) return { kind: 'send' };
  // A clock that went back (lastSentAt in the future) waits no longer than one window from now.
  const sendAt = Math.min(state.lastSentAt + windowMs, now + windowMs);
  return { kind: 'coalesce', sendAt, replaced: state.pending !== undefined };
}
