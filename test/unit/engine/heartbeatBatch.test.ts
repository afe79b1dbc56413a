import assert from 'node:assert/strict';
import { BatonError, type EngineEvent } from '../../../src/engine/index';
import type { StorePort, StoreTx } from '../../../src/engine/store/port';
import { HeartbeatBatch } from '../../../src/engine/usecases/heartbeatBatch';
import { EVENT_GAP_WAIT_MS, EventAnnouncer } from '../../../src/engine/announcer';
import { EngineFixture } from '../../support/engineFixture';

/** The store, counting its write transactions; `failCommits` makes each one throw after its work (nothing commits). */
class CountingStore {
  transactions = 0;
  failCommits = false;
  constructor(readonly inner: StorePort) {}
  get port(): StorePort {
    const inner = this.inner;
    return {
      recovery: inner.recovery,
      read: (work) => inner.read(work),
      refresh: () => inner.refresh(),
      watch: (listener) => inner.watch(listener),
      continueNumbering: (tx, columns) => inner.continueNumbering(tx, columns),
      close: () => inner.close(),
      transact: <T>(work: (tx: StoreTx) => Promise<T>) => {
        this.transactions++;
        return this.inner.transact(async (tx) => {
          const result = await work(tx);
          if (this.failCommits) throw new Error('the disk went away');
          return result;
        });
      },
    };
  }
}

describe('worker heartbeats committed together (HeartbeatBatch)', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  async function twoClaims() {
    const engine = await fixture.open();
    const t1 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const t5 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
    const store = await fixture.openStore();
    return { engine, t1, t5, counting: new CountingStore(store) };
  }

  it('commits the beats sent while one commits in the next single transaction, each with its own outcome', async () => {
    const { engine, t1, t5, counting } = await twoClaims();
    const batch = new HeartbeatBatch(counting.port, fixture.fakeClock);
    const sent = [
      batch.renew({ runtimeId: t1.runtimeId, token: t1.token, progress: 'first' }),
      ...Array.from({ length: 8 }, (_, i) => {
        const claim = i % 2 === 0 ? t1 : t5;
        return batch.renew({ runtimeId: claim.runtimeId, token: claim.token, progress: `beat ${i}` });
      }),
      batch.renew({ runtimeId: t5.runtimeId, token: 'not-its-token' }),
    ];
    const outcomes = await Promise.allSettled(sent);

    // The first went alone (nothing was committing); the nine sent meanwhile went together.
    assert.equal(counting.transactions, 2);
    const refused = outcomes.at(-1)!;
    assert.equal(refused.status, 'rejected');
    assert.ok(BatonError.is(refused.reason, 'runtime.wrong-token'));
    assert.deepEqual(
      outcomes.slice(0, -1).map((o) => o.status),
      Array.from({ length: 9 }, () => 'fulfilled'),
    );
    // The refusal undid nothing: every renewal is in the store, in order.
    await engine.refresh();
    const runtimes = new Map((await engine.overview(t1.runId)).runtimes.map((r) => [r.id, r]));
    assert.equal(runtimes.get(t1.runtimeId)?.heartbeatCount, 5);
    assert.equal(runtimes.get(t1.runtimeId)?.progress, 'beat 6');
    assert.equal(runtimes.get(t5.runtimeId)?.heartbeatCount, 4);
    assert.equal(runtimes.get(t5.runtimeId)?.progress, 'beat 7');
  });

  it('makes a lapsed lease official in the batch (STALE, the task ready for its retry) and refuses the beats after it', async () => {
    const engine = await fixture.open();
    const t1 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const t5 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5', leaseSeconds: 3_600 });
    fixture.fakeClock.advance(t1.leaseExpiresAt - fixture.fakeClock.now() + 1_000);
    const store = await fixture.openStore();
    const counting = new CountingStore(store);
    const batch = new HeartbeatBatch(counting.port, fixture.fakeClock);
    const outcomes = await Promise.allSettled([
      batch.renew({ runtimeId: t5.runtimeId, token: t5.token, progress: 'alone' }),
      batch.renew({ runtimeId: t1.runtimeId, token: t1.token }),
      batch.renew({ runtimeId: t5.runtimeId, token: t5.token, progress: 'after the lapse' }),
      batch.renew({ runtimeId: t1.runtimeId, token: t1.token }),
    ]);
    assert.equal(counting.transactions, 2);
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? (o.reason as BatonError).code : 'renewed')),
      ['renewed', 'runtime.lease-expired', 'renewed', 'runtime.not-live'],
    );
    await engine.refresh();
    const overview = await engine.overview(t1.runId);
    const attempts = overview.delegations.filter((d) => d.taskId === 'T1').map((d) => [d.attempt, d.status]);
    assert.deepEqual(attempts, [[1, 'STALE']]);
    const task = overview.tasks.find((t) => t.id === 'T1');
    assert.equal(task?.status, 'ready');
    assert.match(task?.statusReason ?? '', /went stale; attempt 2 of 2 may start/);
    const t5runtime = overview.runtimes.find((r) => r.id === t5.runtimeId);
    assert.equal(t5runtime?.heartbeatCount, 2);
    assert.equal(t5runtime?.progress, 'after the lapse');
  });

  it('commits a beat sent from a settled beat’s callback (the loop that settled it had ended)', async () => {
    const { t1, counting } = await twoClaims();
    const batch = new HeartbeatBatch(counting.port, fixture.fakeClock);
    const second = await batch
      .renew({ runtimeId: t1.runtimeId, token: t1.token })
      .then(() => batch.renew({ runtimeId: t1.runtimeId, token: t1.token }));
    assert.equal(second.heartbeatCount, 2);
    assert.equal(counting.transactions, 2);
  });

  it('rejects every beat of a commit that fails, and writes none of them', async () => {
    const { engine, t1, t5, counting } = await twoClaims();
    const batch = new HeartbeatBatch(counting.port, fixture.fakeClock);
    counting.failCommits = true;
    const outcomes = await Promise.allSettled([
      batch.renew({ runtimeId: t1.runtimeId, token: t1.token }),
      batch.renew({ runtimeId: t5.runtimeId, token: t5.token }),
      batch.renew({ runtimeId: t1.runtimeId, token: t1.token }),
    ]);
    assert.deepEqual(
      outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).message : 'renewed')),
      ['the disk went away', 'the disk went away', 'the disk went away'],
    );
    await engine.refresh();
    const overview = await engine.overview(t1.runId);
    assert.deepEqual(
      overview.runtimes.map((r) => r.heartbeatCount),
      [0, 0],
    );
    // The batch goes on: the next beat commits.
    counting.failCommits = false;
    assert.equal((await batch.renew({ runtimeId: t1.runtimeId, token: t1.token })).heartbeatCount, 1);
  });

  it('through the engine: concurrent heartbeats are announced to a listener, each runtime once per look', async () => {
    const { engine, t1, t5 } = await twoClaims();
    const heard: EngineEvent[] = [];
    engine.onEvent((e) => heard.push(e));
    await Promise.all([
      engine.heartbeat({ runtimeId: t1.runtimeId, token: t1.token, progress: 'a' }),
      engine.heartbeat({ runtimeId: t5.runtimeId, token: t5.token, progress: 'b' }),
      engine.heartbeat({ runtimeId: t1.runtimeId, token: t1.token, progress: 'c' }),
    ]);
    await engine.refresh();
    const beats = heard.filter((e) => e.type === 'runtime:heartbeat');
    const last = new Map(beats.map((e) => [e.data.runtimeId, e.data]));
    assert.equal(last.get(t1.runtimeId)?.heartbeatCount, 2);
    assert.equal(last.get(t1.runtimeId)?.progress, 'c');
    assert.equal(last.get(t5.runtimeId)?.progress, 'b');
  });
});

describe('the engine’s announcements with nobody listening', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  it('keep only the log’s position; a listener who comes later hears what happens from then on', async () => {
    const engine = await fixture.open();
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'unheard' });
    await engine.refresh();

    const heard: EngineEvent[] = [];
    engine.onEvent((e) => heard.push(e));
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'heard' });
    await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
    await engine.refresh();

    // No event from before the listener came (the claim of T1, the run's creation) …
    assert.ok(!heard.some((e) => e.type === 'run:created'));
    assert.ok(!heard.some((e) => e.type === 'delegation:claimed' && e.data.delegationId === 'D-T1-coder-001'));
    // … and everything after it: the beat (its state now) and the next claim.
    const beat = heard.find((e) => e.type === 'runtime:heartbeat');
    assert.ok(beat?.type === 'runtime:heartbeat');
    assert.equal(beat.data.progress, 'heard');
    assert.equal(beat.data.heartbeatCount, 2);
    assert.ok(heard.some((e) => e.type === 'delegation:claimed' && e.data.delegationId === 'D-T5-coder-001'));
  });
});

describe('the event announcer with nobody listening', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  /** The workspace's store, counting its reads; `logEvent` commits one event row of the given type. */
  async function countedStore() {
    const store = await fixture.openStore();
    const counted = { reads: 0 };
    const port: StorePort = {
      recovery: store.recovery,
      read: (work) => {
        counted.reads++;
        return store.read(work);
      },
      transact: (work) => store.transact(work),
      refresh: () => store.refresh(),
      watch: (listener) => store.watch(listener),
      continueNumbering: () => store.continueNumbering(),
      close: () => store.close(),
    };
    let seq = 0;
    const logEvent = (type: string): Promise<number> =>
      port.transact((tx) =>
        tx.run(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES ('R-x', ?, ?, 0, '{}')`, [++seq, type]),
      );
    return { port, counted, logEvent };
  }

  it('reads nothing after a commit; a listener hears the commits started after it came and none from before', async () => {
    const { port, counted, logEvent } = await countedStore();
    const announcer = await EventAnnouncer.start(port, fixture.fakeClock, () => undefined);
    counted.reads = 0;
    for (let i = 0; i < 3; i++) await logEvent('unheard');
    await announcer.settled();
    assert.equal(counted.reads, 0);

    const before = logEvent('started before the listener came');
    const heard: string[] = [];
    announcer.onEvent((e) => heard.push(e.type));
    const after = logEvent('started after');
    await Promise.all([before, after]);
    await announcer.settled();
    assert.deepEqual(heard, ['started after']);
    announcer.dispose();
  });
});

describe('the event announcer when writers of different runs commit side by side (a shared store)', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  it('announces an event that became visible after one with a higher id, once each, and goes past an id that never comes', async () => {
    const store = await fixture.openStore();
    // Explicit ids stand for the order PostgreSQL hands them out in, while the commits land in another order.
    const commit = (id: number, runId: string, seq: number): Promise<number> =>
      store.transact((tx) =>
        tx.run(`INSERT INTO events (id, run_id, seq, type, at, data_json) VALUES (?, ?, ?, 'x', 0, '{}')`, [
          id,
          runId,
          seq,
        ]),
      );
    const announcer = await EventAnnouncer.start(store, fixture.fakeClock, () => undefined);
    const heard: number[] = [];
    announcer.onEvent((e) => {
      if (e.id !== undefined) heard.push(e.id);
    });
    const look = async () => {
      await store.refresh();
      await announcer.settled();
    };
    await commit(2, 'R-b', 1); // run B's commit lands first, with the higher id
    await look();
    await commit(1, 'R-a', 1); // run A's, with the lower one, after it
    await look();
    await commit(3, 'R-a', 2);
    await look();
    assert.deepEqual(heard, [2, 1, 3], 'each once, the late one too');
    // Id 4 was taken by a transaction that rolled back: 5 is heard, and after the wait the position goes past 4.
    await commit(5, 'R-b', 2);
    await look();
    fixture.fakeClock.advance(EVENT_GAP_WAIT_MS);
    await look();
    await commit(6, 'R-a', 3);
    await look();
    assert.deepEqual(heard, [2, 1, 3, 5, 6]);
    announcer.dispose();
  });
});
