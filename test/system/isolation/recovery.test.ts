import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { describeResult, ensureCliBuilt, runCli } from '../../support/cli';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';
import { plan, withWorkerEnv } from '../../fixtures/executor/harness';

const EDIT_WORKER = resolve(__dirname, '../../fixtures/workers/editWorker.js');

const CONFIG = JSON.stringify({
  defaultWorker: 'edit',
  workers: {
    edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true },
  },
  retryBackoffSeconds: 0,
  maxConcurrency: 2,
  isolation: 'worktree',
});

const EDITS = JSON.stringify({ A: { 'a.txt': 'from A\n' }, B: { 'b.txt': 'from B\n' } });

/** Untracked and changed paths as `git status` lists them (what Source Control shows). */
function untracked(workspace: string): string[] {
  return git(workspace, 'status', '--porcelain=v1', '--untracked-files=all')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
}

/**
 * Isolation a person can recover from (docs/isolation.md): in a new repository with a plan
 * just written, the plan and `.baton/` are not "uncommitted work"; of `.baton/` only the config
 * (meant to be committed) shows as untracked, from the store's first write on; and an
 * isolation gate opened by a really dirty tree is checked again after the person commits,
 * and closes by itself.
 */
describe('isolation you can recover from', function () {
  this.timeout(90_000);
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  async function drive(runId: string) {
    const taken = await engine.coordinate({ runId });
    assert.ok('coordinator' in taken, 'the lease is free');
    return withWorkerEnv({ FAKE_EDITS: EDITS }, () => taken.coordinator.run());
  }

  it('a fresh repository with the plan and config not committed yet: no isolation gate, the tasks run in worktrees, only .baton/config.json of .baton/ untracked', async () => {
    initRepo(fixture.workspace, { 'README.md': '# notes\n' });
    // What a new user has: a plan and a config written, nothing of them committed.
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    fixture.write('.baton/config.json', CONFIG);
    assert.deepEqual(untracked(fixture.workspace).sort(), ['.baton/config.json', 'plan.md']);

    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    // The store has been written (journal, snapshot): none of Baton's state shows, before any task ran — only what the
    // person wrote: the plan, and the config, which is meant to be committed (issue 24, item 11).
    assert.deepEqual(
      untracked(fixture.workspace).sort(),
      ['.baton/config.json', 'plan.md'],
      'after the store opened, before the first dispatch',
    );

    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    assert.deepEqual(
      (await engine.listGates({ runId: run.id })).map((g) => g.kind),
      [],
      'no isolation gate for the plan',
    );
    const worktrees = await engine.listWorktrees(run.id);
    assert.deepEqual(
      worktrees.map((w) => [w.taskId, w.status]).sort(),
      [
        ['A', 'integrated'],
        ['B', 'integrated'],
      ],
      'both ran in worktrees of their own',
    );
    assert.match(git(fixture.workspace, 'log', '--format=%s', 'main'), /Baton: integrate A/);
    assert.deepEqual(
      untracked(fixture.workspace).sort(),
      ['.baton/config.json', 'plan.md'],
      'after the run: logs, artifacts and worktrees do not show either',
    );
  });

  it('a dirty tree opens the gate; the person commits; Check again closes it with the reason and the task runs in a worktree', async () => {
    initRepo(fixture.workspace, { 'README.md': '# notes\n', '.baton/config.json': CONFIG });
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    writeFileSync(join(fixture.workspace, 'README.md'), '# notes, edited and not committed\n');

    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const first = await drive(run.id);
    assert.equal(first.kind, 'paused');
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.equal(gate?.kind, 'isolation');
    assert.match(gate.reason, /uncommitted changes \(README\.md\)/, 'the README, not the plan');
    assert.doesNotMatch(gate.reason, /plan\.md/);
    assert.match(gate.reason, /check again/i, 'the gate says it can be checked again');

    // Checked again before anything changed: still open, and it says why.
    const early = await engine.recheckIsolation({ gateId: gate.id });
    assert.equal(early[0]!.resolved, false);
    assert.match(early[0]!.reason, /README\.md/);
    assert.equal((await engine.listGates({ runId: run.id, status: 'open' })).length, 1);

    // Another file changed meanwhile: the gate's reason follows.
    writeFileSync(join(fixture.workspace, 'notes.txt'), 'scratch\n');
    await engine.recheckIsolation({ gateId: gate.id });
    const restated = (await engine.listGates({ runId: run.id, status: 'open' }))[0]!;
    assert.match(restated.reason, /README\.md, notes\.txt/);

    // The person commits; "Check again" (the CLI, as another process) closes the gate by itself.
    git(fixture.workspace, 'add', 'README.md', 'notes.txt');
    git(fixture.workspace, 'commit', '--quiet', '-m', 'my edits');
    ensureCliBuilt();
    const recheck = await runCli(['recheck', gate.id], { cwd: fixture.workspace, env: { NO_COLOR: '1' } });
    assert.equal(recheck.code, 0, describeResult(recheck));
    assert.match(
      recheck.stdout,
      new RegExp(`✓ ${gate.id} closed: checked again: the working tree on main is clean now`),
    );
    await engine.refresh();
    const closed = (await engine.listGates({ runId: run.id })).find((g) => g.id === gate.id)!;
    assert.equal(closed.status, 'approved');
    assert.equal(closed.decidedBy, 'baton');
    assert.match(closed.note ?? '', /clean now, so A runs in a git worktree of its own/);

    assert.deepEqual(await drive(run.id), { kind: 'finished', status: 'completed' });
    const worktrees = await engine.listWorktrees(run.id);
    assert.deepEqual(worktrees.map((w) => w.status).sort(), ['integrated', 'integrated'], 'in worktrees, not shared');
    assert.equal(readFileSync(join(fixture.workspace, 'a.txt'), 'utf8'), 'from A\n', 'integrated into main');
    assert.equal(git(fixture.workspace, 'status', '--porcelain'), '?? plan.md', 'only the plan is left uncommitted');
  });

  it('Check again on a gate that is not an isolation gate is refused with a clear line (exit 2), and on a clean tree with nothing open says so', async () => {
    initRepo(fixture.workspace, { 'README.md': '# notes\n', '.baton/config.json': CONFIG });
    fixture.write('plan.md', plan([{ id: 'A', risk: ['database'] }]));
    engine = await fixture.open();
    const { run } = await engine.runForPlan('plan.md');
    const [risk] = await engine.listGates({ runId: run.id, status: 'open' });
    ensureCliBuilt();
    const refused = await runCli(['recheck', risk!.id], { cwd: fixture.workspace, env: { NO_COLOR: '1' } });
    assert.equal(refused.code, 2, describeResult(refused));
    assert.equal(
      refused.stderr,
      `baton: Gate ${risk!.id} is a risk_approval gate; only an isolation gate can be checked again.\n`,
    );
    const none = await runCli(['recheck'], { cwd: fixture.workspace, env: { NO_COLOR: '1' } });
    assert.equal(none.code, 0, describeResult(none));
    assert.equal(none.stdout, 'No isolation gate is open.\n');
  });
});
