import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname } from 'node:path';
import { BatonError } from '../../domain/errors';
import { identityOf } from './processes';
import { type ProcessIdentity } from '../../domain/process';
import { loadExeca } from './execa';
import type { WorkerLaunch } from '../../domain/workerLaunch';
import type { Options } from 'execa';

export interface WorkerExit {
  exitCode: number | null;
  signal: string | null;
}

export interface WorkerProcess {
  identity: ProcessIdentity;
  exited: Promise<WorkerExit>;
}

export interface SpawnWorkerOptions {
  cwd: string;
  logPath: string;
  /** BATON_* variables; the runtime id doubles as the marker that finds the worker's descendants. */
  env: Record<string, string>;
}

/**
 * Starts a worker: argv only (execa, never a shell), in its own process group and session
 * (so it and its children can be stopped together), stdout and stderr appended to its log
 * file — a file, not a pipe, so the worker outlives a coordinator that dies and can be
 * adopted by the next one.
 */
export async function spawnWorker(launch: WorkerLaunch, options: SpawnWorkerOptions): Promise<WorkerProcess> {
  const { execa } = await loadExeca();
  mkdirSync(dirname(options.logPath), { recursive: true });
  // The log is handed to the worker as its own file descriptor (O_APPEND, shared by stdout and
  // stderr), never piped through this process: the worker keeps writing if this process dies.
  // Opened on the thread pool: creating a file costs ~1 ms on some disks, time the
  // coordinator's thread spends on other workers meanwhile.
  const logFile = await open(options.logPath, 'a');
  const log = logFile.fd;
  try {
    const execaOptions: Options = {
      cwd: options.cwd,
      env: { ...launch.env, ...options.env },
      extendEnv: true,
      detached: true,
      cleanup: false,
      reject: false,
      stdout: fileDescriptor(log),
      stderr: fileDescriptor(log),
      ...(launch.stdin !== undefined ? { input: launch.stdin } : { stdin: 'ignore' }),
    };
    const subprocess = execa(launch.argv[0]!, launch.argv.slice(1), execaOptions);
    const exited = subprocess.then((result) => ({ exitCode: result.exitCode ?? null, signal: result.signal ?? null }));
    if (subprocess.pid === undefined) {
      const result = await subprocess;
      const reason = (result as { code?: string }).code ?? result.shortMessage ?? 'unknown error';
      throw new BatonError(
        'worker.spawn-failed',
        `Could not start worker "${launch.workerId}" (${launch.argv[0]}): ${reason}.`,
      );
    }
    return { identity: identityOf(subprocess.pid), exited };
  } finally {
    await logFile.close(); // the worker has its own copy
  }
}

/** execa passes an integer stdio value to the child as that descriptor; its typings only lack the case. */
function fileDescriptor(fd: number): Options['stdout'] {
  return fd as unknown as Options['stdout'];
}
