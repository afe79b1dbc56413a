import { watchLease, type WatchedWorker } from '../../engine/index';

/**
 * The hidden `baton lease-watchdog <worker JSON>`: a coordinator on a shared store starts it
 * beside each worker (docs/team.md, "Failover"). It ends the worker once its lease ran out
 * without a renewal, and exits when the worker does. Not a command for people.
 */
export async function leaseWatchdog(workerJson: string): Promise<void> {
  const usage = new Error('lease-watchdog takes the worker it watches as JSON (a coordinator starts it).');
  let worker: WatchedWorker;
  try {
    worker = JSON.parse(workerJson) as WatchedWorker;
  } catch {
    throw usage;
  }
  if (!worker?.identity?.pid || !worker.deadlinePath || !worker.runtimeId || !worker.workspace) throw usage;
  await watchLease(worker);
}
