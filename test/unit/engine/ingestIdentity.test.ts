// What a result is, and which run it belongs to (docs/result-contract.md, "Ingestion";
// docs/architecture.md, "Ingestion"): an artifact in .baton/runs/<run>/ is evidence of that
// run only, and the same bytes with different workspace findings are a new result.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BatonError, runFolderOf, runPaths, type Engine } from '../../../src/engine/index';
import { ownPid, thisHost } from '../../../src/engine/effects/processes/processes';
import { EngineFixture } from '../../support/engineFixture';

const PLAN = `# Plan

\`\`\`baton-task
id: T1
title: Write the report
agent: coder
\`\`\`
Write notes/report.txt.
`;

const storeBytes = (workspace: string): Record<string, string> => {
  const dir = join(workspace, '.baton', 'store');
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n)).toString('base64')]));
};

describe('ingestion: which run a result belongs to, and what makes it the same result', () => {
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', PLAN);
    engine = await fixture.open();
  });
  afterEach(() => fixture.dispose());

  /** A result written where Baton asks a worker to write it: .baton/runs/<run>/artifacts/<delegation>.md. */
  function writeRunArtifact(runId: string, delegationId: string, fields: Parameters<EngineFixture['writeResult']>[1]) {
    const path = runPaths(fixture.workspace, runId).artifact(delegationId);
    mkdirSync(dirname(path), { recursive: true });
    copyFileSync(fixture.writeResult(`${runId}-${delegationId}.md`, fields), path);
    return path;
  }

  describe('an artifact in another run’s folder', () => {
    /** Run 1 completed D-T1-coder-001 and its artifact; run 2 (the plan again) has its own D-T1-coder-001 running. */
    async function twoRuns() {
      const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const oldArtifact = writeRunArtifact(first.runId, first.delegation.id, { task: 'T1' });
      await engine.ingest({
        delegationId: first.delegation.id,
        runId: first.runId,
        artifactPath: oldArtifact,
        token: first.token,
      });
      assert.equal((await engine.getRun(first.runId)).status, 'completed');
      const { run: second } = await engine.runForPlan('plan.md', { fresh: true });
      const claim = await engine.claimTask({ runId: second.id, taskId: 'T1' });
      assert.equal(claim.delegation.id, first.delegation.id, 'delegation ids repeat across runs of one plan');
      return {
        oldRun: first.runId,
        newRun: second.id,
        delegationId: claim.delegation.id,
        oldArtifact,
        token: claim.token,
      };
    }

    it('is refused with ingest.artifact-of-other-run when the delegation id resolves to the newest run, naming both runs; nothing is written', async () => {
      const { oldRun, newRun, delegationId, oldArtifact, token } = await twoRuns();
      const before = storeBytes(fixture.workspace);
      await assert.rejects(
        engine.ingest({ delegationId, artifactPath: oldArtifact, token }),
        (err) =>
          BatonError.is(err, 'ingest.artifact-of-other-run') &&
          err.kind === 'mismatch' &&
          err.message.includes(`belongs to run ${oldRun}`) &&
          err.message.includes(`not to run ${newRun}`),
      );
      assert.deepEqual(storeBytes(fixture.workspace), before, 'nothing written');
      const attempt = (await engine.overview(newRun)).delegations.find((d) => d.id === delegationId)!;
      assert.equal(attempt.status, 'RUNNING', "the new run's attempt is untouched");
      assert.deepEqual(await engine.listIngestions(newRun), []);
    });

    it('is refused for an explicitly named other run too; named for its own run it meets that run’s rules', async () => {
      const { oldRun, newRun, delegationId, oldArtifact, token } = await twoRuns();
      await assert.rejects(engine.ingest({ delegationId, runId: newRun, artifactPath: oldArtifact, token }), (err) =>
        BatonError.is(err, 'ingest.artifact-of-other-run'),
      );
      // In its own run the attempt is finished: the same result again is the record it made.
      const again = await engine.ingest({ delegationId, runId: oldRun, artifactPath: oldArtifact });
      assert.equal(again.duplicate, true);
      assert.equal(again.record.runId, oldRun);
    });

    it('is refused when it reaches the other run’s folder through a symbolic link', async () => {
      const { delegationId, oldArtifact, token } = await twoRuns();
      symlinkSync(oldArtifact, join(fixture.workspace, 'results', 'linked.md'));
      await assert.rejects(engine.ingest({ delegationId, artifactPath: 'results/linked.md', token }), (err) =>
        BatonError.is(err, 'ingest.artifact-of-other-run'),
      );
    });

    it('does not apply to a file outside every run’s folder: a hand-in for the newest run goes there', async () => {
      const { newRun, delegationId, token } = await twoRuns();
      const outcome = await engine.ingest({
        delegationId,
        artifactPath: fixture.writeResult('T1.md', { task: 'T1' }),
        token,
      });
      assert.equal(outcome.record.runId, newRun);
      assert.equal(outcome.delegation.status, 'COMPLETED');
    });

    it('runFolderOf names the run of a path in .baton/runs/ and the delegation an artifact or log is named after', () => {
      const ws = fixture.workspace;
      assert.deepEqual(runFolderOf(ws, join(ws, '.baton/runs/R-1/artifacts/D-T1-coder-001.md')), {
        runId: 'R-1',
        delegationId: 'D-T1-coder-001',
      });
      assert.deepEqual(runFolderOf(ws, join(ws, '.baton/runs/R-1/logs/D-T1-coder-001.log')), {
        runId: 'R-1',
        delegationId: 'D-T1-coder-001',
      });
      assert.deepEqual(runFolderOf(ws, join(ws, '.baton/runs/R-1/notes.md')), { runId: 'R-1' });
      assert.equal(runFolderOf(ws, join(ws, 'results/D-T1-coder-001.md')), undefined);
      assert.equal(runFolderOf(ws, join(ws, '.baton/runs')), undefined);
      assert.equal(runFolderOf(ws, join(ws, '../other/.baton/runs/R-1/artifacts/D.md')), undefined);
    });
  });

  describe('re-ingest re-checks the workspace', () => {
    /** A result that lists notes/report.txt, which does not exist yet: rejected. */
    async function rejectedForMissingFile() {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      const artifact = fixture.writeResult('T1.md', { task: 'T1', artifacts: ['notes/report.txt'] });
      const first = await engine.ingest({
        delegationId: claim.delegation.id,
        artifactPath: artifact,
        token: claim.token,
      });
      assert.equal(first.record.accepted, false);
      assert.deepEqual(
        first.record.issues.map((i) => i.code),
        ['result.artifact-missing'],
      );
      assert.equal(first.delegation.status, 'BLOCKED');
      return { claim, artifact, first };
    }

    it('the same artifact with the workspace unchanged returns the first record and writes nothing', async () => {
      const { claim, artifact, first } = await rejectedForMissingFile();
      const before = storeBytes(fixture.workspace);
      const again = await engine.ingest({ delegationId: claim.delegation.id, artifactPath: artifact });
      assert.equal(again.duplicate, true);
      assert.equal(again.record.id, first.record.id);
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });

    it('the same artifact after the missing file was created is checked again and accepted: the attempt completes and its gate closes', async () => {
      const { claim, artifact, first } = await rejectedForMissingFile();
      fixture.write('notes/report.txt', 'the report\n');
      const fixed = await engine.ingest({ delegationId: claim.delegation.id, artifactPath: artifact });
      assert.equal(fixed.duplicate, false);
      assert.notEqual(fixed.record.id, first.record.id);
      assert.equal(fixed.record.digest, first.record.digest, 'the same bytes');
      assert.equal(fixed.record.accepted, true);
      assert.equal(fixed.delegation.status, 'COMPLETED');
      const gate = (await engine.listGates({ runId: claim.runId })).find((g) => g.kind === 'ingestion_failed')!;
      assert.equal(gate.status, 'approved');
      // And now that result is the one an unchanged re-ingest returns.
      const again = await engine.ingest({ delegationId: claim.delegation.id, artifactPath: artifact });
      assert.equal(again.duplicate, true);
      assert.equal(again.record.id, fixed.record.id);
    });

    it('the same artifact after the workspace lost the file again is a new result: refused for the finished attempt, nothing written', async () => {
      const { claim, artifact } = await rejectedForMissingFile();
      fixture.write('notes/report.txt', 'the report\n');
      await engine.ingest({ delegationId: claim.delegation.id, artifactPath: artifact });
      rmSync(join(fixture.workspace, 'notes/report.txt'));
      const before = storeBytes(fixture.workspace);
      await assert.rejects(engine.ingest({ delegationId: claim.delegation.id, artifactPath: artifact }), (err) =>
        BatonError.is(err, 'ingest.delegation-terminal'),
      );
      assert.deepEqual(storeBytes(fixture.workspace), before);
    });

    it('says what was rejected and why, without record ids, on the attempt and on the gate a valid result closes', async () => {
      const { claim, artifact } = await rejectedForMissingFile();
      const blocked = (await engine.overview(claim.runId)).delegations[0]!;
      assert.match(blocked.reason ?? '', /^result rejected: .*notes\/report\.txt/);
      assert.doesNotMatch(blocked.reason ?? '', /\bI-\d+\b/);
      fixture.write('notes/report.txt', 'the report\n');
      await engine.ingest({ delegationId: claim.delegation.id, artifactPath: artifact });
      const gate = (await engine.listGates({ runId: claim.runId })).find((g) => g.kind === 'ingestion_failed')!;
      assert.equal(gate.decidedBy, 'baton');
      assert.equal(gate.note, 'resolved: a valid PASS result was ingested');
    });

    it("the editor's re-check of a result's text (a quick fix) finds what ingestion would, and writes nothing", async () => {
      const { claim, artifact } = await rejectedForMissingFile();
      const before = storeBytes(fixture.workspace);
      const text = readFileSync(artifact, 'utf8');
      const check = (t: string) =>
        engine.checkResultText({ delegationId: claim.delegation.id, runId: claim.runId, text: t });
      assert.deepEqual(
        (await check(text.replace('task: T1', 'task: T9'))).map((i) => i.code),
        ['result.task-mismatch', 'result.artifact-missing'],
      );
      fixture.write('notes/report.txt', 'the report\n');
      assert.deepEqual(await check(text), [], 'fixed: no problem left');
      assert.deepEqual(storeBytes(fixture.workspace), before, 'nothing recorded');
      assert.equal((await engine.overview(claim.runId)).delegations[0]!.status, 'BLOCKED', 'the attempt still waits');
    });
  });
});

describe('a result handed in by token, for a worker Baton started (runsUnderWorker)', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = EngineFixture.withDemoPlan()));
  afterEach(() => fixture.dispose());

  /** T1 claimed, its runtime then recorded as the worker process `pid` on this host, as a spawn records it. */
  async function startedAs(engine: Engine, pid: number) {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const store = await fixture.openStore();
    await store.transact((tx) =>
      tx.run(`UPDATE runtimes SET pid = ?, pid_start = NULL, host = ? WHERE id = ?`, [
        pid,
        thisHost(),
        claim.runtimeId,
      ]),
    );
    await engine.refresh();
    return claim;
  }

  it('is taken from a process under that worker (here: the worker itself), looked at once it is found to be one', async () => {
    const engine = await fixture.open();
    const claim = await startedAs(engine, ownPid());
    const artifact = fixture.writeResult('T1.md', { task: 'T1' });
    const outcome = await engine.ingest({
      delegationId: claim.delegation.id,
      token: claim.token,
      artifactPath: artifact,
    });
    assert.equal(outcome.delegation.status, 'COMPLETED');
  });

  it('is refused from a process that does not run under it, and nothing is recorded', async () => {
    const engine = await fixture.open();
    // A pid no process has: this test's process cannot run under it.
    const claim = await startedAs(engine, 999_999_999);
    const artifact = fixture.writeResult('T1.md', { task: 'T1' });
    await assert.rejects(
      engine.ingest({ delegationId: claim.delegation.id, token: claim.token, artifactPath: artifact }),
      (err: unknown) => BatonError.is(err, 'runtime.not-its-worker'),
    );
    assert.equal((await engine.listIngestionViews(claim.runId)).length, 0);
  });
});
