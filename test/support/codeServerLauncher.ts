// A stand-in for the VS Code executable, for @vscode/test-electron's runTests on machines
// without a desktop VS Code (test/runIntegration.ts passes ./codeServerLauncher as
// `vscodeExecutablePath`). It takes VS Code's command line, runs the extension tests in
// code-server's extension host, relays their report to stdout and exits with the test
// run's exit code, which is what runTests reads as the result. One suite, two hosts.
//
//   codeServerLauncher [folder] --extensionDevelopmentPath=<dir>… --extensionTestsPath=<module>
//                      [--user-data-dir=<dir>] [--extensions-dir=<dir>] [other VS Code flags, ignored]
//
// How: start code-server on the folder (with --disable-workspace-trust, which runTests
// always passes, unless BATON_LAUNCHER_TRUST=1), open Debian's Chromium through
// playwright-core at `/?folder=<folder>&payload=[["extensionDevelopmentPath", …],
// ["extensionTestsPath", …]]`, copy the report the test runner writes to
// $BATON_TEST_REPORT_FILE (test/integration/index.ts) to stdout, and end when the
// workbench reports the run's exit code (window.codeAutomationExit, as @vscode/test-web
// uses it) and code-server logs "Extension Host Process exited with code: N". That N is 0
// even when the tests fail (the workbench stops the remote extension host, it does not
// exit with the result), so it is only the fallback. Then close everything and exit.
//
// Environment: BATON_LAUNCHER_TIMEOUT_MS (default 240000) fails the run with the test in
// progress and code-server's log tail when the tests do not finish; BATON_LAUNCHER_VERBOSE=1
// relays code-server's log and the browser console to stderr; BATON_LAUNCHER_TRUST=1 keeps
// workspace trust on. The environment given to runTests (extensionTestsEnv) reaches the
// extension host.
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../e2e/support/browser';
import {
  EXTENSION_HOST_EXITED,
  startBatonCodeServer,
  testPayload,
  type BatonCodeServer,
} from '../e2e/support/codeServer';

interface LaunchArgs {
  folder: string | undefined;
  extensionDevelopmentPaths: string[];
  extensionTestsPath: string | undefined;
  userDataDir: string | undefined;
  extensionsDir: string | undefined;
  disableWorkspaceTrust: boolean;
  ignored: string[];
}

/** Parses the part of VS Code's command line that matters here (`--flag=value` or `--flag value`). */
function parseLaunchArgs(argv: readonly string[]): LaunchArgs {
  const parsed: LaunchArgs = {
    folder: undefined,
    extensionDevelopmentPaths: [],
    extensionTestsPath: undefined,
    userDataDir: undefined,
    extensionsDir: undefined,
    disableWorkspaceTrust: false,
    ignored: [],
  };
  const withValue = new Set(['extensionDevelopmentPath', 'extensionTestsPath', 'user-data-dir', 'extensions-dir']);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (!arg.startsWith('--')) {
      if (parsed.folder === undefined) parsed.folder = resolve(arg);
      else parsed.ignored.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    let value = eq < 0 ? undefined : arg.slice(eq + 1);
    if (value === undefined && withValue.has(name)) value = argv[++i];
    switch (name) {
      case 'extensionDevelopmentPath':
        if (value) parsed.extensionDevelopmentPaths.push(resolve(value));
        break;
      case 'extensionTestsPath':
        if (value) parsed.extensionTestsPath = resolve(value);
        break;
      case 'user-data-dir':
        if (value) parsed.userDataDir = resolve(value);
        break;
      case 'extensions-dir':
        if (value) parsed.extensionsDir = resolve(value);
        break;
      case 'disable-workspace-trust':
        parsed.disableWorkspaceTrust = true;
        break;
      default:
        parsed.ignored.push(arg);
    }
  }
  return parsed;
}

/** Copies what a file gains to stdout, from where it last stopped (the test report). */
class FileRelay {
  private offset = 0;
  /** The last few kilobytes relayed, to tell whether mocha printed its summary. */
  tail = '';
  private readonly buffer = Buffer.alloc(64 * 1024);
  constructor(private readonly path: string) {}

  pump(): void {
    if (!existsSync(this.path)) return;
    const fd = openSync(this.path, 'r');
    try {
      for (;;) {
        const read = readSync(fd, this.buffer, 0, this.buffer.length, this.offset);
        if (read <= 0) break;
        this.offset += read;
        const chunk = Buffer.from(this.buffer.subarray(0, read));
        process.stdout.write(chunk);
        this.tail = (this.tail + chunk.toString()).slice(-8192);
      }
    } finally {
      closeSync(fd);
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolvePromise) => setTimeout(resolvePromise, ms));

async function main(): Promise<number> {
  const args = parseLaunchArgs(process.argv.slice(2));
  const verbose = process.env.BATON_LAUNCHER_VERBOSE === '1';
  const timeoutMs = Number(process.env.BATON_LAUNCHER_TIMEOUT_MS || 240_000);
  const trust = process.env.BATON_LAUNCHER_TRUST === '1' || !args.disableWorkspaceTrust;
  const say = (line: string): void => void process.stderr.write(`[code-server launcher] ${line}\n`);
  if (!args.extensionTestsPath || args.extensionDevelopmentPaths.length === 0) {
    say('needs --extensionDevelopmentPath=<dir> and --extensionTestsPath=<module> (it only runs extension tests).');
    return 2;
  }
  if (verbose && args.ignored.length) say(`ignoring ${args.ignored.join(' ')}`);

  const scratch = mkdtempSync(join(tmpdir(), 'baton-launcher-'));
  const reportFile = join(scratch, 'report.txt');
  writeFileSync(reportFile, '');
  const relay = new FileRelay(reportFile);
  let server: BatonCodeServer | undefined;
  let browser: Browser | undefined;
  let closing: Promise<void> | undefined;
  const timers: NodeJS.Timeout[] = [];
  const close = (): Promise<void> =>
    (closing ??= (async () => {
      for (const timer of timers) clearInterval(timer);
      relay.pump();
      await Promise.race([browser?.close().catch(() => undefined), sleep(5000)]);
      await server?.stop();
      rmSync(scratch, { recursive: true, force: true });
    })());

  // Ctrl-C (runTests forwards it as SIGINT), termination, or the parent going away: close
  // everything (no orphaned code-server, extension host or browser), then exit.
  // A Ctrl-C in a terminal arrives twice (from the terminal and forwarded by runTests).
  let bailing = false;
  const bail = (why: string, code: number): void => {
    if (bailing) return;
    bailing = true;
    say(why);
    void close().finally(() => process.exit(code));
  };
  process.on('SIGINT', () => bail('interrupted: closing code-server and the browser.', 130));
  process.on('SIGTERM', () => bail('terminated: closing code-server and the browser.', 143));
  process.on('SIGHUP', () => bail('hung up: closing code-server and the browser.', 129));
  const parent = process.ppid;
  timers.push(setInterval(() => process.ppid !== parent && bail('the parent process went away.', 1), 1000));

  const started = Date.now();
  try {
    server = await startBatonCodeServer({
      folder: args.folder,
      trust,
      // The extension under test is loaded as a development extension, not installed.
      installExtension: false,
      ...(args.userDataDir && { userDataDir: args.userDataDir }),
      ...(args.extensionsDir && { extensionsDir: args.extensionsDir }),
      // runIntegration writes the test settings into the user data folder it passes.
      writeSettings: !(args.userDataDir && existsSync(join(args.userDataDir, 'User', 'settings.json'))),
      env: { BATON_TEST_REPORT_FILE: reportFile, BATON_TEST_HOST: 'code-server' },
      onLine: verbose ? (line) => say(`code-server: ${line}`) : undefined,
    });
    if (verbose) say(`code-server listening on ${server.url} after ${Date.now() - started} ms`);
    browser = await launchChromium();
    const page = await browser.newPage();
    page.on('pageerror', (err) => verbose && say(`browser: page error: ${err.message}`));
    if (verbose)
      page.on('console', (message) =>
        say(`browser ${message.type()}: ${message.text().replace(/^%c\s*\w+\s+color: #\w+\s*/, '')}`),
      );
    const url = server.workbenchUrl(
      args.folder,
      testPayload(server.authority, args.extensionDevelopmentPaths, args.extensionTestsPath),
    );
    // The workbench reports the test run's exit code to window.codeAutomationExit (as for
    // @vscode/test-web). The extension host process itself exits with 0 even when run()
    // rejects, so code-server's "Extension Host Process exited with code: N" only says it
    // has ended (and is the fallback code should the workbench not report).
    let reported: number | undefined;
    let reportedAt: number | undefined;
    await page.exposeFunction('codeAutomationExit', (code: unknown) => {
      reported ??= typeof code === 'number' ? code : 1;
    });
    await page.goto(url);

    const deadline = started + timeoutMs;
    let exited: { code: number; at: number } | undefined;
    for (let seen = 0; ;) {
      relay.pump();
      for (; seen < server.lines.length && !exited; seen++) {
        const exit = EXTENSION_HOST_EXITED.exec(server.lines[seen] ?? '');
        if (exit) exited = { code: exit[2] === 'null' ? 1 : Number(exit[2]), at: Date.now() };
      }
      // Done once the workbench has reported and the extension host has gone, or 5 s after
      // either one alone.
      const first = exited?.at ?? (reported !== undefined ? (reportedAt ??= Date.now()) : undefined);
      if ((reported !== undefined && exited) || (first !== undefined && Date.now() - first > 5000)) {
        await sleep(200);
        relay.pump();
        const code = reported ?? exited?.code ?? 1;
        if (reported === undefined)
          say(`the workbench did not report an exit code; the extension host exited with ${exited?.code}.`);
        // Failed tests explain themselves in the report; anything else needs code-server's log.
        if (code !== 0 && !/^\s*\d+ passing/m.test(relay.tail))
          say(
            `the extension tests ended with exit code ${code} and no test summary. code-server's log ends with:\n${server.logTail(30)}`,
          );
        return code;
      }
      if (server.process.exitCode !== null || server.process.signalCode !== null) {
        say(
          `code-server exited (${server.process.exitCode ?? server.process.signalCode}) before the tests finished. Its log ends with:\n${server.logTail(40)}`,
        );
        return 1;
      }
      if (Date.now() > deadline) {
        const current = existsSync(`${reportFile}.current`)
          ? `; the test in progress: "${readFileSync(`${reportFile}.current`, 'utf8')}"`
          : '';
        say(
          `the extension tests did not finish within ${Math.round(timeoutMs / 1000)} s (BATON_LAUNCHER_TIMEOUT_MS)${current}. code-server's log ends with:\n${server.logTail(40)}`,
        );
        return 1;
      }
      await sleep(100);
    }
  } catch (err) {
    say(`failed: ${err instanceof Error ? err.message : String(err)}`);
    if (server) say(`code-server's log ends with:\n${server.logTail(40)}`);
    return 1;
  } finally {
    await close();
  }
}

void main().then(
  (code) => process.stdout.write('', () => process.exit(code)),
  (err: unknown) => {
    process.stderr.write(`[code-server launcher] ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
