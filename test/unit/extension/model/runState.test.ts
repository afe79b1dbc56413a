import assert from 'node:assert/strict';
import type { Engine, EngineEvent } from '../../../../src/engine/index';
import { DashboardFeed } from '../../../../src/extension/model/dashboardFeed';
import {
  RunStateCache,
  isTick,
  type RunStateChange,
  type RunStateOptions,
} from '../../../../src/extension/model/runState';
import { runRow, statusSummary, taskRow, workerRows } from '../../../../src/extension/model/viewRows';
import { storeDirOf } from '../../../../src/engine/effects/workspaceLayout';
import { selfIdentity } from '../../../../src/engine/effects/processes/processes';
import { renewCoordinatorLease } from '../../../../src/engine/operations/coordinatorLease/coordinatorLease';
import { recordRuntimeProcess } from '../../../../src/engine/operations/runtimes/createRuntime';
import { recordAgentUsage } from '../../../../src/engine/operations/agentUsage/recordAgentUsage';
import { emptyActivity } from '../../../../src/engine/domain/agents/agentActivity';
import { FileStore } from '../../../../src/engine/store/fileStore';
import { takeCoordinatorLease } from '../../../../src/engine/usecases/coordinatorLiveness';
import type { HostMessage } from '../../../../src/protocol/messages';
import { formatSpend } from '../../../../src/protocol/spend';
import { runTimeText } from '../../../../src/protocol/time';
import { hostNow, initialState, reduce, type DashboardState } from '../../../../webview-ui/src/state';
import { DEMO_PLAN, EngineFixture } from '../../../support/engineFixture';

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

/** No clock ticks unless a test asks for them: they would be publications of their own. */
const QUIET: Omit<RunStateOptions, 'clock'> = { coalesceMs: 100, publishGapMs: 20, tickMs: 60_000 };

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

  /** The cache on the fixture's fake clock, the engine's: its timers fire only as a test moves the clock. */
  function open(engine: Engine, options: Omit<RunStateOptions, 'clock'> = QUIET, visible = true): RunStateCache {
    const cache = new RunStateCache(engine, { ...options, clock: fixture.fakeClock });
    disposables.push(cache);
    if (visible) cache.setVisible('view', true);
    return cache;
  }

  /** `ms` of the fake clock pass, the cache's reads finished at the time they start (no real time waited). */
  function pass(cache: RunStateCache, ms: number): Promise<void> {
    return fixture.fakeClock.runFor(ms, () => cache.settled());
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
    // Thirty beats 5 ms apart: with publications at least 20 ms apart, a handful of changes carry them.
    for (let i = 0; i < 30; i++) {
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: `step ${i}` });
      await engine.refresh();
      await pass(cache, 5);
    }
    await pass(cache, 300);
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
    await engine.refresh();
    await pass(cache, 400);
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
    await pass(cache, 400);
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
    await pass(cache, 200);
    const reads = countReads(engine);
    const published: RunStateChange[] = [];
    const seen: Array<{ now: number; rows: string[] }> = [];
    cache.onDidChange((c) => {
      published.push(c);
      seen.push({ now: c.now, rows: workerRows(cache).map((r) => r.row.description ?? '') });
    });
    posted.length = 0;
    await pass(cache, 1500);
    const beatAt = fixture.fakeClock.now();
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'reading the task' });
    await engine.refresh();
    await pass(cache, 200);
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
        lastHeartbeatAt: beatAt,
        leaseExpiresAt: cache.liveRuntimes()[0]!.leaseExpiresAt,
        progress: 'reading the task',
        // `baton heartbeat` is the worker's own beat, not a renewal by its coordinator.
        workerBeatAt: beatAt,
      },
    ]);
    assert.equal(posted.filter((m) => m.type === 'delta').length, 0, 'a heartbeat is not also a delta');
  });

  it('a worker another machine runs says where, in the Workers view; one on this machine does not', async () => {
    const engine = await fixture.open({ follow: true });
    const cache = open(engine);
    const here = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const there = await engine.claimTask({ runId: here.runId, taskId: 'T5' });
    const store = await fixture.openStore();
    await store.transact(async (tx) => {
      await recordRuntimeProcess(tx, here.runtimeId, selfIdentity(), fixture.fakeClock.now());
      await recordRuntimeProcess(
        tx,
        there.runtimeId,
        { pid: 4242, startTime: '1', host: 'machine-b' },
        fixture.fakeClock.now(),
      );
    });
    await engine.refresh();
    await pass(cache, 400);
    const rows = Object.fromEntries(workerRows(cache).map((r) => [r.row.label, r.row.description ?? '']));
    assert.match(rows[`T5  ${there.delegation.id}`]!, /^alive \d+s · pid 4242 · on machine-b · lease /);
    assert.doesNotMatch(rows[`T1  ${here.delegation.id}`]!, / on /);
  });

  it("an agent's spend rides on its heartbeats: the Workers row, the Runs view and the dashboard show the same figure, moved on without a store read", async () => {
    const engine = await fixture.open({ follow: true });
    const cache = open(engine);
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const posted: HostMessage[] = [];
    const feed = feedOf(cache, posted);
    await feed.sendSnapshot();
    const usageStore = await FileStore.open(storeDirOf(fixture.workspace));
    disposables.push({ dispose: () => void usageStore.close() });
    /** What the stream follower writes beside an activity beat: the attempt's usage row, then the beat. */
    async function spend(inputTokens: number, outputTokens: number, costUsd: number, progress: string): Promise<void> {
      await usageStore.transact((tx) =>
        recordAgentUsage(
          tx,
          {
            runId: claim.runId,
            delegationId: claim.delegation.id,
            taskId: 'T1',
            agent: 'coder',
            kind: 'claude-code',
            permissions: { profile: 'edit' },
            activity: { ...emptyActivity(), turns: 2, toolCalls: 1, inputTokens, outputTokens },
            costSource: 'cli',
            costUsd,
          },
          fixture.fakeClock.now(),
        ),
      );
      await engine.refresh();
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress });
      await engine.refresh();
      await pass(cache, 300);
    }
    // The first beat with a usage row the cache does not hold yet: the run is read once to get it.
    await spend(1200, 30, 0.0061, 'Write notes.txt · 2 turns, 1 tool call');
    const shown = (): { worker: string; task: string; run: string } => ({
      worker: workerRows(cache)[0]!.row.description!.split(' · ').at(-1)!,
      task: taskRow(cache, claim.runId, 'T1').description!.split(' · ').at(-1)!,
      run: runRow(cache, claim.runId).tooltip!.split('Spent: ').at(-1)!,
    });
    assert.deepEqual(shown(), {
      worker: '1,230 tokens, $0.0061',
      task: '1,230 tokens, $0.0061',
      run: '1,230 tokens, $0.0061',
    });

    const reads = countReads(engine);
    posted.length = 0;
    const published: RunStateChange[] = [];
    cache.onDidChange((c) => published.push(c));
    await spend(2400, 70, 0.0123, 'Bash: npm test · 3 turns, 2 tool calls');
    assert.equal(reads.total(), 0, 'the spend came with the heartbeat');
    assert.deepEqual(shown(), {
      worker: '2,470 tokens, $0.0123',
      task: '2,470 tokens, $0.0123',
      run: '2,470 tokens, $0.0123',
    });
    assert.ok(
      published.some((c) => c.tasks.has(`${claim.runId}/T1`) && c.beats.has(`${claim.runId}/${claim.runtimeId}`)),
      'the task changed with the beat (its row shows the spend)',
    );
    // The dashboard: the worker's beat, the task's row and the run's header carry the same figures.
    const beat = posted.flatMap((m) => (m.type === 'heartbeats' ? m.beats : [])).at(-1);
    assert.deepEqual(beat?.spend, { tokens: 2470, costUsd: 0.0123 });
    const delta = posted.filter((m) => m.type === 'delta').at(-1);
    assert.ok(delta && delta.type === 'delta');
    assert.deepEqual(delta.tasks?.find((t) => t.id === 'T1')?.spend, { tokens: 2470, costUsd: 0.0123 });
    assert.deepEqual(delta.run?.spend, { tokens: 2470, costUsd: 0.0123 });
    assert.equal(formatSpend(delta.run.spend), shown().run);
    // A task no agent worked on shows no spend at all (not "0 tokens").
    assert.equal((await feed.buildSnapshot()).tasks.find((t) => t.id === 'T5')!.spend, undefined);
    assert.doesNotMatch(taskRow(cache, claim.runId, 'T5').description ?? '', /token/);
  });

  it('the Runs view and the dashboard show the same duration for a task at every publication, running and finished', async () => {
    const engine = await fixture.open({ follow: true });
    // A tick a second after each publication, as in the editor: over the hour, thousands of publications compared.
    const cache = open(engine, { coalesceMs: 20, publishGapMs: 20, tickMs: 1000 });
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
        if (!task || (task.ranMs === undefined && task.runningSince === undefined)) continue;
        // What the webview's queue shows (webview-ui/src/queue.ts) and what the Runs view shows.
        const shown = runTimeText(task, hostNow(dashboard));
        const tree = taskRow(cache, run.id, taskId).duration ?? '';
        compared.push(`${taskId} ${tree}`);
        if (shown !== tree) mismatches.push(`${taskId}: Runs view ${tree}, dashboard ${shown}`);
      }
    });
    dashboard = reduce(dashboard, await feed.sendSnapshot(), 0);
    posted.length = 0;
    // A lease longer than the hour T1 runs for: a result handed in after its lease ran out is refused.
    const t1 = await engine.claimTask({ runId: run.id, taskId: 'T1', leaseSeconds: 7200 });
    await engine.refresh();
    await pass(cache, 4_300);
    await engine.claimTask({ runId: run.id, taskId: 'T5' });
    await engine.refresh();
    for (const step of [900, 61_000, 400, 3_599_000]) await pass(cache, step);
    // T1 finishes; T5 keeps running.
    await engine.ingest({
      delegationId: t1.delegation.id,
      token: t1.token,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    await engine.refresh();
    await pass(cache, 150);
    await pass(cache, 65_000);
    assert.deepEqual(mismatches, []);
    assert.ok(compared.includes('T1 1h 01m'), `T1 was compared while running past an hour: ${compared.join(', ')}`);
    assert.ok(compared.includes('T5 1h 02m'), `and T5 ran on after T1 finished: ${compared.join(', ')}`);
    const t1Row = taskRow(cache, run.id, 'T1');
    assert.match(t1Row.description!, /^completed · attempt 1 · PASS · 1h 01m$/, 'a finished task keeps its duration');
  });

  it("a task's duration is its attempts' run time: a wait at a gate counts nowhere, and the Runs view, the dashboard and its chart agree", async () => {
    const engine = await fixture.open({ follow: true });
    const cache = open(engine, { coalesceMs: 20, publishGapMs: 20, tickMs: 1000 });
    const { run } = await engine.runForPlan('plan.md');
    const posted: HostMessage[] = [];
    const feed = feedOf(cache, posted, run.id);
    let dashboard: DashboardState = reduce(initialState(), await feed.sendSnapshot(), 0);
    posted.length = 0;
    const shown = (): { tree: string; dashboard: string } => {
      for (const m of posted.splice(0)) dashboard = reduce(dashboard, m, 0);
      const task = dashboard.tasks.find((t) => t.id === 'T1')!;
      return { tree: taskRow(cache, run.id, 'T1').duration ?? '', dashboard: runTimeText(task, hostNow(dashboard)) };
    };
    const first = await engine.claimTask({ runId: run.id, taskId: 'T1', leaseSeconds: 600 });
    await engine.refresh();
    await pass(cache, 15_000);
    // A result for another task: rejected, the attempt waits at its ingestion_failed gate for over two minutes.
    await engine.ingest({
      delegationId: first.delegation.id,
      token: first.token,
      artifactPath: fixture.writeResult('wrong.md', { task: 'T2' }),
    });
    await engine.refresh();
    await pass(cache, 140_000);
    assert.deepEqual(shown(), { tree: '15s', dashboard: '15s' }, 'the wait at the gate does not count');
    const gate = (await engine.overview(run.id)).gates.find((g) => g.kind === 'ingestion_failed')!;
    await engine.decideGate({ gateId: gate.id, decision: 'approved', note: 'retry' });
    await engine.refresh();
    await pass(cache, 30_000);
    assert.deepEqual(shown(), { tree: '15s', dashboard: '15s' }, 'deciding after the wait adds nothing either');
    await engine.claimTask({ runId: run.id, taskId: 'T1', leaseSeconds: 600 });
    await engine.refresh();
    await pass(cache, 10_000);
    const now = shown();
    assert.equal(now.dashboard, now.tree);
    assert.match(now.tree, /^2[45]s$/, 'the second attempt adds its own run time, counting up');
    // The chart of attempts in flight: the first one stopped when its result was handed in.
    const [span] = (await feed.buildSnapshot()).series.spans;
    assert.equal(span![1]! - span![0], 15_000);
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
      token: claim.token,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    await engine.refresh();
    await pass(cache, 600);
    assert.equal(reads.total(), 0, 'nothing read while hidden');
    assert.equal(changes.length, 0, 'nothing published while hidden');
    cache.setVisible('view', true);
    await pass(cache, 150);
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
      token: claim.token,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    await engine.refresh();
    await pass(cache, 100);
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
      token: claim.token,
      artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
    });
    await engine.refresh();
    await pass(cache, 100);
    // The Runs view refreshes the run's node only when the change names the run.
    assert.ok((await change).runs.has(claim.runId), 'the run changed: its done count did');
    // No coordinator drives this run (the task was claimed as `baton claim` does): it says so, with the new count.
    assert.match(
      runRow(cache, claim.runId).description ?? '',
      new RegExp(`^waiting for a coordinator · 1/${total} · ${claim.runId}$`),
    );
  });

  it('publications are at least publishGapMs apart, and a beat after a quiet spell goes out at once', async () => {
    const engine = await fixture.open({ follow: true });
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const cache = open(engine, { ...QUIET, publishGapMs: 250 });
    await cache.refreshNow();
    await pass(cache, 300);
    const clock = fixture.fakeClock;
    const at: number[] = [];
    cache.onDidChange(() => at.push(clock.monotonic()));
    const first = clock.monotonic();
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'first' });
    await engine.refresh();
    await pass(cache, 100);
    assert.equal(at.length, 1, 'the first beat is out before the gap would have passed');
    assert.ok(at[0]! - first < 100, `${(at[0]! - first).toFixed(0)} ms`);
    // A stream of beats 20 ms apart: VS Code would hold a tree's refresh back for as long as it lasts.
    for (let i = 0; i < 30; i++) {
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: `step ${i}` });
      await engine.refresh();
      await pass(cache, 20);
    }
    await pass(cache, 300);
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
    const clock = fixture.fakeClock;
    const changes: RunStateChange[] = [];
    /** The engine's clock when each publication went out. */
    const wall: number[] = [];
    cache.onDidChange((c) => {
      changes.push(c);
      wall.push(clock.now());
    });
    await pass(cache, 200);
    assert.ok(changes.length >= 2 && changes.every(isTick), `${changes.length} ticks`);
    assert.deepEqual(
      changes.map((c) => c.now),
      wall,
      'each tick takes the engine’s clock',
    );
    cache.setVisible('view', false);
    changes.length = 0;
    await pass(cache, 200);
    assert.equal(changes.length, 0, 'no tick while hidden');
    await pass(cache, 5000);
    assert.equal(changes.length, 0, 'nor while the clock runs on');
    const shown = clock.now();
    cache.setVisible('view', true);
    await pass(cache, 30);
    assert.equal(changes.length, 1, 'showing again publishes at once, with nothing pending: a tick');
    assert.equal(changes[0]!.now, shown, 'the clock is current again');
    await pass(cache, 170);
    assert.ok(changes.length >= 3, `and it ticks on: ${changes.length} publications`);
  });

  describe('a coordinator lease that runs out with nothing written', () => {
    let holderStore: FileStore | undefined;
    afterEach(async () => {
      await holderStore?.close();
      holderStore = undefined;
    });

    /** A run whose coordinator holds a lease of `leaseMs` and then stops renewing it — like one that hangs. */
    async function heldRun(engine: Engine, leaseMs: number): Promise<{ runId: string; epoch: number }> {
      const { run } = await engine.runForPlan('plan.md');
      holderStore = await FileStore.open(storeDirOf(fixture.workspace));
      const taken = await takeCoordinatorLease(holderStore, fixture.fakeClock, {
        runId: run.id,
        holder: 'box:4242',
        identity: selfIdentity(),
        leaseMs,
      });
      assert.ok(taken.acquired);
      return { runId: run.id, epoch: taken.epoch };
    }

    it('flips the run from running to waiting for a coordinator at its expiry, with no store change to announce it', async () => {
      const engine = await fixture.open({ follow: true });
      const { runId } = await heldRun(engine, 700);
      const cache = open(engine);
      await cache.refreshNow();
      assert.match(runRow(cache, runId).description!, /^running · 0\/5 · /);
      const events: EngineEvent[] = [];
      engine.onEvent((e) => events.push(e));
      const changes: RunStateChange[] = [];
      cache.onDidChange((c) => changes.push(c));
      await pass(cache, 650);
      assert.match(runRow(cache, runId).description!, /^running · /, 'still running before the expiry');
      await pass(cache, 200);
      const flipped = /^waiting for a coordinator · /.test(runRow(cache, runId).description!);
      assert.ok(flipped, `the run row still says ${runRow(cache, runId).description}`);
      assert.deepEqual(events, [], 'nothing was written meanwhile');
      assert.ok(
        changes.some((c) => c.runs.has(runId)),
        'the run was published as changed (the Runs view and the dashboard header refresh it)',
      );
      assert.match(runRow(cache, runId).tooltip!, /the lease of its coordinator \(box:4242\) ran out \d+s ago/);
      assert.match(runRow(cache, runId).contextValue, /canResume/);
      assert.equal(statusSummary(cache, []).text, '$(shield) Baton: 1 gate waiting, 1 run waiting for a coordinator');
    });

    it('stays running when the lease was renewed meanwhile (renewals announce nothing): the run is read again at the old expiry', async () => {
      const engine = await fixture.open({ follow: true });
      const { runId, epoch } = await heldRun(engine, 700);
      const cache = open(engine);
      await cache.refreshNow();
      const reads = countReads(engine);
      await holderStore!.transact((tx) =>
        renewCoordinatorLease(tx, { runId, epoch, leaseMs: 60_000 }, fixture.fakeClock.now()),
      );
      await pass(cache, 1200);
      assert.match(runRow(cache, runId).description!, /^running · /);
      assert.ok(reads.overview >= 1, 'read again at the old expiry');
      assert.ok(reads.overview <= 2, `${reads.overview} reads`);
    });
  });
});
