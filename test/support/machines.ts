// Two "machines" on one team store in a system test (test/system/cli/postgresFailover.test.ts, postgresJoin.test.ts):
// each machine's `baton` runs in a process group of its own, so that neither can probe or signal the other's processes.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { cleanEnv, CLI, describeResult, runCli } from './cli';

export interface StoredEvent {
  seq: number;
  type: string;
  at: number;
  data: Record<string, unknown>;
}

/** A machine's `baton` as a test drives it: its process, its exit code, what it printed so far. */
export interface MachineBaton {
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
}

/**
 * Starts `baton` processes, each in a process group of its own with its output gathered; `killAll` (an afterEach)
 * continues and kills every group still running. `clockAhead`: under faketime (`+60s`).
 */
export function machineBatons(): {
  start(args: string[], cwd: string, env: Record<string, string>, clockAhead?: string): MachineBaton;
  killAll(): void;
} {
  const children: ChildProcess[] = [];
  return {
    start(args, cwd, env, clockAhead) {
      const argv = [process.execPath, CLI, ...args];
      const child = spawn(
        clockAhead ? 'faketime' : argv[0]!,
        clockAhead ? ['-f', clockAhead, ...argv] : argv.slice(1),
        { cwd, env: cleanEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true },
      );
      children.push(child);
      let output = '';
      child.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
      child.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      return { child, exited, output: () => output };
    },
    killAll() {
      for (const child of children.splice(0)) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        try {
          process.kill(child.pid!, 'SIGCONT');
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          child.kill('SIGKILL');
        }
      }
    },
  };
}

/** The run's id and its whole event log as `baton events --json` gives them in `cwd`. */
export async function storedEvents(
  cwd: string,
  env: Record<string, string>,
): Promise<{ runId: string; events: StoredEvent[] }> {
  const listed = await runCli(['events', '--json'], { cwd, env });
  assert.equal(listed.code, 0, describeResult(listed));
  return listed.json<{ runId: string; events: StoredEvent[] }>();
}
