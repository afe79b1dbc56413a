// Team mode in the real editor: two code-servers ("machine A" and "machine B", told apart by
// BATON_HOST_ID), each with its own copy of the demo and its own browser, on one PostgreSQL
// store started by the test (docs/team.md). A starts the run from its editor; B's editor shows
// it live — tasks running, workers beating, the risk gate — without running anything itself;
// B approves the gate from its Gates view and A's coordinator dispatches the task. The picture
// of both editors side by side is docs/images/team-two-editors.png.
import * as assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { schemaFor, sharedPostgresCluster } from '../support/postgresCluster';
import {
  chainedSteps,
  clearNotifications,
  clickInlineAction,
  DEMO_WORKSPACE,
  eventually,
  moveMouseAway,
  notificationMessages,
  openBatonEditor,
  openViewContainer,
  resizeSideBar,
  RESULTS_DIR,
  runCommand,
  screenshot,
  treeRow,
  viewPane,
  type BatonEditor,
} from './support/index';

/** Each of the demo agent's four steps: long enough to watch both editors while tasks run. */
const STEP_MS = 8000;
/** Once the gate is approved, this file lets every worker's steps left take no time. */
const hurry = join(tmpdir(), `baton-e2e-team-hurry-${process.pid}`);
const VIEWPORT = { width: 1100, height: 760 };

type OpenEditor = BatonEditor & { close(): Promise<void> };

describe('Baton in the browser: two editors on one run (PostgreSQL store)', function () {
  this.timeout(180_000);
  const { step } = chainedSteps();
  let source = '';
  let editorA: OpenEditor | undefined;
  let editorB: OpenEditor | undefined;
  let runId = '';
  const a = (): Page => editorA!.page;
  const b = (): Page => editorB!.page;

  before(async function () {
    rmSync(hurry, { force: true });
    this.timeout(600_000);
    const cluster = await sharedPostgresCluster();
    // One project, two clones: the same plan and config, the store shared through the config's schema.
    source = mkdtempSync(join(tmpdir(), 'baton-team-demo-'));
    cpSync(DEMO_WORKSPACE, source, { recursive: true });
    const configPath = join(source, '.baton', 'config.json');
    const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
    config.store = { kind: 'postgres', schema: schemaFor(`e2e-team-${process.pid}`) };
    writeFileSync(configPath, JSON.stringify(config, null, 2));
    // Two machines, each a code-server of its own: Baton reads BATON_STORE_URL, BATON_HOST_ID and BATON_USER from its
    // extension host's environment while it activates, which a window on the shared code-server gets only from a test
    // extension activated beside Baton (support/windowEnv.ts), not surely before it.
    const machine = (host: string, user: string) => ({
      server: 'own' as const,
      source,
      viewport: VIEWPORT,
      env: {
        BATON_STORE_URL: cluster.url,
        BATON_HOST_ID: host,
        BATON_USER: user,
        DEMO_AGENT_STEP_MS: String(STEP_MS),
        DEMO_AGENT_HURRY_FILE: hurry,
      },
    });
    editorA = await openBatonEditor(machine('machine-a', 'ada'));
    editorB = await openBatonEditor(machine('machine-b', 'bea'));
  });
  afterEach(async function () {
    if (this.currentTest?.state !== 'failed') return;
    for (const [name, editor] of [
      ['a', editorA],
      ['b', editorB],
    ] as const)
      if (editor) await screenshot(editor.page, `failed-team-${name}-${this.currentTest.title}`).catch(() => undefined);
  });
  after(async function () {
    this.timeout(60_000);
    await editorA?.close();
    await editorB?.close();
    rmSync(source, { recursive: true, force: true });
    rmSync(hurry, { force: true });
  });

  step('A starts the demo run from its editor', async () => {
    await openViewContainer(a(), 'Baton');
    await resizeSideBar(a(), 440);
    await runCommand(a(), 'Baton: Start Run');
    const runs = await viewPane(a(), 'Runs');
    const run = treeRow(runs, /^plan\.md running · \d+\/6 · R-/);
    await run.waitFor({ timeout: 60_000 });
    runId = /\b(R-\d{8}-\w+)\b/.exec((await run.getAttribute('aria-label')) ?? '')?.[1] ?? '';
    assert.match(runId, /^R-\d{8}-\w+$/);
    await treeRow(runs, /^T1 Add the notes store running · attempt 1\b/).waitFor({ timeout: 30_000 });
  });

  step('B’s editor shows A’s run live: the same run, its workers beating on machine A, the gate', async () => {
    await openViewContainer(b(), 'Baton');
    await resizeSideBar(b(), 440);
    const runs = await viewPane(b(), 'Runs');
    await treeRow(runs, new RegExp(`^plan\\.md running · \\d+/6 · ${runId}`)).waitFor({ timeout: 30_000 });
    const workers = await viewPane(b(), 'Workers');
    const row = treeRow(workers, /^T[16] D-T[16]-coder-001 /).first();
    await row.waitFor({ timeout: 30_000 });
    const first = await eventually(
      'a beat of A’s worker in B’s Workers view',
      async () => (await row.getAttribute('aria-label')) ?? '',
      (label) => /beat \d+s ago/.test(label),
      { timeoutMs: 20_000 },
    );
    assert.ok(first.includes('beat'), first);
    const progress = await eventually(
      'progress text of A’s worker in B’s Workers view',
      async () => (await row.getAttribute('aria-label')) ?? '',
      (label) => /reading the task|looking at the code|making the change|checking the result/.test(label),
      { timeoutMs: 20_000 },
    );
    assert.doesNotMatch(progress, /no beat yet/);
    // Where it runs: on machine A, not here.
    assert.match(progress, / · on machine-a · /);
    const gates = await viewPane(b(), 'Gates');
    await treeRow(gates, /^G-1\b.*T3/).waitFor({ timeout: 30_000 });
  });

  step('B starts the run from its editor too: it joins A’s run instead of only watching it', async () => {
    await runCommand(b(), 'Baton: Start Run');
    const told = await eventually(
      'B’s notice that its window joined the run',
      async () => (await notificationMessages(b())).find((m) => m.includes(runId)) ?? '',
      (m) => m !== '',
      { timeoutMs: 30_000 },
    );
    assert.match(told, /is driven by another machine; this window joins it and runs its tasks too\./);
  });

  step('B approves T3’s gate from its Gates view; a coordinator dispatches T3, and A sees who decided', async () => {
    const gates = await viewPane(b(), 'Gates');
    await clickInlineAction(treeRow(gates, /^G-1\b.*T3/), 'Approve');
    // The workers' beats were watched: from here on their steps take no time (examples/demo/agent/fake-agent.js), so
    // T3's dependencies end and A dispatches it without waiting out the demo's pace.
    writeFileSync(hurry, '');
    await eventually(
      'the gate gone from B’s Gates view',
      () => treeRow(gates, /^G-1\b/).count(),
      (n) => n === 0,
      { timeoutMs: 20_000 },
    );
    const runsA = await viewPane(a(), 'Runs');
    await treeRow(runsA, /^T3 Store notes in SQLite (running|completed|verifying)/).waitFor({ timeout: 60_000 });
    const gatesA = await viewPane(a(), 'Gates');
    await eventually(
      'the gate gone from A’s Gates view',
      () => treeRow(gatesA, /^G-1\b/).count(),
      (n) => n === 0,
      { timeoutMs: 20_000 },
    );
    // T3's worker runs on whichever machine claimed it first (both drive the run), and B's editor sees it.
    await treeRow(await viewPane(b(), 'Workers'), /^T3 D-T3-coder-001 /).waitFor({ timeout: 30_000 });
  });

  step('the picture: both editors side by side while the run goes on', async () => {
    for (const page of [a(), b()]) {
      await clearNotifications(page);
      await moveMouseAway(page);
    }
    const shotA = await screenshot(a(), 'team-editor-a');
    const shotB = await screenshot(b(), 'team-editor-b');
    const img = (path: string): string => `data:image/png;base64,${readFileSync(path).toString('base64')}`;
    const canvas = await editorA!.browser.newPage({ viewport: { width: VIEWPORT.width * 2 + 24, height: 796 } });
    try {
      await canvas.setContent(`<!doctype html><body style="margin:0;background:#1e1e1e;font:14px system-ui;color:#ddd">
        <div style="display:flex;gap:24px;padding:0">
          <figure style="margin:0"><figcaption style="padding:8px">Machine A (ada): started the run; its coordinator runs the workers</figcaption><img src="${img(shotA)}" width="${VIEWPORT.width}"></figure>
          <figure style="margin:0"><figcaption style="padding:8px">Machine B (bea): joined the same run, live; approved T3's gate</figcaption><img src="${img(shotB)}" width="${VIEWPORT.width}"></figure>
        </div></body>`);
      await canvas.waitForFunction(() => [...document.images].every((i) => i.complete));
      await canvas.screenshot({ path: join(RESULTS_DIR, 'team-two-editors.png') });
    } finally {
      await canvas.close();
    }
  });
});
