import assert from 'node:assert/strict';
import { readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError, type Engine, type EngineEvent } from '../../../src/engine/index';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

const storeBytes = (workspace: string): Record<string, string> => {
  const dir = join(workspace, '.baton', 'store');
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n)).toString('base64')]));
};

describe('engine: claim, heartbeat, stale, gates, ingestion', () => {
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    engine = await fixture.open();
  });
  afterEach(() => fixture.dispose());

  const taskStatus = async (taskId: string): Promise<string> =>
    (await engine.overview()).tasks.find((t) => t.id === taskId)!.status;

  describe('claim', () => {
    it('starts the run from the plan on the first claim and names the attempt D-<task>-<agent>-<NNN>', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      assert.equal(claim.runCreated, true);
      assert.equal(claim.delegation.id, 'D-T1-coder-001');
      assert.equal(claim.delegation.status, 'RUNNING');
      assert.equal(claim.leaseExpiresAt, fixture.fakeClock.now() + 120_000);
      const again = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
      assert.equal(again.runCreated, false);
      assert.equal(again.runId, claim.runId);
    });

    it('refuses a second claim of a running task as an ownership conflict', async () => {
      await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await assert.rejects(
        engine.claimTask({ planPath: 'plan.md', taskId: 'T1' }),
        (err) => BatonError.is(err, 'task.already-claimed') && err.kind === 'conflict',
      );
    });

    it('refuses a task whose dependencies have not completed, naming them', async () => {
      await assert.rejects(
        engine.claimTask({ planPath: 'plan.md', taskId: 'T3' }),
        (err) =>
          BatonError.is(err, 'task.dependencies-unmet') && err.kind === 'mismatch' && /T1 \(ready\)/.test(err.message),
      );
    });

    it('refuses a gated task as awaiting a decision, naming the gate', async () => {
      await assert.rejects(
        engine.claimTask({ planPath: 'plan.md', taskId: 'T2' }),
        (err) => BatonError.is(err, 'task.gated') && err.kind === 'awaiting-decision' && /G-1/.test(err.message),
      );
    });

    it('refuses an invalid plan with its issues and writes nothing', async () => {
      await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      fixture.write('bad.md', '```baton-task\nid: A\ndepends: [B]\n```\n');
      const before = storeBytes(fixture.workspace);
      await assert.rejects(engine.claimTask({ planPath: 'bad.md', taskId: 'A' }), (err) => {
        assert.ok(BatonError.is(err, 'plan.invalid'));
        assert.equal(err.kind, 'invalid-input');
        assert.ok(err.issues.some((i) => i.code === 'plan.unknown-dependency' && i.range?.start.line === 3));
        return true;
      });
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });

    it('refuses a plan that changed under its active run', async () => {
      await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      fixture.write('plan.md', DEMO_PLAN.replace('Write the docs.', 'Write better docs.'));
      await assert.rejects(engine.claimTask({ planPath: 'plan.md', taskId: 'T5' }), (err) =>
        BatonError.is(err, 'run.plan-changed'),
      );
    });
  });

  describe('heartbeat and lease', () => {
    it('renews the lease, records progress and makes the runtime active', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      fixture.fakeClock.advance(30_000);
      const runtime = await engine.heartbeat({
        runtimeId: claim.runtimeId,
        token: claim.token,
        progress: 'reading the code',
      });
      assert.equal(runtime.status, 'active');
      assert.equal(runtime.leaseExpiresAt, fixture.fakeClock.now() + 120_000);
      const { runtimes } = await engine.overview();
      assert.equal(runtimes[0]!.progress, 'reading the code');
      assert.equal(runtimes[0]!.heartbeatCount, 1);
    });

    it('refuses a heartbeat with the wrong token and writes nothing', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const before = storeBytes(fixture.workspace);
      await assert.rejects(
        engine.heartbeat({ runtimeId: claim.runtimeId, token: 'not-the-token' }),
        (err) => BatonError.is(err, 'runtime.wrong-token') && err.kind === 'conflict',
      );
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });

    it('shows the runtime stale once the lease ran out, refuses the late heartbeat and makes the attempt STALE', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      fixture.fakeClock.advance(120_000);
      assert.equal((await engine.overview()).runtimes[0]!.status, 'stale');
      await assert.rejects(
        engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token }),
        (err) => BatonError.is(err, 'runtime.lease-expired') && err.kind === 'conflict',
      );
      const view = await engine.overview();
      assert.equal(view.delegations[0]!.status, 'STALE');
      assert.equal(view.runtimes[0]!.status, 'terminal');
      assert.equal(view.tasks.find((t) => t.id === 'T1')!.status, 'ready');
    });

    it('retries a stale task as a new delegation with the next attempt number', async () => {
      await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      fixture.fakeClock.advance(121_000);
      // The claim that finds the lease expired records it; the retry waits for the backoff (retryBackoffSeconds, 10).
      await assert.rejects(engine.claimTask({ planPath: 'plan.md', taskId: 'T1' }), (err) =>
        BatonError.is(err, 'claim.retry-backoff'),
      );
      fixture.fakeClock.advance(10_000);
      const retry = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      assert.equal(retry.delegation.id, 'D-T1-coder-002');
      assert.equal(retry.delegation.attempt, 2);
      const statuses = (await engine.overview()).delegations.map((d) => `${d.id}:${d.status}`);
      assert.deepEqual(statuses, ['D-T1-coder-001:STALE', 'D-T1-coder-002:RUNNING']);
    });

    it('fails the task at the attempt limit and blocks its dependents, saying why', async () => {
      for (let attempt = 0; attempt < 2; attempt++) {
        await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
        fixture.fakeClock.advance(121_000);
        await engine.expireStaleRuntimes();
        fixture.fakeClock.advance(10_000); // the retry backoff
      }
      const view = await engine.overview();
      assert.equal(view.tasks.find((t) => t.id === 'T1')!.status, 'failed');
      const t3 = view.tasks.find((t) => t.id === 'T3')!;
      assert.equal(t3.status, 'blocked');
      assert.match(t3.statusReason!, /depends on T1/);
      assert.equal(view.tasks.find((t) => t.id === 'T4')!.status, 'blocked');
      assert.equal(
        view.gates.find((g) => g.taskId === 'T2')!.status,
        'rejected',
        'the gate of a blocked task is closed by Baton',
      );
      await assert.rejects(engine.claimTask({ planPath: 'plan.md', taskId: 'T1' }), (err) =>
        BatonError.is(err, 'task.failed'),
      );
    });
  });

  describe('gates', () => {
    it('opens a risk_approval gate for a task tagged with a configured risk', async () => {
      const run = await engine.startRun('plan.md');
      const gates = await engine.listGates({ runId: run.id });
      assert.deepEqual(
        gates.map((g) => [g.id, g.kind, g.taskId, g.status]),
        [['G-1', 'risk_approval', 'T2', 'open']],
      );
    });

    it('approval releases the task: pending until its dependencies complete, then ready', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.decideGate({ gateId: 'G-1', decision: 'approved', by: 'ann', note: 'schema reviewed' });
      assert.equal(await taskStatus('T2'), 'pending');
      await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
      });
      assert.equal(await taskStatus('T2'), 'ready');
      assert.equal((await engine.claimTask({ planPath: 'plan.md', taskId: 'T2' })).delegation.id, 'D-T2-coder-001');
    });

    it('rejection cancels the task and blocks what depends on it', async () => {
      await engine.startRun('plan.md');
      await engine.decideGate({ gateId: 'G-1', decision: 'rejected', by: 'ann', note: 'not now' });
      assert.equal(await taskStatus('T2'), 'cancelled');
      assert.equal(await taskStatus('T4'), 'blocked');
    });
  });

  describe('ingestion', () => {
    it('completes the delegation on a valid PASS, makes dependents ready and the runtime terminal', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const outcome = await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
      });
      assert.equal(outcome.record.accepted, true);
      assert.equal(outcome.record.resultStatus, 'PASS');
      assert.equal(outcome.delegation.status, 'COMPLETED');
      assert.equal(await taskStatus('T1'), 'completed');
      assert.equal(await taskStatus('T3'), 'ready');
      assert.equal((await engine.overview()).runtimes[0]!.status, 'terminal');
    });

    it('rejects an invalid artifact with ranged issues, BLOCKs the delegation and opens an ingestion_failed gate', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const artifact = fixture.writeResult('bad.md', { task: 'T9', status: 'DONE' });
      const outcome = await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: artifact,
      });
      assert.equal(outcome.record.accepted, false);
      const codes = outcome.record.issues.map((i) => `${i.code}@${i.range?.start.line}`);
      assert.ok(codes.includes('result.invalid-status@7'), codes.join(' '));
      assert.ok(codes.includes('result.task-mismatch@5'), codes.join(' '));
      assert.equal(outcome.delegation.status, 'BLOCKED');
      const gate = (await engine.listGates({ status: 'open' })).find((g) => g.kind === 'ingestion_failed')!;
      assert.equal(gate.delegationId, claim.delegation.id);
      assert.equal(await taskStatus('T1'), 'gated');
      assert.equal((await engine.overview()).runtimes[0]!.status, 'blocked');
    });

    it('is idempotent: the same content twice gives the same record and no second effect', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const artifact = fixture.writeResult('bad.md', { task: 'T9' });
      const first = await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: artifact,
      });
      const events = (await engine.listEvents(claim.runId)).length;
      const before = storeBytes(fixture.workspace);
      const second = await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: artifact,
      });
      assert.equal(second.duplicate, true);
      assert.equal(second.record.id, first.record.id);
      assert.equal((await engine.listEvents(claim.runId)).length, events);
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });

    it('completes a BLOCKED delegation when a corrected artifact is ingested, and resolves its gate', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T1.md', { task: 'T9' }),
      });
      const fixed = await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
      });
      assert.equal(fixed.record.accepted, true);
      assert.equal(fixed.delegation.status, 'COMPLETED');
      const gate = (await engine.listGates()).find((g) => g.kind === 'ingestion_failed')!;
      assert.equal(gate.status, 'approved');
      assert.equal(gate.decidedBy, 'baton');
    });

    it('approving an ingestion_failed gate ends the attempt and lets the task start a new one', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T1.md', { task: 'T9' }),
      });
      const gate = (await engine.listGates({ status: 'open' })).find((g) => g.kind === 'ingestion_failed')!;
      await engine.decideGate({ gateId: gate.id, decision: 'approved', by: 'ann' });
      assert.equal((await engine.overview()).delegations[0]!.status, 'FAILED');
      assert.equal(await taskStatus('T1'), 'ready');
      assert.equal((await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' })).delegation.attempt, 2);
    });

    it('refuses a result for a finished delegation with an issue, and writes nothing', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const artifact = fixture.writeResult('T1.md', { task: 'T1' });
      await engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: artifact });
      const again = await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: artifact,
      });
      assert.equal(again.duplicate, true, 'the same artifact again is the same record, not an error');
      const before = storeBytes(fixture.workspace);
      await assert.rejects(
        engine.ingest({
          delegationId: claim.delegation.id,
          token: claim.token,
          artifactPath: fixture.writeResult('other.md', { task: 'T1', summary: 'different' }),
        }),
        (err) =>
          BatonError.is(err, 'ingest.delegation-terminal') &&
          err.kind === 'mismatch' &&
          err.issues[0]?.code === 'ingest.delegation-terminal',
      );
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });

    it('retries after a FAIL result and fails the task at the attempt limit', async () => {
      for (const attempt of [1, 2]) {
        const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
        assert.equal(claim.delegation.attempt, attempt);
        await engine.ingest({
          delegationId: claim.delegation.id,
          token: claim.token,
          artifactPath: fixture.writeResult(`T5-${attempt}.md`, {
            task: 'T5',
            status: 'FAIL',
            summary: `try ${attempt}`,
          }),
        });
        fixture.fakeClock.advance(10_000); // the retry backoff
      }
      assert.equal(await taskStatus('T5'), 'failed');
    });

    it('a BLOCKED result opens a manual_handoff gate with the worker summary', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
      await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T5.md', { task: 'T5', status: 'BLOCKED', summary: 'need an API key' }),
      });
      const gate = (await engine.listGates({ status: 'open' })).find((g) => g.kind === 'manual_handoff')!;
      assert.match(gate.reason, /need an API key/);
      assert.equal(await taskStatus('T5'), 'gated');
    });

    it('refuses an artifact handed in over 1 MiB (the default maxArtifactBytes) and writes nothing', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const path = fixture.writeResult('T1.md', { task: 'T1' });
      writeFileSync(path, readFileSync(path, 'utf8') + 'x'.repeat(1024 * 1024));
      const before = storeBytes(fixture.workspace);
      await assert.rejects(
        engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: path }),
        (err) => BatonError.is(err, 'ingest.artifact-too-large') && /limit is 1048576 bytes/.test(err.message),
      );
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });

    it('rejects artifact paths that leave the workspace, through .. or a symlink', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      symlinkSync('/etc', join(fixture.workspace, 'escape'));
      const outcome = await engine.ingest({
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: fixture.writeResult('T1.md', { task: 'T1', artifacts: ['../outside.txt', 'escape/hostname'] }),
      });
      assert.equal(outcome.record.accepted, false);
      assert.ok(
        outcome.record.issues.every((i) => i.range),
        'each path issue points at its line',
      );
      assert.equal(outcome.record.issues.length, 2);
    });

    it('refuses a missing artifact file as bad input and writes nothing', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const before = storeBytes(fixture.workspace);
      await assert.rejects(
        engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: 'results/nope.md' }),
        (err) => BatonError.is(err, 'ingest.artifact-unreadable') && err.kind === 'invalid-input',
      );
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });
  });

  describe('run status and events', () => {
    it('follows the work: running, paused at a gate with nothing runnable, completed', async () => {
      const tasks = ['T1', 'T3', 'T5'];
      let runId = '';
      for (const taskId of tasks) {
        const claim = await engine.claimTask({ planPath: 'plan.md', taskId });
        runId = claim.runId;
        await engine.ingest({
          delegationId: claim.delegation.id,
          token: claim.token,
          artifactPath: fixture.writeResult(`${taskId}.md`, { task: taskId }),
        });
      }
      assert.equal((await engine.getRun(runId)).status, 'paused', 'only T2 (gated) and T4 (waiting on T2) are left');
      await engine.decideGate({ gateId: 'G-1', decision: 'approved', by: 'ann' });
      assert.equal((await engine.getRun(runId)).status, 'running');
      for (const taskId of ['T2', 'T4']) {
        const claim = await engine.claimTask({ planPath: 'plan.md', taskId });
        await engine.ingest({
          delegationId: claim.delegation.id,
          token: claim.token,
          artifactPath: fixture.writeResult(`${taskId}.md`, {
            task: taskId,
            agent: taskId === 'T4' ? 'reviewer' : 'coder',
          }),
        });
      }
      assert.equal((await engine.getRun(runId)).status, 'completed');
    });

    it('numbers each run’s events 1, 2, 3, … in commit order', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const events = await engine.listEvents(claim.runId);
      assert.deepEqual(
        events.map((e) => e.seq),
        events.map((_, i) => i + 1),
      );
      assert.deepEqual(
        events.slice(0, 2).map((e) => e.type),
        ['run:created', 'gate:opened'],
      );
      assert.ok(events.some((e) => e.type === 'delegation:claimed' && e.data.delegationId === 'D-T1-coder-001'));
    });

    it('announces another process’s transitions and heartbeats to a following engine, in order', async () => {
      const follower = await fixture.open({ follow: true });
      const heard: EngineEvent[] = [];
      follower.onEvent((e) => heard.push(e));
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'halfway' });
      const deadline = Date.now() + 5000;
      while (!heard.some((e) => e.type === 'runtime:heartbeat') && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 10));
      const claimed = heard.findIndex((e) => e.type === 'delegation:claimed');
      const beat = heard.findIndex((e) => e.type === 'runtime:heartbeat');
      assert.ok(claimed >= 0 && beat > claimed, heard.map((e) => e.type).join(', '));
      const heartbeat = heard[beat]!;
      assert.ok(heartbeat.type === 'runtime:heartbeat');
      assert.equal(heartbeat.data.progress, 'halfway');
      const seqs = heard.filter((e) => e.seq !== undefined).map((e) => e.seq!);
      assert.deepEqual(
        seqs,
        [...seqs].sort((a, b) => a - b),
      );
    });
  });
});
