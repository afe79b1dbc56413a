import assert from 'node:assert/strict';
import { runBench } from '../bench/run';

describe('benchmark harness (tiny sizes, so it cannot rot; the figures come from npm run bench)', () => {
  it('runs every row once and renders the table', async function () {
    this.timeout(60_000);
    const outcome = await runBench({ sizes: [50, 100], reps: 1, cycles: 5, warmupCycles: 1, sqlJsCycles: 2, out: false });
    assert.match(outcome.markdown, /Baton store/);
    assert.match(outcome.markdown, /Raw append \+ fdatasync/);
    assert.match(outcome.markdown, /better-sqlite3/);
    assert.ok(outcome.checks.length > 0);
    // The dashboard rows, in Chromium, at smoke size.
    assert.match(outcome.markdown, /## Dashboard webview \(Chromium\)/);
    assert.ok(outcome.dashboard && outcome.dashboard.firstRender.median > 0 && outcome.dashboard.tick.median > 0);
  });
});
