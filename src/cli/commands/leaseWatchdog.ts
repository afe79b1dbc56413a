import {
  handInFromWatchdog,
  systemClock,
  unsettledAfterExit,
  watchLease,
  type SharedStoreAccess,
  type WatchedWorker,
} from '../../engine/watchdog';

/**
 * The hidden `baton lease-watchdog <worker JSON>`: a coordinator on a shared store starts it
 * beside each worker and verify command (docs/team.md, "Failover"). It ends the process once
 * its lease ran out without a renewal, and exits when the process does — a worker that ended by
 * itself having first handed its end to the store, when it was given the means (docs/team.md,
 * "Finished work on a dead host"). Not a command for people.
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
  const { key, storeAccess } = await secretsFromStdin();
  const ended = await watchLease(worker, undefined, key);
  // Its coordinator takes the end itself while it lives; the watchdog hands it in only when that one is gone.
  if (ended === 'exited' && worker.kind === 'worker' && worker.handIn && key && storeAccess) {
    if (!(await unsettledAfterExit(worker, key))) return;
    // Nobody reads a watchdog's output: a hand-in that failed leaves the attempt to the takeover rule, as before.
    await handInFromWatchdog(worker.handIn, key, storeAccess, systemClock).catch(() => undefined);
  }
}

/**
 * What its coordinator writes on its stdin (startLeaseWatchdog), then closes: the attempt's key, one line, and where
 * the watchdog hands its worker's end in, the store's access (JSON), the next. Nothing when stdin is not a pipe or says
 * nothing within a few seconds (a watchdog started without a key checks unsigned deadlines, and hands nothing in).
 */
async function secretsFromStdin(): Promise<{ key?: string; storeAccess?: SharedStoreAccess }> {
  const text = await new Promise<string>((resolve) => {
    let read = '';
    const done = (): void => {
      clearTimeout(timer);
      process.stdin.removeAllListeners();
      process.stdin.destroy();
      resolve(read);
    };
    const timer = setTimeout(done, 5000);
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      read += chunk;
      if (read.length > 16_384) done();
    });
    process.stdin.on('end', done);
    process.stdin.on('error', done);
  });
  const [first = '', second = ''] = text.split('\n');
  const key = first.trim();
  if (!/^[0-9a-f]{64}$/.test(key)) return {};
  return { key, ...(accessOf(second) ? { storeAccess: accessOf(second)! } : {}) };
}

function accessOf(line: string): SharedStoreAccess | undefined {
  try {
    const value = JSON.parse(line) as Partial<SharedStoreAccess>;
    if (typeof value.url !== 'string' || typeof value.schema !== 'string') return undefined;
    if (value.password !== undefined && typeof value.password !== 'string') return undefined;
    const { url, schema, password } = value;
    return { url, schema, ...(password !== undefined ? { password } : {}) };
  } catch {
    return undefined;
  }
}
