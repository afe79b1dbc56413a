// The dashboard webview in a real browser: Chromium (playwright-core) on code-server with the
// built extension, on a fresh copy of examples/demo. The steps chain like demoRun.test.ts:
// open from the Runs view → heartbeats tick → approve a gate from the dashboard → open an
// ingestion issue at its line → hostile artifact content stays text → UI state survives
// hide/show → the three themes (screenshots in test-results/).
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame, Page } from 'playwright-core';
import {
  activeEditor,
  clearNotifications,
  clickViewTitleAction,
  cursorLine,
  DEMO_WORKSPACE,
  eventually,
  moveMouseAway,
  openViewContainer,
  quickOpen,
  ROOT,
  runCommand,
  screenshot,
  treeRow,
  useBatonEditor,
  viewPane,
  chainedSteps,
} from './support/index';

const STEP_MS = 2000;

/** The dashboard's document: the webview frame whose page has Baton's #root. */
async function dashboard(page: Page): Promise<Frame> {
  return eventually(
    'the dashboard webview',
    async () => {
      for (const frame of page.frames()) {
        if (
          (await frame
            .locator('#root .run-header')
            .count()
            .catch(() => 0)) > 0
        )
          return frame;
      }
      return undefined;
    },
    (f) => f !== undefined,
    { timeoutMs: 30_000 },
  ) as Promise<Frame>;
}

describe('Baton in the browser: the dashboard', function () {
  const editor = useBatonEditor({ source: DEMO_WORKSPACE, env: { DEMO_AGENT_STEP_MS: String(STEP_MS) } });
  const { step } = chainedSteps();
  const page = () => editor.current.page;

  step('opens from the Runs view title and shows the run: header, progress, queue, workers, gates', async () => {
    await openViewContainer(page(), 'Baton');
    await runCommand(page(), 'Baton: Start Run');
    const runs = await viewPane(page(), 'Runs');
    await treeRow(runs, /^plan\.md running/).waitFor({ timeout: 30_000 });
    await clickViewTitleAction(runs, 'Open Dashboard');
    const frame = await dashboard(page());
    await frame.locator('.run-header h1', { hasText: 'plan.md' }).waitFor({ timeout: 15_000 });
    await frame.locator('.run-header .chip', { hasText: /^running$/ }).waitFor();
    await frame.locator('.queue-row[data-task="T1"] .chip', { hasText: 'running' }).waitFor({ timeout: 15_000 });
    assert.deepEqual(
      await frame.locator('.queue-row').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.task)),
      ['T1', 'T2', 'T3', 'T4', 'T5', 'T6'],
    );
    await frame.locator('.queue-row[data-task="T3"] .chip', { hasText: 'gated' }).waitFor();
    await frame.locator('.worker-row', { hasText: 'D-T1-coder-001' }).waitFor({ timeout: 15_000 });
    await frame.locator('.gate.open[data-gate="G-1"]', { hasText: 'Task T3 is tagged database' }).waitFor();
    assert.match(await frame.locator('.facts').innerText(), /slots 2\/4/);
    await clearNotifications(page());
    await moveMouseAway(page());
    await screenshot(page(), 'dashboard-1-open');
  });

  step('ticks the heartbeat age of a running worker and pulses on each beat', async () => {
    const frame = await dashboard(page());
    const row = frame.locator('.worker-row', { hasText: 'D-T1-coder-001' });
    const age = row.locator('.w-age');
    const first = await eventually(
      'a beat age on T1',
      () => age.innerText(),
      (t) => /^beat \d+s ago$/.test(t),
      { timeoutMs: 15_000 },
    );
    const next = await eventually(
      'the beat age of T1 to change',
      () => age.innerText(),
      (t) => /^beat \d+s ago$/.test(t) && t !== first,
      { timeoutMs: 10_000 },
    );
    assert.notEqual(next, first);
    // A new beat brings new progress text and restarts the pulse.
    await eventually(
      'a pulse on T1',
      () => row.locator('.pulse.beat').count(),
      (n) => n === 1,
      { timeoutMs: 10_000 },
    );
    await eventually(
      'progress text on T1',
      () => row.locator('.w-progress').innerText(),
      (t) => /reading the task|looking at the code|making the change|checking the result/.test(t),
    );
    const lease = await row.locator('.lease-fill').evaluate((el) => (el as HTMLElement).style.transform);
    // Chromium serializes scaleX(1.000) as scaleX(1): a lease renewed this very moment is a full bar.
    assert.match(lease, /^scaleX\((0(\.\d+)?|1(\.0+)?)\)$/, 'the lease shows as a draining bar');
  });

  step('approving the risk gate from the dashboard dispatches its task', async () => {
    const frame = await dashboard(page());
    const gate = frame.locator('.gate.open[data-gate="G-1"]');
    await gate.locator('input.note').fill('backup taken');
    await gate.getByRole('button', { name: 'Approve', exact: true }).click();
    await gate.waitFor({ state: 'detached', timeout: 15_000 });
    // Decided gates keep who/when/note.
    await frame.locator('.decided summary').click();
    await frame
      .locator('.decided .gate', { hasText: /G-1 risk_approval \(T3\) by .+ — backup taken/ })
      .waitFor({ timeout: 10_000 });
    // T3 depended on T1 only: once T1 is done, it runs.
    await frame
      .locator('.queue-row[data-task="T3"] .chip', { hasText: /^(running|verifying|completed)$/ })
      .waitFor({ timeout: 60_000 });
    await clearNotifications(page());
    await moveMouseAway(page());
    await screenshot(page(), 'dashboard-2-gate-approved');
  });

  step('clicking an ingestion issue opens the artifact in the editor at its line', async () => {
    const frame = await dashboard(page());
    // T2's demo result is invalid: wrong task, status DONE.
    const issue = frame.locator('.issues button.issue[data-code="result.invalid-status"]');
    await issue.waitFor({ timeout: 60_000 });
    const line = Number(await issue.getAttribute('data-line'));
    const runId = await runIdOf(frame);
    await screenshot(page(), 'dashboard-3-issues');
    await issue.click();
    await activeEditor(page()).waitFor({ timeout: 15_000 });
    await page().locator('.tab.active', { hasText: 'D-T2-coder-001.md' }).waitFor({ timeout: 15_000 });
    // Beside the dashboard, which stays in view.
    await page().locator('.tab', { hasText: 'Baton Dashboard' }).waitFor();
    assert.equal(
      await page().locator('.editor-group-container').count(),
      2,
      'the artifact opened in a second editor group',
    );
    await eventually(
      'the cursor on the status: line',
      () => cursorLine(page()),
      (n) => n === line,
      { timeoutMs: 10_000 },
    );
    const text = readFileSync(
      join(editor.current.workspace, '.baton', 'runs', runId, 'artifacts', 'D-T2-coder-001.md'),
      'utf8',
    );
    assert.match(text.split('\n')[line - 1]!, /^status: DONE/, 'that line is the status line');
  });

  step('hostile content in an artifact shows as text and runs nothing', async () => {
    const workspace = editor.current.workspace;
    const hostile = [
      '# <img src=x onerror="window.__batonPwned=1">',
      '',
      '<script>window.__batonPwned = 2; document.title = "pwned"</script>',
      '',
      '```baton-result',
      'contract: baton-result-v1',
      'task: <img src=x onerror="window.__batonPwned=3">',
      'agent: coder',
      'status: PASS',
      'summary: <script>window.__batonPwned=4</script>',
      'artifacts: []',
      '```',
      '',
    ].join('\n');
    writeFileSync(join(workspace, 'hostile.md'), hostile);
    try {
      execFileSync(
        process.execPath,
        [join(ROOT, 'dist', 'cli.js'), 'ingest', '--delegation', 'D-T2-coder-001', '--artifact', 'hostile.md'],
        { cwd: workspace, stdio: 'pipe' },
      );
    } catch {
      // rejected (exit 4): the task is not T2 — which is what puts the markup into an issue message
    }
    // Back to the dashboard tab.
    await page().locator('.tab', { hasText: 'Baton Dashboard' }).click();
    const frame = await dashboard(page());
    const mismatch = frame.locator('.issues button.issue[data-code="result.task-mismatch"]', { hasText: 'onerror' });
    await mismatch.waitFor({ timeout: 20_000 });
    await frame.locator('.queue-row[data-task="T2"]').click();
    const pre = frame.locator('pre.artifact');
    await pre.waitFor({ timeout: 15_000 });
    await eventually(
      'the hostile artifact in the details',
      () => pre.innerText(),
      (t) => t.includes('<script>window.__batonPwned = 2'),
    );
    assert.match(
      await mismatch.innerText(),
      /<img src=x onerror="window.__batonPwned=3">/,
      'the markup is shown, as text',
    );
    const dom = await frame.evaluate(() => ({
      images: document.querySelectorAll('img').length,
      scripts: [...document.querySelectorAll('script')].map(
        (s) => s.getAttribute('src') ?? (s.textContent ?? '').slice(0, 200),
      ),
      pwned: (window as unknown as { __batonPwned?: number }).__batonPwned ?? null,
      title: document.title,
    }));
    assert.deepEqual(dom.images, 0, 'no <img> element was created');
    // The dashboard's script, and the one VS Code injects into every webview (acquireVsCodeApi) — none from the
    // artifact.
    assert.ok(
      dom.scripts.some((src) => /dashboard\.js$/.test(src)),
      JSON.stringify(dom.scripts),
    );
    assert.ok(
      dom.scripts.every((src) => !src.includes('batonPwned')),
      `no script from the artifact: ${JSON.stringify(dom.scripts)}`,
    );
    assert.ok(dom.scripts.length <= 2, JSON.stringify(dom.scripts));
    assert.equal(dom.pwned, null, 'nothing ran');
    assert.equal(dom.title, 'Baton Dashboard');
    await screenshot(page(), 'dashboard-4-hostile-as-text');
  });

  step('the filter and selection survive hiding and showing the dashboard (saved webview state)', async () => {
    let frame = await dashboard(page());
    await frame.locator('select.filter').selectOption('completed');
    await eventually(
      'only completed tasks listed',
      async () => frame.locator('.queue-row .chip').allInnerTexts(),
      (chips) => chips.length > 0 && chips.every((c) => c === 'completed'),
      { timeoutMs: 60_000 },
    );
    const selected = await frame.locator('.queue-row').first().getAttribute('data-task');
    await frame.locator('.queue-row').first().click();
    // Hide: another editor in the same group takes the tab; the webview's document is discarded.
    await quickOpen(page(), 'plan.md');
    await page().locator('.tab.active', { hasText: 'plan.md' }).waitFor();
    await page().locator('.tab', { hasText: 'Baton Dashboard' }).click();
    frame = await dashboard(page());
    await eventually(
      'the filter restored',
      () => frame.locator('select.filter').inputValue(),
      (v) => v === 'completed',
      { timeoutMs: 15_000 },
    );
    await frame.locator(`.queue-row.selected[data-task="${selected}"]`).waitFor({ timeout: 15_000 });
    await frame.locator('.details h2', { hasText: selected! }).waitFor();
    await frame.locator('select.filter').selectOption('all');
  });

  step('renders legibly in the dark, light and high-contrast themes', async () => {
    const themes: Array<[string, string]> = [
      ['Dark Modern', 'dark'],
      ['Light Modern', 'light'],
      ['Dark High Contrast', 'high-contrast'],
    ];
    const backgrounds = new Set<string>();
    for (const [theme, name] of themes) {
      await runCommand(page(), 'Preferences: Color Theme');
      const input = page().locator('.quick-input-widget .quick-input-box input');
      await input.fill(theme);
      await page().locator('.quick-input-widget .monaco-list-row', { hasText: theme }).first().waitFor();
      await page().keyboard.press('Enter');
      await input.waitFor({ state: 'hidden' });
      const frame = await dashboard(page());
      const colours = await eventually(
        `the dashboard in ${theme}`,
        () =>
          frame.evaluate(() => {
            const style = getComputedStyle(document.body);
            const chip = document.querySelector('.queue-row .chip');
            return {
              background: style.backgroundColor,
              foreground: style.color,
              chip: chip ? getComputedStyle(chip).color : '',
              kind: document.body.className,
            };
          }),
        (c) =>
          !backgrounds.has(c.background) &&
          c.kind.includes(name === 'high-contrast' ? 'vscode-high-contrast' : `vscode-${name}`),
        { timeoutMs: 20_000 },
      );
      backgrounds.add(colours.background);
      assert.notEqual(colours.foreground, colours.background, `${theme}: text differs from the background`);
      assert.notEqual(colours.chip, colours.background, `${theme}: status chips differ from the background`);
      await moveMouseAway(page());
      await screenshot(page(), `dashboard-theme-${name}`);
    }
    assert.equal(backgrounds.size, 3);
  });
});

async function runIdOf(frame: Frame): Promise<string> {
  return (await frame.locator('.run-header .run-id').innerText()).trim();
}
