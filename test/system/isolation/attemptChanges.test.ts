// What an attempt changed (docs/workers.md, "What an attempt changed"), with real git and real
// worker processes: a shared-tree attempt is compared between the working tree its worker found
// and the one it left (recorded without touching the index, HEAD or any ref); an isolated one
// between its base and its branch, its files while nothing is committed, or the commit
// integration made; outside git it says so.
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { AttemptChanges, Engine } from '../../../src/engine/index';
import { snapshotWorkingTree } from '../../../src/engine/effects/git/treeSnapshot';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';
import { plan, withWorkerEnv, type PlanTask } from '../../fixtures/executor/harness';

const EDIT_WORKER = resolve(__dirname, '../../fixtures/workers/editWorker.js');

function editConfig(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    defaultWorker: 'edit',
    workers: {
      edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true },
    },
    retryBackoffSeconds: 0,
    maxAttempts: 1,
    ...extra,
  });
}

async function drive(engine: Engine, runId: string): Promise<unknown> {
  const taken = await engine.coordinate({ runId });
  assert.ok('coordinator' in taken, 'the lease is free');
  return taken.coordinator.run();
}

function available(changes: AttemptChanges): Extract<AttemptChanges, { available: true }> {
  assert.ok(changes.available, `changes can be shown: ${changes.available ? '' : changes.reason}`);
  return changes;
}

describe('what an attempt changed', function () {
  this.timeout(60_000);
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  function repo(tasks: PlanTask[], config: string): string {
    fixture.write('.baton/config.json', config);
    fixture.write('plan.md', plan(tasks));
    return initRepo(fixture.workspace, { 'a.txt': 'one\n', 'b.txt': 'untouched\n', 'gone.txt': 'bye\n' });
  }

  it('a shared-tree attempt: exactly the files its worker changed, before → after, nothing else of the tree', async () => {
    repo([{ id: 'T1' }], editConfig({ isolation: 'none' }));
    // Work the person had not committed before the run is not the worker's.
    writeFileSync(join(fixture.workspace, 'b.txt'), 'changed by the person before the run\n');
    writeFileSync(join(fixture.workspace, 'notes.txt'), 'untracked, by the person\n');
    const refsBefore = git(fixture.workspace, 'for-each-ref');
    const indexBefore = git(fixture.workspace, 'ls-files', '--stage');
    const headBefore = git(fixture.workspace, 'rev-parse', 'HEAD');

    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv(
      { FAKE_EDITS: JSON.stringify({ T1: { 'a.txt': 'one\ntwo\n', 'src/new.txt': 'new\n' } }) },
      () => drive(engine, run.id),
    );
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });

    const changes = available(await engine.attemptChanges(run.id, 'D-T1-coder-001'));
    assert.equal(changes.where, 'shared');
    assert.ok('commit' in changes.after, 'the tree after the worker was recorded');
    assert.deepEqual(
      changes.files.map((f) => `${f.change} ${f.path}`),
      ['modified a.txt', 'added src/new.txt'],
      'the worker changed a.txt and added src/new.txt; b.txt and notes.txt were the person’s, before',
    );
    assert.equal(await engine.fileAtCommit(changes.repoRoot, changes.before, 'a.txt'), 'one\n');
    assert.equal(await engine.fileAtCommit(changes.repoRoot, changes.after.commit, 'a.txt'), 'one\ntwo\n');
    assert.equal(await engine.fileAtCommit(changes.repoRoot, changes.before, 'src/new.txt'), undefined);
    assert.equal(
      await engine.fileAtCommit(changes.repoRoot, changes.before, 'b.txt'),
      'changed by the person before the run\n',
      'the before side is the working tree as the worker found it, uncommitted work included',
    );

    // Recording touched no ref, not the index, not HEAD, and kept .baton/ out.
    assert.equal(git(fixture.workspace, 'for-each-ref'), refsBefore);
    assert.equal(git(fixture.workspace, 'ls-files', '--stage'), indexBefore);
    assert.equal(git(fixture.workspace, 'rev-parse', 'HEAD'), headBefore);
    assert.equal(git(fixture.workspace, 'stash', 'list'), '');
    assert.equal(
      git(fixture.workspace, 'ls-tree', '-r', '--name-only', changes.before, '.baton/store', '.baton/runs'),
      '',
    );
    assert.equal(git(fixture.workspace, 'rev-parse', `${changes.before}^`), headBefore, 'HEAD is its parent');
  });

  it('a shared-tree attempt still running compares with the files as they are now', async () => {
    repo([{ id: 'T1' }], editConfig({ isolation: 'none' }));
    const release = join(fixture.workspace, '.baton', 'release-T1');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    let seen: AttemptChanges | undefined;
    await withWorkerEnv({ FAKE_HOLD_T1: release }, async () => {
      const taken = await engine.coordinate({ runId: run.id });
      assert.ok('coordinator' in taken);
      const running = taken.coordinator.run();
      // The worker is held until the release file exists: meanwhile, what it changed so far.
      for (let i = 0; i < 200; i++) {
        const d = (await engine.overview(run.id)).delegations[0];
        const snapshots = d?.status === 'RUNNING' ? await engine.attemptChanges(run.id, d.id) : undefined;
        if (snapshots?.available) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      writeFileSync(join(fixture.workspace, 'gone.txt'), 'rewritten while it runs\n');
      rmSync(join(fixture.workspace, 'b.txt'));
      seen = await engine.attemptChanges(run.id, 'D-T1-coder-001');
      writeFileSync(release, '');
      await running;
    });
    const changes = available(seen!);
    assert.deepEqual(changes.after, { folder: changes.repoRoot }, 'the after side is the live working tree');
    assert.deepEqual(
      changes.files.map((f) => `${f.change} ${f.path}`),
      ['deleted b.txt', 'modified gone.txt'],
    );
    assert.match(changes.note ?? '', /still running/);
  });

  it('an isolated attempt: its uncommitted files while verification holds it, then the integrated commit', async () => {
    repo([{ id: 'T1', verify: [[process.execPath, '-e', 'process.exit(1)']] }], editConfig({ isolation: 'worktree' }));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ FAKE_EDITS: JSON.stringify({ T1: { 'a.txt': 'from T1\n', 'c.txt': 'new\n' } }) }, () =>
      drive(engine, run.id),
    );
    // Verification failed: the attempt waits at a gate, its work uncommitted in its worktree.
    const waiting = available(await engine.attemptChanges(run.id, 'D-T1-coder-001'));
    assert.equal(waiting.where, 'worktree');
    assert.ok('folder' in waiting.after, 'the after side is the worktree’s files');
    assert.equal(waiting.after.folder, join(fixture.workspace, '.baton/worktrees', run.id, 'T1-001'));
    assert.deepEqual(
      waiting.files.map((f) => `${f.change} ${f.path}`),
      ['modified a.txt', 'added c.txt'],
    );
    assert.equal(await engine.fileAtCommit(waiting.repoRoot, waiting.before, 'a.txt'), 'one\n');

    // Accept the result as it is: Baton commits and integrates it.
    const gate = (await engine.listGates({ runId: run.id, status: 'open' }))[0]!;
    await engine.decideGate({ gateId: gate.id, decision: 'approved', accept: true });
    await drive(engine, run.id).catch(() => undefined);
    const integrated = available(await engine.attemptChanges(run.id, 'D-T1-coder-001'));
    assert.equal(integrated.where, 'integrated');
    assert.match(integrated.summary, /^integrated into main by merge: [0-9a-f]{8} → [0-9a-f]{8}$/);
    assert.ok('commit' in integrated.after);
    assert.equal(integrated.after.commit, git(fixture.workspace, 'rev-parse', 'main'));
    assert.deepEqual(
      integrated.files.map((f) => `${f.change} ${f.path}`),
      ['modified a.txt', 'added c.txt'],
    );
  });

  it('outside git it says that the changes cannot be shown, and why', async () => {
    fixture.write('.baton/config.json', editConfig({ isolation: 'none' }));
    fixture.write('plan.md', plan([{ id: 'T1' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ FAKE_EDITS: JSON.stringify({ T1: { 'a.txt': 'x\n' } }) }, () => drive(engine, run.id));
    const changes = await engine.attemptChanges(run.id, 'D-T1-coder-001');
    assert.equal(changes.available, false);
    assert.match(
      changes.available ? '' : changes.reason,
      /^D-T1-coder-001 worked in the shared working tree, and .+ is not in a git repository: Baton records what an attempt changed with git, so it cannot show this one's changes\.$/,
    );
  });

  it('snapshots a tree whose .baton/ git ignores (as worktree isolation makes it), leaving out even its tracked files', async () => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'baton-snap-')));
    try {
      git(folder, 'init', '--quiet');
      mkdirSync(join(folder, '.baton', 'store'), { recursive: true });
      writeFileSync(join(folder, '.baton', 'config.json'), '{}\n');
      writeFileSync(join(folder, 'first.txt'), 'first\n');
      git(folder, 'add', '--all');
      git(folder, '-c', 'user.name=T', '-c', 'user.email=t@example.invalid', 'commit', '--quiet', '-m', 'start');
      appendFileSync(join(folder, '.git', 'info', 'exclude'), '/.baton/\n');
      writeFileSync(join(folder, '.baton', 'store', 'journal.log'), 'x\n');
      writeFileSync(join(folder, 'second.txt'), 'second\n');
      const commit = await snapshotWorkingTree(folder, folder, 'test');
      assert.equal(git(folder, 'ls-tree', '-r', '--name-only', commit), 'first.txt\nsecond.txt');
      assert.equal(git(folder, 'status', '--porcelain'), '?? second.txt', 'nothing was staged');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('snapshots a repository with no commit yet, and never follows the workspace’s .baton/', async () => {
    const folder = realpathSync(mkdtempSync(join(tmpdir(), 'baton-snap-')));
    try {
      git(folder, 'init', '--quiet');
      writeFileSync(join(folder, 'first.txt'), 'first\n');
      const commit = await snapshotWorkingTree(folder, folder, 'test');
      assert.equal(git(folder, 'ls-tree', '-r', '--name-only', commit), 'first.txt');
      assert.equal(git(folder, 'rev-list', '--count', commit), '1', 'no parent without a HEAD');
      assert.equal(git(folder, 'status', '--porcelain'), '?? first.txt', 'nothing was staged');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
