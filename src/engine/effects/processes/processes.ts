import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import treeKill from 'tree-kill';
import { sleep, type Clock } from '../../domain/clock';
import { isNamespaceInit, pidNamespaceOf } from './pidNamespace';
import {
  foreignLeaseGraceMs,
  KILL_WAIT_MS,
  type LeaseHost,
  type Presenter,
  type ProcessIdentity,
  type ProcessProbe,
} from '../../domain/process';

export type { ProcessIdentity };

interface ProcStat {
  pid: number;
  ppid: number;
  pgrp: number;
  session: number;
  state: string;
  startTime: string;
}

const HAS_PROC = process.platform === 'linux';

/**
 * This process's pid as /proc names it. Inside a worker's PID namespace (spawnSupervised) `process.pid` is the
 * namespace's own number while /proc — the machine's — names every process by the machine's: a `baton` a worker
 * runs reads its own entry, and its parents', by this one.
 */
export function ownPid(): number {
  if (!HAS_PROC) return process.pid;
  try {
    return Number(readlinkSync('/proc/self'));
  } catch {
    return process.pid;
  }
}

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

/**
 * How deep this process's PID namespace is below the one /proc names processes in: 0 for a coordinator, 1 for a
 * `baton` a worker runs (in the worker's namespace, spawnSupervised). Read once.
 */
let namespaceDepth: number | undefined;
function ownNamespaceDepth(): number {
  if (namespaceDepth === undefined) {
    namespaceDepth = HAS_PROC ? Math.max(0, (nsPidsOf('self')?.length ?? 1) - 1) : 0;
  }
  return namespaceDepth;
}

/** The pids of a process in each PID namespace it belongs to, /proc's first (its NSpid line). */
function nsPidsOf(pid: number | 'self'): number[] | undefined {
  try {
    const line = /^NSpid:\s*(.*)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return line?.trim().split(/\s+/).map(Number);
  } catch {
    return undefined;
  }
}

/**
 * A process /proc names `pid`, by the number this process signals it with: the same but inside a PID namespace,
 * where it is the namespace's number; undefined when it is not in this process's namespace or below (it cannot be
 * signalled from here).
 */
function signallablePid(pid: number): number | undefined {
  const depth = ownNamespaceDepth();
  if (depth === 0) return pid;
  return nsPidsOf(pid)?.[depth];
}

/**
 * The process this one started as `pid` (fork's answer: in a PID namespace, the namespace's number), as /proc names
 * it. Inside a worker's namespace — a `baton ingest` that verifies — the child is looked up by its NSpid.
 */
export function procPidOfChild(pid: number): number | undefined {
  const depth = ownNamespaceDepth();
  if (depth === 0) return pid;
  for (const name of readdirSync('/proc')) {
    const candidate = Number(name);
    if (!Number.isInteger(candidate) || candidate <= 0) continue;
    const pids = nsPidsOf(candidate);
    if (pids?.length === depth + 1 && pids[depth] === pid && readProcStat(candidate)?.ppid === ownPid())
      return candidate;
  }
  return undefined;
}

/** What every process of a worker carries in its environment, however it detached (set by the coordinator at spawn). */
export function workerMarker(runtimeId: string): string {
  return `BATON_RUNTIME_ID=${runtimeId}`;
}

/**
 * The name this machine goes by in the store: its hostname, or BATON_HOST_ID where hostnames
 * are not unique (containers started from one image) — every coordinator and worker record
 * carries it, and a process is only ever probed or signalled on the host that recorded it.
 */
export function thisHost(): string {
  return process.env.BATON_HOST_ID || hostname();
}

/** This machine as lease expiry judges it (operations/runtimes/expireStaleRuntimes.ts). */
export function leaseHostHere(stopGraceSeconds: number): LeaseHost {
  return { name: thisHost(), foreignGraceMs: foreignLeaseGraceMs(stopGraceSeconds * 1000) };
}

export function identityOf(pid: number): ProcessIdentity {
  return { pid, startTime: HAS_PROC ? (readProcStat(pid)?.startTime ?? null) : null, host: thisHost() };
}

/**
 * This process as it presents a token (domain/process.ts, `runsUnderWorker`): itself and each of
 * its parents up to the first process of the machine, from /proc (undefined without it).
 */
export function presentingProcess(): Presenter {
  // Asked once: each ask is a system call, and an ingest by token presents its process chain on every commit path.
  const host = thisHost();
  if (!HAS_PROC) return { host, ancestry: undefined };
  const ancestry: ProcessIdentity[] = [];
  // Bounded: a chain of parents is short; the bound only guards against a /proc that answers nonsense.
  for (let pid = ownPid(), steps = 0; pid > 0 && steps < 512; steps++) {
    const stat = readProcStat(pid);
    if (!stat) break;
    ancestry.push({ pid, startTime: stat.startTime, host });
    pid = stat.ppid;
  }
  const pidNamespace = pidNamespaceOf('self');
  return { host, ancestry, ...(pidNamespace ? { pidNamespace } : {}) };
}

/** The current process, as a lease records its holder. */
export function selfIdentity(): ProcessIdentity {
  return identityOf(ownPid());
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

/** Alive (here, or not checkable from here) and stopped: one look, before a transaction decides on it. */
export function probeProcess(identity: ProcessIdentity): ProcessProbe {
  return { alive: isProcessAlive(identity), stopped: isProcessStopped(identity) };
}

/** Stopped by a signal (SIGSTOP, a debugger): alive, but not doing its job. */
export function isProcessStopped(identity: ProcessIdentity): boolean {
  if (!HAS_PROC || identity.host !== thisHost()) return false;
  const stat = readProcStat(identity.pid);
  return (
    stat !== undefined &&
    (stat.state === 'T' || stat.state === 't') &&
    (identity.startTime === null || stat.startTime === identity.startTime)
  );
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

/**
 * The tag of a marker: a soft real-time CPU limit (RLIMIT_RTTIME, in microseconds) that
 * spawnSupervised gives a worker or verify command through prlimit. Every descendant inherits
 * it — through fork, exec, setsid and `env -i` alike — so a daemon that cleared its
 * environment and left the session still carries it (/proc/<pid>/limits). It binds only
 * processes under a real-time scheduling policy, and then only after 2^40 µs (about 12 days)
 * of CPU: nothing a worker does notices it. Derived from the marker, so anyone who knows the
 * marker (a successor, `baton stop`) knows the tag.
 */
export function markerTag(marker: string): number {
  const digest = createHash('sha256').update(marker).digest();
  return 2 ** 40 + (digest.readUInt32BE(0) & 0x3fffffff);
}

/** What one look at /proc read of each process (environment, limits): each read once, however many markers. */
interface Looks {
  environs: Map<number, Buffer | undefined>;
  tags: Map<number, number | undefined>;
}

const newLooks = (): Looks => ({ environs: new Map(), tags: new Map() });

function carriesMarker(pid: number, marker: string, looks: Looks): boolean {
  const { environs } = looks;
  if (!environs.has(pid)) {
    try {
      // NUL-separated KEY=VALUE entries; a leading NUL makes the first entry match like the others.
      environs.set(pid, Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]));
    } catch {
      environs.set(pid, undefined); // another user's process, or gone
    }
  }
  if (environs.get(pid)?.includes(`\0${marker}\0`)) return true;
  return tagOf(pid, looks) === markerTag(marker);
}

function tagOf(pid: number, looks: Looks): number | undefined {
  if (!looks.tags.has(pid)) {
    let tag: number | undefined;
    try {
      const line = /^Max realtime timeout\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
      tag = line ? Number(line[1]) : undefined;
    } catch {
      // another user's process, or gone
    }
    looks.tags.set(pid, tag);
  }
  return looks.tags.get(pid);
}

/**
 * The process group and session a worker leads — or, for a worker under its exit waiter
 * (spawnSupervised), the ones its waiter leads: the waiter is its parent and was started in a
 * session of its own; in a PID namespace, the ones unshare leads, its waiter's parent. Any
 * other group is not the worker's to signal.
 */
function ownGroupOf(stat: ProcStat, parentOf: (pid: number) => number | undefined): { pgrp: number; session: number } {
  const leader = stat.pgrp === stat.session ? stat.pgrp : undefined;
  const underWaiter = leader !== undefined && (leader === stat.ppid || leader === parentOf(stat.ppid));
  return underWaiter ? { pgrp: leader, session: leader } : { pgrp: stat.pid, session: stat.pid };
}

const parentOnProc = (pid: number): number | undefined => readProcStat(pid)?.ppid;

/** Is this argv a held process's gate (spawnSupervised's GATE_NAME at argv[3] of `sh -c <script>`)? */
function isGateArgv(argv: readonly string[]): boolean {
  return argv[1] === '-c' && argv[3] === 'baton-gate';
}

/**
 * The gate a worker's exit waiter started (spawnSupervised): its child whose argv is the gate's,
 * once it has exec'd; undefined until then. `gone` when the waiter itself is gone.
 */
export function gateChildOf(waiterPid: number): number | 'gone' | undefined {
  const children = childrenOf(waiterPid);
  if (children === 'gone') return 'gone';
  for (const pid of children) {
    try {
      if (isGateArgv(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0'))) return pid;
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

/**
 * The gate under the waiter that `leader` (unshare, spawnSupervised) started as its PID
 * namespace's init: the gate of its only child. `gone` when the leader is gone.
 */
export function gateGrandchildOf(leader: number): number | 'gone' | undefined {
  const children = childrenOf(leader);
  if (children === 'gone') return 'gone';
  for (const pid of children) {
    const found = gateChildOf(pid);
    if (found !== 'gone' && found !== undefined) return found;
  }
  return undefined;
}

function childrenOf(parent: number): number[] | 'gone' {
  const stat = readProcStat(parent);
  if (!stat || stat.state === 'Z' || stat.state === 'X') return 'gone';
  try {
    return readFileSync(`/proc/${parent}/task/${parent}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    // A kernel without the children file: by parent, in one look at /proc.
    return allProcesses()
      .filter((p) => p.ppid === parent)
      .map((p) => p.pid);
  }
}

/**
 * A process spawnSupervised started held at its gate that was never let go: it has run
 * nothing of its command (its argv is still the gate's).
 */
export function isHeldAtGate(identity: ProcessIdentity): boolean {
  if (!HAS_PROC || identity.host !== thisHost() || !isVerifiablyAlive(identity)) return false;
  try {
    return isGateArgv(readFileSync(`/proc/${identity.pid}/cmdline`, 'utf8').split('\0'));
  } catch {
    return false;
  }
}

/**
 * True only when `identity` is provably the process now running under its pid: on Linux that
 * takes a recorded start time that matches. This, not `isProcessAlive` (which falls back to
 * the pid when no start time was recorded), decides whether a pid or a group may be signalled.
 */
function isVerifiablyAlive(identity: ProcessIdentity): boolean {
  if (identity.host !== thisHost()) return false;
  if (!HAS_PROC) return isProcessAlive(identity) === true;
  if (identity.startTime === null) return false;
  const stat = readProcStat(identity.pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X' && stat.startTime === identity.startTime;
}

/**
 * Every live process that belongs to a worker: its descendants (by parent), its process
 * group and session (a worker runs as a group and session leader), and — to catch a
 * descendant that detached with setsid and lost its parent — every process whose
 * environment carries the worker's marker (`BATON_RUNTIME_ID=<id>`). The group and session
 * count only while the worker itself, pid and start time, is alive: once it is gone a group
 * with its number may be anyone's. Without a recorded worker process (a coordinator that died
 * between spawning it and recording its pid) the marker is all there is to go by. This process
 * is never part of the answer.
 */
export function findWorkerProcesses(root: ProcessIdentity | undefined, marker?: string): ProcessIdentity[] {
  return findProcessesOfWorkers([{ root, marker }])[0]!;
}

/**
 * The processes of several workers (see findWorkerProcesses), from one look at /proc: what
 * a sweep after many workers exited costs about as much as one.
 */
export function findProcessesOfWorkers(
  workers: ReadonlyArray<{ root: ProcessIdentity | undefined; marker?: string }>,
): ProcessIdentity[][] {
  if (!HAS_PROC)
    return workers.map(({ root }) => (root && root.host === thisHost() && isProcessAlive(root) ? [root] : []));
  let all: ProcStat[] | undefined;
  const looks = newLooks();
  return workers.map(({ root, marker }) => {
    if (root && root.host !== thisHost()) return [];
    const self = ownPid();
    all ??= allProcesses().filter((p) => p.state !== 'Z' && p.state !== 'X' && p.pid !== self);
    return membersOf(all, root, marker, looks);
  });
}

/** How long (in clock ticks, 100 a second) before its worker a namespace's init may have started, at most. */
const INIT_LEAD_TICKS = 6000;

function membersOf(
  all: readonly ProcStat[],
  root: ProcessIdentity | undefined,
  marker: string | undefined,
  looks: Looks,
): ProcessIdentity[] {
  const rootStat = root?.startTime ? all.find((p) => p.pid === root.pid && p.startTime === root.startTime) : undefined;
  const members = new Map<number, ProcStat>();
  if (rootStat) {
    members.set(rootStat.pid, rootStat);
    const { pgrp, session } = ownGroupOf(rootStat, (pid) => all.find((p) => p.pid === pid)?.ppid);
    for (const p of all) if (p.pgrp === pgrp || p.session === session) members.set(p.pid, p);
  }
  if (rootStat) {
    // The worker's PID namespace (spawnSupervised): its init is the worker's parent. Every process the worker
    // starts descends from that init, however it detaches — none can leave the namespace, and one whose parent
    // dies is handed to the init — so the descent below finds them all.
    const init = all.find((p) => p.pid === rootStat.ppid);
    if (init && isNamespaceInit(init.pid)) members.set(init.pid, init);
  }
  if (marker) {
    // A process that started before the worker cannot descend from it: read the
    // environment of the younger ones only (most of a machine's processes are older).
    const since = root?.startTime ? Number(root.startTime) : 0;
    for (const p of all)
      if (!members.has(p.pid) && Number(p.startTime) >= since && carriesMarker(p.pid, marker, looks))
        members.set(p.pid, p);
    // The namespace's init started just before the worker (its parent): once the worker is gone, it is found by the
    // marker Baton gave it, which no process of the worker can change in it.
    if (!rootStat)
      for (const p of all)
        if (!members.has(p.pid) && Number(p.startTime) >= since - INIT_LEAD_TICKS && Number(p.startTime) < since)
          if (carriesMarker(p.pid, marker, looks) && isNamespaceInit(p.pid)) members.set(p.pid, p);
  }
  // Descendants by parent, to a fixed point (a child may have moved to its own group).
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (!members.has(p.pid) && members.has(p.ppid)) {
        members.set(p.pid, p);
        grew = true;
      }
    }
  }
  const host = thisHost();
  return [...members.values()].map((p) => ({ pid: p.pid, startTime: p.startTime, host }));
}

/**
 * The process that carries a marker while its parent does not: the root a coordinator
 * started (found when it died between spawning it and recording its pid).
 */
export function findMarkedRoot(marker: string): ProcessIdentity | undefined {
  if (!HAS_PROC) return undefined; // the marker is read from /proc
  const marked = findWorkerProcesses(undefined, marker);
  if (marked.length === 0) return undefined;
  const pids = new Set(marked.map((p) => p.pid));
  const root = marked.find((p) => !pids.has(readProcStat(p.pid)?.ppid ?? -1)) ?? marked[0]!;
  return identityOf(root.pid);
}

export interface TerminationReport {
  /** Every process of the worker that was found (and signalled). */
  processes: ProcessIdentity[];
  /** Those still alive after TERM, the grace period, KILL and a last check. Empty means confirmed. */
  survivors: ProcessIdentity[];
  confirmed: boolean;
  killed: boolean;
}

/** Signals one process, checked against its start time right before: never a pid that now belongs to someone else. */
function signal(target: ProcessIdentity, sig: NodeJS.Signals): void {
  if (!isVerifiablyAlive(target)) return;
  const pid = signallablePid(target.pid);
  if (pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch {
    // gone meanwhile, or not ours to signal (it then shows up as a survivor)
  }
}

/**
 * Signals the worker's process group, which catches a child forked between a scan and the
 * signals. Only while the worker itself is alive (its pid cannot be reused while it runs, so
 * the group is its own) and never when this process is in that group (a worker that runs
 * `baton stop` must not end the command halfway).
 */
function signalGroup(root: ProcessIdentity | undefined, sig: NodeJS.Signals): void {
  if (!root || !isVerifiablyAlive(root)) return;
  const rootStat = HAS_PROC ? readProcStat(root.pid) : undefined;
  const group = rootStat ? ownGroupOf(rootStat, parentOnProc).pgrp : root.pid;
  if (HAS_PROC && readProcStat(ownPid())?.pgrp === group) return;
  const leader = signallablePid(group);
  if (leader === undefined) return;
  try {
    process.kill(-leader, sig);
  } catch {
    // not a group leader, or the group is gone
  }
}

function treeKillAsync(pid: number, sig: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => treeKill(pid, sig, () => resolve()));
}

const identityKey = (p: ProcessIdentity): string => `${p.pid}:${p.startTime ?? ''}`;

/**
 * Ends a worker and everything it started: TERM to each process (plus SIGCONT to one that
 * is stopped, so it can act on the TERM) and to the group, then — after the grace period, or
 * as soon as all are gone — KILL to whatever is left until it is gone or `killWaitMs` has
 * passed, then proves the outcome by looking again. Processes the worker starts meanwhile
 * are found by each new look and get the same treatment. Returns what it found and whether
 * the end is confirmed.
 *
 * With /proc (Linux) every signal goes to a (pid, start time) checked just before it is sent;
 * tree-kill, which walks `ps` and signals bare pids some time later, is used only where
 * there is no /proc (there the pid is all there is).
 */
export async function terminateWorker(
  root: ProcessIdentity | undefined,
  options: { marker?: string; graceMs: number; clock: Clock; killWaitMs?: number },
): Promise<TerminationReport> {
  if (root && root.host !== thisHost()) return { processes: [], survivors: [], confirmed: false, killed: false };
  const { clock } = options;
  const seen = new Map<string, ProcessIdentity>();
  const termed = new Set<string>();
  const gather = (): void => {
    for (const p of findWorkerProcesses(root, options.marker)) seen.set(identityKey(p), p);
  };
  const alive = (): ProcessIdentity[] => [...seen.values()].filter((p) => isProcessAlive(p) !== false);
  const terminate = (): void => {
    for (const p of alive()) {
      if (termed.has(identityKey(p))) continue;
      termed.add(identityKey(p));
      signal(p, 'SIGTERM');
      if (isProcessStopped(p)) signal(p, 'SIGCONT');
    }
  };

  gather();
  if (seen.size === 0)
    return { processes: [], survivors: [], confirmed: !root || isProcessAlive(root) !== true, killed: false };
  terminate();
  signalGroup(root, 'SIGTERM');
  signalGroup(root, 'SIGCONT');
  if (!HAS_PROC && root && isProcessAlive(root) === true) await treeKillAsync(root.pid, 'SIGTERM');

  const graceEnds = clock.monotonic() + options.graceMs;
  for (;;) {
    gather(); // a process may still be starting children
    terminate();
    if (alive().length === 0 || clock.monotonic() >= graceEnds) break;
    await sleep(clock, 25);
  }

  let killed = false;
  const killEnds = clock.monotonic() + (options.killWaitMs ?? KILL_WAIT_MS);
  for (let round = 0; ; round++) {
    gather();
    const left = alive();
    if (left.length === 0 || (round > 0 && clock.monotonic() >= killEnds)) break;
    killed = true;
    for (const p of left) signal(p, 'SIGKILL');
    signalGroup(root, 'SIGKILL');
    if (!HAS_PROC && root && isProcessAlive(root) === true) await treeKillAsync(root.pid, 'SIGKILL');
    await sleep(clock, 25);
  }
  gather(); // the last look: anything started in the meantime is a survivor, not a success
  const survivors = alive();
  return { processes: [...seen.values()], survivors, confirmed: survivors.length === 0, killed };
}
