import assert from 'node:assert/strict';
import type { Engine } from '../../../src/engine/index';
import { endRunningAttempt } from '../../../src/engine/operations/delegations/endRunningAttempt';
import { releaseUnlaunchedAttempt } from '../../../src/engine/operations/delegations/releaseUnlaunchedAttempt';
import { recordRuntimeProcess } from '../../../src/engine/operations/runtimes/createRuntime';
import { parkedBefore, unstartedClaim } from '../../../src/engine/queries/delegations';
import type { FileStore } from '../../../src/engine/store/fileStore';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/**
 * A claim whose launch a store outage cut off (issue 26): released once the store answers — CANCELLED, its task ready
 * at once, not counted against maxAttempts and not a park (the next attempt does not continue a session it never had).
 * The real outage, a PostgreSQL restart between a claim and its worker, is in test/system/cli/postgresRestart.test.ts.
 */
describe('releasing an attempt whose launch was cut off', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let store: FileStore;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    fixture.write('.baton/config.json', JSON.stringify({ maxAttempts: 1, retryBackoffSeconds: 0 }));
    engine = await fixture.open();
    store = await fixture.openStore();
  });
  afterEach(() => fixture.dispose());

  it('CANCELLED and ready at once, once; the one attempt maxAttempts allows is still there', async () => {
    const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const { runId } = first;
    const release = () =>
      store.transact((tx) =>
        releaseUnlaunchedAttempt(tx, { runId, delegationId: first.delegation.id }, fixture.fakeClock.now()),
      );
    assert.equal(await release(), true);
    assert.equal(await release(), false, 'an attempt no longer RUNNING is left as it is');
    const overview = await engine.overview(runId);
    const released = overview.delegations.find((d) => d.id === first.delegation.id)!;
    assert.equal(released.status, 'CANCELLED');
    assert.match(released.reason!, /^not launched: the store went out of reach during its launch/);
    assert.equal(overview.tasks.find((t) => t.id === 'T1')!.status, 'ready');

    const second = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    assert.equal(second.delegation.attempt, 2);
    assert.equal(await store.read((r) => parkedBefore(r, runId, 'T1', 2)), undefined, 'not a park');
    await store.transact((tx) =>
      endRunningAttempt(
        tx,
        { runId, delegationId: second.delegation.id, to: 'FAILED', reason: 'exited 1' },
        fixture.fakeClock.now(),
      ),
    );
    const t1 = (await engine.overview(runId)).tasks.find((t) => t.id === 'T1')!;
    assert.equal(t1.status, 'failed');
    assert.match(t1.statusReason!, /no attempts left \(1\)/, 'the failure used the one attempt, the release none');
  });

  it("finds a claim whose commit's answer was lost by its holder: RUNNING, no worker recorded, this holder's", async () => {
    const holder = 'host-a:4242';
    const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1', holder });
    const { runId } = first;
    const find = (taskId: string, by = holder) => store.read((r) => unstartedClaim(r, { runId, taskId, holder: by }));
    assert.equal(await find('T1'), first.delegation.id);
    assert.equal(await find('T1', 'host-a:9999'), undefined, "another holder's claim is not this coordinator's");
    assert.equal(await find('T5'), undefined, 'a task with no claim');
    const other = await engine.claimTask({ runId, taskId: 'T5', holder });
    await store.transact((tx) =>
      recordRuntimeProcess(tx, other.runtimeId, { pid: 4343, startTime: '1', host: 'host-a' }, fixture.fakeClock.now()),
    );
    assert.equal(await find('T5'), undefined, 'a claim whose worker was recorded was launched');
    await store.transact((tx) =>
      releaseUnlaunchedAttempt(tx, { runId, delegationId: first.delegation.id }, fixture.fakeClock.now()),
    );
    assert.equal(await find('T1'), undefined, 'an attempt no longer RUNNING');
  });
});
