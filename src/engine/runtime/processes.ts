import { readdirSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import treeKill from 'tree-kill';
import { sleep, type Clock } from '../model/clock';

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

interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  state: string;
  startTime: string;
}

const HAS_PROC = process.platform === 'linux';

function readProcStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself contain spaces and parentheses.
  const close = text.lastIndexOf(')');
  const fields = text.slice(close + 2).split(' ');
  return {
    pid,
    state: fields[0] ?? '?',
    ppid: Number(fields[1]),
    pgrp: Number(fields[2]),
    session: Number(fields[3]),
    startTime: fields[19] ?? '',
  };
}

export function thisHost(): string {
  return hostname();
}

export function identityOf(pid: number): ProcessIdentity {
  return { pid, startTime: HAS_PROC ? (readProcStat(pid)?.startTime ?? null) : null, host: thisHost() };
}

/** The current process, as a lease records its holder. */
export function selfIdentity(): ProcessIdentity {
  return identityOf(process.pid);
}

/**
 * True when this very process (pid and start time) still runs on this host. A zombie is
 * dead. A process on another host cannot be checked: the answer is `undefined`.
 */
export function isProcessAlive(identity: ProcessIdentity): boolean | undefined {
  if (identity.host !== thisHost()) return undefined;
  if (HAS_PROC) {
    const stat = readProcStat(identity.pid);
    if (!stat || stat.state === 'Z' || stat.state === 'X') return false;
    return identity.startTime === null || stat.startTime === identity.startTime;
  }
  try {
    process.kill(identity.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Stopped by a signal (SIGSTOP, a debugger): alive, but not doing its job. */
export function isProcessStopped(identity: ProcessIdentity): boolean {
  if (!HAS_PROC || identity.host !== thisHost()) return false;
  const stat = readProcStat(identity.pid);
  return stat !== undefined && (stat.state === 'T' || stat.state === 't') && (identity.startTime === null || stat.startTime === identity.startTime);
}

function allProcesses(): ProcStat[] {
  if (!HAS_PROC) return [];
  const found: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const stat = readProcStat(pid);
    if (stat) found.push(stat);
  }
  return found;
}

function carriesMarker(pid: number, marker: string): boolean {
  try {
    // NUL-separated KEY=VALUE entries; a leading NUL makes the first entry match like the others.
    return Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]).includes(`\0${marker}\0`);
  } catch {
    return false; // another user's process, or gone
  }
}

/**
 * Every live process that belongs to a worker: its descendants (by parent), its process
 * group and session (a worker runs as a group and session leader), and — to catch a
 * descendant that detached with setsid and lost its parent — every process whose
 * environment carries the worker's marker (`BATON_RUNTIME_ID=<id>`).
 */
export function findWorkerProcesses(root: ProcessIdentity, marker?: string): ProcessIdentity[] {
  if (!HAS_PROC) return isProcessAlive(root) ? [root] : [];
  const all = allProcesses().filter((p) => p.state !== 'Z' && p.state !== 'X' && p.pid !== process.pid);
  const rootStat = all.find((p) => p.pid === root.pid && (root.startTime === null || p.startTime === root.startTime));
  const members = new Map<number, ProcStat>();
  if (rootStat) {
    members.set(rootStat.pid, rootStat);
    for (const p of all) if (p.pgrp === root.pid || p.session === root.pid) members.set(p.pid, p);
  }
  if (marker) for (const p of all) if (!members.has(p.pid) && carriesMarker(p.pid, marker)) members.set(p.pid, p);
  // Descendants by parent, to a fixed point (a child may have moved to its own group).
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) {
      if (!members.has(p.pid) && members.has(p.ppid)) {
        members.set(p.pid, p);
        grew = true;
      }
    }
  }
  return [...members.values()].map((p) => ({ pid: p.pid, startTime: p.startTime, host: root.host }));
}

export interface TerminationReport {
  /** Every process of the worker that was found (and signalled). */
  processes: ProcessIdentity[];
  /** Those still alive after TERM, the grace period, KILL and a last check. Empty means confirmed. */
  survivors: ProcessIdentity[];
  confirmed: boolean;
  killed: boolean;
}

function signal(target: ProcessIdentity, sig: NodeJS.Signals): void {
  if (isProcessAlive(target) === false) return; // never signal a pid that now belongs to someone else
  try {
    process.kill(target.pid, sig);
  } catch {
    // gone meanwhile
  }
}

function treeKillAsync(pid: number, sig: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => treeKill(pid, sig, () => resolve()));
}

/**
 * Ends a worker and everything it started: TERM to each process (and the group, and the
 * tree by tree-kill), then KILL to whatever outlived the grace period, then proves it by
 * looking again. Returns what it found and whether the end is confirmed.
 */
export async function terminateWorker(root: ProcessIdentity, options: { marker?: string; graceMs: number; clock: Clock }): Promise<TerminationReport> {
  const seen = new Map<number, ProcessIdentity>();
  const gather = (): ProcessIdentity[] => {
    const found = findWorkerProcesses(root, options.marker);
    for (const p of found) seen.set(p.pid, p);
    return found;
  };
  const alive = (): ProcessIdentity[] => [...seen.values()].filter((p) => isProcessAlive(p) !== false);

  gather();
  if (seen.size === 0) return { processes: [], survivors: [], confirmed: isProcessAlive(root) !== true, killed: false };
  const rootAlive = isProcessAlive(root) === true;
  for (const p of seen.values()) signal(p, 'SIGTERM');
  if (rootAlive) {
    try {
      process.kill(-root.pid, 'SIGTERM');
    } catch {
      // not a group leader, or the group is gone
    }
    await treeKillAsync(root.pid, 'SIGTERM');
  }
  const deadline = options.clock.monotonic() + options.graceMs;
  while (options.clock.monotonic() < deadline) {
    gather(); // a process may still be starting children
    if (alive().length === 0) break;
    await sleep(options.clock, 25);
  }
  let killed = false;
  for (let round = 0; round < 5 && (gather(), alive().length > 0); round++) {
    killed = true;
    for (const p of alive()) signal(p, 'SIGKILL');
    if (isProcessAlive(root) === true) {
      try {
        process.kill(-root.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await sleep(options.clock, 50);
  }
  const survivors = alive();
  return { processes: [...seen.values()], survivors, confirmed: survivors.length === 0, killed };
}
