/**
 * Who a process is. A pid alone is not an identity: pids are reused. On Linux the start
 * time (field 22 of /proc/<pid>/stat, in clock ticks since boot) makes it one; elsewhere
 * it is null and liveness falls back to the pid (documented in docs/workers.md).
 */
export interface ProcessIdentity {
  pid: number;
  startTime: string | null;
  host: string;
  /** A worker started in a PID namespace of its own: that namespace (`pid:[…]`), which its processes cannot leave. */
  pidNamespace?: string;
}

/**
 * The process that presents an attempt's token (a `baton ingest`, `baton mcp`), as a hand-in is
 * judged: its host and the chain of its parents, itself first (effects/processes, `presentingProcess`).
 * `ancestry` is undefined where the platform cannot tell (no /proc).
 */
export interface Presenter {
  host: string;
  ancestry: readonly ProcessIdentity[] | undefined;
  /** The PID namespace it runs in (`pid:[…]`), where /proc says. */
  pidNamespace?: string;
}

/**
 * Whether a caller holding an attempt's token runs under that attempt's worker: the worker's
 * process (pid and start time, on its host) is the caller or one of its parents. A token is a
 * secret only from other users: another worker of the same user reads it in
 * /proc/<pid>/environ, but cannot make itself a child of the worker it read it from (issue 25,
 * item 2.7). Not decidable — and so left to the token alone — for a runtime no Baton process
 * started (`baton claim` hands its claimer the token) and where the platform has no /proc.
 *
 * A worker in a PID namespace of its own (effects/processes/pidNamespace.ts) has a /proc of its
 * own too, where its parents above the namespace do not show: there the caller runs under the
 * worker when it runs in the worker's namespace, which no process can leave, and which a process
 * of another worker cannot enter (it would take `setns`, and privileges over that namespace).
 */
export function runsUnderWorker(
  worker: { pid?: number; pidStart?: string | null; host?: string; pidNamespace?: string },
  presenter: Presenter,
): boolean {
  if (worker.pid === undefined || presenter.ancestry === undefined) return true;
  if (worker.host !== undefined && worker.host !== presenter.host) return false;
  if (worker.pidNamespace !== undefined && presenter.pidNamespace === worker.pidNamespace) return true;
  return presenter.ancestry.some(
    (p) => p.pid === worker.pid && (worker.pidStart == null || p.startTime === worker.pidStart),
  );
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
