/**
 * A worker's exit record (docs/workers.md, "When the coordinator dies"): the evidence a worker's
 * end leaves in `.baton/runs/<run>/exits/<delegation>.exit`, so that the next coordinator
 * settles an attempt that ended while no coordinator watched exactly as a watching one would
 * have. Three lines, each written by a different hand:
 *
 *     baton-exit-v1 delegation=D-T1-coder-001 runtime=W-6j35vz5a    ← the coordinator, at spawn (the fence)
 *     started                                                       ← the gate, once the store let the worker go
 *     ended status=0                                                ← the waiter, when the worker ended
 *
 * `status` is the shell's status of the worker: 0–128 an exit code, 128+n the signal n that
 * killed it (as every POSIX shell reports it; a worker that itself exits with 128+n of a
 * fatal signal reads the same). The end time is the record's last write (its mtime), which the
 * reader takes. Pure: the file is read (and written) by effects/processes.
 */

export const EXIT_RECORD_VERSION = 'baton-exit-v1';

/** Signals whose default action is not to end a process: 128+n of one of them is an exit code, never a death. */
export const NON_FATAL_SIGNALS: readonly number[] = [17, 18, 19, 20, 21, 22, 23, 28];

/** The attempt a record belongs to: a record naming another one is not this attempt's evidence. */
export interface ExitRecordOwner {
  delegationId: string;
  runtimeId: string;
}

/** How a worker ended, as its record says. */
export interface RecordedExit {
  exitCode: number | null;
  /** The signal's number (the reader names it: effects/processes/exitRecord.ts). */
  signalNumber: number | null;
}

/** The first line: written by the coordinator when it opens the record, before the worker may run. */
export function exitRecordHeader(owner: ExitRecordOwner): string {
  return `${EXIT_RECORD_VERSION} delegation=${owner.delegationId} runtime=${owner.runtimeId}\n`;
}

/** A shell status as an exit: 128+n of a fatal signal n is that signal, anything else the code. */
export function exitFromStatus(status: number): { exitCode: number | null; signalNumber: number | null } {
  const n = status - 128;
  if (n >= 1 && n <= 64 && !NON_FATAL_SIGNALS.includes(n)) return { exitCode: null, signalNumber: n };
  return { exitCode: status, signalNumber: null };
}

/**
 * What a record says of `owner`'s worker: how it ended, or why it is no evidence — another
 * attempt's record, a gate that never let the worker go (the coordinator died first: the
 * worker ran nothing), no end yet (still running, or its waiter was killed with it), or a
 * torn or foreign text.
 */
export function readExitRecordText(
  text: string,
  owner: ExitRecordOwner,
): { exit: RecordedExit } | { none: 'another-attempt' | 'never-started' | 'not-ended' | 'unreadable' } {
  const lines = text.split('\n');
  const header = /^baton-exit-v1 delegation=(\S+) runtime=(\S+)$/.exec(lines[0] ?? '');
  if (!header) return { none: 'unreadable' };
  if (header[1] !== owner.delegationId || header[2] !== owner.runtimeId) return { none: 'another-attempt' };
  // Only whole lines count: a line cut by a crash has no newline after it.
  const whole = lines.slice(1, -1);
  if (!whole.includes('started')) return { none: 'never-started' };
  const ended = whole.map((l) => /^ended status=(\d{1,3})$/.exec(l)).find((m) => m !== null);
  if (!ended) return { none: 'not-ended' };
  const status = Number(ended[1]);
  if (status > 255) return { none: 'unreadable' };
  return { exit: exitFromStatus(status) };
}
