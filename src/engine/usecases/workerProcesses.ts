import type { WorkerRuntime } from '../domain/types';
import { isProcessAlive } from '../effects/processes/processes';

/** A worker process as the store records it: pid, start time (Linux) and host. */
export interface RecordedProcess {
  pid?: number | null;
  pidStart?: string | null;
  host?: string | null;
}

/**
 * The one look at a recorded worker process that every view and command takes — `baton
 * status`, `baton diagnose`, the editor's views: alive only while the same process (pid and
 * start time) runs on its host; `undefined` when it runs on another host and cannot be looked
 * at from here; false when none was recorded.
 */
export function recordedProcessAlive(recorded: RecordedProcess): boolean | undefined {
  if (recorded.pid === undefined || recorded.pid === null || !recorded.host) return false;
  return isProcessAlive({ pid: recorded.pid, startTime: recorded.pidStart ?? null, host: recorded.host });
}

/**
 * A run's runtimes as the views show them: one whose attempt is not settled but whose recorded
 * process is gone (it ended while no coordinator watched) is marked `processGone`, so nothing
 * calls it alive — until a coordinator settles it from its exit record, or marks it STALE.
 */
export function withWorkerProcesses<View extends { runtimes: WorkerRuntime[] }>(view: View): View {
  let changed = false;
  const runtimes = view.runtimes.map((runtime) => {
    if (runtime.status === 'terminal' || runtime.endedAt !== undefined || runtime.pid === undefined) return runtime;
    if (recordedProcessAlive(runtime) !== false) return runtime;
    changed = true;
    return { ...runtime, processGone: true as const };
  });
  return changed ? { ...view, runtimes } : view;
}
