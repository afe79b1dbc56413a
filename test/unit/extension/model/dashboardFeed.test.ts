import assert from 'node:assert/strict';
import type { Engine } from '../../../../src/engine/index';
import { DashboardFeed } from '../../../../src/extension/model/dashboardFeed';
import { RunStateCache } from '../../../../src/extension/model/runState';
import { parseHostMessage, type HostMessage } from '../../../../src/protocol/messages';
import { runElapsed } from '../../../../src/protocol/time';
import { DEMO_PLAN, EngineFixture } from '../../../support/engineFixture';

/** The host side of the dashboard against a real engine and store: what it posts, and when. */
describe('dashboard feed (src/extension/model/dashboardFeed.ts)', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let cache: RunStateCache;
  let feed: DashboardFeed;
  let posted: HostMessage[];

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    engine = await fixture.open({ follow: true });
    posted = [];
    // The feed maps from the run-state cache, shown as the dashboard panel shows it; no clock ticks here. The cache
    // runs on the engine's fake clock: its timers fire as the test moves the clock.
    cache = new RunStateCache(engine, { clock: fixture.fakeClock, coalesceMs: 20, publishGapMs: 20, tickMs: 60_000 });
    cache.setVisible('dashboard', true);
    feed = new DashboardFeed(cache, { coordinatedHere: () => false, maxConcurrency: () => 4 }, (m) => {
      // Everything the host posts must pass the webview's own check.
      const parsed = parseHostMessage(m);
      assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
      posted.push(m);
    });
  });
  afterEach(async () => {
    feed.dispose();
    cache.dispose();
    await fixture.dispose();
  });

  /** `ms` of the fake clock pass, the cache's reads (and the feed's snapshot loads) finished as they start. */
  const settle = (ms = 500) => fixture.fakeClock.runFor(ms, () => cache.settled());
  /** What the feed must have posted once `ms` of the clock passed (any batch that follows included). */
  async function until(what: string, done: () => boolean, ms = 500): Promise<void> {
    await settle(ms);
    assert.ok(done(), `the feed did not post ${what} within ${ms} ms of the clock`);
  }
  const last = <T extends HostMessage['type']>(type: T) =>
    posted.filter((m) => m.type === type).at(-1) as Extract<HostMessage, { type: T }> | undefined;

  it('with no run yet, the snapshot says so; when a run starts, the feed follows it with a new snapshot', async () => {
    await feed.sendSnapshot();
    assert.equal(last('snapshot')!.run, null);
    await engine.runForPlan('plan.md');
    await engine.refresh();
    await until('a snapshot of the new run', () => Boolean(last('snapshot')?.run));
    const snap = last('snapshot')!;
    assert.ok(snap.run, 'a second snapshot, of the new run');
    assert.deepEqual(
      snap.tasks.map((t) => `${t.id}:${t.status}`),
      ['T1:ready', 'T2:gated', 'T3:pending', 'T4:pending', 'T5:ready'],
    );
    assert.deepEqual(snap.run.counts, {
      total: 5,
      done: 0,
      running: 0,
      waiting: 4,
      failed: 0,
      blocked: 0,
      cancelled: 0,
      gated: 1,
    });
    assert.equal(snap.gates[0]!.kind, 'risk_approval');
    assert.deepEqual(snap.gates[0]!.risk, ['database']);
    assert.equal(snap.events[0]!.seq > snap.events.at(-1)!.seq, true, 'events newest first');
    assert.match(snap.events.at(-1)!.text, /run created from plan\.md/);
  });

  it("a run's header: blocked and cancelled apart from failed; once replanned its elapsed time stops, it offers no Stop and links to the run that took its place, shown in the same feed", async () => {
    const { run } = await engine.runForPlan('plan.md');
    await feed.showRun(run.id);
    await feed.sendSnapshot();
    assert.equal(last('snapshot')!.run!.activity.canStop, true, 'a running run can be stopped');
    // Rejecting T2's risk gate cancels it, and T4, which depends on it, is blocked: neither failed.
    const gate = (await engine.overview(run.id)).gates.find((g) => g.taskId === 'T2')!;
    await engine.decideGate({ gateId: gate.id, decision: 'rejected', note: 'not now' });
    await engine.refresh();
    await until('the header with T2 cancelled', () => last('delta')?.run?.counts.cancelled === 1);
    assert.deepEqual(
      { ...last('delta')!.run!.counts },
      { total: 5, done: 0, running: 0, waiting: 3, failed: 0, blocked: 1, cancelled: 1, gated: 0 },
    );
    await settle(60_000);
    const replannedAt = fixture.fakeClock.now();
    const newRunId = (await engine.replan({ runId: run.id, planPath: 'plan.md' })).run.id;
    await engine.refresh();
    await until('the header of the replanned run', () => last('delta')?.run?.supersededBy === newRunId);
    const header = last('delta')!.run!;
    assert.equal(header.activity.canStop, false, 'no Stop on a run that ended');
    assert.equal(header.endedAt, replannedAt);
    const elapsed = runElapsed(header, fixture.fakeClock.now());
    await settle(5 * 60_000);
    assert.equal(runElapsed(header, fixture.fakeClock.now()), elapsed, 'the elapsed time stopped when the run ended');
    assert.equal(elapsed, '1m 00s');
    // The link: the same feed shows the new run.
    posted.length = 0;
    await feed.showRun(newRunId);
    assert.equal(last('snapshot')?.run?.id, newRunId);
    assert.equal(feed.currentRunId, newRunId);
  });

  it('sends a small delta of what changed (the claimed task, its runtime, the new events) and batches heartbeats', async () => {
    const { run } = await engine.runForPlan('plan.md');
    await feed.sendSnapshot();
    posted.length = 0;
    const claim = await engine.claimTask({ runId: run.id, taskId: 'T1' });
    await engine.refresh();
    await until('a delta with the claimed task', () => Boolean(last('delta')?.tasks?.length));
    const delta = last('delta')!;
    assert.deepEqual(
      delta.tasks?.map((t) => `${t.id}:${t.status}:${t.attempt}`),
      ['T1:running:1'],
      'only the task that changed',
    );
    assert.deepEqual(
      delta.runtimes?.map((r) => r.id),
      [claim.runtimeId],
    );
    assert.ok(delta.events!.some((e) => e.type === 'delegation:claimed'));
    assert.equal(delta.run?.counts.running, 1);
    assert.equal(delta.gates, undefined, 'gates did not change');

    posted.length = 0;
    for (let i = 0; i < 3; i++)
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: `step ${i + 1}` });
    await engine.refresh();
    await until('the third beat', () =>
      posted.some((m) => m.type === 'heartbeats' && m.beats.some((b) => b.heartbeatCount === 3)),
    );
    const beats = posted.filter((m) => m.type === 'heartbeats');
    assert.ok(beats.length >= 1 && beats.length <= 3, `batched: ${beats.length} message(s) for 3 beats`);
    const final = beats.at(-1)!.beats.find((b) => b.runtimeId === claim.runtimeId)!;
    assert.equal(final.heartbeatCount, 3);
    assert.equal(final.progress, 'step 3');
    assert.equal(
      posted.filter((m) => m.type === 'delta' && m.runtimes?.length).length,
      0,
      'a heartbeat is not also a delta',
    );
  });

  it('posts nothing while paused, and a fresh snapshot on the next ready', async () => {
    const { run } = await engine.runForPlan('plan.md');
    await feed.sendSnapshot();
    feed.pause();
    posted.length = 0;
    await engine.claimTask({ runId: run.id, taskId: 'T5' });
    await engine.refresh();
    await settle();
    assert.deepEqual(posted, []);
    await feed.sendSnapshot();
    assert.equal(last('snapshot')!.tasks.find((t) => t.id === 'T5')!.status, 'running');
  });

  it('ingestion issues: the latest ingestion of each delegation, with 1-based positions; task details with the artifact and attempts', async () => {
    const { run } = await engine.runForPlan('plan.md');
    await feed.sendSnapshot();
    const claim = await engine.claimTask({ runId: run.id, taskId: 'T1' });
    const artifact = fixture.writeResult('bad.md', { task: 'T9', status: 'DONE' });
    await engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: artifact });
    await engine.refresh();
    await until('a delta with the issues', () => Boolean(posted.some((m) => m.type === 'delta' && m.issues?.length)));
    const withIssues = posted.filter((m) => m.type === 'delta' && m.issues?.length).at(-1);
    const issues = (withIssues?.type === 'delta' && withIssues.issues) || [];
    assert.deepEqual(issues.map((i) => i.code).sort(), ['result.invalid-status', 'result.task-mismatch'].sort());
    const status = issues.find((i) => i.code === 'result.invalid-status')!;
    assert.equal(status.line, 7, 'the status line of the artifact');
    assert.equal(status.artifactPath, 'results/bad.md');
    const details = await feed.taskDetails('T1');
    assert.deepEqual(
      details.delegations.map((d) => `${d.id}:${d.status}`),
      [`${claim.delegation.id}:BLOCKED`],
    );
    assert.match(details.artifact!.text, /status: DONE/);
    assert.equal(details.issues.length, 2);
  });
});
