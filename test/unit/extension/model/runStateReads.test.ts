import assert from 'node:assert/strict';
import { Emitter, type Engine, type EngineEvent, type Run, type RunOverview } from '../../../../src/engine/index';
import { RunStateCache, type RunStateChange } from '../../../../src/extension/model/runState';
import { FakeClock } from '../../../support/fakeClock';

// When the run-state cache reads the store, against an engine that stands in for the store so
// that its reads can be timed and made to fail: the views must not fall behind a busy run —
// neither under a constant stream of events nor after a read that failed. Time is a fake
// clock's, the engine's and the cache's alike: the test moves it, nothing sleeps.

/** An engine with one run: its events are emitted by the test, its overview reads are counted and can fail. */
class StandInEngine {
  readonly events = new Emitter<EngineEvent>();
  status: Run['status'] = 'running';
  readonly overviewReads: number[] = [];
  /** Overview reads that fail, as a store busy under load does (its lock held by another process). */
  failures = 0;
  private seq = 0;

  constructor(readonly clock: FakeClock) {}

  readonly onEvent = this.events.event;
  now(): number {
    return this.clock.now();
  }
  async listRuns(): Promise<Run[]> {
    return [this.run()];
  }
  async overview(): Promise<RunOverview> {
    this.overviewReads.push(this.clock.monotonic());
    if (this.failures > 0) {
      this.failures--;
      throw new Error('The Baton store is busy: another process holds its lock.');
    }
    return { run: this.run(), tasks: [], delegations: [], runtimes: [], gates: [], usage: [] };
  }
  async listIngestions(): Promise<[]> {
    return [];
  }
  /** A change of the run, announced as another process's commit would be. */
  emit(): void {
    this.seq++;
    this.events.fire({
      runId: 'R-1',
      type: 'run:status',
      at: this.clock.now(),
      seq: this.seq,
      data: { from: 'running', to: this.status },
    } as EngineEvent);
  }
  private run(): Run {
    return { id: 'R-1', planPath: 'plan.md', planDigest: 'sha256:x', status: this.status, createdAt: 0, updatedAt: 0 };
  }
}

describe('the run-state cache reads a busy run without falling behind', () => {
  const disposables: Array<{ dispose(): void }> = [];
  afterEach(() => {
    for (const d of disposables.splice(0).reverse()) d.dispose();
  });

  async function open(engine: StandInEngine, errors: unknown[] = []): Promise<RunStateCache> {
    const cache = new RunStateCache(engine as unknown as Engine, {
      clock: engine.clock,
      coalesceMs: 100,
      publishGapMs: 20,
      tickMs: 60_000,
      onError: (err) => errors.push(err),
    });
    disposables.push(cache);
    cache.setVisible('view', true);
    await cache.refreshNow();
    return cache;
  }

  /** `ms` of the fake clock pass, the cache's reads finished at the time they start. */
  function pass(engine: StandInEngine, cache: RunStateCache, ms: number): Promise<void> {
    return engine.clock.runFor(ms, () => cache.settled());
  }

  it('a constant stream of events is read every coalescing period while it lasts, not once it pauses', async () => {
    const engine = new StandInEngine(new FakeClock());
    const cache = await open(engine);
    const before = engine.overviewReads.length;
    // An event every 20 ms for 1.2 s: each one less than the coalescing wait after the last. A timer that restarted
    // on every event would read nothing until the stream stopped.
    const started = engine.clock.monotonic();
    while (engine.clock.monotonic() - started < 1200) {
      engine.emit();
      await pass(engine, cache, 20);
    }
    const streamEnded = engine.clock.monotonic();
    const during = engine.overviewReads.slice(before).filter((at) => at < streamEnded);
    assert.ok(
      during.length >= 3,
      `${during.length} reads while the events kept coming (about one per 100 ms expected)`,
    );
    // The first read comes one coalescing wait after the first event, not at the end of the stream.
    assert.ok(during[0]! - started < 600, `the first read came ${Math.round(during[0]! - started)} ms into the stream`);
  });

  it('a read that fails is tried again by itself: the run shows its new state without another event', async () => {
    const engine = new StandInEngine(new FakeClock());
    const errors: unknown[] = [];
    const cache = await open(engine, errors);
    const changes: RunStateChange[] = [];
    cache.onDidChange((c) => changes.push(c));
    assert.equal(cache.overview('R-1')?.run.status, 'running');
    engine.status = 'paused';
    engine.failures = 2;
    engine.emit(); // the only event: nothing else would bring the run to be read again
    const deadline = engine.clock.monotonic() + 5000;
    while (!changes.some((c) => c.runs.has('R-1')) && engine.clock.monotonic() < deadline)
      await pass(engine, cache, 20);
    assert.ok(
      changes.some((c) => c.runs.has('R-1')),
      'the change of the run is published',
    );
    assert.equal(cache.overview('R-1')?.run.status, 'paused', 'the run is read again after the failed reads');
    assert.equal(errors.length, 2, 'each failed read is reported');
  });

  it('the retries of a store that stays busy come later each time, not every coalescing period', async () => {
    const engine = new StandInEngine(new FakeClock());
    const cache = await open(engine);
    const before = engine.overviewReads.length;
    engine.failures = 1000;
    engine.emit();
    await pass(engine, cache, 1700);
    const retries = engine.overviewReads.slice(before);
    // Waits of 100, 100, 200, 400, 800 ms: five reads in 1.6 s (a retry every 100 ms would be about sixteen).
    assert.ok(retries.length >= 3 && retries.length <= 6, `${retries.length} reads in 1.7 s of a busy store`);
  });
});
