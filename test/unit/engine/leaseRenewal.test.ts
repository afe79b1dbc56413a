import assert from 'node:assert/strict';
import { selfIdentity } from '../../../src/engine/effects/processes/processes';
import { renewRuntimeLease } from '../../../src/engine/operations/runtimes/renewRuntimeLease';
import { takeCoordinatorLease } from '../../../src/engine/usecases/coordinatorLiveness';
import { EngineFixture } from '../../support/engineFixture';

describe('a worker lease held past one lease length (a coordinator handing its workers over)', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  /** T1 claimed by a worker, and a coordinator holding the run: the authority it renews the worker's lease with. */
  async function claimUnderCoordinator() {
    const engine = await fixture.open();
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const store = await fixture.openStore();
    const coordinator = await takeCoordinatorLease(store, fixture.fakeClock, {
      runId: claim.runId,
      holder: 'box:1',
      identity: selfIdentity(),
      leaseMs: 30_000,
    });
    assert.ok(coordinator.acquired);
    const authority = {
      holder: 'coordinator' as const,
      runId: claim.runId,
      epoch: coordinator.epoch,
      withinLease: true,
    };
    return { engine, claim, store, authority };
  }

  it("is not cut back by the worker's own heartbeat: a beat extends a lease, never shortens it", async () => {
    const { engine, claim, store, authority } = await claimUnderCoordinator();
    const now = fixture.fakeClock.now();
    const held = now + 3_600_000;
    await store.transact((tx) =>
      renewRuntimeLease(tx, { runtimeId: claim.runtimeId, authority: { ...authority, until: held }, beat: false }, now),
    );

    fixture.fakeClock.advance(5_000);
    await engine.refresh();
    const beat = await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'still here' });
    assert.equal(beat.leaseExpiresAt, held, 'the held lease stands');
    assert.equal(beat.heartbeatCount, 1);

    // Near the held time, a beat extends it by one lease length from now, as usual.
    fixture.fakeClock.advance(3_600_000 - 15_000);
    const later = await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token });
    assert.ok(later.leaseExpiresAt > held);
  });

  it("keeps the worker's own note over a coordinator's description of what the worker began before it", async () => {
    const { engine, claim, store, authority } = await claimUnderCoordinator();
    const began = fixture.fakeClock.now();
    fixture.fakeClock.advance(1_000);
    await engine.refresh();
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'my own note' });
    fixture.fakeClock.advance(500);
    const describe = (progress: string, describesSince: number) =>
      store.transact((tx) =>
        renewRuntimeLease(
          tx,
          { runtimeId: claim.runtimeId, authority, progress, describesSince },
          fixture.fakeClock.now(),
        ),
      );
    const stale = await describe('Bash: make test', began);
    assert.ok(stale.renewed);
    assert.equal(stale.runtime.progress, 'my own note', 'the note is newer than what the description says');
    assert.equal(stale.runtime.heartbeatCount, 2, 'the beat itself counts');
    // What the worker began after its note replaces it.
    const fresh = await describe('Edit: src/a.ts', fixture.fakeClock.now());
    assert.ok(fresh.renewed);
    assert.equal(fresh.runtime.progress, 'Edit: src/a.ts');
  });
});
