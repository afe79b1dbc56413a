/**
 * Who a process is. A pid alone is not an identity: pids are reused. On Linux the start
 * time (field 22 of /proc/<pid>/stat, in clock ticks since boot) makes it one; elsewhere
 * it is null and liveness falls back to the pid (documented in docs/workers.md).
 */
export interface ProcessIdentity {
  pid: number;
  startTime: string | null;
  host: string;
}

/** What a look at the machine said about a recorded process (effects/processes probes it). */
export interface ProcessProbe {
  /** Undefined: it runs on another host and cannot be checked from here. */
  alive: boolean | undefined;
  /** Stopped by a signal (SIGSTOP, a debugger): alive, but not doing its job. */
  stopped: boolean;
}

export function sameProcess(a: ProcessIdentity, b: ProcessIdentity): boolean {
  return a.host === b.host && a.pid === b.pid && a.startTime === b.startTime;
}

/** How often a lease watchdog looks at its attempt's deadline (effects/processes/leaseWatchdog.ts). */
export const WATCHDOG_POLL_MS = 500;

/** How long a termination keeps sending KILL to what is left before it reports survivors (effects/processes). */
export const KILL_WAIT_MS = 2000;

/** How far apart two machines' clocks may be for team mode's takeover rule to hold (docs/team.md, "Failover"). */
export const CLOCK_SKEW_ALLOWANCE_MS = 2000;

/**
 * How long after a lease on another host ran out its processes may still run: its watchdog
 * notices within a poll, ends them (TERM, the stop grace, KILL and its wait), and the two clocks
 * may disagree by the allowance. A coordinator on another host takes over a run, and expires
 * an attempt started there, only after this much more: never while the old worker may still run.
 */
export function foreignLeaseGraceMs(stopGraceMs: number): number {
  return WATCHDOG_POLL_MS + stopGraceMs + KILL_WAIT_MS + CLOCK_SKEW_ALLOWANCE_MS;
}

/** The machine a lease is judged on: another host's spawned worker gets its watchdog's time first. */
export interface LeaseHost {
  name: string;
  foreignGraceMs: number;
}
