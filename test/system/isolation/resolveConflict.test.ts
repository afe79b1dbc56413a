// Resolve Conflict, the engine's part (docs/isolation.md, "Resolving a conflict"), in a real git repository: the
// target merged into the task's worktree so that its files carry the conflict for a merge editor — an unfinished
// merge is never committed as it is — and the conflict sent to the task's agent as a follow-up message.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { runPaths, type Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';
import { plan, withWorkerEnv } from '../../fixtures/executor/harness';

const EDIT_WORKER = resolve(__dirname, '../../fixtures/workers/editWorker.js');

function editConfig(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    defaultWorker: 'edit',
    workers: {
      edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true },
    },
    retryBackoffSeconds: 0,
    maxConcurrency: 4,
    ...extra,
  });
}

const RESOLVED = 'one\nTWO by A, 2 by B\nthree\n';

describe('resolving an integration conflict: in the worktree, or by the agent', function () {
  // A hang detector: a test takes 5–20 s here, several times that at load 10.
  this.timeout(180_000);
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  /** A and B change the same line of shared.txt; B waits until A is integrated, so B conflicts. */
  async function conflictAtB(strategy: 'merge' | 'rebase' = 'merge') {
    fixture.write('.baton/config.json', editConfig({ integration: strategy }));
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    initRepo(fixture.workspace, { 'README.md': '# demo\n', 'shared.txt': 'one\ntwo\nthree\n' });
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const edits = {
      A: { 'shared.txt': 'one\nTWO by A\nthree\n' },
      B: { 'shared.txt': 'one\n2 by B\nthree\n', 'b-notes.txt': 'B was here\n' },
    };
    const outcome = await withWorkerEnv(
      { FAKE_EDITS: JSON.stringify(edits), FAKE_DELAY_MS: '0', FAKE_DELAY_MS_B: '1500' },
      () => drive(run.id),
    );
    assert.equal(outcome.kind, 'paused');
    const gate = (await engine.listGates({ runId: run.id, status: 'open' })).find(
      (g) => g.kind === 'integration_conflict',
    );
    assert.ok(gate, 'B waits at an integration_conflict gate');
    const worktree = (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'B')!;
    return { run, gate, worktree, mainHead: git(fixture.workspace, 'rev-parse', 'main') };
  }

  async function drive(runId: string) {
    const taken = await engine.coordinate({ runId });
    assert.ok('coordinator' in taken, 'the lease is free');
    return taken.coordinator.run();
  }

  it('Open in Merge Editor: main is merged into the worktree and stops at the conflict; an unfinished merge reopens the gate, a finished one integrates', async () => {
    const { run, gate, worktree, mainHead } = await conflictAtB();
    const merged = await engine.mergeTargetIntoWorktree(gate.id);
    assert.equal(merged.state, 'conflicted');
    assert.equal(merged.move, 'merge');
    assert.equal(merged.worktree, worktree.path);
    assert.deepEqual(merged.files, ['shared.txt']);
    const marked = readFileSync(join(worktree.path, 'shared.txt'), 'utf8');
    assert.match(
      marked,
      /^<<<<<<< HEAD\n2 by B\n=======\nTWO by A\n>>>>>>> refs\/heads\/main\n/m,
      'the file carries the markers',
    );
    assert.deepEqual(
      git(worktree.path, 'ls-files', '-u')
        .split('\n')
        .map((line) => line.split(/\s+/).slice(2).join(' ')),
      ['1 shared.txt', '2 shared.txt', '3 shared.txt'],
      'the index holds the three versions a merge editor shows',
    );
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), mainHead, 'the target did not move');
    assert.equal(git(fixture.workspace, 'status', '--porcelain'), '', 'the main working tree is untouched');

    const again = await engine.mergeTargetIntoWorktree(gate.id);
    assert.deepEqual([again.state, again.files], ['unfinished', ['shared.txt']], 'asked again, it changes nothing');

    // Approved before the files are resolved: nothing is committed with its markers, the gate reopens saying why.
    await engine.decideGate({ gateId: gate.id, decision: 'approved' });
    assert.equal((await drive(run.id)).kind, 'paused');
    const reopened = (await engine.listGates({ runId: run.id, status: 'open' })).find(
      (g) => g.kind === 'integration_conflict',
    );
    assert.ok(reopened && reopened.id !== gate.id, 'a new conflict gate');
    assert.match(reopened.reason, /the merge of main in the worktree is not finished: shared\.txt still has conflicts/);
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), mainHead, 'still nothing integrated');
    assert.ok(
      existsSync(join(git(worktree.path, 'rev-parse', '--absolute-git-dir'), 'MERGE_HEAD')),
      'the merge is kept',
    );
    assert.match(readFileSync(join(worktree.path, 'shared.txt'), 'utf8'), /<<<<<<< HEAD/);

    // The person resolves the file and commits the merge; approving integrates.
    writeFileSync(join(worktree.path, 'shared.txt'), RESOLVED);
    git(worktree.path, 'add', 'shared.txt');
    git(worktree.path, 'commit', '--quiet', '--no-edit');
    await engine.decideGate({ gateId: reopened.id, decision: 'approved', note: 'resolved in the merge editor' });
    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    assert.equal(readFileSync(join(fixture.workspace, 'shared.txt'), 'utf8'), RESOLVED);
    assert.equal(readFileSync(join(fixture.workspace, 'b-notes.txt'), 'utf8'), 'B was here\n');
    const events = (await engine.listEvents(run.id)).filter((e) => e.type === 'integration:resolving');
    assert.deepEqual(
      events.map((e) => e.data),
      [
        {
          gateId: gate.id,
          delegationId: worktree.delegationId,
          taskId: 'B',
          move: 'merge',
          targetBranch: 'main',
          files: ['shared.txt'],
        },
      ],
    );
  });

  it('Open in Merge Editor with the rebase strategy: the branch is rebased onto main and stops at the conflict', async () => {
    const { run, gate, worktree } = await conflictAtB('rebase');
    const merged = await engine.mergeTargetIntoWorktree(gate.id);
    assert.deepEqual([merged.state, merged.move, merged.files], ['conflicted', 'rebase', ['shared.txt']]);
    await engine.decideGate({ gateId: gate.id, decision: 'approved' });
    assert.equal((await drive(run.id)).kind, 'paused');
    const reopened = (await engine.listGates({ runId: run.id, status: 'open' }))[0]!;
    assert.match(reopened.reason, /the rebase of main in the worktree is not finished/);
    writeFileSync(join(worktree.path, 'shared.txt'), RESOLVED);
    git(worktree.path, 'add', 'shared.txt');
    git(worktree.path, '-c', 'core.editor=true', 'rebase', '--continue');
    await engine.decideGate({ gateId: reopened.id, decision: 'approved' });
    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    assert.equal(readFileSync(join(fixture.workspace, 'shared.txt'), 'utf8'), RESOLVED);
  });

  it('Send to Agent: the gate closes, the attempt ends as a follow-up (not a failure), and the next attempt gets the files and the target first, merges its earlier branch and integrates', async () => {
    const { run, gate, worktree } = await conflictAtB();
    const sent = await engine.sendConflictToAgent({ gateId: gate.id, by: 'reviewer' });
    assert.match(sent.message, /does not integrate cleanly into `main`/);
    assert.match(sent.message, /`shared\.txt`/);
    assert.ok(sent.message.includes(`git merge ${worktree.branch}`), 'it names the earlier branch to merge');
    assert.equal(sent.endedDelegationId, 'D-B-coder-001');
    const decided = (await engine.listGates({ runId: run.id })).find((g) => g.id === gate.id)!;
    assert.equal(decided.status, 'rejected');
    assert.match(decided.note ?? '', new RegExp(`sent to the agent as ${sent.followUp.id}`));
    let view = await engine.overview(run.id);
    assert.equal(view.delegations.find((d) => d.id === 'D-B-coder-001')!.status, 'CANCELLED');
    assert.equal(view.tasks.find((t) => t.id === 'B')!.status, 'ready');
    assert.ok(existsSync(worktree.path), 'the earlier worktree is kept');

    // The follow-up attempt, as an agent would: its resolution committed on top of main, then the earlier branch
    // merged (keeping the resolution) — which needs that branch to be there.
    const edits = { B: { 'shared.txt': RESOLVED, 'b-notes.txt': 'B was here\n' } };
    const gitSteps = {
      B: [
        ['add', '--all'],
        ['commit', '--quiet', '-m', 'B resolved on main'],
        ['merge', '--quiet', '--no-edit', '-s', 'ours', worktree.branch],
      ],
    };
    const outcome = await withWorkerEnv(
      { FAKE_EDITS: JSON.stringify(edits), FAKE_GIT: JSON.stringify(gitSteps), FAKE_DELAY_MS: '0' },
      () => drive(run.id),
    );
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
    view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}${d.followUp ? ' (follow-up)' : ''}`),
      ['D-A-coder-001:COMPLETED', 'D-B-coder-001:CANCELLED', 'D-B-coder-002:COMPLETED (follow-up)'],
    );
    const prompt = readFileSync(runPaths(fixture.workspace, run.id).prompt('D-B-coder-002'), 'utf8');
    assert.match(prompt, /## Message from reviewer/);
    assert.ok(prompt.includes(sent.message.split('\n')[0]!), 'the prompt opens with the message');
    assert.equal(readFileSync(join(fixture.workspace, 'shared.txt'), 'utf8'), RESOLVED);
    assert.equal(
      git(
        fixture.workspace,
        'merge-base',
        '--is-ancestor',
        git(fixture.workspace, 'rev-parse', worktree.branch),
        'main',
      ),
      '',
      "the earlier attempt's commit is in main through the follow-up's merge",
    );
  });

  it('Drop From Integration at the conflict gate: the conflicting file is dropped, approving integrates the rest; refused while a resolution is unfinished', async () => {
    const { run, gate, worktree, mainHead } = await conflictAtB();
    // A merge started in the worktree (Resolve Conflict → Open in Merge Editor) and not finished: nothing is dropped.
    await engine.mergeTargetIntoWorktree(gate.id);
    await assert.rejects(
      engine.dropFromIntegration({ gateId: gate.id, files: ['shared.txt'], by: 'ann' }),
      /Nothing dropped: a merge is unfinished in .*; finish it \(then approve G-\d+\) or abort it first\./,
    );
    git(worktree.path, 'merge', '--abort');

    const dropped = await engine.dropFromIntegration({ gateId: gate.id, files: ['shared.txt'], by: 'ann' });
    assert.deepEqual([dropped.dropped, dropped.kept], [['shared.txt'], ['b-notes.txt']]);
    assert.match(
      git(worktree.path, 'log', '-1', '--format=%B'),
      /^Baton: B \(D-B-coder-001\) without 1 file dropped at G-\d+ \(its conflict\)\n\nDropped by ann at G-\d+/,
    );
    const open = (await engine.listGates({ runId: run.id, status: 'open' })).find((g) => g.id === gate.id)!;
    assert.deepEqual(open.details.files, ['shared.txt'], "a conflict gate's files stay the files in conflict");
    assert.deepEqual(open.details.dropped, ['shared.txt']);

    await engine.decideGate({ gateId: gate.id, decision: 'approved', note: 'without shared.txt' });
    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    assert.equal(git(fixture.workspace, 'rev-parse', 'main~1'), mainHead, 'B integrated on top of A');
    assert.equal(
      readFileSync(join(fixture.workspace, 'shared.txt'), 'utf8'),
      'one\nTWO by A\nthree\n',
      "A's line stays",
    );
    assert.equal(readFileSync(join(fixture.workspace, 'b-notes.txt'), 'utf8'), 'B was here\n', "B's other file came");
  });

  it('refuses a gate that is not an integration conflict, and a worktree that was removed', async () => {
    const { gate, worktree } = await conflictAtB();
    git(fixture.workspace, 'worktree', 'remove', '--force', worktree.path);
    await assert.rejects(engine.mergeTargetIntoWorktree(gate.id), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'worktree.gone');
      assert.match(err.message, /was removed/);
      return true;
    });
    await assert.rejects(engine.mergeTargetIntoWorktree('G-999'), /There is no gate G-999/);
  });
});
