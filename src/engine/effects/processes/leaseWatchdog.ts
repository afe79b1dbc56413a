import { spawn } from 'node:child_process';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFenced } from '../../platform/fencedFiles';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sleep, systemClock, type Clock } from '../../domain/clock';
import { credentialVariables } from '../../domain/credentials';
import type { HandInOrder, SharedStoreAccess } from '../../domain/handIn';
import { WATCHDOG_POLL_MS, type ProcessIdentity } from '../../domain/process';
import { appendBatonFile, ensureBatonFolder, writeBatonFile } from '../files/safeWrite';
import { isProcessAlive, probeProcess, terminateWorker } from './processes';

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
  /** A worker's end to hand in to the shared store when it ends by itself (domain/handIn.ts). */
  handIn?: HandInOrder;
  /**
   * The coordinator that started the worker, on this machine: while it lives it settles the worker's end itself (and
   * says so in the deadline file: `writeAttemptSettled`), and the watchdog hands nothing in.
   */
  coordinator?: ProcessIdentity;
}

/** A new secret between a worker's coordinators and its lease watchdog (kept in the runtime's row). */
export function newWatchdogKey(): string {
  return randomBytes(32).toString('hex');
}

/**
 * The signature of a deadline for one attempt: the worker can rewrite the deadline file (it runs as the same user,
 * in the workspace), but without the key — in the store, which workers on a shared store cannot reach, and in its
 * watchdog's memory — it cannot write a deadline the watchdog takes (issue 25, item 4.3).
 */
function deadlineSignature(key: string, subject: string, deadline: number): string {
  return createHmac('sha256', Buffer.from(key, 'hex')).update(`${subject}\n${deadline}`).digest('hex');
}

/**
 * Records until when an attempt's lease runs, for its watchdog: only after the store committed that lease. With the
 * attempt's watchdog key the line is `<deadline> <signature>`; without one (a verify command's coordinator deadline)
 * the deadline alone.
 */
export function writeLeaseDeadline(
  workspace: string,
  path: string,
  deadline: number,
  signing?: { key: string; subject: string },
): void {
  ensureBatonFolder(workspace, dirname(path));
  const signature = signing ? ` ${deadlineSignature(signing.key, signing.subject, deadline)}` : '';
  writeBatonFile(workspace, path, `${deadline}${signature}\n`);
}

/**
 * Records, in the attempt's deadline file, that its coordinator is done with the attempt (settled it, or found it
 * decided): its watchdog then has nothing to hand in. Signed like a deadline, so a worker cannot write it.
 */
export function writeAttemptSettled(workspace: string, path: string, signing: { key: string; subject: string }): void {
  ensureBatonFolder(workspace, dirname(path));
  writeBatonFile(workspace, path, `settled ${deadlineSignature(signing.key, signing.subject, SETTLED)}\n`);
}

/** What a settled marker signs in place of a deadline. */
const SETTLED = -1;

/** Whether the deadline file holds its coordinator's signed word that the attempt is settled. */
function readSettled(path: string, signing: { key: string; subject: string }): boolean {
  let text: string;
  try {
    text = readFenced(dirname(path), path, 256)?.bytes.toString('utf8').trim() ?? '';
  } catch {
    return false;
  }
  const [word, signature = ''] = text.split(' ');
  if (word !== 'settled') return false;
  const expected = Buffer.from(deadlineSignature(signing.key, signing.subject, SETTLED), 'hex');
  const given = Buffer.from(signature, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * After its worker ended by itself: whether its end is left for the watchdog to hand in. Not while its coordinator on
 * this machine lives and runs — it settles the end itself and marks the deadline file so; yes once that coordinator is
 * gone or stopped before it did, or the attempt's lease ran out first (the coordinator could not reach the store).
 */
export async function unsettledAfterExit(
  worker: WatchedWorker,
  key: string,
  clock: Clock = systemClock,
): Promise<boolean> {
  const signing = { key, subject: worker.delegationId };
  const deadline = readLeaseDeadline(worker.deadlinePath, signing) ?? clock.now();
  for (;;) {
    if (readSettled(worker.deadlinePath, signing)) return false;
    const coordinator = worker.coordinator ? probeProcess(worker.coordinator) : undefined;
    if (!coordinator || coordinator.alive !== true || coordinator.stopped) return true;
    if (clock.now() > deadline) return true;
    await sleep(clock, SETTLEMENT_POLL_MS);
  }
}

/** How often a watchdog looks for its coordinator's settled marker once the worker ended. */
const SETTLEMENT_POLL_MS = 100;

/**
 * The deadline in the file, if it is one the watchdog takes: signed with its key when it has one (anything else —
 * unsigned, signed for another attempt, altered — is not a deadline). Undefined: none to take; the last one holds.
 */
export function readLeaseDeadline(path: string, signing?: { key: string; subject: string }): number | undefined {
  let text: string;
  try {
    // The worker can replace the file (a FIFO, a device): read through the fence, a few bytes at most.
    text = readFenced(dirname(path), path, 256)?.bytes.toString('utf8').trim() ?? '';
  } catch {
    return undefined; // being replaced, or removed with the run's folder: the last one read holds
  }
  const [value = '', signature, ...rest] = text.split(' ');
  const deadline = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(deadline) || deadline <= 0 || rest.length > 0) return undefined;
  if (!signing) return signature === undefined ? deadline : undefined;
  const expected = Buffer.from(deadlineSignature(signing.key, signing.subject, deadline), 'hex');
  const given = Buffer.from(signature ?? '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected) ? deadline : undefined;
}

/**
 * Starts the watchdog of a worker or verify command, detached (its own process group, no terminal, nothing held
 * open): a coordinator that exits, is killed or stopped leaves it running. It is the `baton`
 * CLI's hidden `lease-watchdog` command, run by this very Node (an extension host's Electron
 * runs it as Node). Its key (the attempt's watchdog key) — and, where it hands in the worker's end, the store's
 * access — reach it on its stdin, then closed: not in its argv or environment, which any process of the user can read.
 */
export function startLeaseWatchdog(
  cliPath: string,
  worker: WatchedWorker,
  key?: string,
  storeAccess?: SharedStoreAccess,
): ProcessIdentity | undefined {
  const env: NodeJS.ProcessEnv = { ...process.env, ELECTRON_RUN_AS_NODE: '1' };
  // The worker's own markers are not the watchdog's: a sweep for the worker's processes must not find it.
  // Nor is the store's credential in its environment: one that hands in its worker's end gets it on its stdin.
  for (const name of ['BATON_RUNTIME_ID', 'BATON_VERIFY_ID', ...credentialVariables({ kind: 'postgres' })])
    delete env[name];
  const child = spawn(process.execPath, [...watchdogProgram(cliPath), JSON.stringify(worker)], {
    detached: true,
    stdio: [key ? 'pipe' : 'ignore', 'ignore', 'ignore'],
    env,
  });
  if (child.stdin) {
    child.stdin.on('error', () => undefined); // it died at once: nothing to tell it
    child.stdin.end(`${key}\n${storeAccess ? `${JSON.stringify(storeAccess)}\n` : ''}`);
    (child.stdin as unknown as { unref?: () => void }).unref?.();
  }
  child.unref();
  return child.pid ? { pid: child.pid, startTime: null, host: worker.identity.host } : undefined;
}

/**
 * How a watchdog is started: the program of its own the build puts beside the CLI (dist/baton-watchdog.js: it loads
 * the watchdog's part of the engine alone, about a tenth of a second of CPU less per attempt than the whole CLI), else
 * the CLI's hidden `lease-watchdog` command (a CLI run from source, a build without it).
 */
export function watchdogProgram(cliPath: string): string[] {
  const program = join(dirname(cliPath), WATCHDOG_PROGRAM);
  return existsSync(program) ? [program] : [cliPath, 'lease-watchdog'];
}

/** The watchdog's program, beside the CLI's (scripts/build.mjs). */
const WATCHDOG_PROGRAM = 'baton-watchdog.js';

/**
 * The watchdog's loop: returns when the worker ended by itself, or after it ended the worker
 * whose lease ran out. Never kills a process that is not the worker's (pid and start time,
 * its marker).
 */
export async function watchLease(
  worker: WatchedWorker,
  clock: Clock = systemClock,
  /** The attempt's watchdog key: only deadlines signed with it count. */
  key?: string,
): Promise<'exited' | 'ended'> {
  const signing = key ? { key, subject: worker.delegationId } : undefined;
  let deadline = readLeaseDeadline(worker.deadlinePath, signing) ?? 0;
  for (;;) {
    if (isProcessAlive(worker.identity) !== true) return 'exited';
    deadline = readLeaseDeadline(worker.deadlinePath, signing) ?? deadline;
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
