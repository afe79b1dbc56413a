// The stop hook's check against a real engine (usecases/attemptAccess.ts checkBeforeStop, docs/agents.md "The
// stop hook"): the result the agent ends with — its artifact file, else its final message — judged as ingestion
// judges it, each round a result:checked event counted per attempt against repairRounds; bound to its attempt.
import assert from 'node:assert/strict';
import type { AttemptCredential, Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';

const PLAN = '```baton-task\nid: T1\nagent: coder\n```\nReport.\n';
const result = (task: string): string =>
  `Done.\n\n\`\`\`baton-result\ncontract: baton-result-v1\ntask: ${task}\nagent: coder\nstatus: PASS\nsummary: done\nartifacts: []\n\`\`\`\n`;

describe('the stop hook’s check of the result an agent ends with', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let credential: AttemptCredential;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', PLAN);
    engine = await fixture.open();
    credential = await EngineFixture.claimCredential(engine, 'T1');
  });
  afterEach(() => fixture.dispose());

  const checks = async () =>
    (await engine.listEvents(credential.runId)).filter((e) => e.type === 'result:checked').map((e) => e.data);

  it('sends a wrong result back at most repairRounds times (stop_hook_active or not), then lets the agent end', async () => {
    const wrong = { lastAssistantMessage: result('T9') };
    const first = await engine.checkBeforeStop(credential, { stopHookActive: false, ...wrong });
    assert.equal(first.kind, 'checked');
    assert.deepEqual(first.kind === 'checked' && first.verdict, { kind: 'repair', round: 1 });
    assert.match((first.kind === 'checked' && first.feedback) || '', /result\.task-mismatch/);
    // Claude Code sets stop_hook_active after a block: Baton's own count decides, so the second round still repairs.
    const second = await engine.checkBeforeStop(credential, { stopHookActive: true, ...wrong });
    assert.deepEqual(second.kind === 'checked' && second.verdict, { kind: 'repair', round: 2 });
    const third = await engine.checkBeforeStop(credential, { stopHookActive: true, ...wrong });
    assert.deepEqual(third.kind === 'checked' && third.verdict, { kind: 'finish', round: 3, why: 'rounds-spent' });
    assert.equal(third.kind === 'checked' && third.feedback, undefined);
    assert.deepEqual(
      (await checks()).map((c) => [c.round, c.issues, c.sentBack]),
      [
        [1, 1, true],
        [2, 1, true],
        [3, 1, false],
      ],
    );
    assert.equal((await engine.listIngestions(credential.runId)).length, 0, 'a check hands nothing in');
  });

  it('lets an agent that stopped at its usage limit end, recording no round: Baton parks it, there is nothing to repair', async () => {
    const stop = await engine.checkBeforeStop(credential, {
      stopHookActive: false,
      lastAssistantMessage: 'Claude AI usage limit reached|1796578851',
    });
    assert.equal(stop.kind, 'ended');
    assert.match(stop.kind === 'ended' ? stop.reason : '', /usage limit: Baton parks the attempt/);
    assert.deepEqual(await checks(), []);
  });

  it('checks the artifact file when the agent wrote one, else its final message (as the coordinator takes the result)', async () => {
    const fromMessage = await engine.checkBeforeStop(credential, {
      stopHookActive: false,
      lastAssistantMessage: result('T1'),
    });
    assert.equal(fromMessage.kind === 'checked' && fromMessage.check.path, 'your final message');
    assert.deepEqual(fromMessage.kind === 'checked' && fromMessage.verdict, {
      kind: 'finish',
      round: 1,
      why: 'acceptable',
    });
    fixture.write(`.baton/runs/${credential.runId}/artifacts/${credential.delegationId}.md`, result('T9'));
    const fromFile = await engine.checkBeforeStop(credential, {
      stopHookActive: false,
      lastAssistantMessage: result('T1'),
    });
    assert.equal(
      fromFile.kind === 'checked' && fromFile.check.path,
      `.baton/runs/${credential.runId}/artifacts/${credential.delegationId}.md`,
    );
    assert.equal(fromFile.kind === 'checked' && fromFile.verdict.kind, 'repair');
    const silent = await engine.checkBeforeStop(credential, { stopHookActive: false });
    assert.equal(silent.kind === 'checked' && silent.verdict.kind, 'repair', 'the file is checked, no message needed');
  });

  it('an agent that ends with no result at all is told so', async () => {
    const none = await engine.checkBeforeStop(credential, { stopHookActive: false, lastAssistantMessage: 'All done!' });
    assert.equal(none.kind === 'checked' && none.verdict.kind, 'repair');
    assert.match((none.kind === 'checked' && none.feedback) || '', /result\.no-block/);
  });

  it('does nothing once the attempt has ended, and refuses another attempt’s token, recording nothing', async () => {
    const forged = engine.checkBeforeStop(
      { ...credential, token: 'not-the-token' },
      { stopHookActive: false, lastAssistantMessage: result('T9') },
    );
    await assert.rejects(forged, { code: 'runtime.wrong-token' });
    await engine.ingest({
      runId: credential.runId,
      delegationId: credential.delegationId,
      artifactPath: fixture.writeResult('good.md', { task: 'T1' }),
      token: credential.token,
    });
    const after = await engine.checkBeforeStop(credential, {
      stopHookActive: false,
      lastAssistantMessage: result('T9'),
    });
    assert.equal(after.kind, 'ended');
    assert.match(after.kind === 'ended' ? after.reason : '', /has ended/);
    assert.deepEqual(await checks(), []);
  });
});
