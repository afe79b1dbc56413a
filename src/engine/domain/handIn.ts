/**
 * Finished work handed in without a coordinator (docs/team.md, "Finished work on a dead host"; issue 26): when a worker
 * on a shared store ends, its lease watchdog hands what it left — how it ended, its result artifact, the end of its
 * log — to the store, so that a coordinator on another host settles the attempt from it instead of running the task
 * again.
 */
export interface HandIn {
  runId: string;
  delegationId: string;
  runtimeId: string;
  /** The host the worker ran on (the watchdog's). */
  host: string;
  exitCode: number | null;
  signal: string | null;
  endedAt: number;
  /** The result artifact's bytes, base64; undefined: the worker wrote none. */
  artifact?: string;
  /** The end of its log, base64 (an answer it printed, an agent's final message). */
  logTail?: string;
}

/**
 * How much of the end of a worker's log is handed in: an answer printed last and an agent's final message are there. A
 * result block printed earlier than this is not found on the other host (its artifact, the usual way, always is).
 */
export const HAND_IN_LOG_BYTES = 1024 * 1024;

/** What a lease watchdog needs to hand in its worker's end: which attempt, and where its files are. */
export interface HandInOrder {
  workspace: string;
  runId: string;
  delegationId: string;
  runtimeId: string;
  host: string;
  logPath: string;
  /** The run's limit: an artifact is handed in up to one byte more, so the other host refuses it as this one would. */
  maxArtifactBytes: number;
}

/**
 * How a lease watchdog reaches a shared store to hand its worker's end in: the coordinator's own URL, schema and
 * password, given on the watchdog's stdin (never in an argv or environment). Only a worker in a PID namespace of its
 * own gets a watchdog that holds it: such a worker cannot see the watchdog's process, let alone read its memory.
 */
export interface SharedStoreAccess {
  url: string;
  schema: string;
  password?: string;
}
