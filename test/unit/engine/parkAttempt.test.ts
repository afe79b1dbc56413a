import assert from 'node:assert/strict';
import type { Engine } from '../../../src/engine/index';
import { endRunningAttempt } from '../../../src/engine/operations/delegations/endRunningAttempt';
import { parkAttempt } from '../../../src/engine/operations/delegations/parkAttempt';
import { parkedBefore } from '../../../src/engine/queries/delegations';
import { readQuotaHolds } from '../../../src/engine/queries/quotaHolds';
import type { FileStore } from '../../../src/engine/store/fileStore';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/**
 * A parked attempt (docs/agents.md, "Usage limits park"): CANCELLED with a `parked:` reason, its task ready again not
 * before the reset, its worker held until then — and it does not count against maxAttempts.
 */
describe('parking an attempt: not a failure, a hold until the reset', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let store: FileStore;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    fixture.write('.baton/config.json', JSON.stringify({ maxAttempts: 2, retryBackoffSeconds: 0 }));
    engine = await fixture.open();
    store = await fixture.openStore();
  });
  afterEach(() => fixture.dispose());

  it('parks until the reset, holds its worker, and the failure after it is the first of maxAttempts', async () => {
    const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const { runId } = first;
    const now = fixture.fakeClock.now();
    const until = now + 60_000;
    const park = () =>
      store.transact((tx) =>
        parkAttempt(tx, { runId, delegationId: first.delegation.id, cause: 'usage-limit', until, said: 'limit' }, now),
      );
    assert.equal(await park(), true);
    assert.equal(await park(), false, 'an attempt no longer RUNNING is left as it is');
    const overview = await engine.overview(runId);
    const parked = overview.delegations.find((d) => d.id === first.delegation.id)!;
    assert.equal(parked.status, 'CANCELLED');
    assert.match(parked.reason!, /^parked: coder hit its usage limit/);
    const t1 = overview.tasks.find((t) => t.id === 'T1')!;
    assert.equal(t1.status, 'ready');
    assert.match(t1.statusReason!, /^waiting for usage limit until /);
    assert.deepEqual(await store.read((r) => readQuotaHolds(r, runId, now)), [{ worker: 'coder', until }]);
    assert.deepEqual(await store.read((r) => readQuotaHolds(r, runId, until)), [], 'the hold ends at the reset');

    fixture.fakeClock.advance(60_000);
    const second = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    assert.equal(second.delegation.attempt, 2);
    assert.equal(await store.read((r) => parkedBefore(r, runId, 'T1', 2)), first.delegation.id);
    await store.transact((tx) =>
      endRunningAttempt(
        tx,
        { runId, delegationId: second.delegation.id, to: 'FAILED', reason: 'exited 1' },
        fixture.fakeClock.now(),
      ),
    );
    const after = (await engine.overview(runId)).tasks.find((t) => t.id === 'T1')!;
    assert.equal(after.status, 'ready', 'the parked attempt did not use one of the two');
    assert.match(after.statusReason!, /attempt 2 of 2 may start/);
    assert.equal(await store.read((r) => parkedBefore(r, runId, 'T1', 3)), undefined, 'a failed attempt is not parked');
  });
});
