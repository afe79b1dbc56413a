// Which delegation of which run a result file belongs to, as the CodeLens, the ingest command
// and the quick fixes resolve it: from the run-state cache over a real engine.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { runPaths, type Engine } from '../../../../src/engine/index';
import { lensTitle, resolveArtifact, type ArtifactResolution } from '../../../../src/extension/model/artifactOwner';
import { RunStateCache } from '../../../../src/extension/model/runState';
import { EngineFixture } from '../../../support/engineFixture';

const PLAN = `# Plan

\`\`\`baton-task
id: T1
title: Write the report
agent: coder
\`\`\`
Write the report.

\`\`\`baton-task
id: T2
title: Check the report
agent: coder
\`\`\`
Check it.
`;

describe('a result file belongs to the delegation of its own run', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let cache: RunStateCache;

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', PLAN);
    engine = await fixture.open();
    cache = new RunStateCache(engine, { clock: fixture.fakeClock, coalesceMs: 10, publishGapMs: 0, tickMs: 60_000 });
  });
  afterEach(async () => {
    cache.dispose();
    await fixture.dispose();
  });

  function runArtifact(runId: string, delegationId: string, task: string): string {
    const path = runPaths(fixture.workspace, runId).artifact(delegationId);
    mkdirSync(dirname(path), { recursive: true });
    copyFileSync(fixture.writeResult(`${runId}-${delegationId}.md`, { task }), path);
    return path;
  }

  async function resolve(path: string): Promise<ArtifactResolution | undefined> {
    await cache.refreshNow();
    return resolveArtifact(cache, path, readFileSync(path, 'utf8'));
  }

  /** Run 1 finished T1 and T2; the plan was run again: run 2's D-T1-coder-001 waits for its result. */
  async function ranTwice() {
    const ids: Record<string, string> = {};
    for (const task of ['T1', 'T2']) {
      const claim = await engine.claimTask({ planPath: 'plan.md', taskId: task });
      ids.run1 = claim.runId;
      await engine.ingest({
        delegationId: claim.delegation.id,
        runId: claim.runId,
        artifactPath: runArtifact(claim.runId, claim.delegation.id, task),
        token: claim.token,
      });
    }
    const { run } = await engine.runForPlan('plan.md', { fresh: true });
    await engine.claimTask({ runId: run.id, taskId: 'T1' });
    return { run1: ids.run1!, run2: run.id };
  }

  it('an earlier run’s artifact resolves to that run’s finished attempt and is refused, naming both runs — never to the newer run’s attempt of the same id', async () => {
    const { run1, run2 } = await ranTwice();
    const resolution = await resolve(runPaths(fixture.workspace, run1).artifact('D-T1-coder-001'));
    assert.equal(resolution?.kind, 'refuse');
    assert.equal(resolution.runId, run1);
    assert.equal(lensTitle(resolution), `D-T1-coder-001 · earlier run ${run1}: COMPLETED`);
    assert.equal(
      resolution.kind === 'refuse' && resolution.message,
      `This result belongs to D-T1-coder-001 of run ${run1}, where that attempt is COMPLETED: a finished attempt takes no other result. It is not ingested for another run: delegation ids repeat across runs. Run ${run2} has its own D-T1-coder-001, with its own result file.`,
    );
  });

  it('the newer run’s own artifact resolves to its waiting attempt, with the run named because the id repeats', async () => {
    const { run2 } = await ranTwice();
    const resolution = await resolve(runArtifact(run2, 'D-T1-coder-001', 'T1'));
    assert.equal(resolution?.kind, 'ingest');
    assert.equal(resolution.runId, run2);
    assert.equal(resolution.kind === 'ingest' && resolution.delegation.status, 'RUNNING');
    assert.equal(lensTitle(resolution), `⤓ Ingest for D-T1-coder-001 (run ${run2})`);
  });

  it('a file outside the run folders goes to the waiting attempt of the task it names, in the newest run', async () => {
    const { run2 } = await ranTwice();
    const resolution = await resolve(fixture.writeResult('T1.md', { task: 'T1' }));
    assert.equal(resolution?.kind, 'ingest');
    assert.equal(resolution.runId, run2);
    // Nothing waits for T2 in any run: not Baton's to take.
    assert.equal(await resolve(fixture.writeResult('T2.md', { task: 'T2' })), undefined);
  });

  it('a file an ingestion named is re-ingested for that attempt while it waits (a rejected result)', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    const path = fixture.writeResult('mine.md', { task: 'T1', artifacts: ['missing.txt'] });
    await engine.ingest({ delegationId: claim.delegation.id, artifactPath: path, token: claim.token });
    const resolution = await resolve(path);
    assert.equal(resolution?.kind, 'ingest');
    assert.equal(resolution.kind === 'ingest' && resolution.reingest, true);
    assert.equal(lensTitle(resolution), '↻ Re-ingest for D-T1-coder-001');
  });

  it('a superseded run’s artifact is refused, naming the run that superseded it', async () => {
    const claim = await engine.claimTask({ planPath: 'plan.md', taskId: 'T2' });
    const path = runArtifact(claim.runId, claim.delegation.id, 'T1'); // wrong task: rejected, the attempt BLOCKED
    await engine.ingest({ delegationId: claim.delegation.id, artifactPath: path, token: claim.token });
    fixture.write('plan2.md', PLAN.replace('Check it.', 'Check it twice.'));
    const { run } = await engine.replan({ runId: claim.runId, planPath: 'plan2.md' });
    const resolution = await resolve(path);
    assert.equal(resolution?.kind, 'refuse');
    assert.equal(lensTitle(resolution), `D-T2-coder-001 · run ${claim.runId} was superseded: not ingested`);
    assert.match(resolution.kind === 'refuse' ? resolution.message : '', new RegExp(`superseded by run ${run.id}`));
  });

  it('a run folder of a run this window does not hold is refused, with the CLI command for its own run', async () => {
    const path = fixture.write('.baton/runs/R-19990101-old1/artifacts/D-T1-coder-001.md', 'x');
    const resolution = await resolve(path);
    assert.equal(resolution?.kind, 'refuse');
    assert.match(
      resolution.kind === 'refuse' ? resolution.message : '',
      /baton ingest --run R-19990101-old1 --delegation D-T1-coder-001 --artifact \.baton\/runs\/R-19990101-old1\/artifacts\/D-T1-coder-001\.md$/,
    );
  });

  it('a path reached through the run folder name is the run’s even without the artifacts/ naming (joined paths)', async () => {
    const { run1 } = await ranTwice();
    const resolution = await resolve(
      join(fixture.workspace, '.baton', 'runs', run1, 'artifacts', '..', 'artifacts', 'D-T1-coder-001.md'),
    );
    assert.equal(resolution?.runId, run1);
  });
});
