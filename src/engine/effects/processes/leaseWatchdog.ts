import { spawn } from 'node:child_process';
import { readFenced } from '../../platform/fencedFiles';
import { dirname } from 'node:path';
import { sleep, systemClock, type Clock } from '../../domain/clock';
import { credentialVariables } from '../../domain/credentials';
import { WATCHDOG_POLL_MS, type ProcessIdentity } from '../../domain/process';
import { appendBatonFile, ensureBatonFolder, writeBatonFile } from '../files/safeWrite';
import { isProcessAlive, terminateWorker } from './processes';

/**
 * A lease watchdog (docs/team.md, "Failover"): a small process beside each worker — and each
 * verify command — a coordinator starts on a shared store, apart from the coordinator so that
 * it outlives it and keeps running while it is stopped. It reads a lease deadline — written by
 * whichever coordinator renewed the lease, after the store committed the renewal — and ends the
 * process (TERM, grace, KILL, proof) once the deadline passed without a renewal. A worker's is
 * its attempt's lease; a verify command's is the lease of the coordinator that started it
 * (nobody else may verify the attempt while that one holds the run). That is what lets a
 * coordinator on another machine take the run over after the lease: whatever the old machine's
 * workers and verify commands were doing has ended by then, so nothing runs twice at once.
 */
export interface WatchedWorker {
  kind: 'worker' | 'verify';
  workspace: string;
  delegationId: string;
  identity: ProcessIdentity;
  /** What its processes carry in their environment (BATON_RUNTIME_ID=… or BATON_VERIFY_ID=…): how the rest is found. */
  marker: string;
  /**
   * The file holding the lease's deadline, wall-clock milliseconds (workspaceLayout.ts: `leaseDeadline`, or
   * `coordinatorLeaseDeadline` for a verify command).
   */
  deadlinePath: string;
  /** The attempt's log: the watchdog says there what it did. */
  logPath: string;
  graceMs: number;
}

/** Records until when an attempt's lease runs, for its watchdog: only after the store committed that lease. */
export function writeLeaseDeadline(workspace: string, path: string, deadline: number): void {
  ensureBatonFolder(workspace, dirname(path));
  writeBatonFile(workspace, path, `${deadline}\n`);
}

function readLeaseDeadline(path: string): number | undefined {
  try {
    // The worker can replace the file (a FIFO, a device): read through the fence, a few bytes at most.
    const deadline = Number(readFenced(dirname(path), path, 64)?.bytes.toString('utf8').trim());
    return Number.isFinite(deadline) && deadline > 0 ? deadline : undefined;
  } catch {
    return undefined; // being replaced, or removed with the run's folder: the last one read holds
  }
}

/**
 * Starts the watchdog of a worker or verify command, detached (its own process group, no terminal, nothing held
 * open): a coordinator that exits, is killed or stopped leaves it running. It is the `baton`
 * CLI's hidden `lease-watchdog` command, run by this very Node (an extension host's Electron
 * runs it as Node).
 */
export function startLeaseWatchdog(cliPath: string, worker: WatchedWorker): ProcessIdentity | undefined {
  const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
  // The worker's own markers are not the watchdog's: a sweep for the worker's processes must not find it.
  // Nor does it need the store: no credential reaches it.
  for (const name of ['BATON_RUNTIME_ID', 'BATON_VERIFY_ID', ...credentialVariables({ kind: 'postgres' })])
    delete env[name];
  const child = spawn(process.execPath, [cliPath, 'lease-watchdog', JSON.stringify(worker)], {
    detached: true,
    stdio: 'ignore',
    env,
  });
  child.unref();
  return child.pid ? { pid: child.pid, startTime: null, host: worker.identity.host } : undefined;
}

/**
 * The watchdog's loop: returns when the worker ended by itself, or after it ended the worker
 * whose lease ran out. Never kills a process that is not the worker's (pid and start time,
 * its marker).
 */
export async function watchLease(worker: WatchedWorker, clock: Clock = systemClock): Promise<'exited' | 'ended'> {
  let deadline = readLeaseDeadline(worker.deadlinePath) ?? 0;
  for (;;) {
    if (isProcessAlive(worker.identity) !== true) return 'exited';
    deadline = readLeaseDeadline(worker.deadlinePath) ?? deadline;
    if (clock.now() > deadline) break;
    await sleep(clock, WATCHDOG_POLL_MS);
  }
  const say = (line: string): void => {
    try {
      appendBatonFile(worker.workspace, worker.logPath, `\n[baton lease watchdog] ${line}\n`);
    } catch {
      // the log is only for people; the worker is ended either way
    }
  };
  const ranOut = new Date(deadline).toISOString();
  say(
    worker.kind === 'worker'
      ? `the lease of ${worker.delegationId} ran out at ${ranOut} and no coordinator renewed it: ending the worker (pid ${worker.identity.pid})`
      : `the lease of the coordinator verifying ${worker.delegationId} ran out at ${ranOut}: ending its verify command (pid ${worker.identity.pid})`,
  );
  const report = await terminateWorker(worker.identity, {
    marker: worker.marker,
    graceMs: worker.graceMs,
    clock,
  });
  say(
    report.confirmed
      ? `ended ${report.processes.length} process(es), confirmed gone`
      : `ended ${report.processes.length} process(es); NOT confirmed: ${report.survivors.map((p) => p.pid).join(', ')} still ran`,
  );
  return 'ended';
}
