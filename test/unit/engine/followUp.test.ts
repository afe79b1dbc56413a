import assert from 'node:assert/strict';
import { BatonError, type Engine, type Task } from '../../../src/engine/index';
import {
  decideFollowUp,
  FOLLOW_UP_TASK_STATUSES,
  followUpMessageProblem,
  followUpReason,
  MAX_FOLLOW_UP_BYTES,
  wentWrongSinceLastPass,
  type FollowUpTarget,
} from '../../../src/engine/domain/followUp';
import { buildPrompt, type EarlierAttempt } from '../../../src/engine/domain/prompt';
import { messagesSinceLastPass } from '../../../src/engine/queries/followUps';
import { deliverFollowUps } from '../../../src/engine/operations/followUps/followUps';
import { endRunningAttempt } from '../../../src/engine/operations/delegations/endRunningAttempt';
import type { TaskStatus } from '../../../src/engine/domain/types';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/** Follow-up messages (docs/agents.md, "Follow-up messages"): the decision, the prompt, and the store's record. */
describe('follow-up messages', () => {
  describe('which tasks take a message, and what it does', () => {
    const target = (taskStatus: TaskStatus, extra: Partial<FollowUpTarget> = {}): FollowUpTarget => ({
      runId: 'R-1',
      runStatus: 'running',
      taskId: 'T1',
      taskStatus,
      manual: false,
      ...extra,
    });

    it('ends a running attempt, reopens a finished task, queues for one yet to start, refuses the rest', () => {
      const running = { open: { id: 'D-T1-coder-001', status: 'RUNNING' as const } };
      const outcomes = Object.fromEntries(
        (
          [
            'running',
            'gated',
            'completed',
            'failed',
            'ready',
            'pending',
            'verifying',
            'blocked',
            'cancelled',
            'skipped',
          ] as const
        ).map((s) => {
          const a = decideFollowUp(target(s, s === 'running' || s === 'gated' ? running : {}));
          return [s, a.kind === 'refuse' ? a.code : a.kind];
        }),
      );
      assert.deepEqual(outcomes, {
        running: 'interrupt',
        gated: 'interrupt',
        completed: 'reopen',
        failed: 'reopen',
        ready: 'queue',
        pending: 'queue',
        verifying: 'follow-up.task-verifying',
        blocked: 'follow-up.task-ended',
        cancelled: 'follow-up.task-ended',
        skipped: 'follow-up.task-ended',
      });
      assert.deepEqual(decideFollowUp(target('running', running)), {
        kind: 'interrupt',
        delegationId: 'D-T1-coder-001',
      });
      // A task at a gate whose attempt is not running (a rejected result, a budget stop): its next attempt takes it.
      assert.equal(decideFollowUp(target('gated', { open: { id: 'D', status: 'BLOCKED' } })).kind, 'queue');
      // A passed attempt held at its review gate (review: required): the message requests changes — sent back.
      assert.deepEqual(
        decideFollowUp(
          target('gated', {
            open: { id: 'D', status: 'BLOCKED' },
            heldAt: { gateId: 'G-1', delegationId: 'D', kind: 'review' },
          }),
        ),
        { kind: 'send-back', delegationId: 'D', gateId: 'G-1', gateKind: 'review' },
      );
      // Held at an integration_failed gate (its work fails merged with the target): the message sends it back too.
      assert.deepEqual(
        decideFollowUp(
          target('gated', {
            open: { id: 'D', status: 'BLOCKED' },
            heldAt: { gateId: 'G-2', delegationId: 'D', kind: 'integration_failed' },
          }),
        ),
        { kind: 'send-back', delegationId: 'D', gateId: 'G-2', gateKind: 'integration_failed' },
      );
      // The editor offers Send Message… on exactly the states that take one.
      assert.deepEqual(
        [...FOLLOW_UP_TASK_STATUSES].sort(),
        Object.keys(outcomes)
          .filter((s) => !String(outcomes[s]).startsWith('follow-up.'))
          .sort(),
      );
    });

    it("refuses a person's task and a run that was replaced or cancelled, with one readable line", () => {
      const manual = decideFollowUp(target('completed', { manual: true }));
      assert.equal(manual.kind === 'refuse' && manual.code, 'follow-up.manual-worker');
      assert.match(manual.kind === 'refuse' ? manual.message : '', /^Task T1 is done by a person/);
      for (const runStatus of ['superseded', 'cancelled'] as const) {
        const refused = decideFollowUp(target('completed', { runStatus }));
        assert.equal(refused.kind === 'refuse' && refused.code, 'follow-up.run-ended');
      }
      // A finished run (completed, failed, blocked) is reopened by a follow-up of its finished task.
      for (const runStatus of ['completed', 'failed', 'blocked'] as const)
        assert.equal(decideFollowUp(target('failed', { runStatus })).kind, 'reopen');
    });

    it('refuses an empty message and one over the limit', () => {
      assert.match(followUpMessageProblem('  \n ') ?? '', /empty/);
      assert.match(followUpMessageProblem('x'.repeat(MAX_FOLLOW_UP_BYTES + 1)) ?? '', /at most 16384/);
      assert.equal(followUpMessageProblem('Use tabs.'), undefined);
    });
  });

  describe('the prompt of the attempt that carries it', () => {
    const task: Task = {
      runId: 'R-1',
      id: 'T1',
      title: 'Lay the ground',
      agent: 'coder',
      depends: [],
      risk: [],
      files: [],
      verify: [],
      instructions: 'Create the module.',
      line: 1,
      status: 'running',
    };
    const input = {
      task,
      delegationId: 'D-T1-coder-002',
      agent: 'coder',
      artifactPath: 'result.md',
      dependencies: [],
    };

    it('opens with "## Message from <person>", before the task it restates', () => {
      const prompt = buildPrompt({
        ...input,
        followUps: [{ id: 'M-1', by: 'alice', message: 'Rename the module to core.\n' }],
      });
      assert.ok(prompt.startsWith('## Message from alice\n\nRename the module to core.\n\nDo what this message asks'));
      assert.ok(prompt.indexOf('## Message from alice') < prompt.indexOf('# T1: Lay the ground'));
      // Without a message the prompt is the one it always was.
      assert.ok(buildPrompt(input).startsWith('You are the "coder" agent.'));
    });

    it("fences a message that could start a heading of the prompt, and keeps each sender's message", () => {
      const prompt = buildPrompt({
        ...input,
        followUps: [
          { id: 'M-1', by: 'alice', message: '# Not a heading\nuse ``` here' },
          { id: 'M-2', by: 'bob\nmallory', message: 'Also add a test.' },
        ],
      });
      assert.ok(prompt.includes('## Message from alice\n\n````text\n# Not a heading\nuse ``` here\n````\n'));
      assert.ok(prompt.includes('## Message from bob mallory\n\nAlso add a test.\n\nDo what these messages ask'));
    });

    it('tells only what went wrong since the last pass, not the attempt a follow-up ended', () => {
      const a = (attempt: number, status: EarlierAttempt['status'], reason?: string): EarlierAttempt => ({
        attempt,
        delegationId: `D-T1-coder-00${attempt}`,
        status,
        ...(reason ? { reason } : {}),
      });
      const earlier = [a(1, 'FAILED', 'exited 1'), a(2, 'COMPLETED'), a(3, 'CANCELLED', followUpReason('alice'))];
      assert.deepEqual(wentWrongSinceLastPass(earlier), []);
      const retry = [a(1, 'FAILED', 'exited 1'), a(2, 'STALE'), a(3, 'CANCELLED', 'stopped (immediate) by bob')];
      assert.deepEqual(wentWrongSinceLastPass(retry), retry, "a retry's prompt is unchanged");
    });
  });

  describe('in the store', () => {
    let fixture: EngineFixture;
    let engine: Engine;

    beforeEach(async () => {
      fixture = new EngineFixture();
      fixture.write('plan.md', DEMO_PLAN);
      fixture.write('.baton/config.json', JSON.stringify({ maxAttempts: 1, retryBackoffSeconds: 0 }));
      engine = await fixture.open();
    });
    afterEach(() => fixture.dispose());

    it('ends a running attempt without charging it: CANCELLED, its task ready, the message waiting for the next', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const outcome = await engine.sendFollowUp({
        runId: claim.runId,
        taskId: 'T1',
        message: 'Use tabs.',
        by: 'alice',
      });
      assert.equal(outcome.action, 'interrupt');
      assert.equal(outcome.followUp.interruptedDelegationId, claim.delegation.id);
      // No coordinator drives the run: this process ended the attempt's (absent) worker itself.
      assert.equal(outcome.interrupted?.endedBy, 'this process');
      const view = await engine.overview(claim.runId);
      const attempt = view.delegations.find((d) => d.id === claim.delegation.id)!;
      assert.equal(attempt.status, 'CANCELLED');
      assert.equal(attempt.reason, 'follow-up: alice sent a message; the next attempt continues with it');
      const t1 = view.tasks.find((t) => t.id === 'T1')!;
      assert.equal(t1.status, 'ready', 'maxAttempts 1, and T1 may run again');
      assert.equal(
        t1.statusReason,
        `a message from alice ended ${claim.delegation.id}; the next attempt continues with it`,
      );
      const store = await fixture.openStore();
      const waiting = await store.read((r) => messagesSinceLastPass(r, claim.runId, 'T1'));
      assert.deepEqual(
        waiting.map((f) => [f.id, f.by, f.message, f.delegationId]),
        [['M-1', 'alice', 'Use tabs.', undefined]],
      );
      const sent = (await engine.listEvents(claim.runId)).find((e) => e.type === 'follow-up:sent');
      assert.ok(sent?.type === 'follow-up:sent');
      assert.deepEqual(sent.data, {
        followUpId: 'M-1',
        taskId: 'T1',
        by: 'alice',
        action: 'interrupt',
        message: 'Use tabs.',
        interruptedDelegationId: claim.delegation.id,
      });

      // The next attempt carries it; a retry of that one too, until an attempt passes.
      const second = await engine.claimTask({ planPath: 'plan.md', runId: claim.runId, taskId: 'T1' });
      const now = () => fixture.fakeClock.now();
      const delivered = await store.transact((tx) =>
        deliverFollowUps(
          tx,
          { runId: claim.runId, taskId: 'T1', delegationId: second.delegation.id, pending: waiting },
          now(),
        ),
      );
      assert.deepEqual(delivered, ['M-1']);
      const marked = (await engine.overview(claim.runId)).delegations.map((d) => [d.id, d.followUp ?? false]);
      assert.deepEqual(marked, [
        [claim.delegation.id, false],
        [second.delegation.id, true],
      ]);
      await store.transact((tx) =>
        endRunningAttempt(
          tx,
          { runId: claim.runId, delegationId: second.delegation.id, to: 'FAILED', reason: 'exited 1' },
          now(),
        ),
      );
      const carried = await store.read((r) => messagesSinceLastPass(r, claim.runId, 'T1'));
      assert.deepEqual(
        carried.map((f) => [f.id, f.delegationId]),
        [['M-1', second.delegation.id]],
      );
      assert.equal((await engine.overview(claim.runId)).tasks.find((t) => t.id === 'T1')!.status, 'failed');
      // A message to the failed task reopens it; once its attempt passes, no message is carried any more.
      assert.equal(
        (await engine.sendFollowUp({ runId: claim.runId, taskId: 'T1', message: 'Again.' })).action,
        'reopen',
      );
      const third = await engine.claimTask({ planPath: 'plan.md', runId: claim.runId, taskId: 'T1' });
      const pending = await store.read((r) => messagesSinceLastPass(r, claim.runId, 'T1'));
      assert.deepEqual(
        pending.map((f) => f.id),
        ['M-1', 'M-2'],
      );
      await store.transact((tx) =>
        deliverFollowUps(
          tx,
          { runId: claim.runId, taskId: 'T1', delegationId: third.delegation.id, pending: pending.slice(1) },
          now(),
        ),
      );
      const artifact = fixture.writeResult('t1.md', { task: 'T1' });
      await engine.ingest({ delegationId: third.delegation.id, artifactPath: artifact, token: third.token });
      assert.deepEqual(await store.read((r) => messagesSinceLastPass(r, claim.runId, 'T1')), []);
    });

    it('reopens a completed task and its finished run; the follow-up attempt is not charged as a retry', async () => {
      fixture.write('plan.md', DEMO_PLAN.slice(0, DEMO_PLAN.indexOf('```baton-task\nid: T2')));
      const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const artifact = fixture.writeResult('t1.md', { task: 'T1' });
      await engine.ingest({ delegationId: first.delegation.id, artifactPath: artifact, token: first.token });
      assert.equal((await engine.getRun(first.runId)).status, 'completed');
      const outcome = await engine.sendFollowUp({ runId: first.runId, taskId: 'T1', message: 'Add a README.' });
      assert.equal(outcome.action, 'reopen');
      assert.equal(outcome.runStatus, 'running', 'the finished run goes back to running for T1');
      assert.equal(outcome.followUp.by, process.env.BATON_USER || (await import('node:os')).userInfo().username);
      const t1 = (await engine.overview(first.runId)).tasks.find((t) => t.id === 'T1')!;
      assert.equal(t1.status, 'ready');
      assert.match(t1.statusReason!, /^a follow-up from .+ \(M-1\) runs it again$/);
      // maxAttempts is 1 and attempt 1 was used: the follow-up is attempt 2 all the same.
      const second = await engine.claimTask({ planPath: 'plan.md', runId: first.runId, taskId: 'T1' });
      assert.equal(second.delegation.attempt, 2);
    });

    it('refuses what cannot take a message with its exit kind, and writes nothing', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const refusal = (taskId: string, message: string) =>
        engine.sendFollowUp({ runId: claim.runId, taskId, message, by: 'alice' }).then(
          () => 'sent',
          (err: unknown) => (BatonError.is(err) ? `${err.code} (${err.kind})` : String(err)),
        );
      assert.equal(await refusal('T1', ' '), 'follow-up.invalid (invalid-input)');
      assert.equal(await refusal('T9', 'Hi.'), 'task.unknown (mismatch)');
      await engine.cancelRun({ runId: claim.runId });
      assert.equal(await refusal('T1', 'Hi.'), 'follow-up.run-ended (mismatch)');
      assert.deepEqual(await engine.listFollowUps(claim.runId), []);
    });

    it("refuses a person's task (worker manual): exit 2", async () => {
      fixture.write(
        'plan.md',
        DEMO_PLAN.replace('agent: coder\n```\nCreate', 'agent: coder\nworker: manual\n```\nCreate'),
      );
      const { run } = await engine.runForPlan('plan.md');
      const refused = await engine
        .sendFollowUp({ runId: run.id, taskId: 'T1', message: 'Hi.', by: 'alice' })
        .catch((err: unknown) => err);
      assert.ok(BatonError.is(refused, 'follow-up.manual-worker'), String(refused));
      assert.equal(refused.kind, 'invalid-input');
    });
  });
});
