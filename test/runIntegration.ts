// Runs the integration suite (test/integration, mocha inside a real VS Code extension host)
// through @vscode/test-electron's runTests, and prints its counts.
//
//   node --import tsx test/runIntegration.ts [--grep <pattern>] [--verbose] [--keep]
//
// Host: a desktop VS Code when BATON_VSCODE_EXECUTABLE names one; otherwise (this machine:
// the VS Code download is unreachable) test/support/codeServerLauncher, which runs the same
// suite in code-server's extension host and exits with the run's exit code. One suite, two
// hosts.
//
// Two windows at most: `*.test.ts` run in a trusted workspace; `*.untrusted.test.ts` (if
// any) run afterwards in a second window with workspace trust on and the folder untrusted
// (runTests always passes --disable-workspace-trust; the launcher drops it when
// BATON_LAUNCHER_TRUST=1, and test/integration/support/vscodeWithTrust.sh does for a
// desktop VS Code). Each window opens a fresh copy of test/integration/fixtures/workspace
// with its own user data and extensions folders, all removed afterwards (--keep keeps
// them). It fails when a test fails, when no test ran, or after
// BATON_INTEGRATION_TIMEOUT_MS (default 420000) per window.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runTests, TestRunFailedError } from '@vscode/test-electron';
import { build } from 'esbuild';
import { chromiumExecutable } from './e2e/support/browser';
import { CODE_SERVER_VERSION, ensureCodeServer, writeUserSettings } from './e2e/support/codeServer';
import { copyWorkspace, removeWorkspace } from './e2e/support/workspace';

const ROOT = resolve(__dirname, '..');
const SOURCE = join(ROOT, 'test', 'integration');
const OUT = join(ROOT, 'out', 'integration');
const LAUNCHER = join(ROOT, 'test', 'support', 'codeServerLauncher');
const DESKTOP_WITH_TRUST = join(SOURCE, 'support', 'vscodeWithTrust.sh');

interface Options {
  grep: string | undefined;
  verbose: boolean;
  keep: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const options: Options = { grep: undefined, verbose: false, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--grep' || arg === '-g') options.grep = argv[++i];
    else if (arg?.startsWith('--grep=')) options.grep = arg.slice('--grep='.length);
    else if (arg === '--verbose') options.verbose = true;
    else if (arg === '--keep') options.keep = true;
    else
      throw new Error(
        `Unknown option ${arg}. Usage: node --import tsx test/runIntegration.ts [--grep <pattern>] [--verbose] [--keep]`,
      );
  }
  return options;
}

/** dist/extension.js (npm run build) and out/integration/{index,**\/*.test}.js; returns the test files. */
async function buildAll(): Promise<string[]> {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { cwd: ROOT, stdio: 'inherit' });
  const tests = readdirSync(SOURCE, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts') && !file.split(/[\\/]/).includes('fixtures'))
    .sort();
  if (tests.length === 0) throw new Error(`No *.test.ts under ${SOURCE}.`);
  rmSync(OUT, { recursive: true, force: true });
  await build({
    entryPoints: [join(SOURCE, 'index.ts'), ...tests.map((file) => join(SOURCE, file))],
    outbase: SOURCE,
    outdir: OUT,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    sourcemap: 'inline',
    // Mocha is bundled into index.js: its package is ESM, which the extension host of a
    // desktop VS Code (Electron's Node) cannot require. Test files share mocha's globals.
    external: ['vscode'],
    mainFields: ['module', 'main'],
    logLevel: 'error',
  });
  return tests;
}

interface Host {
  name: string;
  desktop: string | undefined;
}

function pickHost(): Host {
  const desktop = process.env.BATON_VSCODE_EXECUTABLE;
  if (desktop) return { name: `desktop VS Code (${desktop})`, desktop };
  ensureCodeServer();
  chromiumExecutable();
  return { name: `code-server ${CODE_SERVER_VERSION}`, desktop: undefined };
}

/** Everything written to stdout and stderr from now on, still written through. */
function captureOutput(): () => string {
  const chunks: string[] = [];
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString());
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
  return () => chunks.join('');
}

interface Counts {
  passing: number;
  failing: number;
  pending: number;
}

/** Reads mocha's summary ("N passing (2s)", "N failing", "N pending") from a window's report. */
function parseCounts(output: string): Counts | undefined {
  // eslint-disable-next-line no-control-regex
  const text = output.replace(/\u001b\[[0-9;]*m/g, '');
  const passing = /^\s*(\d+) passing(?: \([^)]*\))?\s*$/m.exec(text);
  if (!passing) return undefined;
  const count = (word: string): number => Number(new RegExp(`^\\s*(\\d+) ${word}\\s*$`, 'm').exec(text)?.[1] ?? 0);
  return { passing: Number(passing[1]), failing: count('failing'), pending: count('pending') };
}

type Trust = 'trusted' | 'untrusted';

interface WindowResult {
  trust: Trust;
  exitCode: number;
  counts: Counts | undefined;
  outcome: 'done' | 'interrupted' | 'timed out';
}

/**
 * Ctrl-C and SIGTERM: let runTests forward SIGINT to the editor, which closes; a second one, or no answer in 20 s,
 * exits.
 */
class Interrupts {
  interrupted = false;
  private readonly cleanups = new Set<() => void>();
  private readonly onSigint = (): void => {
    if (this.interrupted) return this.force('Interrupted again: exiting now.');
    this.interrupted = true;
    setTimeout(() => this.force('The editor did not close within 20 s of the interrupt.'), 20_000).unref();
  };
  private readonly onSigterm = (): void => void process.emit('SIGINT');

  constructor() {
    // Registered before runTests registers its own handler, so this one stays after it.
    process.on('SIGINT', this.onSigint);
    process.on('SIGTERM', this.onSigterm);
  }

  onForce(cleanup: () => void): () => void {
    this.cleanups.add(cleanup);
    return () => this.cleanups.delete(cleanup);
  }

  private force(why: string): void {
    process.stderr.write(`${why}\n`);
    for (const cleanup of this.cleanups) cleanup();
    process.exit(1);
  }
}

async function runWindow(
  trust: Trust,
  host: Host,
  options: Options,
  interrupts: Interrupts,
  output: () => string,
): Promise<WindowResult> {
  // A hang detector per window: the trusted window's 43 tests took 3 to 4.5 min at load 15 (2026-12-07), so 300 s
  // stopped a run that was still passing.
  const timeoutMs = Number(process.env.BATON_INTEGRATION_TIMEOUT_MS || 420_000);
  const workspace = copyWorkspace();
  const scratch = mkdtempSync(join(tmpdir(), 'baton-integration-'));
  const userDataDir = join(scratch, 'user-data');
  const extensionsDir = join(scratch, 'extensions');
  mkdirSync(extensionsDir, { recursive: true });
  writeUserSettings(userDataDir);
  const cleanup = (): void => {
    if (options.keep) {
      process.stdout.write(`Kept the workspace ${workspace} and the editor's folders in ${scratch}.\n`);
      return;
    }
    removeWorkspace(workspace);
    rmSync(scratch, { recursive: true, force: true });
  };
  const forget = interrupts.onForce(cleanup);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    process.stderr.write(
      `\nThe integration tests did not finish within ${Math.round(timeoutMs / 1000)} s (BATON_INTEGRATION_TIMEOUT_MS): stopping the editor.\n`,
    );
    process.emit('SIGINT');
  }, timeoutMs);

  process.stdout.write(
    `\nIntegration tests (${trust} workspace) in the extension host of ${host.name}, workspace ${workspace}\n`,
  );
  const from = output().length;
  let exitCode: number;
  try {
    exitCode = await runTests({
      vscodeExecutablePath: host.desktop ? (trust === 'untrusted' ? DESKTOP_WITH_TRUST : host.desktop) : LAUNCHER,
      extensionDevelopmentPath: ROOT,
      extensionTestsPath: join(OUT, 'index.js'),
      launchArgs: [
        workspace,
        `--user-data-dir=${userDataDir}`,
        `--extensions-dir=${extensionsDir}`,
        '--disable-extensions',
      ],
      extensionTestsEnv: {
        BATON_TEST_WORKSPACE: workspace,
        BATON_TEST_TRUST: trust,
        ...(trust === 'untrusted' ? { BATON_LAUNCHER_TRUST: '1' } : {}),
        ...(options.grep ? { BATON_TEST_GREP: options.grep } : {}),
        ...(options.verbose ? { BATON_LAUNCHER_VERBOSE: '1' } : {}),
        // The launcher gives up (naming the test in progress, with code-server's log tail)
        // before this script does.
        BATON_LAUNCHER_TIMEOUT_MS: String(Math.max(30_000, timeoutMs - 30_000)),
      },
    });
  } catch (err) {
    if (!(err instanceof TestRunFailedError)) throw err;
    exitCode = err.code ?? 1;
  } finally {
    clearTimeout(timer);
    forget();
    cleanup();
  }
  const outcome = timedOut ? 'timed out' : interrupts.interrupted ? 'interrupted' : 'done';
  return { trust, exitCode, counts: parseCounts(output().slice(from)), outcome };
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const started = Date.now();
  const tests = await buildAll();
  const host = pickHost();
  const windows: Trust[] = tests.some((file) => !file.endsWith('.untrusted.test.ts')) ? ['trusted'] : [];
  if (tests.some((file) => file.endsWith('.untrusted.test.ts'))) windows.push('untrusted');

  const interrupts = new Interrupts();
  const output = captureOutput();
  const results: WindowResult[] = [];
  for (const trust of windows) {
    const result = await runWindow(trust, host, options, interrupts, output);
    results.push(result);
    if (result.outcome !== 'done') break;
  }

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const total: Counts = { passing: 0, failing: 0, pending: 0 };
  let ok = true;
  process.stdout.write('\n');
  for (const { trust, exitCode, counts, outcome } of results) {
    if (counts) {
      total.passing += counts.passing;
      total.failing += counts.failing;
      total.pending += counts.pending;
    }
    const what = counts
      ? `${counts.passing} passing, ${counts.failing} failing, ${counts.pending} pending`
      : 'no test summary';
    process.stdout.write(
      `Integration, ${trust} workspace: ${what}, exit code ${exitCode}${outcome === 'done' ? '' : `, ${outcome}`}\n`,
    );
    ok &&= outcome === 'done' && counts !== undefined && exitCode === 0 && counts.failing === 0;
  }
  if (total.passing === 0) ok = false;
  process.stdout.write(
    `Integration: ${total.passing} passing, ${total.failing} failing, ${total.pending} pending` +
      ` in the extension host of ${host.name} (${seconds} s)${ok ? '' : total.passing === 0 && total.failing === 0 ? ': FAILED, no test ran' : ': FAILED'}\n`,
  );
  if (results.some((result) => result.outcome === 'interrupted')) return 130;
  return ok ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
