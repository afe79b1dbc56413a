import { accessSync, closeSync, constants, existsSync, mkdirSync, openSync, statSync, writeSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import type { Writable } from 'node:stream';
import type { Options } from 'execa';
import { BatonError } from '../../domain/errors';
import { openBatonFile } from '../files/safeWrite';
import type { ProcessIdentity } from '../../domain/process';
import type { WorkerLaunch } from '../../domain/workerLaunch';
import { loadExeca } from './execa';
import { exitFromStatus, exitRecordHeader, NON_FATAL_SIGNALS, type ExitRecordOwner } from '../../domain/exitRecord';
import { gateChildOf, gateGrandchildOf, identityOf, markerTag, procPidOfChild } from './processes';
import { pidNamespaceLauncher, pidNamespaceOf } from './pidNamespace';

export interface WorkerExit {
  exitCode: number | null;
  signal: string | null;
}

export interface SupervisedProcess {
  identity: ProcessIdentity;
  exited: Promise<WorkerExit>;
  /**
   * A held process (`held: true`) waits at its gate until this is called; then it becomes the
   * command. Without a gate it does nothing.
   */
  release(): void;
  /** A held process never becomes the command: its gate closes and it is killed. */
  abort(): void;
}

export interface SupervisedCommand {
  argv: readonly string[];
  env?: Record<string, string>;
  /** Written to its stdin, then closed; without it stdin is ignored. */
  stdin?: string;
}

export interface SpawnOptions {
  cwd: string;
  /** Where its stdout and stderr go (appended). */
  logPath: string;
  /**
   * The workspace whose `.baton/` holds the log: the log is then opened as every file there is,
   * never through a planted link (effects/files/safeWrite.ts). Every engine caller passes it.
   */
  workspace?: string;
  /** BATON_* variables, among them the marker (BATON_RUNTIME_ID, BATON_VERIFY_ID) that finds its descendants. */
  env: Record<string, string>;
  /**
   * The marker (`NAME=value`, also in `env`): its tag (processes.ts, `markerTag`) is set as the
   * process's real-time CPU limit, which its descendants inherit even when they clear their
   * environment.
   */
  marker?: string;
  /**
   * Start it held at a gate: it runs nothing of the command until `release()` — and never, if
   * the process that started it dies or calls `abort()` first. The coordinator records the
   * process in the store (a transaction its epoch fences) between the two, so a worker only
   * ever runs when the store knows it (docs/architecture.md, "Fenced side effects").
   */
  held?: boolean;
  /** Variables of this process's environment it does not inherit (the store's credentials); BATON_STORE_URL always. */
  withhold?: readonly string[];
  /**
   * Leave its end where the next coordinator finds it (domain/exitRecord.ts): the process is
   * started under an exit waiter that writes its status and end time to this file (under
   * `.baton/`, opened by this process as every file there is) once it ends. Held workers only
   * (the record's `started` line comes from the gate); needs `workspace`.
   */
  exitRecord?: { path: string; owner: ExitRecordOwner };
}

/** argv[0] of the gate, how a held process is told apart (processes.ts, `isHeldAtGate`). */
export const GATE_NAME = 'baton-gate';

/**
 * The gate: reads one line from fd 3, the coordinator's end of a pipe. `go` lets it become
 * the command; anything else — end of file because the coordinator died, or `abort()` —
 * ends it with exit 125 before the command runs. The command reaches it as positional
 * parameters ("$@"), never as shell text. With prlimit, the tag is set on the way. $1 says
 * it runs under an exit waiter, whose record it tells on fd 5 that the worker was let go.
 */
const GATE_SCRIPT = [
  'w=$1; p=$2; t=$3; shift 3',
  'IFS= read -r go <&3 && [ "$go" = go ] || exit 125',
  'exec 3<&-',
  // Under an exit waiter: the record says the worker was let go (a gate that never opened leaves no evidence).
  'if [ -n "$w" ]; then echo started >&5; exec 5>&-; fi',
  'if [ -n "$p" ]; then exec "$p" --rttime="$t": -- "$@"; fi',
  'exec "$@"',
].join('\n');

/** argv[0] of a worker's exit waiter: the parent that outlives nothing but its worker (EXIT_WAITER_SCRIPT). */
export const WAITER_NAME = 'baton-waiter';

/**
 * The exit waiter (docs/workers.md, "The exit record"): runs the gate (and so the worker) as its
 * only child, in the foreground — stdin, stdout and stderr are the worker's, untouched — then,
 * when its first argument is `w`, appends `ended status=<shell status>` to the record on fd 5 (a
 * shell builtin: no program starts after the worker's end; the write's time is the end time) and
 * ends as its worker did: the same exit code, or killed by the same signal, so the coordinator
 * that watches sees what it saw without a waiter. Its other arguments are the gate's argv.
 *
 * In a PID namespace it is the namespace's init (pid 1), with or without a record: the worker is
 * then never pid 1, which ignores every signal it has no handler for, and acts on TERM as it
 * would anywhere. The kernel keeps a namespace's init from signalling itself, so there it ends
 * with the status instead and spawnSupervised reads the signal back from it (`exitFromStatus`).
 *
 * No fsync: the record outlives the coordinator (a process), which is what it is for. A machine that
 * goes down before the kernel writes it back loses it, and the attempt is then unknown — stale and
 * retried — as is the rest of what the worker left unwritten (docs/workers.md, "The exit record").
 */
const EXIT_WAITER_SCRIPT = [
  'r=$1; shift',
  // The shell's own words ("Killed", for a worker killed by a signal) stay out of the worker's log: the worker's
  // stderr is set in the subshell (which execs it: one process), the shell's own is /dev/null.
  'exec 6>&2 2>/dev/null',
  '( "$@" ) 2>&6 6>&-',
  's=$?',
  'exec 3<&-',
  'if [ -n "$r" ]; then echo "ended status=$s" >&5; exec 5>&-; fi',
  'n=$((s - 128))',
  `if [ "$n" -ge 1 ] && [ "$n" -le 64 ]; then case $n in ${NON_FATAL_SIGNALS.join('|')}) ;; *) kill -$n $$ ;; esac; fi`,
  'exit $s',
].join('\n');

const SHELL = '/bin/sh';
let prlimitPath: string | undefined | null = null;

/** util-linux prlimit, which sets the tag (absent: descendants are found by marker and tree only). */
function prlimit(): string | undefined {
  if (prlimitPath === null)
    prlimitPath = ['/usr/bin/prlimit', '/bin/prlimit', '/usr/sbin/prlimit', '/sbin/prlimit'].find((p) => existsSync(p));
  return prlimitPath;
}

/** Gates and tags need a POSIX shell and /proc; elsewhere a held process starts at once (documented). */
const CAN_GATE = process.platform === 'linux' && existsSync(SHELL);

/**
 * Starts a process Baton supervises — a worker or a verify command — the one way: argv only
 * (execa, never a shell parsing it), in its own process group and session (so it and its
 * children stop together), stdout and stderr appended to its log file — a file, not a pipe,
 * so the process outlives a coordinator that dies and can be adopted by the next one.
 * Resolves with its identity (pid and start time), or with why it could not start (ENOENT,
 * EACCES).
 */
export async function spawnSupervised(
  command: SupervisedCommand,
  options: SpawnOptions,
): Promise<SupervisedProcess | { notStarted: string }> {
  const { execa } = await loadExeca();
  const env = { ...command.env, ...options.env };
  const gated = CAN_GATE && (options.held === true || options.marker !== undefined);
  const recorded = gated && options.held === true && options.exitRecord && options.workspace !== undefined;
  // A worker or verify command Baton must find again runs in a PID namespace of its own, where there is one.
  const launcher = gated ? pidNamespaceLauncher() : undefined;
  const namespace = launcher && 'argv' in launcher ? launcher : undefined;
  let argv: readonly string[] = command.argv;
  if (gated) {
    // The gate's shell would only say "not found" in the log: find the command first, as exec would.
    const found = findExecutable(command.argv[0]!, options.cwd, env.PATH ?? process.env.PATH ?? '');
    if ('notFound' in found) return { notStarted: found.notFound };
    const tag = options.marker ? markerTag(options.marker) : undefined;
    const limiter = tag !== undefined ? (prlimit() ?? '') : '';
    const gate = [SHELL, '-c', GATE_SCRIPT, GATE_NAME, recorded ? 'w' : '', limiter, String(tag ?? 0)];
    argv = [...gate, found.path, ...command.argv.slice(1)];
    if (namespace || recorded) argv = [SHELL, '-c', EXIT_WAITER_SCRIPT, WAITER_NAME, recorded ? 'w' : '', ...argv];
    if (namespace) argv = [...namespace.argv, ...argv];
  }
  // The exit record is opened here, as every file under .baton/ is, and handed to the waiter as fd 5: the shell never
  // opens a path a worker could have replaced. Its first line fences it to this attempt.
  const record = recorded ? openExitRecord(options.workspace!, options.exitRecord!) : undefined;
  // The log is handed over as the process's own file descriptor (O_APPEND, shared by stdout and
  // stderr), never piped through this process: the process keeps writing if this one dies.
  let log: number;
  if (options.workspace !== undefined) {
    log = openBatonFile(options.workspace, options.logPath, 'append');
  } else {
    mkdirSync(dirname(options.logPath), { recursive: true });
    log = openSync(options.logPath, 'a');
  }
  try {
    const execaOptions: Options = {
      cwd: options.cwd,
      // PWD as a shell sets it: opencode takes its project folder from $PWD, not getcwd() (docs/agent-clis.md).
      // The store's URL and password (the team database's, docs/team.md) are Baton's, not the worker's: an agent's
      // environment can end up in its transcript and at its model provider. A worker whose config sets one keeps it.
      env: { ...withheld(options.withhold), ...env, PWD: options.cwd },
      extendEnv: true,
      detached: true,
      cleanup: false,
      reject: false,
      ...(command.stdin !== undefined ? { input: command.stdin } : {}),
      stdio: [
        command.stdin !== undefined ? 'pipe' : 'ignore',
        fileDescriptor(log),
        fileDescriptor(log),
        ...(gated ? ['pipe' as const] : []),
        ...(record !== undefined ? ['ignore' as const, extraDescriptor(record)] : []),
      ],
    };
    const subprocess = execa(argv[0]!, argv.slice(1), execaOptions);
    const exited = subprocess.then((result) => exitOf(result.exitCode ?? null, result.signal ?? null, !!namespace));
    if (subprocess.pid === undefined) {
      const result = await subprocess;
      return { notStarted: (result as { code?: string }).code ?? result.shortMessage ?? 'unknown error' };
    }
    // Under a waiter the worker is the waiter's child: its identity is the gate's, which becomes the command. In a
    // namespace the waiter is the child of unshare, the leader. `leader` is signalled; /proc names it `onProc` (the
    // same number, unless this process runs in a worker's namespace: a `baton ingest` that verifies).
    const leader = subprocess.pid;
    const onProc = procPidOfChild(leader);
    const worker =
      namespace || record !== undefined
        ? onProc === undefined
          ? undefined
          : await gateOf(onProc, namespace ? 2 : 1)
        : (onProc ?? leader);
    if (worker === undefined) {
      killGroup(leader);
      return { notStarted: 'its exit waiter ended before its gate started' };
    }
    // In a namespace the worker's identity names it: its processes, and a token presented from them, are known by it.
    const pidNamespace = namespace ? pidNamespaceOf(worker) : undefined;
    const identity = { ...identityOf(worker), ...(pidNamespace ? { pidNamespace } : {}) };
    const gate = gated ? (subprocess.stdio[3] as Writable | undefined) : undefined;
    // A gate whose process is gone (aborted, killed) refuses the write: nothing to report.
    gate?.on('error', () => undefined);
    let settled = !gate;
    const release = (): void => {
      if (settled) return;
      settled = true;
      gate!.end('go\n');
    };
    const abort = (): void => {
      if (!settled) {
        settled = true;
        gate!.destroy();
      }
      // Our own child, held at its gate (or already gone): its group is its own (the waiter's, under one).
      killGroup(leader);
    };
    if (gated && !options.held) release();
    return { identity, exited, release, abort };
  } finally {
    closeSync(log); // the process has its own copy
    if (record !== undefined) closeSync(record);
  }
}

/** Creates the exit record with its fence (the attempt's line) and returns it open for the waiter. */
function openExitRecord(workspace: string, target: NonNullable<SpawnOptions['exitRecord']>): number {
  const fd = openBatonFile(workspace, target.path, 'write');
  try {
    writeSync(fd, exitRecordHeader(target.owner));
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * The gate `leader` starts `depth` generations down (1: the waiter's child; 2: under unshare and the waiter), once
 * it has exec'd (a millisecond or two; longer on a loaded machine).
 */
async function gateOf(leader: number, depth: 1 | 2): Promise<number | undefined> {
  for (let waited = 0; waited < GATE_START_LIMIT_MS; waited += 2) {
    const found = depth === 1 ? gateChildOf(leader) : gateGrandchildOf(leader);
    if (found === 'gone') return undefined;
    if (found !== undefined) return found;
    await new Promise((resolveWait) => setTimeout(resolveWait, 2));
  }
  return undefined;
}

/** How long a waiter may take to start its gate before the start counts as failed. */
const GATE_START_LIMIT_MS = 30_000;

/**
 * How a supervised process ended. In a PID namespace its waiter, the namespace's init, cannot
 * end by its worker's signal and exits with the shell's status instead: 128+n of a fatal signal
 * is read back as that signal, as the exit record reads it.
 */
function exitOf(exitCode: number | null, signal: string | null, namespaced: boolean): WorkerExit {
  if (!namespaced || exitCode === null) return { exitCode, signal };
  const { signalNumber } = exitFromStatus(exitCode);
  if (signalNumber === null) return { exitCode, signal };
  const named = Object.entries(osConstants.signals).find(([, value]) => value === signalNumber);
  return named ? { exitCode: null, signal: named[0] } : { exitCode, signal };
}

function killGroup(leader: number): void {
  try {
    process.kill(-leader, 'SIGKILL');
  } catch {
    // gone already
  }
}

/** A worker, started as spawnSupervised does; one that cannot start is `worker.spawn-failed`. */
export async function spawnWorker(launch: WorkerLaunch, options: SpawnOptions): Promise<SupervisedProcess> {
  const started = await spawnSupervised(launch, options);
  if ('notStarted' in started) {
    throw new BatonError(
      'worker.spawn-failed',
      `Could not start worker "${launch.workerId}" (${launch.argv[0]}): ${started.notStarted}.`,
    );
  }
  return started;
}

/** Where exec would find `command` (a path, or a name looked up on PATH), or why it would not (ENOENT, EACCES). */
function findExecutable(command: string, cwd: string, path: string): { path: string } | { notFound: string } {
  const candidates = command.includes('/')
    ? [isAbsolute(command) ? command : resolve(cwd, command)]
    : path
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(resolve(cwd, dir), command));
  let denied = false;
  for (const candidate of candidates) {
    try {
      if (statSync(candidate).isDirectory()) {
        denied = true;
        continue;
      }
      accessSync(candidate, constants.X_OK);
      return { path: candidate };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EACCES') denied = true;
    }
  }
  return { notFound: denied ? 'EACCES' : 'ENOENT' };
}

/** execa passes an integer stdio value to the child as that descriptor; its typings only lack the case. */
function fileDescriptor(fd: number): Options['stdout'] {
  return fd as unknown as Options['stdout'];
}

/** The same for a descriptor past stderr (fd 3 and up). */
function extraDescriptor(fd: number): 'ignore' {
  return fd as unknown as 'ignore';
}

/** `names` as variables unset in a child's environment (execa leaves out those set to undefined). */
function withheld(names: readonly string[] = []): Record<string, undefined> {
  const out: Record<string, undefined> = { BATON_STORE_URL: undefined };
  for (const name of names) out[name] = undefined;
  return out;
}
