import assert from 'node:assert/strict';
import { runBench } from '../bench/run';
import { ensureCliBuilt } from '../support/cli';

describe('benchmark harness (tiny sizes, so it cannot rot; the figures come from npm run bench)', () => {
  it('runs every row once and renders the table', async function () {
    this.timeout(60_000);
    ensureCliBuilt(); // the engine rows measure dist/, the dashboard rows load dist/webview
    const outcome = await runBench({
      sizes: [50, 100],
      reps: 1,
      cycles: 5,
      warmupCycles: 1,
      sqlJsCycles: 2,
      out: false,
    });
    assert.match(outcome.markdown, /Baton store/);
    assert.match(outcome.markdown, /Raw append \+ fdatasync/);
    assert.match(outcome.markdown, /better-sqlite3/);
    assert.match(outcome.markdown, /1b\. Baton store, 8 callers at once/);
    assert.ok(
      outcome.result.sizes.every(
        (s) =>
          s.batonConcurrent && s.batonConcurrent.commitsPerSecond.median > 0 && s.batonConcurrent.commitsPerFlush >= 1,
      ),
    );
    assert.ok(outcome.checks.length > 0);
    // The dashboard rows, in Chromium, at smoke size.
    assert.match(outcome.markdown, /## Dashboard webview \(Chromium\)/);
    assert.ok(outcome.dashboard && outcome.dashboard.firstRender.median > 0 && outcome.dashboard.tick.median > 0);
    // The engine rows at smoke size: every beat heard across processes, the store opened, the bundle measured.
    assert.match(outcome.markdown, /## Engine rows/);
    assert.ok(
      outcome.engine &&
        outcome.engine.heartbeat.heard > 0 &&
        outcome.engine.heartbeat.heard === outcome.engine.heartbeat.beats,
      JSON.stringify(outcome.engine?.heartbeat),
    );
    assert.ok(outcome.engine.open.openMs.median > 0 && outcome.engine.bundleBytes > 0);
  });
});
