import assert from 'node:assert/strict';
import { countingTransactions } from '../../support/countingStore';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_CONFIG } from '../../../src/engine/domain/config';
import { freezeWorkers } from '../../../src/engine/domain/frozenWorkers';
import { decideLaunch, type StartPlan } from '../../../src/engine/domain/launch';
import { endRunningAttempt } from '../../../src/engine/operations/delegations/endRunningAttempt';
import { recordVerificationReceipt } from '../../../src/engine/operations/receipts/recordVerificationReceipt';
import { readLaunchSnapshot } from '../../../src/engine/queries/launchSnapshot';
import type { FileStore } from '../../../src/engine/store/fileStore';
import { claimAttempt } from '../../../src/engine/usecases/claimAttempt';
import { EngineFixture } from '../../support/engineFixture';
import { sequentialIds } from '../../support/fakeClock';

const CONFIG = { ...DEFAULT_CONFIG, defaultWorker: 'sh', workers: {}, isolation: 'none' as const };

/**
 * The claim of a decided start is one transaction (issue 28): the admission rule checked again,
 * enqueue, claim, launch record and the prompt's digest commit together; the prompt file is
 * written after, and is the text whose digest the store holds.
 */
describe('claimAttempt', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  async function decided(taskId: string) {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({ defaultWorker: 'sh', isolation: 'none', workers: { sh: { type: 'process', command: 'true' } } }),
    );
    const engine = await fixture.open();
    const { run } = await engine.runForPlan('plan.md');
    await engine.close();
    const store: FileStore = await fixture.openStore();
    const { counting, transactions } = countingTransactions(store);
    const snapshot = await store.read((r) => readLaunchSnapshot(r, { runId: run.id, now: 0, taskIds: [taskId] }));
    const decision = decideLaunch(snapshot, taskId, {
      maxConcurrency: 2,
      config: CONFIG,
      configWorkers: () => freezeWorkers(CONFIG),
    });
    assert.equal(decision.kind, 'start');
    const ctx = {
      store: counting,
      clock: fixture.fakeClock,
      ids: sequentialIds(),
      workspace: fixture.workspace,
      config: CONFIG,
      log: () => undefined,
    };
    return {
      runId: run.id,
      store,
      ctx,
      plan: (decision as { plan: StartPlan }).plan,
      transactions,
    };
  }

  it('claims, records the launch and the prompt digest in one transaction, then writes the prompt', async () => {
    const { runId, store, ctx, plan, transactions } = await decided('T1');
    const claimed = await claimAttempt(ctx, {
      runId,
      plan,
      where: { mode: 'shared' },
      holder: 'box:1',
      maxConcurrency: 2,
    });
    assert.ok(claimed);
    assert.equal(transactions(), 1, 'one transaction');
    const row = await store.read((r) =>
      r.get<{ status: string; prompt_sha256: string; prompt_bytes: number; worker: string; log_path: string }>(
        `SELECT d.status, d.prompt_sha256, d.prompt_bytes, rt.worker, rt.log_path FROM delegations d
         JOIN runtimes rt ON rt.id = d.runtime_id WHERE d.run_id = ? AND d.id = ?`,
        [runId, claimed.delegation.id],
      ),
    );
    const written = readFileSync(claimed.promptPath);
    assert.equal(row!.status, 'RUNNING');
    assert.equal(row!.prompt_sha256, createHash('sha256').update(written).digest('hex'), 'the digest is the file’s');
    assert.equal(Number(row!.prompt_bytes), written.length);
    assert.equal(row!.worker, 'sh');
    assert.equal(row!.log_path, claimed.logPath);
    const events = await store.read((r) =>
      r.all<{ type: string }>(`SELECT type FROM events WHERE run_id = ? ORDER BY id`, [runId]),
    );
    const types = events.map((e) => e.type);
    assert.ok(
      types.indexOf('delegation:claimed') < types.indexOf('delegation:prompt'),
      'the prompt is told after the claim',
    );
  });

  it('writes nothing when the admission rule refuses the claim in its transaction', async () => {
    const { runId, store, ctx, plan } = await decided('T1');
    const rows = () =>
      store.read(async (r) => [
        await r.get<{ n: number }>(`SELECT COUNT(*) AS n FROM delegations`),
        await r.get<{ n: number }>(`SELECT COUNT(*) AS n FROM events`),
      ]);
    const before = await rows();
    const claimed = await claimAttempt(ctx, {
      runId,
      plan,
      where: { mode: 'shared' },
      holder: 'box:1',
      maxConcurrency: 0,
    });
    assert.equal(claimed, undefined);
    assert.deepEqual(await rows(), before, 'no attempt, no event');
  });
});

/**
 * A retry's prompt says what went wrong before (docs/workers.md, "The prompt"): its earlier attempts from the store,
 * the end of a failed verify command's output from its log — read before the claim's one transaction, never through
 * a link a worker planted.
 */
describe('claimAttempt: a retry’s prompt', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  async function firstAttemptFailedVerification(output: (logPath: string) => void) {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'sh',
        isolation: 'none',
        retryBackoffSeconds: 0,
        workers: { sh: { type: 'process', command: 'true' } },
      }),
    );
    const engine = await fixture.open();
    const { run } = await engine.runForPlan('plan.md');
    await engine.close();
    const store: FileStore = await fixture.openStore();
    const { counting, transactions } = countingTransactions(store);
    const ctx = {
      store: counting,
      clock: fixture.fakeClock,
      ids: sequentialIds(),
      workspace: fixture.workspace,
      config: CONFIG,
      log: () => undefined,
    };
    const claim = async () => {
      const snapshot = await store.read((r) => readLaunchSnapshot(r, { runId: run.id, now: 0, taskIds: ['T1'] }));
      const decision = decideLaunch(snapshot, 'T1', {
        maxConcurrency: 2,
        config: CONFIG,
        configWorkers: () => freezeWorkers(CONFIG),
      });
      assert.equal(decision.kind, 'start');
      const claimed = await claimAttempt(ctx, {
        runId: run.id,
        plan: (decision as { plan: StartPlan }).plan,
        where: { mode: 'shared' },
        holder: 'box:1',
        maxConcurrency: 2,
      });
      assert.ok(claimed);
      return claimed;
    };
    const first = await claim();
    assert.doesNotMatch(first.prompt, /What went wrong before/);
    const logPath = join(fixture.workspace, '.baton', 'runs', run.id, 'logs', `${first.delegation.id}.verify.log`);
    output(logPath);
    const now = fixture.fakeClock.now();
    await store.transact(async (tx) => {
      await recordVerificationReceipt(
        tx,
        {
          runId: run.id,
          delegationId: first.delegation.id,
          taskId: 'T1',
          artifactDigest: 'sha256:a',
          command: ['npm', 'test'],
          exitCode: 1,
          timedOut: false,
          durationMs: 10,
          outputDigest: 'sha256:o',
          logPath,
          startedAt: now,
        },
        now,
      );
      await endRunningAttempt(
        tx,
        { runId: run.id, delegationId: first.delegation.id, to: 'FAILED', reason: 'retry approved at G-7' },
        now,
      );
    });
    const before = transactions();
    const second = await claim();
    assert.equal(transactions() - before, 1, 'still one transaction');
    return second;
  }

  it('carries the failed verify command and the end of its output from the log', async () => {
    const second = await firstAttemptFailedVerification((logPath) => {
      mkdirSync(dirname(logPath), { recursive: true });
      writeFileSync(logPath, '$ npm test\nnot ok 1 - adds two numbers\n  expected 4, got 5\n(exit 1)\n');
    });
    assert.equal(second.delegation.attempt, 2);
    assert.match(second.prompt, /### Attempt 1 \(D-T1-coder-001\): FAILED — retry approved at G-7/);
    assert.match(second.prompt, /`npm test` exited with 1/);
    assert.match(second.prompt, /```text\nnot ok 1 - adds two numbers\n {2}expected 4, got 5\n\(exit 1\)\n```/);
    assert.match(second.prompt, /all of it: `\.baton\/runs\/R-[^/]+\/logs\/D-T1-coder-001\.verify\.log`/);
    assert.equal(readFileSync(second.promptPath, 'utf8'), second.prompt, 'the file is the prompt whose digest is kept');
  });

  it('never reads through a link planted where the verify log was: the prompt names the log instead', async () => {
    const secret = fixture.write('secret.txt', 'the private key\n');
    const second = await firstAttemptFailedVerification((logPath) => {
      mkdirSync(dirname(logPath), { recursive: true });
      symlinkSync(secret, logPath);
    });
    assert.doesNotMatch(second.prompt, /private key/);
    assert.match(second.prompt, /`npm test` exited with 1\.\n\(Its output is in `\.baton\/runs\/.*\.verify\.log`\.\)/);
  });
});
