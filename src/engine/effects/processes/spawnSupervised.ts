import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Options } from 'execa';
import { BatonError } from '../../domain/errors';
import { openBatonFile } from '../files/safeWrite';
import type { ProcessIdentity } from '../../domain/process';
import type { WorkerLaunch } from '../../domain/workerLaunch';
import { loadExeca } from './execa';
import { identityOf } from './processes';

export interface WorkerExit {
  exitCode: number | null;
  signal: string | null;
}

export interface SupervisedProcess {
  identity: ProcessIdentity;
  exited: Promise<WorkerExit>;
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
}

/**
 * Starts a process Baton supervises — a worker or a verify command — the one way: argv only
 * (execa, never a shell), in its own process group and session (so it and its children stop
 * together), stdout and stderr appended to its log file — a file, not a pipe, so the process
 * outlives a coordinator that dies and can be adopted by the next one. Resolves with its
 * identity (pid and start time), or with why it could not start (ENOENT, EACCES).
 */
export async function spawnSupervised(
  command: SupervisedCommand,
  options: SpawnOptions,
): Promise<SupervisedProcess | { notStarted: string }> {
  const { execa } = await loadExeca();
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
      env: { ...command.env, ...options.env, PWD: options.cwd },
      extendEnv: true,
      detached: true,
      cleanup: false,
      reject: false,
      stdout: fileDescriptor(log),
      stderr: fileDescriptor(log),
      ...(command.stdin !== undefined ? { input: command.stdin } : { stdin: 'ignore' }),
    };
    const subprocess = execa(command.argv[0]!, command.argv.slice(1), execaOptions);
    const exited = subprocess.then((result) => ({ exitCode: result.exitCode ?? null, signal: result.signal ?? null }));
    if (subprocess.pid === undefined) {
      const result = await subprocess;
      return { notStarted: (result as { code?: string }).code ?? result.shortMessage ?? 'unknown error' };
    }
    return { identity: identityOf(subprocess.pid), exited };
  } finally {
    closeSync(log); // the process has its own copy
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

/** execa passes an integer stdio value to the child as that descriptor; its typings only lack the case. */
function fileDescriptor(fd: number): Options['stdout'] {
  return fd as unknown as Options['stdout'];
}
