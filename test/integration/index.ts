// The extension tests' entry point (`extensionTestsPath`): VS Code's extension host, desktop
// or code-server's, requires this bundle (out/integration/index.js) and awaits run(). It runs
// mocha over the out/integration/**/*.test.js next to it (*.untrusted.test.js only when
// BATON_TEST_TRUST=untrusted, the others otherwise); a rejection is a failed run.
//
// The report (mocha's spec reporter: suites, test titles, failures, "N passing") goes to
// the extension host's console, which desktop VS Code forwards to the stdout of the process
// runTests started. code-server's extension host console only reaches the browser, so there
// the launcher (test/support/codeServerLauncher.ts) sets BATON_TEST_REPORT_FILE and relays
// that file instead.
import { appendFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';
import * as vscode from 'vscode';
import { mapStackTraces } from './support/stackTraces';

const reportFile = process.env.BATON_TEST_REPORT_FILE;
const print = reportFile
  ? (line: string): void => appendFileSync(reportFile, `${line}\n`)
  : (line: string): void => console.log(line);

export async function run(): Promise<void> {
  try {
    await runMocha();
  } catch (err) {
    // Also into the report: code-server shows a rejection only in the browser's console.
    print(`\nThe integration run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    throw err;
  }
}

async function runMocha(): Promise<void> {
  // Stack traces point into test/integration/*.ts (the bundles carry inline source maps).
  mapStackTraces(__dirname, join(__dirname, '..', '..'));
  // Every built-in reporter prints through Base.consoleLog (printf-style arguments).
  (Mocha.reporters.Base as unknown as { consoleLog: (...args: unknown[]) => void }).consoleLog = (...args: unknown[]) =>
    print(format(...args));

  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: Number(process.env.BATON_TEST_TIMEOUT_MS || 60_000),
    // Activation, the store and the views take their time on a busy 2-core machine.
    slow: 2_000,
    ...(process.env.BATON_TEST_GREP ? { grep: process.env.BATON_TEST_GREP } : {}),
  });
  // *.untrusted.test.js run in their own window, with workspace trust on and the folder
  // untrusted (BATON_TEST_TRUST=untrusted); the others in a trusted one.
  const untrusted = process.env.BATON_TEST_TRUST === 'untrusted';
  const files = readdirSync(__dirname, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.js') && file.endsWith('.untrusted.test.js') === untrusted)
    .sort();
  for (const file of files) mocha.addFile(join(__dirname, file));
  if (files.length === 0)
    throw new Error(`No *.test.js next to ${__filename}: bundle test/integration first (test/runIntegration.ts).`);

  const host = process.env.BATON_TEST_HOST ?? 'desktop VS Code';
  print(
    `Baton integration tests: ${files.length} file(s) in the extension host of ${host}, VS Code ${vscode.version}, workspace trusted: ${vscode.workspace.isTrusted}`,
  );
  const { failures, tests } = await new Promise<{ failures: number; tests: number }>((resolve, reject) => {
    try {
      const runner = mocha.run((failures) => resolve({ failures, tests: runner.stats?.tests ?? 0 }));
      // The launcher names the test in progress when the run times out.
      if (reportFile) runner.on('test', (test) => writeFileSync(`${reportFile}.current`, test.fullTitle()));
    } catch (err) {
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
  if (failures > 0) throw new Error(`${failures} integration test(s) failed.`);
  // With a grep, the other window may well have nothing to run; runIntegration checks the total.
  if (tests === 0 && !process.env.BATON_TEST_GREP) throw new Error('No integration test ran.');
}
