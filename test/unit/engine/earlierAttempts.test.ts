import assert from 'node:assert/strict';
import { issue } from '../../../src/engine/domain/issue';
import type { Engine } from '../../../src/engine/index';
import { endRunningAttempt } from '../../../src/engine/operations/delegations/endRunningAttempt';
import { recordIngestion } from '../../../src/engine/operations/ingestions/recordIngestion';
import { recordVerificationReceipt } from '../../../src/engine/operations/receipts/recordVerificationReceipt';
import { readEarlierAttempts } from '../../../src/engine/queries/earlierAttempts';
import type { FileStore } from '../../../src/engine/store/fileStore';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/**
 * The query behind a retry's "What went wrong before" (docs/workers.md, "The prompt"): for the attempts before the one
 * being claimed, how each ended and what its result and its verification got wrong — from the store alone.
 */
describe('queries: what went wrong in a task’s earlier attempts', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let store: FileStore;
  let runId: string;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    fixture.write('.baton/config.json', JSON.stringify({ maxAttempts: 6, retryBackoffSeconds: 0 }));
    engine = await fixture.open();
    store = await fixture.openStore();
  });
  afterEach(() => fixture.dispose());

  const claimT1 = async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    runId = claim.runId;
    return claim;
  };
  const earlier = (beforeAttempt?: number) =>
    store.read((r) =>
      readEarlierAttempts(r, { runId, taskId: 'T1', ...(beforeAttempt !== undefined ? { beforeAttempt } : {}) }),
    );
  const fail = (delegationId: string, reason: string) =>
    store.transact((tx) =>
      endRunningAttempt(tx, { runId, delegationId, to: 'FAILED', reason }, fixture.fakeClock.now()),
    );

  it('tells a rejected result’s errors from the attempt’s latest ingestion, with their lines, and how the attempt ended', async () => {
    const first = await claimT1();
    assert.deepEqual(await earlier(1), [], 'a first attempt has nothing before it');
    await engine.ingest({
      delegationId: first.delegation.id,
      token: first.token,
      artifactPath: fixture.writeResult('a.md', { task: 'T9', status: 'DONE' }),
    });
    fixture.fakeClock.advance(1000);
    // A second rejected result for the same (BLOCKED) attempt: the latest is the one told.
    await engine.ingest({
      delegationId: first.delegation.id,
      artifactPath: fixture.writeResult('b.md', { task: 'T8', agent: 'reviewer' }),
    });
    const gate = (await engine.listGates({ status: 'open' })).find((g) => g.kind === 'ingestion_failed')!;
    await engine.decideGate({ gateId: gate.id, decision: 'approved', by: 'ann', note: 'try again' });
    await claimT1();

    const [attempt] = await earlier(2);
    assert.deepEqual(
      {
        ...attempt,
        rejectedResult: {
          ...attempt!.rejectedResult!,
          issues: attempt!.rejectedResult!.issues.map(
            (i) => `${i.code}@${i.range?.start.line}:${i.range?.start.column}`,
          ),
        },
      },
      {
        attempt: 1,
        delegationId: 'D-T1-coder-001',
        status: 'FAILED',
        reason: `retry approved at ${gate.id}: try again`,
        leaseEndReason: `retry approved at ${gate.id}: try again`,
        rejectedResult: {
          artifactPath: 'results/b.md',
          issues: ['result.task-mismatch@5:7', 'result.agent-mismatch@6:8'],
          omitted: 0,
        },
      },
    );
    assert.match(attempt!.rejectedResult!.issues[0]!.message, /"T8"/);
  });

  it('tells the last failed verify command, timeouts and lost leases, for the last three attempts only', async () => {
    const first = await claimT1();
    await fail(first.delegation.id, 'the worker exited with code 1 without a result');
    const second = await claimT1();
    const receipt = (command: string[], exitCode: number | null, timedOut: boolean, logPath: string) =>
      store.transact((tx) =>
        recordVerificationReceipt(
          tx,
          {
            runId,
            delegationId: second.delegation.id,
            taskId: 'T1',
            artifactDigest: 'sha256:x',
            command,
            exitCode,
            timedOut,
            durationMs: 5,
            outputDigest: 'sha256:y',
            logPath,
            startedAt: fixture.fakeClock.now(),
          },
          fixture.fakeClock.now(),
        ),
      );
    await receipt(['npm', 'run', 'lint'], 3, false, '/ws/first.verify.log');
    await receipt(['npm', 'test'], null, true, '/ws/second.verify.log');
    await receipt(['npm', 'run', 'build'], 0, false, '/ws/passed.verify.log');
    await fail(second.delegation.id, 'retry approved at G-9');
    const third = await claimT1();
    await fail(third.delegation.id, 'timed out after 5 s');
    await claimT1();
    fixture.fakeClock.advance(121_000);
    await engine.expireStaleRuntimes();
    await claimT1();

    const attempts = await earlier(5);
    assert.deepEqual(
      attempts.map((a) => [a.attempt, a.status, a.reason]),
      [
        [2, 'FAILED', 'retry approved at G-9'],
        [3, 'FAILED', 'timed out after 5 s'],
        [4, 'STALE', attempts[2]!.reason],
      ],
      'the last three before attempt 5, oldest first',
    );
    assert.match(attempts[2]!.reason!, /^lease expired at .* without a heartbeat$/);
    assert.equal(attempts[1]!.leaseEndReason, 'timed out after 5 s');
    assert.deepEqual(attempts[0]!.failedVerification, {
      command: ['npm', 'test'],
      exitCode: null,
      timedOut: true,
      logPath: '/ws/second.verify.log',
    });
    assert.ok(attempts.every((a) => !a.rejectedResult));
    assert.equal(attempts[1]!.failedVerification, undefined);
    assert.deepEqual(
      (await earlier()).map((a) => a.attempt),
      [3, 4, 5],
      'without a bound: the task’s latest three',
    );
  });

  it('lists at most 20 errors of a rejected result and counts the rest; warnings are not what went wrong', async () => {
    const first = await claimT1();
    const issues = [
      issue('result.unknown-field', 'x', 'A warning.', '', undefined, 'warning'),
      ...Array.from({ length: 25 }, (_, n) => issue('result.invalid-field', `f${n}`, `Problem ${n}.`, '')),
    ];
    await store.transact((tx) =>
      recordIngestion(
        tx,
        { runId, delegationId: first.delegation.id, artifactPath: '/ws/r.md', digest: 'sha256:r', issues },
        fixture.fakeClock.now(),
      ),
    );
    const [attempt] = await earlier();
    assert.equal(attempt!.rejectedResult!.issues.length, 20);
    assert.equal(attempt!.rejectedResult!.omitted, 5);
    assert.equal(attempt!.rejectedResult!.issues[0]!.message, 'Problem 0.');
  });
});
