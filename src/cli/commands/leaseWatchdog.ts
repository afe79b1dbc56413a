import { watchLease, type WatchedWorker } from '../../engine/index';

/**
 * The hidden `baton lease-watchdog <worker JSON>`: a coordinator on a shared store starts it
 * beside each worker and verify command (docs/team.md, "Failover"). It ends the process once
 * its lease ran out without a renewal, and exits when the process does. Not a command for people.
 */
export async function leaseWatchdog(workerJson: string): Promise<void> {
  const usage = new Error('lease-watchdog takes the worker it watches as JSON (a coordinator starts it).');
  let worker: WatchedWorker;
  try {
    worker = JSON.parse(workerJson) as WatchedWorker;
  } catch {
    throw usage;
  }
  if (!worker?.identity?.pid || !worker.deadlinePath || !worker.marker || !worker.workspace) throw usage;
  if (worker.kind !== 'worker' && worker.kind !== 'verify') throw usage;
  await watchLease(worker);
}
