import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { FileStore } from '../../../src/engine/store/fileStore';
import { storeDirOf } from '../../../src/engine/effects/workspaceLayout';
import { EngineFixture } from '../../support/engineFixture';
import { plan, withWorkerEnv } from '../../fixtures/executor/harness';

const TAMPERER = resolve(__dirname, '../../fixtures/workers/configTamperer.js');

const worker = (mode: string, env?: Record<string, string>) => ({
  type: 'process',
  command: process.execPath,
  args: [TAMPERER, '{taskId}', mode],
  ...(env ? { env } : {}),
});

const ORIGINAL = {
  defaultWorker: 'next',
  workers: { tamper: worker('tamper'), next: worker('pass') },
  maxAttempts: 1,
  retryBackoffSeconds: 0,
};

/**
 * Issue 15, item 7, with the coordinator in this process and real workers: the frozen worker
 * definitions, the config_changed gate's life (opened, updated, resolved, approved, rejected),
 * a run from before frozen definitions, and the editor's notice.
 */
describe('worker definitions frozen into the run: the config_changed gate', function () {
  this.timeout(60_000);
  let fixture: EngineFixture;
  let engine: Engine;
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  const configPath = (): string => join(fixture.workspace, '.baton', 'config.json');
  const writeConfig = (config: object): void => void fixture.write('.baton/config.json', JSON.stringify(config));
  const marker = (task: string): boolean => existsSync(join(fixture.workspace, `MARKER-${task}`));

  async function drive(runId: string, options: { worker?: string; tamper?: object } = {}) {
    return withWorkerEnv(
      { TAMPER: JSON.stringify(options.tamper ?? { kind: 'command', worker: 'next' }) },
      async () => {
        const taken = await engine.coordinate({ runId, ...(options.worker ? { worker: options.worker } : {}) });
        assert.ok('coordinator' in taken);
        return taken.coordinator.run();
      },
    );
  }

  async function tamperedRun(tamper?: object): Promise<{ runId: string; gateId: string }> {
    writeConfig(ORIGINAL);
    fixture.write(
      'plan.md',
      plan([
        { id: 'T1', worker: 'tamper' },
        { id: 'T2', depends: ['T1'] },
      ]),
    );
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await drive(run.id, tamper ? { tamper } : {});
    assert.equal(outcome.kind, 'paused', JSON.stringify(outcome));
    const open = await engine.listGates({ runId: run.id, status: 'open' });
    assert.deepEqual(
      open.map((g) => g.kind),
      ['config_changed'],
    );
    assert.equal(marker('T2'), false);
    return { runId: run.id, gateId: open[0]!.id };
  }

  for (const [kind, names] of [
    ['args', /worker "next": `.*pass` → `.*marker`/],
    ['env', /worker "next": `[^`]*pass`; env keys added: TAMPER_MODE/],
    ['new-default', /default worker: "next" → "evil"; new worker "evil": `.*marker`/],
  ] as const) {
    it(`a worker's ${kind} change waits at the gate; approve runs it`, async () => {
      const { runId, gateId } = await tamperedRun({ kind, worker: 'next' });
      const gate = (await engine.listGates({ runId })).find((g) => g.id === gateId)!;
      assert.match(gate.reason, names);
      await engine.decideGate({ gateId, decision: 'approved' });
      assert.deepEqual(await drive(runId), { kind: 'finished', status: 'completed' });
      assert.equal(marker('T2'), true);
      const config = await engine.runConfig(runId);
      assert.equal(config.workersDiffer, false);
    });
  }

  it('approving after the file changed again adopts nothing (gate.config-moved); the next pass updates the gate', async () => {
    const { runId, gateId } = await tamperedRun();
    const tampered = JSON.parse(readFileSync(configPath(), 'utf8')) as typeof ORIGINAL;
    writeConfig({ ...tampered, workers: { ...tampered.workers, next: worker('marker', { OTHER: 'x' }) } });
    await assert.rejects(
      engine.decideGate({ gateId, decision: 'approved' }),
      (err: Error & { code?: string }) => err.code === 'gate.config-moved' && /changed again since/.test(err.message),
    );
    assert.equal((await engine.listGates({ runId, status: 'open' })).length, 1, 'still open: nothing was decided');
    const before = (await engine.runConfig(runId)).frozen!.digest;
    assert.equal(await drive(runId).then((o) => o.kind), 'paused');
    const [gate] = await engine.listGates({ runId, status: 'open' });
    assert.equal(gate!.id, gateId, 'the same gate, updated');
    assert.match(gate!.reason, /env keys added: OTHER/);
    const events = await engine.listEvents(runId);
    assert.equal(events.filter((e) => e.type === 'gate:updated').length, 1);
    assert.equal((await engine.runConfig(runId)).frozen!.digest, before, 'the refused approval adopted nothing');
    await engine.decideGate({ gateId, decision: 'approved' });
    assert.deepEqual(await drive(runId), { kind: 'finished', status: 'completed' });
    assert.equal(marker('T2'), true);
  });

  it('a config put back as the run froze it resolves the gate: the run goes on with its own definitions', async () => {
    const { runId, gateId } = await tamperedRun();
    writeConfig(ORIGINAL);
    assert.deepEqual(await drive(runId), { kind: 'finished', status: 'completed' });
    const gate = (await engine.listGates({ runId })).find((g) => g.id === gateId)!;
    assert.equal(gate.status, 'approved');
    assert.equal(gate.decidedBy, 'baton');
    assert.match(gate.note ?? '', /matches the run's worker definitions/);
    assert.equal(marker('T2'), false);
  });

  it('a new worker named by --worker waits at the gate; once rejected, --worker with it is refused (worker.not-frozen)', async () => {
    writeConfig(ORIGINAL);
    fixture.write('plan.md', plan([{ id: 'T1' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    writeConfig({ ...ORIGINAL, workers: { ...ORIGINAL.workers, evil: worker('marker') } });
    engine.reloadConfig(); // as a fresh `baton resume`, or the editor's config watcher
    assert.equal((await drive(run.id, { worker: 'evil' })).kind, 'paused');
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.match(gate!.reason, /new worker "evil"/);
    assert.equal(marker('T1'), false);
    await engine.decideGate({ gateId: gate!.id, decision: 'rejected', note: 'no' });
    await assert.rejects(
      engine.coordinate({ runId: run.id, worker: 'evil' }),
      (err: Error & { code?: string }) => err.code === 'worker.not-frozen',
    );
    // Without the override the run goes on with its frozen default worker.
    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    assert.equal(marker('T1'), false);
  });

  it('a run from before frozen definitions is frozen at its first resume, from the config as it is, without a gate', async () => {
    writeConfig(ORIGINAL);
    fixture.write('plan.md', plan([{ id: 'T1' }]));
    engine = await fixture.open();
    const { run } = await engine.runForPlan('plan.md');
    await engine.close();
    // What an older Baton stored: the settings without `workers`.
    const store = await FileStore.open(storeDirOf(fixture.workspace));
    await store.transact(async (tx) => {
      const row = await tx.get<{ config_json: string }>(`SELECT config_json FROM runs WHERE id = ?`, [run.id]);
      const { workers: _workers, ...older } = JSON.parse(row!.config_json) as Record<string, unknown>;
      await tx.run(`UPDATE runs SET config_json = ? WHERE id = ?`, [JSON.stringify(older), run.id]);
    });
    await store.close();
    writeConfig({ ...ORIGINAL, workers: { ...ORIGINAL.workers, next: worker('marker') } });
    engine = await fixture.open({ follow: true });
    assert.equal((await engine.runConfig(run.id)).frozen, undefined);
    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    const frozen = (await engine.listEvents(run.id)).filter((e) => e.type === 'config:frozen');
    assert.equal(frozen.length, 1);
    assert.equal(frozen[0]!.type === 'config:frozen' && frozen[0]!.data.why, 'legacy');
    assert.deepEqual(await engine.listGates({ runId: run.id }), [], 'no gate for an old run');
    assert.equal(marker('T1'), true, 'it ran with the config as it was at its resume');
    assert.ok((await engine.runConfig(run.id)).frozen);
  });

  it('the editor’s notice: a change is told once in the run’s event log, and no gate is opened by it', async () => {
    writeConfig(ORIGINAL);
    fixture.write('plan.md', plan([{ id: 'T1' }]));
    engine = await fixture.open();
    const { run } = await engine.runForPlan('plan.md');
    assert.deepEqual(await engine.noticeConfigChange(), [], 'nothing changed');
    writeFileSync(
      configPath(),
      JSON.stringify({
        ...ORIGINAL,
        leaseSeconds: 30,
        workers: { ...ORIGINAL.workers, next: worker('marker', { KEY: 'v' }) },
      }),
    );
    assert.deepEqual(await engine.noticeConfigChange(), [{ runId: run.id, changes: 1 }]);
    assert.deepEqual(await engine.noticeConfigChange(), [], 'told once');
    const told = (await engine.listEvents(run.id)).filter((e) => e.type === 'config:changed');
    assert.equal(told.length, 1);
    const data = told[0]!.type === 'config:changed' ? told[0]!.data : undefined;
    assert.equal(data?.noticedBy, 'editor');
    assert.deepEqual(data?.settings, ['leaseSeconds']);
    assert.match(data?.changes[0] ?? '', /worker "next".*env keys added: KEY/);
    assert.doesNotMatch(JSON.stringify(data), /"v"/);
    assert.deepEqual(await engine.listGates({ runId: run.id }), []);
    writeFileSync(configPath(), '{ "workers": ');
    assert.equal((await engine.noticeConfigChange()).length, 1, 'an invalid file is told too');
    const invalid = (await engine.listEvents(run.id)).filter((e) => e.type === 'config:changed').pop()!;
    assert.ok(invalid.type === 'config:changed' && invalid.data.invalid);
  });
});
