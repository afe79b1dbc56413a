import assert from 'node:assert/strict';
import { countingTransactions } from '../../support/countingStore';
import { DEFAULT_CONFIG } from '../../../src/engine/domain/config';
import { selfIdentity } from '../../../src/engine/effects/processes/processes';
import { Attempt } from '../../../src/engine/executor/attempt';
import { WorkerLeaseKeeper } from '../../../src/engine/executor/workerLeaseKeeper';
import { endRunningAttempt } from '../../../src/engine/operations/delegations/endRunningAttempt';
import { getDelegation } from '../../../src/engine/queries/delegations';
import type { FileStore } from '../../../src/engine/store/fileStore';
import { takeCoordinatorLease } from '../../../src/engine/usecases/coordinatorLiveness';
import { EngineFixture } from '../../support/engineFixture';
import { sequentialIds } from '../../support/fakeClock';

const LEASE_MS = DEFAULT_CONFIG.leaseSeconds * 1000;
const RENEW_EVERY = Math.max(1000, Math.floor(LEASE_MS / 3));

/** Lets the renewal the timer started commit (the store's work is real I/O, not the fake clock's). */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 100));

/**
 * The WorkerLeaseKeeper renews every worker lease a coordinator drives in one batched
 * transaction per tick (BullMQ's lock manager: one timer, extendLocks for all), and reports a
 * lease it lost instead of deciding what to do about it.
 */
describe('the worker lease keeper', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  /** Two claimed attempts (T1, T5), a coordinator lease over their run, and a store that counts transactions. */
  async function twoAttempts() {
    const engine = await fixture.open();
    const claims = [
      await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' }),
      await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' }),
    ];
    await engine.close();
    const store: FileStore = await fixture.openStore();
    const runId = claims[0]!.runId;
    const lease = await takeCoordinatorLease(store, fixture.fakeClock, {
      runId,
      holder: 'box:1',
      identity: selfIdentity(),
      leaseMs: 30_000,
    });
    assert.ok(lease.acquired);
    const { counting, transactions } = countingTransactions(store);
    const lost: Array<{ delegationId: string; why: string }> = [];
    const keeper = new WorkerLeaseKeeper(
      {
        store: counting,
        clock: fixture.fakeClock,
        ids: sequentialIds(),
        workspace: fixture.workspace,
        config: DEFAULT_CONFIG,
        log: () => undefined,
      },
      {
        runId,
        epoch: () => lease.epoch,
        lost: () => false,
        leaseLost: (attempt, why) => lost.push({ delegationId: attempt.delegationId, why }),
      },
    );
    const attempts = claims.map(
      (claim) =>
        new Attempt(
          {
            delegationId: claim.delegation.id,
            taskId: claim.delegation.taskId,
            runtimeId: claim.runtimeId,
            artifactPath: 'unused',
            logPath: 'unused',
            manual: false,
            leaseMs: LEASE_MS,
          },
          fixture.fakeClock.monotonic() + LEASE_MS,
        ),
    );
    return { store, runId, attempts, keeper, lost, transactions, claims };
  }

  it('renews every tracked lease in one transaction per tick', async () => {
    const { store, attempts, keeper, transactions } = await twoAttempts();
    for (const attempt of attempts) keeper.track(attempt);
    fixture.fakeClock.advance(RENEW_EVERY);
    await settle();
    assert.equal(transactions(), 1, 'one transaction for both leases');
    const renewedAt = fixture.fakeClock.now();
    for (const attempt of attempts) {
      const row = await store.read((r) =>
        r.get<{ lease_expires_at: number; heartbeat_count: number }>(
          'SELECT lease_expires_at, heartbeat_count FROM runtimes WHERE id = ?',
          [attempt.runtimeId],
        ),
      );
      assert.equal(Number(row!.lease_expires_at), renewedAt + LEASE_MS);
      assert.equal(Number(row!.heartbeat_count), 1);
      assert.equal(attempt.leaseUntilMono, fixture.fakeClock.monotonic() + LEASE_MS);
    }

    keeper.untrack(attempts[0]!);
    fixture.fakeClock.advance(RENEW_EVERY);
    await settle();
    assert.equal(transactions(), 2);
    keeper.untrackAll();
    fixture.fakeClock.advance(RENEW_EVERY * 3);
    await settle();
    assert.equal(transactions(), 2, 'nothing tracked, nothing renewed');
  });

  it('renews an attempt whose launch took most of its lease before that lease runs out, not a whole tick later', async () => {
    const { store, attempts, keeper, lost, transactions } = await twoAttempts();
    const late = attempts[1]!;
    // Its launch took a while (a loaded machine): its lease, running from its claim, has 900 ms left when it is handed
    // over — less than a tick.
    late.leaseUntilMono = fixture.fakeClock.monotonic() + 900;
    keeper.track(late);
    fixture.fakeClock.advance(300);
    await settle();
    assert.equal(transactions(), 1, 'renewed at a third of what was left');
    assert.deepEqual(lost, []);
    const row = await store.read((r) =>
      r.get<{ lease_expires_at: number }>('SELECT lease_expires_at FROM runtimes WHERE id = ?', [late.runtimeId]),
    );
    assert.equal(Number(row!.lease_expires_at), fixture.fakeClock.now() + LEASE_MS);
  });

  it('reports a lease that ran out (this process was paused) and one decided elsewhere, and renews the others', async () => {
    const { store, runId, attempts, keeper, lost, claims } = await twoAttempts();
    const [expired, kept] = attempts as [Attempt, Attempt];
    for (const attempt of attempts) keeper.track(attempt);
    // Paused past the lease: the stored expiry says both ran out, the monotonic clock only the first's (the second's
    // last renewal, say, came late).
    kept.leaseUntilMono = Number.MAX_SAFE_INTEGER;
    fixture.fakeClock.advance(LEASE_MS + 1);
    await settle();
    assert.deepEqual(lost, [{ delegationId: expired.delegationId, why: 'expired' }]);
    const stale = await store.read((r) => getDelegation(r, runId, claims[0]!.delegation.id));
    assert.equal(stale!.status, 'STALE', 'the renewal made the expiry official');
    const live = await store.read((r) => getDelegation(r, runId, claims[1]!.delegation.id));
    assert.equal(live!.status, 'RUNNING');

    // Decided elsewhere (a person ingested or stopped it): reported, and no longer renewed.
    await store.transact((tx) =>
      endRunningAttempt(tx, { runId, delegationId: kept.delegationId, to: 'FAILED', reason: 'decided' }, 0),
    );
    fixture.fakeClock.advance(RENEW_EVERY);
    await settle();
    assert.deepEqual(lost.at(-1), { delegationId: kept.delegationId, why: 'decided' });
  });
});
