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
  await watchLease(worker, undefined, await keyFromStdin());
}

/**
 * The key its coordinator writes on its stdin (startLeaseWatchdog), one line, then closes it; none when stdin is not
 * a pipe or says nothing within a few seconds (a watchdog started without one checks unsigned deadlines).
 */
async function keyFromStdin(): Promise<string | undefined> {
  const line = await new Promise<string>((resolve) => {
    let text = '';
    const done = (): void => {
      clearTimeout(timer);
      process.stdin.removeAllListeners();
      process.stdin.destroy();
      resolve(text);
    };
    const timer = setTimeout(done, 5000);
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      text += chunk;
      if (text.includes('\n') || text.length > 256) done();
    });
    process.stdin.on('end', done);
    process.stdin.on('error', done);
  });
  const key = line.split('\n')[0]!.trim();
  return /^[0-9a-f]{64}$/.test(key) ? key : undefined;
}
