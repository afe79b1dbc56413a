import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError, type Engine } from '../../../src/engine/index';
import { batonExcludeEdit } from '../../../src/engine/effects/git/worktrees';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/**
 * A run's life after its tasks: cancelling it (docs/architecture.md, "Cancelling a run"), and
 * starting its plan again once it ended. In process, on a fake clock; the workers a cancel
 * ends for real are in test/system/cli/cancel.test.ts.
 */
describe('run lifecycle: cancel, and a new run after the end', () => {
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', DEMO_PLAN);
    engine = await fixture.open();
  });
  afterEach(() => fixture.dispose());

  const journal = (): string => {
    const dir = join(fixture.workspace, '.baton', 'store');
    return readFileSync(join(dir, 'journal-000000000001.log'), 'utf8');
  };

  /** Hands in the result as the claim's worker would: with its runtime token. */
  async function ingest(
    claimed: { delegation: { id: string }; token: string },
    task: string,
    status = 'PASS',
  ): Promise<void> {
    const delegationId = claimed.delegation.id;
    const artifact = fixture.writeResult(`${delegationId}.md`, { task, status });
    await engine.ingest({ delegationId, token: claimed.token, artifactPath: artifact });
  }

  describe('cancel', () => {
    it('closes its open gates, cancels its attempts and unfinished tasks, and ends the run as cancelled', async () => {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await ingest(claim, 'T1');
      const t3 = await engine.claimTask({ runId: claim.runId, taskId: 'T3' });
      assert.equal((await engine.listGates({ status: 'open' })).length, 1, 'T2 waits at its risk gate');

      const outcome = await engine.cancelRun({ runId: claim.runId, by: 'ana', note: 'wrong plan' });
      assert.equal(outcome.alreadyCancelled, false);
      assert.equal(outcome.from, 'running');
      assert.deepEqual(outcome.attemptsCancelled, [t3.delegation.id]);
      assert.equal(outcome.gatesClosed, 1);
      assert.equal(outcome.tasksCancelled, 4, 'T2, T3, T4, T5: all but the completed T1');
      assert.ok(outcome.stop, 'the immediate stop that ended the workers');
      assert.equal(outcome.stop.mode, 'immediate');

      const view = await engine.overview(claim.runId);
      assert.equal(view.run.status, 'cancelled');
      assert.deepEqual(
        view.tasks.map((t) => `${t.id} ${t.status}`),
        ['T1 completed', 'T2 cancelled', 'T3 cancelled', 'T4 cancelled', 'T5 cancelled'],
      );
      assert.equal(view.tasks[1]!.statusReason, 'run cancelled by ana: wrong plan');
      assert.equal(view.delegations.find((d) => d.id === t3.delegation.id)!.status, 'CANCELLED');
      assert.deepEqual(
        view.gates.map((g) => [g.status, g.decidedBy, g.note]),
        [['rejected', 'baton', 'run cancelled by ana: wrong plan']],
      );
      assert.equal(view.runtimes.filter((r) => r.status !== 'terminal').length, 0, 'no runtime holds a lease any more');
      const events = await engine.listEvents(claim.runId);
      assert.deepEqual(
        events.filter((e) => e.type === 'run:status').at(-1)?.data,
        { from: 'paused', to: 'cancelled', reason: 'run cancelled by ana: wrong plan' },
        'the stop paused it, the cancel ended it',
      );
    });

    it('is final: nothing the run status follows brings it back, and resuming dispatches nothing', async () => {
      const { runId } = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.cancelRun({ runId });
      await engine.liftStops(runId);
      await engine.expireStaleRuntimes();
      assert.equal((await engine.getRun(runId)).status, 'cancelled');
      // A coordinator refuses a worker that is not installed (worker.missing): give the tasks one that is.
      fixture.write(
        '.baton/config.json',
        JSON.stringify({ defaultWorker: 'node', workers: { node: { type: 'process', command: 'node', args: [] } } }),
      );
      const taken = await (await fixture.open()).coordinate({ runId });
      assert.ok('coordinator' in taken);
      assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'cancelled' });
      await assert.rejects(
        engine.claimTask({ runId, taskId: 'T5' }),
        (err) => BatonError.is(err, 'task.cancelled'),
        'a task of a cancelled run cannot be claimed',
      );
    });

    it('a second cancel reports it and writes nothing', async () => {
      const { runId } = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.cancelRun({ runId });
      const before = journal();
      const again = await engine.cancelRun({ runId });
      assert.equal(again.alreadyCancelled, true);
      assert.equal(again.stop, undefined, 'no second stop');
      assert.equal(journal(), before);
    });

    it('refuses a run that already ended otherwise (run.finished, exit 4), writing nothing', async () => {
      const t5 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
      const { runId } = t5;
      await ingest(t5, 'T5');
      await engine.replan({ runId, planPath: 'plan.md' });
      const before = journal();
      await assert.rejects(
        engine.cancelRun({ runId }),
        (err) =>
          BatonError.is(err, 'run.finished') &&
          err.kind === 'mismatch' &&
          err.message === `Run ${runId} is superseded already; there is nothing to cancel.`,
      );
      assert.equal(journal(), before);
    });
  });

  describe('starting a plan again', () => {
    /** T2's risk gate rejected: T2 cancelled, T4 (after T2) blocked; T1, T3, T5 pass: the run ends blocked. */
    async function blockedRun(): Promise<string> {
      const t1 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const [risk] = await engine.listGates({ status: 'open' });
      await engine.decideGate({ gateId: risk!.id, decision: 'rejected', note: 'not now' });
      await ingest(t1, 'T1');
      for (const task of ['T3', 'T5']) {
        const claim = await engine.claimTask({ runId: t1.runId, taskId: task });
        await ingest(claim, task);
      }
      assert.equal((await engine.getRun(t1.runId)).status, 'blocked');
      return t1.runId;
    }

    it('after a run ended blocked, starting its plan starts a new run instead of "continuing" the ended one', async () => {
      const blocked = await blockedRun();
      const { run, created } = await engine.runForPlan('plan.md');
      assert.equal(created, true);
      assert.notEqual(run.id, blocked);
      assert.equal(run.status, 'running');
      assert.equal(
        (await engine.listGates({ runId: run.id, status: 'open' })).length,
        1,
        'the new run has its own risk gate',
      );
    });

    it('after a run was cancelled, too; and with the plan changed, a new run is what --new starts', async () => {
      const { runId } = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.cancelRun({ runId });
      const next = await engine.runForPlan('plan.md');
      assert.equal(next.created, true);
      // The plan changes under the new (paused) run: starting it is refused with the ways on; fresh starts one.
      writeFileSync(join(fixture.workspace, 'plan.md'), `${DEMO_PLAN}\nOne more line.\n`);
      await assert.rejects(engine.runForPlan('plan.md'), (err) => BatonError.is(err, 'run.plan-changed'));
      const fresh = await engine.runForPlan('plan.md', { fresh: true });
      assert.equal(fresh.created, true);
      assert.notEqual(fresh.run.id, next.run.id);
    });
  });

  describe('.baton/ and the git repository', () => {
    it("opening the store adds Baton's state to the repository's info/exclude before writing it, once", async () => {
      const other = new EngineFixture();
      try {
        // A repository as git leaves it (no git process here: the unit tier starts none).
        mkdirSync(join(other.workspace, '.git', 'info'), { recursive: true });
        writeFileSync(join(other.workspace, '.git', 'info', 'exclude'), '# git ls-files --others --exclude-from=…\n');
        other.write('plan.md', DEMO_PLAN);
        const opened = await other.open();
        await opened.runForPlan('plan.md');
        await opened.close();
        await (await other.open()).close();
        const exclude = readFileSync(join(other.workspace, '.git', 'info', 'exclude'), 'utf8');
        assert.equal(
          exclude,
          "# git ls-files --others --exclude-from=…\n# Baton's store, logs and task worktrees; .baton/config.json is meant to be committed\n**/.baton/*\n!**/.baton/config.json\n",
        );
      } finally {
        await other.dispose();
      }
    });

    it('an engine on an existing store edits info/exclude only once it commits: a read or a refusal leaves it as it was', async () => {
      const other = new EngineFixture();
      try {
        other.write('plan.md', DEMO_PLAN);
        const first = await other.open();
        const { run } = await first.runForPlan('plan.md');
        await first.close();
        // The repository appears after the store (or its exclude lost Baton's lines): nothing is written yet.
        mkdirSync(join(other.workspace, '.git', 'info'), { recursive: true });
        const exclude = join(other.workspace, '.git', 'info', 'exclude');
        writeFileSync(exclude, '# mine\n');
        const opened = await other.open();
        try {
          await assert.rejects(opened.overview('R-none'), (err) => BatonError.is(err, 'run.unknown'));
          await opened.diagnose();
          // Refused inside a transaction that commits having changed no row (a heartbeat's batch decides each beat).
          await assert.rejects(opened.heartbeat({ runtimeId: 'W-none', token: 'x' }), (err) =>
            BatonError.is(err, 'runtime.unknown'),
          );
          assert.equal(readFileSync(exclude, 'utf8'), '# mine\n', 'a read or a refused command edits nothing');
          await opened.claimTask({ runId: run.id, taskId: 'T1', leaseSeconds: 30 });
          assert.match(readFileSync(exclude, 'utf8'), /^# mine\n# Baton's store/, 'edited with the first commit');
        } finally {
          await opened.close();
        }
      } finally {
        await other.dispose();
      }
    });

    it("replaces the lines an earlier Baton wrote (which hid config.json) in place, keeping the person's own", async () => {
      const other = new EngineFixture();
      try {
        mkdirSync(join(other.workspace, '.git', 'info'), { recursive: true });
        const exclude = join(other.workspace, '.git', 'info', 'exclude');
        writeFileSync(
          exclude,
          "*.log\n# Baton's store, logs and task worktrees (baton init: commit config.json with git add -f)\n.baton/\nbuild/\n",
        );
        await (await other.open()).close();
        assert.equal(
          readFileSync(exclude, 'utf8'),
          "*.log\n# Baton's store, logs and task worktrees; .baton/config.json is meant to be committed\n**/.baton/*\n!**/.baton/config.json\nbuild/\n",
        );
        assert.deepEqual(readdirSync(join(other.workspace, '.git', 'info')), ['exclude'], 'no file left beside it');
      } finally {
        await other.dispose();
      }
    });

    it("leaves a `.baton/` line in the person's own words as it is: theirs to decide", () => {
      assert.deepEqual(batonExcludeEdit('# mine\n.baton/\n'), { kind: 'none' });
      assert.deepEqual(batonExcludeEdit('.baton\n'), { kind: 'none' });
    });
  });
});
