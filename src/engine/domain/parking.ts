import type { UsageLimit } from './agents/usageLimit';

/**
 * Parking (docs/agents.md, "Usage limits park, silent streams are seen"): an attempt that ended because its CLI's
 * account hit a usage limit — or whose silent stream was stopped — ends CANCELLED with a `parked:` reason. A
 * CANCELLED attempt never counts against `maxAttempts`; its task goes back to ready with `not_before` at the reset,
 * and the next attempt continues the parked one's session. The state machine stays as it is: no new status.
 */
export type ParkCause = 'usage-limit' | 'silence';

/** A parked attempt's reason starts with this: what tells a parked attempt from a stopped one. */
export const PARKED_REASON_PREFIX = 'parked: ';
const PARKED = PARKED_REASON_PREFIX;

/** The longest a reset the CLI names is believed: a week (a plan's weekly limit). */
export const MAX_PARK_MS = 7 * 86_400_000;

/**
 * How long after a reset that passed already (the CLI named it, and it came before the attempt was settled: a slow
 * exit, a settlement from the exit record) the next attempt starts: soon, since the CLI said when its limit lifts, but
 * not at once, so that a CLI that keeps naming a past reset cannot start attempts in a loop (parked ones do not count).
 */
export const PASSED_RESET_RECHECK_MS = 30_000;

/**
 * Until when the attempt's worker is held: the reset the CLI named when it is still to come (at most a week ahead);
 * a reset that passed already, a short recheck from now; no reset named, `quotaWaitSeconds` from now.
 */
export function parkUntil(limit: Pick<UsageLimit, 'resetAt'>, now: number, quotaWaitSeconds: number): number {
  const { resetAt } = limit;
  if (resetAt === undefined) return now + quotaWaitSeconds * 1000;
  if (resetAt > now) return Math.min(resetAt, now + MAX_PARK_MS);
  return now + Math.min(PASSED_RESET_RECHECK_MS, quotaWaitSeconds * 1000);
}

export function parkedReason(cause: ParkCause, worker: string, until: number, now: number): string {
  return cause === 'usage-limit'
    ? `${PARKED}${worker} hit its usage limit; waits until ${clockTime(until, now)}`
    : `${PARKED}its stream was silent; continues its session`;
}

export function isParkedReason(reason: string | undefined): boolean {
  return reason?.startsWith(PARKED) ?? false;
}

const WAITING_FOR_LIMIT = 'waiting for usage limit until ';

/**
 * Whether an attempt continues its task's last agent session: a retry whose worker asks for it (`continueSession`),
 * and always (`always`) the attempt after a parked one — it picks up where the limit or the silence cut it off — and a
 * follow-up, which carries a person's message into the session that did the work (domain/followUp.ts).
 */
export function continuesSession(worker: { continueSession: boolean }, attempt: number, always: boolean): boolean {
  return attempt > 1 && (worker.continueSession || always);
}

/** What a task held by its worker's usage limit shows (status, the Runs view). */
export function waitingForLimitReason(until: number, now: number): string {
  return `${WAITING_FOR_LIMIT}${clockTime(until, now)}`;
}

/** Whether a task's reason says it waits for its worker's usage limit (the Runs view shows it beside its status). */
export function isWaitingForLimit(reason: string | undefined): boolean {
  return reason?.startsWith(WAITING_FOR_LIMIT) ?? false;
}

/** A worker held by a usage limit until a moment (the latest park of the run on that worker). */
export interface QuotaHold {
  worker: string;
  until: number;
}

/** The hold on this worker still in force at `now`, if any. */
export function quotaHoldOf(holds: readonly QuotaHold[], worker: string, now: number): QuotaHold | undefined {
  let found: QuotaHold | undefined;
  for (const hold of holds)
    if (hold.worker === worker && hold.until > now && hold.until > (found?.until ?? 0)) found = hold;
  return found;
}

/** "HH:MM" in the machine's time zone, with the date when it is not today's. */
export function clockTime(at: number, now: number): string {
  const d = new Date(at);
  const hhmm = `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
  return new Date(now).toDateString() === d.toDateString()
    ? hhmm
    : `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')} ${hhmm}`;
}

export type SilenceAction = 'wait' | 'stop';

/**
 * A live agent's stream silent this long: what a person sees ("silent 5m"), or undefined while it is shorter than
 * `silenceSeconds`.
 */
export function silenceOf(silentMs: number, silenceSeconds: number): string | undefined {
  if (silentMs < silenceSeconds * 1000) return undefined;
  const seconds = Math.floor(silentMs / 1000);
  if (seconds < 60) return `silent ${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  return minutes < 60
    ? `silent ${minutes}m`
    : `silent ${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
