import assert from 'node:assert/strict';
import type { Engine, EngineEvent } from '../../../src/engine/index';
import { DashboardFeed } from '../../../src/extension/dashboardFeed';
import { RunStateCache, isTick, type RunStateChange, type RunStateOptions } from '../../../src/extension/runState';
import { runRow, taskRow, workerRows } from '../../../src/extension/viewRows';
import type { HostMessage } from '../../../src/protocol/messages';
import { taskDuration } from '../../../src/protocol/time';
import { hostNow, initialState, reduce, type DashboardState } from '../../../webview-ui/src/state';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

const READS = ['listRuns', 'overview', 'listIngestions', 'listWorktrees', 'listEvents', 'taskRecord'] as const;
type ReadName = (typeof READS)[number];

/** Counts every store read the extension can make through the engine's public API. */
function countReads(engine: Engine): Record<ReadName, number> & { total(): number } {
  const counts = Object.fromEntries(READS.map((name) => [name, 0])) as Record<ReadName, number>;
  for (const name of READS) {
    const original = (engine[name] as (...args: unknown[]) => unknown).bind(engine);
    (engine as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      counts[name]++;
      return original(...args);
    };
  }
  return Object.assign(counts, { total: () => READS.reduce((sum, name) => sum + counts[name], 0) });
}

/** Counts the subscriptions to the engine's events. */
function countSubscriptions(engine: Engine): { count: number } {
  const counter = { count: 0 };
  const original = engine.onEvent;
  (engine as { onEvent: Engine['onEvent'] }).onEvent = (listener: (e: EngineEvent) => void) => {
    counter.count++;
    return original(listener);
  };
  return counter;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** No clock ticks unless a test asks for them: they would be publications of their own. */
const QUIET: RunStateOptions = { coalesceMs: 100, publishGapMs: 20, tickMs: 60_000 };

describe('the run-state cache behind the Baton views and the dashboard', () => {
  let fixture: EngineFixture;
  const disposables: Array<{ dispose(): void }> = [];
  beforeEach(() => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
  });
  afterEach(async () => {
    for (const d of disposables.splice(0).reverse()) d.dispose();
    await fixture.dispose();
  });

  function open(engine: Engine, options: RunStateOptions = QUIET, visible = true): RunStateCache {
    const cache = new RunStateCache(engine, options);
    disposables.push(cache);
    if (visible) cache.setVisible('view', true);
    return cache;
  }

  function feedOf(cache: RunStateCache, posted: HostMessage[], runId?: string): DashboardFeed {
    const feed = new DashboardFeed(
      cache,
      { ...(runId ? { runId } : {}), coordinatedHere: () => false, maxConcurrency: () => 4 },
      (m) => posted.push(m),
    );
    disposables.push(feed);
    return feed;
  }

  it('applies heartbeats from their events without reading the store, batched into few changes of the beats only', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const cache = open(engine);
    await cache.refreshNow();
    const reads = countReads(engine);
    const changes: RunStateChange[] = [];
    cache.onDidChange((c) => changes.push(c));
    for (let i = 0; i < 30; i++)
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: `step ${i}` });
    await sleep(300);
    // (At most one read: the claim's own events may be announced after the cache subscribed.)
    assert.ok(reads.overview <= 1, `30 heartbeats cost ${reads.overview} reads`);
    const beatChanges = changes.filter(
      (c) => c.beats.size > 0 && !c.structure && c.tasks.size === 0 && c.runs.size === 0 && c.gates.size === 0,
    );
    assert.ok(
      beatChanges.length >= 1 && beatChanges.length < 30,
      `${beatChanges.length} heartbeat changes for 30 heartbeats`,
    );
    assert.equal(cache.liveRuntimes()[0]!.progress, 'step 29');
    assert.equal(cache.liveRuntimes()[0]!.heartbeatCount, 30);
  });

  it('coalesces a burst of other engine events into one read and one change', async () => {
    const engine = await fixture.open({ follow: true });
    const cache = open(engine);
    await engine.runForPlan('plan.md');
    await cache.refreshNow();
    const run = cache.runs[0]!;
    const reads = countReads(engine);
    const changes: RunStateChange[] = [];
    cache.onDidChange((c) => changes.push(c));
    for (const taskId of ['T1', 'T5']) await engine.claimTask({ runId: run.id, taskId });
    await sleep(400);
    assert.equal(reads.overview, 1, `two claims cost ${reads.overview} reads`);
    assert.equal(changes.length, 1);
    assert.deepEqual([...changes[0]!.tasks].sort(), [`${run.id}/T1`, `${run.id}/T5`]);
    assert.equal(changes[0]!.runtimes.size, 2, 'the two new runtimes');
  });

  it('one store read per burst for every surface: the views and a live dashboard share it', async () => {
    const engine = await fixture.open({ follow: true });
    const subscriptions = countSubscriptions(engine);
    const cache = open(engine);
    const { run } = await engine.runForPlan('plan.md');
    const posted: HostMessage[] = [];
    const feed = feedOf(cache, posted, run.id);
    await feed.sendSnapshot();
    assert.equal(subscriptions.count, 1, 'one subscription to the engine, the cache’s');
    const reads = countReads(engine);
    const changes: RunStateChange[] = [];
    cache.onDidChange((c) => changes.push(c));
    posted.length = 0;
    for (const taskId of ['T1', 'T5']) await engine.claimTask({ runId: run.id, taskId });
    await engine.refresh();
    await sleep(400);
    assert.equal(reads.overview, 1, `a burst of two claims cost ${reads.overview} overview reads`);
    assert.equal(reads.listRuns + reads.listEvents + reads.listIngestions + reads.taskRecord, 0, 'nothing else read');
    assert.equal(reads.listWorktrees, 1, "the dashboard's run: which attempts have a worktree, in the same pass");
    assert.equal(changes.length, 1, 'one publication');
    // Both surfaces map from that one publication.
    const deltas = posted.filter((m) => m.type === 'delta');
    assert.equal(deltas.length, 1);
    assert.deepEqual(deltas[0]!.tasks?.map((t) => `${t.id}:${t.status}`).sort(), ['T1:running', 'T5:running']);
    assert.equal(deltas[0]!.now, changes[0]!.now, 'with the publication’s clock');
    assert.ok(
      deltas[0]!.events!.some((e) => e.type === 'delegation:claimed'),
      'events from the event stream',
    );
  });

  it('applies each heartbeat once, and it reaches both the Workers view mapping and the dashboard mapping', async () => {
    const engine = await fixture.open({ follow: true });
    const subscriptions = countSubscriptions(engine);
    const cache = open(engine);
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const posted: HostMessage[] = [];
    const feed = feedOf(cache, posted);
    await feed.sendSnapshot();
    await engine.refresh();
    await sleep(200);
    const reads = countReads(engine);
    const published: RunStateChange[] = [];
    const seen: Array<{ now: number; rows: string[] }> = [];
    cache.onDidChange((c) => {
      published.push(c);
      seen.push({ now: c.now, rows: workerRows(cache).map((r) => r.row.description ?? '') });
    });
    posted.length = 0;
    fixture.fakeClock.advance(1500);
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'reading the task' });
    await engine.refresh();
    await sleep(200);
    assert.equal(subscriptions.count, 1, 'the views and the dashboard hear engine events through one subscription');
    assert.equal(reads.total(), 0, 'a heartbeat is applied without a read');
    const withBeat = published.filter((c) => c.beats.has(`${claim.runId}/${claim.runtimeId}`));
    assert.equal(withBeat.length, 1, 'applied and published once');
    const rows = seen[published.indexOf(withBeat[0]!)]!.rows;
    assert.equal(rows.length, 1);
    assert.match(rows[0]!, /^beat 0s ago · lease \d+m \d\ds · reading the task$/, 'the Workers view row');
    const beats = posted.filter((m) => m.type === 'heartbeats');
    assert.equal(beats.length, 1, 'one heartbeat message to the dashboard');
    assert.equal(beats[0]!.now, withBeat[0]!.now, 'from the same publication');
    assert.deepEqual(beats[0]!.beats, [
      {
        runtimeId: claim.runtimeId,
        heartbeatCount: 1,
        lastHeartbeatAt: fixture.fakeClock.now(),
        leaseExpiresAt: cache.liveRuntimes()[0]!.leaseExpiresAt,
        progress: 'reading the task',
        // `baton heartbeat` is the worker's own beat, not a renewal by its coordinator.
        workerBeatAt: fixture.fakeClock.now(),
      },
    ]);
    assert.equal(posted.filter((m) => m.type === 'delta').length, 0, 'a heartbeat is not also a delta');
  });

  it('the Runs view and the dashboard show the same duration for a task at every publication, running and finished', async () => {
    const engine = await fixture.open({ follow: true });
    // Ticks every 50 ms (real time), while the engine's clock is moved on by hand.
    const cache = open(engine, { coalesceMs: 20, publishGapMs: 20, tickMs: 50 });
    const { run } = await engine.runForPlan('plan.md');
    const posted: HostMessage[] = [];
    const feed = feedOf(cache, posted, run.id);
    let dashboard: DashboardState = initialState();
    const mismatches: string[] = [];
    const compared: string[] = [];
    // The feed subscribed first: by the time this listener runs, the dashboard has this publication's message.
    cache.onDidChange(() => {
      for (const m of posted.splice(0)) dashboard = reduce(dashboard, m, 0);
      for (const taskId of ['T1', 'T5']) {
        const task = dashboard.tasks.find((t) => t.id === taskId);
        if (!task?.startedAt) continue;
        // What the webview's queue shows (webview-ui/src/queue.ts) and what the Runs view shows.
        const shown = taskDuration(task, hostNow(dashboard));
        const tree = taskRow(cache, run.id, taskId).duration ?? '';
        compared.push(`${taskId} ${tree}`);
        if (shown !== tree) mismatches.push(`${taskId}: Runs view ${tree}, dashboard ${shown}`);
      }
    });
    dashboard = reduce(dashboard, await feed.sendSnapshot(), 0);
    posted.length = 0;
    const t1 = await engine.claimTask({ runId: run.id, taskId: 'T1' });
    fixture.fakeClock.advance(4_300);
    await engine.claimTask({ runId: run.id, taskId: 'T5' });
    for (const step of [900, 61_000, 400, 3_599_000]) {
      fixture.fakeClock.advance(step);
      await sleep(120);
    }
    // T1 finishes; T5 keeps running.
    await engine.ingest({ delegationId: t1.delegation.id, artifactPath: fixture.writeResult('T1.md', { task: 'T1' }) });
    await engine.refresh();
    await sleep(150);
    fixture.fakeClock.advance(65_000);
    await sleep(150);
    assert.deepEqual(mismatches, []);
    assert.ok(compared.includes('T1 1h 01m'), `T1 was compared while running past an hour: ${compared.join(', ')}`);
    assert.ok(compared.includes('T5 1h 02m'), `and T5 ran on after T1 finished: ${compared.join(', ')}`);
    const t1Row = taskRow(cache, run.id, 'T1');
    assert.match(t1Row.description!, /^completed · attempt 1 · PASS · 1h 01m$/, 'a finished task keeps its duration');
  });

  it('while nothing shows it does no reads; when a surface shows, it catches up at once with one read', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const cache = open(engine, { ...QUIET, hiddenMs: 60_000 }, false);
    await cache.refreshNow();
    const reads = countReads(engine);
    const changes: RunStateChange[] = [];
    cache.onDidChange((c) => changes.push(c));
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'hidden' });
    await engine.ingest({
      delegationId: claim.delegation.id,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    await engine.refresh();
    await sleep(600);
    assert.equal(reads.total(), 0, 'nothing read while hidden');
    assert.equal(changes.length, 0, 'nothing published while hidden');
    cache.setVisible('view', true);
    await sleep(150);
    assert.equal(reads.overview, 1, 'showing a view catches up at once, in one read');
    assert.equal(changes.length, 1);
    assert.ok(changes[0]!.tasks.has(`${claim.runId}/T1`));
    assert.equal(cache.overview(claim.runId)!.tasks.find((t) => t.id === 'T1')!.status, 'completed');
  });

  it('reports exactly which tasks changed, and no structure change for a status change', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const cache = open(engine, { ...QUIET, coalesceMs: 50 });
    await cache.refreshNow();
    const change = new Promise<RunStateChange>((resolve) => cache.onDidChange(resolve));
    await engine.ingest({
      delegationId: claim.delegation.id,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    const seen = await change;
    assert.equal(seen.structure, false);
    assert.deepEqual(
      [...seen.tasks].sort(),
      [`${claim.runId}/T1`, `${claim.runId}/T3`],
      'T1 completed and T3 became ready; nothing else',
    );
    assert.ok(seen.ingestions.has(claim.runId), 'the ingestion is news for the diagnostics');
  });

  it('a task done while the run goes on changes the run too: its row counts it at once', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const cache = open(engine, { ...QUIET, coalesceMs: 50 });
    await cache.refreshNow();
    const total = cache.overview(claim.runId)!.tasks.length;
    assert.match(runRow(cache, claim.runId).description ?? '', new RegExp(` · 0/${total} · ${claim.runId}$`));
    const change = new Promise<RunStateChange>((resolve) => cache.onDidChange(resolve));
    await engine.ingest({
      delegationId: claim.delegation.id,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    // The Runs view refreshes the run's node only when the change names the run.
    assert.ok((await change).runs.has(claim.runId), 'the run changed: its done count did');
    assert.match(runRow(cache, claim.runId).description ?? '', new RegExp(`^running · 1/${total} · ${claim.runId}$`));
  });

  it('publications are at least publishGapMs apart, and a beat after a quiet spell goes out at once', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const cache = open(engine, { ...QUIET, publishGapMs: 250 });
    await cache.refreshNow();
    await sleep(300);
    const at: number[] = [];
    cache.onDidChange(() => at.push(performance.now()));
    const first = performance.now();
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'first' });
    await engine.refresh();
    await sleep(100);
    assert.equal(at.length, 1, 'the first beat is out before the gap would have passed');
    assert.ok(at[0]! - first < 100, `${(at[0]! - first).toFixed(0)} ms`);
    // A stream of beats 20 ms apart: VS Code would hold a tree's refresh back for as long as it lasts.
    for (let i = 0; i < 30; i++) {
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: `step ${i}` });
      await engine.refresh();
      await sleep(20);
    }
    await sleep(300);
    assert.ok(at.length >= 3, `${at.length} publications`);
    for (let i = 1; i < at.length; i++)
      assert.ok(at[i]! - at[i - 1]! >= 248, `publications ${(at[i]! - at[i - 1]!).toFixed(0)} ms apart`);
    assert.equal(workerRows(cache)[0]!.row.description?.endsWith('step 29'), true, 'the last beat is not lost');
  });

  it('moves the shared clock on while something counts time, and not while nothing shows', async () => {
    const engine = await fixture.open({ follow: true });
    await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const cache = open(engine, { ...QUIET, tickMs: 60 });
    await cache.refreshNow();
    const changes: RunStateChange[] = [];
    cache.onDidChange((c) => changes.push(c));
    fixture.fakeClock.advance(2000);
    await sleep(200);
    assert.ok(changes.length >= 2 && changes.every(isTick), `${changes.length} ticks`);
    assert.equal(cache.now, fixture.fakeClock.now(), 'each tick takes the engine’s clock');
    cache.setVisible('view', false);
    changes.length = 0;
    await sleep(200);
    assert.equal(changes.length, 0, 'no tick while hidden');
    fixture.fakeClock.advance(5000);
    cache.setVisible('view', true);
    await sleep(30);
    assert.equal(changes.length, 1, 'showing again publishes at once, with nothing pending: a tick');
    assert.equal(changes[0]!.now, fixture.fakeClock.now(), 'the clock is current again');
    await sleep(170);
    assert.ok(changes.length >= 3, `and it ticks on: ${changes.length} publications`);
  });
});
