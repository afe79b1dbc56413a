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
