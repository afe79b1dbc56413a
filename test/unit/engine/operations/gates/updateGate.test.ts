import assert from 'node:assert/strict';
import { BatonError } from '../../../../../src/engine/domain/errors';
import { closeGate } from '../../../../../src/engine/operations/gates/closeGate';
import { openGate } from '../../../../../src/engine/operations/gates/openGate';
import { updateGate } from '../../../../../src/engine/operations/gates/updateGate';
import { findGate } from '../../../../../src/engine/queries/runView';
import { EngineFixture } from '../../../../support/engineFixture';

describe('updateGate: the one writer of gate:updated', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  async function storeWithGate() {
    const engine = await fixture.open();
    const run = await engine.startRun('plan.md');
    await engine.close();
    const store = await fixture.openStore();
    const gate = await store.transact((tx) =>
      openGate(tx, { runId: run.id, kind: 'isolation', reason: 'first', details: { files: ['a'] } }, 10),
    );
    return { store, run, gate };
  }

  const updatedEvents = (store: Awaited<ReturnType<typeof storeWithGate>>['store'], runId: string) =>
    store.read((r) =>
      r.all<{ data_json: string; at: number }>(
        `SELECT data_json, at FROM events WHERE run_id = ? AND type = 'gate:updated' ORDER BY seq`,
        [runId],
      ),
    );

  it('changes the reason, keeps the details unless given, and records one gate:updated with the kind', async () => {
    const { store, run, gate } = await storeWithGate();
    await store.transact((tx) => updateGate(tx, gate, { reason: 'second' }, 20));
    assert.deepEqual(
      { ...(await store.read((r) => findGate(r, gate.id))) },
      { ...gate, reason: 'second', details: { files: ['a'] } },
    );
    await store.transact((tx) => updateGate(tx, gate, { reason: 'third', details: { files: ['b'] } }, 30));
    const now = await store.read((r) => findGate(r, gate.id));
    assert.equal(now?.status, 'open');
    assert.equal(now?.reason, 'third');
    assert.deepEqual(now?.details, { files: ['b'] });
    assert.deepEqual(
      (await updatedEvents(store, run.id)).map((e) => ({ at: e.at, data: JSON.parse(e.data_json) })),
      [
        { at: 20, data: { gateId: gate.id, kind: 'isolation', reason: 'second' } },
        { at: 30, data: { gateId: gate.id, kind: 'isolation', reason: 'third' } },
      ],
    );
  });

  it('refuses a decided gate (compare-and-set on open) and writes nothing', async () => {
    const { store, run, gate } = await storeWithGate();
    await store.transact((tx) => closeGate(tx, gate, { decision: 'approved', by: 'ann' }, 15));
    await assert.rejects(
      store.transact((tx) => updateGate(tx, gate, { reason: 'late' }, 20)),
      (err) => BatonError.is(err, 'gate.already-decided'),
    );
    assert.equal((await store.read((r) => findGate(r, gate.id)))?.reason, 'first');
    assert.deepEqual(await updatedEvents(store, run.id), []);
  });
});
