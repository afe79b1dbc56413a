// A check of the real-editor setup and of these helpers, not a test of Baton's flows:
//   node --import tsx test/e2e/support/smoke.ts
// Builds nothing (run `npm run build` first); starts code-server with Baton installed on a
// copy of the fixture workspace, opens the Baton view, runs "Baton: Show Log", and saves
// test-results/smoke.png. Exits non-zero with the reason and code-server's log tail.
import { launchChromium, openViewContainer, openWorkbench, runCommand, screenshot, viewPane } from './browser';
import { EXTENSION_HOST_LAUNCHED, startBatonCodeServer, waitForLogLine, type BatonCodeServer } from './codeServer';
import { copyWorkspace, removeWorkspace } from './workspace';

async function main(): Promise<void> {
  const started = Date.now();
  const step = (what: string): void =>
    void process.stdout.write(`${((Date.now() - started) / 1000).toFixed(1).padStart(5)} s  ${what}\n`);
  const workspace = copyWorkspace();
  let server: BatonCodeServer | undefined;
  const browser = await launchChromium();
  try {
    server = await startBatonCodeServer({ folder: workspace });
    step(`code-server on ${server.url}`);
    const { page } = await openWorkbench(browser, server.workbenchUrl());
    step('workbench visible');
    await waitForLogLine(server, EXTENSION_HOST_LAUNCHED);
    await openViewContainer(page, 'Baton');
    const runs = await viewPane(page, 'Runs');
    step(`Runs view: ${(await runs.innerText()).split('\n').filter(Boolean).slice(1, 2).join(' ')}`);
    await runCommand(page, 'Baton: Show Log');
    await page.locator('.part.panel', { hasText: 'Baton activated' }).waitFor({ timeout: 30_000 });
    step('"Baton: Show Log" shows the log');
    step(`screenshot ${await screenshot(page, 'smoke')}`);
  } catch (err) {
    process.stderr.write(
      `${err instanceof Error ? err.message : String(err)}\n${server ? `code-server's log ends with:\n${server.logTail()}\n` : ''}`,
    );
    process.exitCode = 1;
  } finally {
    await browser.close();
    await server?.stop();
    removeWorkspace(workspace);
  }
}

void main();
