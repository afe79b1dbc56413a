import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo, show } from '../../support/gitRepo';
import { plan, withWorkerEnv } from '../../fixtures/executor/harness';
import { ensureCliBuilt, runCli } from '../../support/cli';

const REVIEW_WORKER = resolve(__dirname, '../../fixtures/workers/reviewWorker.js');

function reviewConfig(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    defaultWorker: 'notes',
    workers: {
      notes: { type: 'process', command: process.execPath, args: [REVIEW_WORKER, '{taskId}'], promptOnStdin: true },
    },
    retryBackoffSeconds: 0,
    review: 'required',
    ...extra,
  });
}

async function drive(engine: Engine, runId: string) {
  const taken = await engine.coordinate({
    runId,
    ...(process.env.BATON_TEST_LOG ? { log: (l: string) => console.log(l) } : {}),
  });
  assert.ok('coordinator' in taken, 'the lease is free');
  return taken.coordinator.run();
}

/**
 * `review: required` (docs/extension.md, "Review required"): a passed task waits at a review gate before its work
 * integrates; Request Changes (a follow-up message to the held task) sends it back, and the next attempt starts from
 * the held attempt's committed work, not from the target branch, which does not hold it.
 */
describe('review required: a passed task waits at a review gate before integration', function () {
  this.timeout(180_000);
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  function repo(config: string): string {
    fixture.write('.baton/config.json', config);
    fixture.write('plan.md', plan([{ id: 'T', verify: [[process.execPath, '-e', '']] }]));
    return initRepo(fixture.workspace, { 'README.md': '# demo\n' });
  }

  async function openGates(runId: string) {
    return (await engine.listGates({ runId, status: 'open' })).map((g) => `${g.kind}:${g.delegationId ?? ''}`);
  }

  it('worktree: held with the target untouched; changes requested → the follow-up starts from its own commit; approved → integrated', async () => {
    const base = repo(reviewConfig({ isolation: 'worktree' }));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');

    // 1. It passes (its verify command too) and waits: nothing reached main.
    await drive(engine, run.id);
    assert.deepEqual(await openGates(run.id), ['review:D-T-coder-001']);
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base, 'the target branch did not move');
    let view = await engine.overview(run.id);
    assert.equal(view.tasks[0]!.status, 'gated');
    assert.equal(view.delegations[0]!.status, 'BLOCKED');
    const held = (await engine.listWorktrees(run.id)).find((w) => w.delegationId === 'D-T-coder-001')!;
    assert.equal(held.status, 'committed', 'the reviewed work is one commit');
    assert.equal(show(fixture.workspace, held.sourceHead!, 'notes.txt'), 'D-T-coder-001\n');

    // 2. Request Changes: one follow-up transaction — the gate rejected, the held attempt ended, the task ready.
    const sent = await engine.sendReview({
      runId: run.id,
      taskId: 'T',
      reviewed: 'D-T-coder-001',
      comments: [{ path: 'notes.txt', line: 1, quote: 'D-T-coder-001', text: 'Add a second line.' }],
      by: 'tester',
    });
    assert.equal(sent.action, 'send-back');
    assert.equal(sent.sentBack?.delegationId, 'D-T-coder-001');
    const [rejected] = await engine.listGates({ runId: run.id });
    assert.deepEqual([rejected!.status, rejected!.note], ['rejected', `changes requested (${sent.followUp.id})`]);
    view = await engine.overview(run.id);
    assert.equal(view.delegations[0]!.status, 'CANCELLED', 'ended as a follow-up ends an attempt, not failed');
    assert.equal(view.tasks[0]!.status, 'ready');

    // 3. The follow-up attempt starts on top of its own earlier commit, passes, and waits again.
    await drive(engine, run.id);
    assert.deepEqual(await openGates(run.id), ['review:D-T-coder-002']);
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base, 'still nothing on the target');
    const second = (await engine.listWorktrees(run.id)).find((w) => w.delegationId === 'D-T-coder-002')!;
    assert.equal(readFileSync(join(second.path, 'found.txt'), 'utf8'), 'D-T-coder-001\n', 'it found its own work');
    assert.equal(git(second.path, 'rev-parse', 'HEAD~1'), held.sourceHead, 'its branch starts at the held commit');
    const prompt = readFileSync(join(fixture.workspace, '.baton/runs', run.id, 'prompts/D-T-coder-002.md'), 'utf8');
    assert.match(prompt, /^## Message from tester\n\nReview of your changes \(D-T-coder-001\): one comment/);
    const carried = (await engine.listEvents(run.id)).filter((e) => e.type === 'worktree:carried');
    assert.deepEqual(
      carried.map((e) => e.data),
      [{ delegationId: 'D-T-coder-002', taskId: 'T', fromDelegationId: 'D-T-coder-001', commit: held.sourceHead }],
    );

    // 4. Approved: integrated — both attempts' work on main — and the task completes (a follow-up, not a retry).
    const gate = (await engine.listGates({ runId: run.id, status: 'open' }))[0]!;
    await engine.decideGate({ gateId: gate.id, decision: 'approved', by: 'tester' });
    const outcome = await drive(engine, run.id);
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
    assert.equal(show(fixture.workspace, 'main', 'notes.txt'), 'D-T-coder-001\nD-T-coder-002\n');
    view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-T-coder-001:CANCELLED', 'D-T-coder-002:COMPLETED'],
    );
    // Its verify command ran once per attempt: the approval reused the receipt.
    const receipts = (await engine.listEvents(run.id)).filter((e) => e.type === 'verification:receipt');
    assert.equal(receipts.length, 2);
  });

  it('from the CLI: gates lists it, baton message requests changes, baton reject fails the task with its work kept', async () => {
    const base = repo(reviewConfig({ isolation: 'worktree' }));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await drive(engine, run.id);
    ensureCliBuilt();
    const cli = (args: string[]) => runCli(args, { cwd: fixture.workspace, env: { BATON_USER: 'ann' } });
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.match(gate!.reason, /T passed \(D-T-coder-001\) and waits for your review: it changed 2 files/);
    const listed = await cli(['gates']);
    assert.match(listed.stdout, new RegExp(`${gate!.id}\\s+open\\s+review\\s+${run.id}\\s+T\\s`));

    const sent = await cli(['message', 'T', 'Add a second line.']);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(
      sent.stdout,
      new RegExp(
        `^Message M-1 from ann to T: changes requested of D-T-coder-001, which waited for review \\(${gate!.id} rejected\\); the next attempt starts from its work with the message first\\.\n`,
      ),
    );
    await engine.refresh();
    await drive(engine, run.id);
    const [again] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.equal(again?.delegationId, 'D-T-coder-002');

    const rejected = await cli(['reject', again!.id, '--note', 'not this']);
    assert.equal(rejected.code, 0, rejected.stderr);
    await engine.refresh();
    const outcome = await drive(engine, run.id);
    assert.deepEqual(outcome, { kind: 'finished', status: 'failed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(
      [view.tasks[0]!.status, ...view.delegations.map((d) => d.status)],
      ['failed', 'CANCELLED', 'FAILED'],
    );
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base, 'nothing integrated');
    const kept = (await engine.listWorktrees(run.id)).find((w) => w.delegationId === 'D-T-coder-002')!;
    assert.equal(readFileSync(join(kept.path, 'notes.txt'), 'utf8'), 'D-T-coder-001\nD-T-coder-002\n', 'work kept');
  });

  it('shared tree: held before the task completes, with verify commands or none; approved → completed without running verify again', async () => {
    fixture.write('.baton/config.json', reviewConfig({ isolation: 'none' }));
    fixture.write(
      'plan.md',
      plan([
        { id: 'T', verify: [[process.execPath, '-e', '']] },
        { id: 'U', depends: ['T'] },
      ]),
    );
    initRepo(fixture.workspace, { 'README.md': '# demo\n' });
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await drive(engine, run.id);
    assert.deepEqual(await openGates(run.id), ['review:D-T-coder-001']);
    assert.equal((await engine.overview(run.id)).tasks[0]!.status, 'gated');
    const gate = (await engine.listGates({ runId: run.id, status: 'open' }))[0]!;
    await engine.decideGate({ gateId: gate.id, decision: 'approved', by: 'tester' });
    // U, with no verify command, waits for its review too.
    await drive(engine, run.id);
    assert.deepEqual(await openGates(run.id), ['review:D-U-coder-001']);
    const second = (await engine.listGates({ runId: run.id, status: 'open' }))[0]!;
    await engine.decideGate({ gateId: second.id, decision: 'approved', by: 'tester' });
    assert.deepEqual(await drive(engine, run.id), { kind: 'finished', status: 'completed' });
    assert.equal(readFileSync(join(fixture.workspace, 'notes.txt'), 'utf8'), 'D-T-coder-001\nD-U-coder-001\n');
    const receipts = (await engine.listEvents(run.id)).filter((e) => e.type === 'verification:receipt');
    assert.equal(receipts.length, 1);
  });
  it('per-file keep/drop at the review gate: the integration takes only the kept files, as a commit that says what was dropped', async () => {
    const base = repo(reviewConfig({ isolation: 'worktree' }));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ REVIEW_WORKER_TOUCH: 'README.md' }, () => drive(engine, run.id));
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    const held = (await engine.listWorktrees(run.id))[0]!;
    assert.deepEqual(held.changedFiles, ['README.md', 'found.txt', 'notes.txt']);

    // Refused: a file it did not change, and dropping everything (reject instead); nothing written.
    await assert.rejects(
      engine.dropFromIntegration({ gateId: gate!.id, files: ['plan.md'] }),
      /did not change plan\.md/,
    );
    await assert.rejects(
      engine.dropFromIntegration({ gateId: gate!.id, files: held.changedFiles }),
      /leaves nothing to integrate: reject/,
    );
    assert.equal(git(held.path, 'rev-parse', 'HEAD'), held.sourceHead);

    // Drop a modified file (back to its base) and an added one (removed): a new commit on the task's branch.
    const dropped = await engine.dropFromIntegration({
      gateId: gate!.id,
      files: ['README.md', 'found.txt'],
      by: 'ann',
    });
    assert.deepEqual([dropped.dropped, dropped.kept], [['README.md', 'found.txt'], ['notes.txt']]);
    assert.equal(git(held.path, 'rev-parse', 'HEAD~1'), held.sourceHead);
    assert.match(
      git(held.path, 'log', '-1', '--format=%B'),
      /^Baton: T \(D-T-coder-001\) without 2 files dropped at review\n\nDropped by ann at G-\d+, put back as they were at [0-9a-f]{12}:\n- README\.md\n- found\.txt\n\nKept: notes\.txt\./,
    );
    const after = (await engine.listWorktrees(run.id))[0]!;
    assert.deepEqual([after.sourceHead, after.changedFiles], [dropped.sourceHead, ['notes.txt']]);

    // Approved: only the kept file reaches the target.
    await engine.decideGate({ gateId: gate!.id, decision: 'approved', by: 'ann' });
    assert.deepEqual(await drive(engine, run.id), { kind: 'finished', status: 'completed' });
    assert.deepEqual(git(fixture.workspace, 'diff', '--name-only', base, 'main').split('\n'), ['notes.txt']);
    assert.equal(show(fixture.workspace, 'main', 'README.md'), '# demo\n');
    const events = await engine.listEvents(run.id);
    const drop = events.find((e) => e.type === 'review:dropped');
    assert.deepEqual(drop?.data, {
      gateId: gate!.id,
      delegationId: 'D-T-coder-001',
      taskId: 'T',
      by: 'ann',
      files: ['README.md', 'found.txt'],
      sourceHead: dropped.sourceHead,
    });
  });
});
