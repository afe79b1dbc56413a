import { randomBytes } from 'node:crypto';

/** Time is a dependency (CONVENTIONS): lease logic never calls Date.now() directly. */
export interface Clock {
  /** Wall-clock milliseconds since the epoch; stored in the database and compared across processes. */
  now(): number;
  /** Monotonic milliseconds for local timers; never jumps with the wall clock. */
  monotonic(): number;
  /** Calls `callback` once after `delayMs` of monotonic time; returns a cancel function. */
  setTimer(delayMs: number, callback: () => void): () => void;
  /**
   * This machine's wall time for one of this clock's times, where they differ (a store's clock, `databaseClock`): for a
   * process on this machine that compares the time with its own wall clock (a lease watchdog). Absent: the same.
   */
  toLocal?(at: number): number;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => Number(process.hrtime.bigint() / 1_000_000n),
  setTimer: (delayMs, callback) => {
    // Node's timers run on the monotonic clock: a wall-clock jump does not fire them early.
    const handle = setTimeout(callback, Math.max(0, delayMs));
    return () => clearTimeout(handle);
  },
};

/**
 * The wall clock of a shared store's server on this machine: this machine's wall clock plus the measured offset to the
 * server's (PgStore.clockOffsetMs). Every host of a team then judges leases by one clock, as PostgreSQL job queues
 * judge expiry by the database's now() (docs/team.md, "One clock"); monotonic time and timers stay local.
 */
export function databaseClock(local: Clock, offsetMs: () => number): Clock {
  return {
    now: () => local.now() + offsetMs(),
    monotonic: () => local.monotonic(),
    setTimer: (delayMs, callback) => local.setTimer(delayMs, callback),
    toLocal: (at) => at - offsetMs(),
  };
}

/** Resolves after `ms` on the given clock. */
export function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(ms, resolve));
}

/** Ids are a dependency too, so tests can make them deterministic. */
export interface IdSource {
  runId(): string;
  runtimeId(): string;
  /** A secret handed to a worker runtime; only its hash is stored. */
  token(): string;
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

function randomWord(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += ALPHABET[b & 31];
  return out;
}

export function systemIds(clock: Clock = systemClock): IdSource {
  return {
    runId: () => {
      const d = new Date(clock.now());
      const stamp = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, '0')}${String(d.getUTCDate()).padStart(2, '0')}`;
      return `R-${stamp}-${randomWord(4)}`;
    },
    runtimeId: () => `W-${randomWord(8)}`,
    token: () => randomBytes(24).toString('base64url'),
  };
}
