/**
 * Heartbeat → visible (issue "Performance"): a worker process commits a heartbeat with new
 * progress text; how long until that text shows in the Workers view and in the dashboard of
 * a real VS Code (code-server) in Chromium. The engine event in another process fires about
 * a millisecond after the commit (the engine rows), so the commit's return is the reference.
 *
 *   node --import tsx test/bench/visibleBench.ts [--beats 40]
 */
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { Engine } from '../../src/engine/index';
import {
  DEMO_WORKSPACE,
  eventually,
  openBatonEditor,
  openViewContainer,
  runCommand,
  viewPane,
} from '../e2e/support/index';
import { summarizeWithP95, type Summary } from './stats';

export interface VisibleBenchResult {
  beats: number;
  workersView: Summary & { p95: number; seen: number };
  dashboard: Summary & { p95: number; seen: number };
  durationMs: number;
  /** The 1-minute load average as the run started and ended, and the machine's cores. */
  load: { start: number; end: number; cores: number };
}

/** The project's target (issue "Engine in tiers…"): a heartbeat shows within 100 ms in the real editor. */
export const VISIBLE_TARGET_P95_MS = 100;

function withP95(values: number[]): Summary & { p95: number; seen: number } {
  return { ...summarizeWithP95(values), seen: values.length };
}

/** Installs a watcher in a document: the first moment (Date.now()) any text containing a token shows. */
const WATCH = `(() => {
  if (window.__batonSeen) return;
  window.__batonSeen = {};
  window.__batonWanted = [];
  const check = () => {
    if (window.__batonWanted.length === 0) return;
    const text = document.body.innerText;
    const now = Date.now();
    window.__batonWanted = window.__batonWanted.filter((t) => { if (text.includes(t)) { window.__batonSeen[t] = now; return false; } return true; });
  };
  new MutationObserver(check).observe(document.body, { subtree: true, childList: true, characterData: true });
})()`;

export async function runVisibleBench(options: {
  beats: number;
  log?: (line: string) => void;
}): Promise<VisibleBenchResult> {
  const started = Date.now();
  const loadAtStart = loadavg()[0]!;
  const editor = await openBatonEditor({ source: DEMO_WORKSPACE });
  try {
    const page = editor.page;
    // A worker outside the editor (as `baton claim` would): this process's own engine.
    const engine = await Engine.open({ workspace: editor.workspace });
    try {
      const claim = await engine.claimTask({
        planPath: join(editor.workspace, 'plan.md'),
        taskId: 'T1',
        leaseSeconds: 600,
      });
      await openViewContainer(page, 'Baton');
      const workers = await viewPane(page, 'Workers');
      await workers.getByText('D-T1-coder-001').first().waitFor({ timeout: 30_000 });
      await runCommand(page, 'Baton: Open Dashboard');
      const frame = (await eventually(
        'the dashboard webview',
        async () => {
          for (const f of page.frames())
            if (
              (await f
                .locator('.worker-row')
                .count()
                .catch(() => 0)) > 0
            )
              return f;
          return undefined;
        },
        (f) => f !== undefined,
      )) as Frame;
      await page.evaluate(WATCH);
      await frame.evaluate(WATCH);
      const viewLatency: number[] = [];
      const dashLatency: number[] = [];
      for (let i = 0; i < options.beats; i++) {
        const token = `beat${i}x${Math.random().toString(36).slice(2, 8)}`;
        await page.evaluate((t) => (window as unknown as { __batonWanted: string[] }).__batonWanted.push(t), token);
        await frame.evaluate((t) => (window as unknown as { __batonWanted: string[] }).__batonWanted.push(t), token);
        await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: token });
        const committed = Date.now();
        const seen = await eventually(
          `"${token}" on screen`,
          async () => ({
            view: await page.evaluate(
              (t) => (window as unknown as { __batonSeen: Record<string, number> }).__batonSeen[t],
              token,
            ),
            dash: await frame.evaluate(
              (t) => (window as unknown as { __batonSeen: Record<string, number> }).__batonSeen[t],
              token,
            ),
          }),
          (s) => s.view !== undefined && s.dash !== undefined,
          { timeoutMs: 10_000, intervalMs: 20 },
        );
        viewLatency.push(Math.max(0, seen.view! - committed));
        dashLatency.push(Math.max(0, seen.dash! - committed));
        options.log?.(
          `beat ${i + 1}: Workers view ${seen.view! - committed} ms, dashboard ${seen.dash! - committed} ms`,
        );
        // Heartbeats of one worker come seconds apart in life; half a second apart here.
        await new Promise((r) => setTimeout(r, 500));
      }
      return {
        beats: options.beats,
        workersView: withP95(viewLatency),
        dashboard: withP95(dashLatency),
        durationMs: Date.now() - started,
        load: { start: loadAtStart, end: loadavg()[0]!, cores: cpus().length },
      };
    } finally {
      await engine.close();
    }
  } finally {
    await editor.close();
  }
}

export function visibleSection(r: VisibleBenchResult): string {
  const row = (what: string, s: VisibleBenchResult['dashboard']): string =>
    `| ${what} | p95 ${s.p95.toFixed(0)} ms (median ${s.median.toFixed(0)}, ${s.min.toFixed(0)}–${s.max.toFixed(0)}; ${s.seen} of ${r.beats} beats) | the commit returning in the worker's process (the engine event in another process follows it by ~1 ms, see the engine rows) | p95 ≤ ${VISIBLE_TARGET_P95_MS} ms | ${s.p95 <= VISIBLE_TARGET_P95_MS ? '✓' : '✗'} |`;
  return `## Heartbeat → visible in the editor (code-server, Chromium)

<!-- visible:start — generated by \`npm run bench -- --only visible\` (test/bench/visibleBench.ts). -->

A worker process (here: the bench's own engine, as \`baton heartbeat\` would) commits a heartbeat with new
progress text while VS Code (code-server ${'4.99.4'}) shows the Baton views and the dashboard in Chromium. The
figure is the wall time from the commit returning to the text appearing on screen (a MutationObserver in the
workbench page and in the dashboard's webview). The extension's run-state cache applies a heartbeat from its
event, with no store read, and publishes it at once to the Workers view and the dashboard alike (publications are
at least 250 ms apart, wider than VS Code's 200 ms tree-refresh debounce, so each is shown at once; the clock's
once-a-second tick comes only after a second without a publication). The machine's load is given beside the run:
the figures include whatever else it was doing.

Load average (1 min) ${r.load.start.toFixed(1)} at the start, ${r.load.end.toFixed(1)} at the end, on ${r.load.cores} cores.

| what | figure | reference | target | holds |
|---|---|---|---|---|
${row('heartbeat → Workers view', r.workersView)}
${row('heartbeat → dashboard', r.dashboard)}

<!-- visible:end -->
`;
}

async function main(): Promise<void> {
  const at = process.argv.indexOf('--beats');
  const result = await runVisibleBench({
    beats: at >= 0 ? Number(process.argv[at + 1]) : 40,
    log: (l) => process.stderr.write(`[bench] ${l}\n`),
  });
  process.stdout.write(visibleSection(result));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
