import assert from 'node:assert/strict';
import type { HandIn } from '../../../src/engine/domain/handIn';
import type { Engine } from '../../../src/engine/index';
import { endRunningAttempt } from '../../../src/engine/operations/delegations/endRunningAttempt';
import { recordHandIn } from '../../../src/engine/operations/handIns/recordHandIn';
import { recordRuntimeProcess } from '../../../src/engine/operations/runtimes/createRuntime';
import { expireStaleRuntimes } from '../../../src/engine/operations/runtimes/expireStaleRuntimes';
import { pendingHandIns } from '../../../src/engine/queries/handIns';
import type { FileStore } from '../../../src/engine/store/fileStore';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/**
 * Finished work handed in by a lease watchdog (issue 26, docs/team.md "Finished work on a dead host"): the write is
 * scoped to one attempt by its watchdog key and used up by its first use; a coordinator on another host finds it and
 * does not expire that attempt, while the worker's own host settles it from its own evidence. The whole path — a
 * coordinator SIGKILLed on machine A, its workers finishing, B settling them — is in
 * test/system/cli/postgresFailover.test.ts.
 */
describe('handing in finished work', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let store: FileStore;
  const KEY = 'a'.repeat(64);

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    engine = await fixture.open();
    store = await fixture.openStore();
  });
  afterEach(() => fixture.dispose());

  /** A claim of `taskId` whose worker runs on `host`, with the watchdog key KEY. */
  async function runningOn(taskId: string, host: string, runId?: string) {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId, ...(runId ? { runId } : {}) });
    await store.transact(async (tx) => {
      await tx.run(`UPDATE runtimes SET watchdog_key = ? WHERE id = ?`, [KEY, claim.runtimeId]);
      await recordRuntimeProcess(tx, claim.runtimeId, { pid: 4242, startTime: '1', host }, fixture.fakeClock.now());
    });
    return claim;
  }

  const handInOf = (claim: { runId: string; delegation: { id: string }; runtimeId: string }): HandIn => ({
    runId: claim.runId,
    delegationId: claim.delegation.id,
    runtimeId: claim.runtimeId,
    host: 'host-a',
    exitCode: 0,
    signal: null,
    endedAt: fixture.fakeClock.now(),
    artifact: Buffer.from('a result').toString('base64'),
  });

  it('is recorded only with the attempt’s watchdog key, once, while the runtime is live', async () => {
    const claim = await runningOn('T1', 'host-a');
    const handIn = (key: string, over: Partial<HandIn> = {}) =>
      store.transact((tx) => recordHandIn(tx, { ...handInOf(claim), ...over }, key, fixture.fakeClock.now()));
    assert.equal(await handIn('b'.repeat(64)), false, 'another key');
    assert.equal(await handIn(KEY, { delegationId: 'D-T5-coder-001' }), false, 'another attempt under this runtime');
    assert.equal(await handIn(KEY), true);
    assert.equal(await handIn(KEY, { exitCode: 1 }), false, 'used up by its first use');
    const [found] = await store.read((r) => pendingHandIns(r, claim.runId, 'host-b'));
    assert.equal(found?.exitCode, 0, 'the first one holds');
    assert.equal(Buffer.from(found.artifact!, 'base64').toString(), 'a result');

    const other = await runningOn('T5', 'host-a', claim.runId);
    await store.transact((tx) =>
      endRunningAttempt(
        tx,
        { runId: claim.runId, delegationId: other.delegation.id, to: 'FAILED', reason: 'ended' },
        fixture.fakeClock.now(),
      ),
    );
    assert.equal(
      await store.transact((tx) => recordHandIn(tx, handInOf(other), KEY, fixture.fakeClock.now())),
      false,
      'an attempt already settled',
    );
  });

  it('is found by a coordinator on another host, not by one on the worker’s own; its attempt is not expired there', async () => {
    const handedIn = await runningOn('T1', 'host-a');
    const silent = await runningOn('T5', 'host-a', handedIn.runId);
    await store.transact((tx) => recordHandIn(tx, handInOf(handedIn), KEY, fixture.fakeClock.now()));
    const pending = (host: string) =>
      store.read(async (r) => (await pendingHandIns(r, handedIn.runId, host)).map((h) => h.delegationId));
    assert.deepEqual(await pending('host-b'), [handedIn.delegation.id]);
    assert.deepEqual(await pending('host-a'), [], 'its own host settles it from what it saw');

    fixture.fakeClock.advance(24 * 3600_000);
    const expired = await store.transact((tx) =>
      expireStaleRuntimes(tx, fixture.fakeClock.now(), { host: { name: 'host-b', foreignGraceMs: 5000 } }),
    );
    assert.deepEqual(
      expired.map((e) => e.delegationId),
      [silent.delegation.id],
      'only the attempt whose work is unknown goes stale',
    );
    assert.deepEqual(await pending('host-b'), [handedIn.delegation.id], 'the handed-in one waits to be settled');
  });
});
