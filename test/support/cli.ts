import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Runs the built `baton` CLI (dist/cli.js) as a real child process, the way a user or a
 * worker runs it: its own process, its own cwd, output through pipes (so not a TTY).
 */

export const ROOT = resolve(__dirname, '../..');
/** The CLI under test: dist/cli.js, or another bundle named by $BATON_CLI_UNDER_TEST (never built here). */
export const CLI = process.env.BATON_CLI_UNDER_TEST
  ? resolve(process.env.BATON_CLI_UNDER_TEST)
  : join(ROOT, 'dist', 'cli.js');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

let built = false;

/** Builds dist/cli.js when it is missing or older than a file under src/ (about a second with esbuild). */
export function ensureCliBuilt(): void {
  if (built || process.env.BATON_CLI_UNDER_TEST) return;
  const stale = !existsSync(CLI) || statSync(CLI).mtimeMs < newestMtime(join(ROOT, 'src'));
  if (stale) execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'pipe' });
  built = true;
}

/** The environment of a child: this one without anything that would change what the CLI does. */
export function cleanEnv(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith('BATON_') || key === 'NO_COLOR' || key === 'FORCE_COLOR' || key === 'NODE_OPTIONS') continue;
    env[key] = value;
  }
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout parsed as one JSON document (fails the test with the raw output when it is not). */
  json<T = Record<string, any>>(): T; // eslint-disable-line @typescript-eslint/no-explicit-any
}

export interface CliOptions {
  cwd: string;
  env?: Record<string, string | undefined>;
  timeoutMs?: number;
  /** Written to the command's stdin, which is then closed (`baton ingest --artifact -`); without it stdin is closed. */
  input?: string | Buffer;
  /**
   * Run it as a worker's own child: the socket of a test/fixtures/workers/relayWorker.js worker. The command gets
   * that worker's environment with `env` over it — how an attempt's `baton mcp`, `check-result` or `ask` runs.
   */
  asWorker?: string;
}

const RELAY_CLIENT = join(ROOT, 'test/fixtures/workers/relayClient.js');

/** The argv (after node) that runs `baton …args` as a child of the relayWorker.js worker listening on `socket`. */
export function relayedArgv(socket: string, args: string[], env: Record<string, string | undefined> = {}): string[] {
  return [RELAY_CLIENT, socket, JSON.stringify({ args, env })];
}

/** Runs `node dist/cli.js …args` and resolves when it exits. */
export function runCli(args: string[], options: CliOptions): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(
      process.execPath,
      options.asWorker ? relayedArgv(options.asWorker, args, options.env) : [CLI, ...args],
      {
        cwd: options.cwd,
        env: cleanEnv(options.asWorker ? {} : options.env),
        stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      },
    );
    // A command that refuses before reading all of it closes stdin early: that EPIPE is its business, not the test's.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(
        new Error(
          `baton ${args.join(' ')} did not exit within ${options.timeoutMs ?? 60_000} ms\nstdout: ${stdout}\nstderr: ${stderr}`,
        ),
      );
    }, options.timeoutMs ?? 60_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({
        code,
        signal,
        stdout,
        stderr,
        json<T>(): T {
          try {
            return JSON.parse(stdout) as T;
          } catch {
            throw new Error(
              `baton ${args.join(' ')}: stdout is not one JSON document (exit ${code}):\n${stdout}\nstderr: ${stderr}`,
            );
          }
        },
      });
    });
  });
}

/** Starts `node dist/cli.js …args` and leaves it running (for `events --follow`). */
export function spawnCli(args: string[], options: CliOptions): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: cleanEnv(options.env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** A human-readable account of a result for assertion messages. */
export function describeResult(r: CliResult): string {
  return `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\n--- stdout ---\n${r.stdout}--- stderr ---\n${r.stderr}`;
}

/** A fresh workspace folder (real path, so it compares equal to what the CLI resolves). */
export function makeWorkspace(prefix = 'baton-cli-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** A fresh copy of examples/demo inside `into` (its machine-local .baton state left behind); returns its path. */
export function copyDemo(into: string): string {
  const source = join(ROOT, 'examples', 'demo');
  const target = join(into, 'demo');
  cpSync(source, target, {
    recursive: true,
    filter: (path) => {
      const rel = path.slice(source.length + 1).split(/[\\/]/);
      return !(rel[0] === '.baton' && rel.length > 1 && rel[1] !== 'config.json');
    },
  });
  return target;
}

export function removeWorkspace(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}

export function writeFile(workspace: string, path: string, text: string): string {
  const absolute = join(workspace, path);
  mkdirSync(dirname(absolute), { recursive: true });
  writeFileSync(absolute, text);
  return absolute;
}

export interface TaskSpec {
  id: string;
  title?: string;
  agent?: string;
  depends?: string[];
  risk?: string[];
}

/** A plan file: one ```baton-task block per task, each followed by its instructions. */
export function planText(tasks: TaskSpec[], heading = 'Plan'): string {
  const blocks = tasks.map((t) =>
    [
      '```baton-task',
      `id: ${t.id}`,
      `title: ${t.title ?? `Task ${t.id}`}`,
      `agent: ${t.agent ?? 'coder'}`,
      ...(t.depends?.length ? [`depends: [${t.depends.join(', ')}]`] : []),
      ...(t.risk?.length ? [`risk: [${t.risk.join(', ')}]`] : []),
      '```',
      '',
      `Do ${t.id}.`,
      '',
    ].join('\n'),
  );
  return `# ${heading}\n\n${blocks.join('\n')}`;
}

export interface ResultSpec {
  task: string;
  agent: string;
  status: string;
  summary?: string;
  artifacts?: string[];
  /** Extra prose before the block, to make two otherwise equal artifacts differ. */
  preface?: string;
}

/** A result artifact with one fenced ```baton-result block (docs/result-contract.md). */
export function resultText(r: ResultSpec): string {
  return [
    `# Result for ${r.task}`,
    '',
    r.preface ?? 'The work is done.',
    '',
    '```baton-result',
    'contract: baton-result-v1',
    `task: ${r.task}`,
    `agent: ${r.agent}`,
    `status: ${r.status}`,
    `summary: ${r.summary ?? 'done'}`,
    `artifacts: [${(r.artifacts ?? []).join(', ')}]`,
    '```',
    '',
  ].join('\n');
}

/** Every file under .baton/store with the sha256 of its bytes: equal fingerprints, equal store. */
export function storeFingerprint(workspace: string): Record<string, string> {
  const dir = join(workspace, '.baton', 'store');
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[relative(dir, path)] = createHash('sha256').update(readFileSync(path)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** Stack frames as Node prints them ("    at fn (file:1:2)"). */
export const STACK_FRAME = /^\s+at .+/m;

// eslint-disable-next-line no-control-regex
export const ANSI_ESCAPE = /\u001b\[/;

/** Waits until `predicate` holds, polling; rejects with `what` after `timeoutMs`. */
export async function waitFor(
  predicate: () => boolean,
  what: string,
  timeoutMs = 30_000,
  intervalMs = 25,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
