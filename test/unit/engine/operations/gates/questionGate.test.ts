import assert from 'node:assert/strict';
import { BatonError } from '../../../../../src/engine/domain/errors';
import type { AttemptCredential, Engine } from '../../../../../src/engine/index';
import { transitionDelegation } from '../../../../../src/engine/operations/delegations/transitionDelegation';
import { getDelegation } from '../../../../../src/engine/queries/delegations';
import { EngineFixture } from '../../../../support/engineFixture';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('question gates: an attempt asks, a person answers once, the wait beats for the attempt', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let credential: AttemptCredential;
  beforeEach(async () => {
    fixture = EngineFixture.withDemoPlan();
    engine = await fixture.open();
    credential = await EngineFixture.claimCredential(engine, 'T1', 30);
  });
  afterEach(() => fixture.dispose());

  /** Starts asking; resolves once the gate is open, with the pending answer. */
  async function ask(choices?: string[], signal?: AbortSignal) {
    let gateId: string | undefined;
    const answered = engine.askAndWait(
      credential,
      { question: 'Which database?', ...(choices ? { choices } : {}) },
      { onOpened: (g) => (gateId = g.id), ...(signal ? { signal } : {}) },
    );
    answered.catch(() => undefined);
    while (!gateId) await tick();
    return { gateId, answered };
  }

  const gate = async (id: string) => (await engine.listGates({})).find((g) => g.id === id)!;

  it('the answer reaches the asking call; the task keeps running; a second answer is refused and the first stands', async () => {
    const { gateId, answered } = await ask(['postgres', 'sqlite']);
    const open = await gate(gateId);
    assert.equal(open.kind, 'question');
    assert.equal(open.status, 'open');
    assert.equal((await engine.overview(credential.runId)).tasks.find((t) => t.id === 'T1')?.status, 'running');
    await assert.rejects(
      engine.decideGate({ gateId, decision: 'approved' }),
      (err) => BatonError.is(err, 'gate.is-question') && /baton answer G-\d+/.test(err.message),
    );
    await assert.rejects(engine.answerQuestion({ gateId, answer: 'mysql' }), (err) =>
      BatonError.is(err, 'question.not-a-choice'),
    );
    fixture.fakeClock.advance(2_000);
    await engine.answerQuestion({ gateId, answer: 'sqlite', by: 'ann' });
    await assert.rejects(
      engine.answerQuestion({ gateId, answer: 'postgres', by: 'bob' }),
      (err) => BatonError.is(err, 'gate.already-decided') && /answered by ann.*"sqlite"/.test(err.message),
    );
    await fixture.fakeClock.runFor(1_000, tick);
    const got = await answered;
    assert.deepEqual(
      { answer: got.answer, by: got.by, waitedMs: got.waitedMs },
      { answer: 'sqlite', by: 'ann', waitedMs: 2_000 },
    );
    const closed = await gate(gateId);
    assert.deepEqual([closed.status, closed.decidedBy, closed.note], ['answered', 'ann', 'sqlite']);
    const types = (await engine.listEvents(credential.runId)).map((e) => e.type);
    assert.equal(types.filter((t) => t === 'gate:answered').length, 1);
  });

  it('while it waits it beats for the attempt, so the lease outlives its length', async () => {
    const { gateId, answered } = await ask();
    await fixture.fakeClock.runFor(60_000, tick);
    const runtime = (await engine.overview(credential.runId)).runtimes.find((r) => r.id === credential.runtimeId)!;
    assert.equal(runtime.status, 'active');
    assert.equal(runtime.progress, `waiting for an answer at ${gateId}`);
    assert.ok(runtime.heartbeatCount >= 6, `beats while it waits (${runtime.heartbeatCount})`);
    await engine.answerQuestion({ gateId, answer: 'any' });
    await fixture.fakeClock.runFor(1_000, tick);
    assert.equal((await answered).answer, 'any');
  });

  it('the attempt ending closes its question (not left for a person) and the asking call gets question.closed', async () => {
    const { gateId, answered } = await ask();
    // A stop, a timeout, a lost lease: each moves the attempt out of RUNNING through transitionDelegation.
    const store = await fixture.openStore();
    await store.transact(async (tx) => {
      const delegation = await getDelegation(tx, credential.runId, credential.delegationId);
      await transitionDelegation(tx, delegation!, 'CANCELLED', { reason: 'stopped by ann' }, fixture.fakeClock.now());
    });
    await fixture.fakeClock.runFor(1_000, tick);
    await assert.rejects(
      answered,
      (err) => BatonError.is(err, 'question.closed') && /stopped by ann/.test(err.message),
    );
    const closed = await gate(gateId);
    assert.equal(closed.status, 'rejected');
    assert.match(closed.note ?? '', /D-T1-coder-001/);
    await assert.rejects(engine.answerQuestion({ gateId, answer: 'late' }), (err) =>
      BatonError.is(err, 'gate.already-decided'),
    );
  });

  it('a cancelled asking call withdraws its question', async () => {
    const giveUp = new AbortController();
    const { gateId, answered } = await ask(undefined, giveUp.signal);
    giveUp.abort();
    await assert.rejects(answered, (err) => BatonError.is(err, 'question.closed'));
    const closed = await gate(gateId);
    assert.deepEqual([closed.status, closed.decidedBy], ['rejected', 'baton']);
    assert.match(closed.note ?? '', /^withdrawn: the asking call was cancelled/);
  });
});
