import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo, show } from '../../support/gitRepo';
import { plan, readTrace, withWorkerEnv, type PlanTask } from '../../fixtures/executor/harness';

const EDIT_WORKER = resolve(__dirname, '../../fixtures/workers/editWorker.js');

function editConfig(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    defaultWorker: 'edit',
    workers: { edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true } },
    retryBackoffSeconds: 0,
    maxConcurrency: 4,
    ...extra,
  });
}

function filesPlan(tasks: Array<PlanTask & { files?: string[]; isolation?: string }>): string {
  return plan(tasks).replace(/```baton-task\nid: (\S+)\n/g, (block, id: string) => {
    const task = tasks.find((t) => t.id === id)!;
    return `${block}${task.files ? `files: [${task.files.join(', ')}]\n` : ''}${task.isolation ? `isolation: ${task.isolation}\n` : ''}`;
  });
}

async function drive(engine: Engine, runId: string, maxConcurrency?: number) {
  const taken = await engine.coordinate({ runId, ...(maxConcurrency ? { maxConcurrency } : {}), ...(process.env.BATON_TEST_LOG ? { log: (l: string) => console.log(l) } : {}) });
  assert.ok('coordinator' in taken, 'the lease is free');
  return taken.coordinator.run();
}

describe('git isolation: a worktree per task, integrated after it passed', function () {
  this.timeout(60_000);
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  /** A repository with the plan and config committed, so that its tree is clean. */
  function repo(planText: string, config: string, files: Record<string, string> = { 'README.md': '# demo\n', 'shared.txt': 'one\ntwo\nthree\n' }): string {
    fixture.write('.baton/config.json', config);
    fixture.write('plan.md', planText);
    return initRepo(fixture.workspace, files);
  }

  for (const strategy of ['merge', 'rebase', 'cherry-pick'] as const) {
    it(`runs two tasks in parallel in their own worktrees and integrates both by ${strategy}`, async () => {
      const base = repo(filesPlan([{ id: 'A', files: ['a.txt'] }, { id: 'B', files: ['b.txt'] }]), editConfig({ integration: strategy }));
      const tracePath = join(fixture.workspace, '.baton', 'trace.txt');
      engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const outcome = await withWorkerEnv(
        { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '300', FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'from A\n' }, B: { 'b.txt': 'from B\n' } }) },
        () => drive(engine, run.id),
      );
      if (outcome.kind !== 'finished' || outcome.status !== 'completed') console.log(JSON.stringify((await engine.overview(run.id)).delegations, null, 1), await engine.listEvents(run.id));
      assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });

      // Each worker ran in its own worktree, at the same time.
      const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
      const cwds = readFileSync(tracePath, 'utf8').split('\n').filter((l) => l.startsWith('start ')).map((l) => l.split(' ')[4]);
      assert.deepEqual(cwds.sort(), [join(fixture.workspace, '.baton/worktrees', run.id, 'A-001'), join(fixture.workspace, '.baton/worktrees', run.id, 'B-001')]);
      const ends = readTrace(tracePath).filter((l) => l.kind === 'end');
      assert.ok(Math.max(...starts.map((s) => s.at)) < Math.min(...ends.map((e) => e.at)), 'both ran at once');

      // Both are on main, in the main working tree, which is clean.
      assert.equal(readFileSync(join(fixture.workspace, 'a.txt'), 'utf8'), 'from A\n');
      assert.equal(readFileSync(join(fixture.workspace, 'b.txt'), 'utf8'), 'from B\n');
      assert.equal(git(fixture.workspace, 'status', '--porcelain'), '');
      assert.equal(git(fixture.workspace, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
      const merges = git(fixture.workspace, 'rev-list', '--merges', '--count', `${base}..main`);
      assert.equal(merges, strategy === 'merge' ? '2' : '0', 'merge: one merge commit per task; rebase and cherry-pick: linear');

      // Recorded: source head, changed files, target before and after; worktrees and branches removed.
      const rows = await engine.listWorktrees(run.id);
      assert.deepEqual(rows.map((w) => [w.taskId, w.status, w.changedFiles]), [['A', 'integrated', ['a.txt']], ['B', 'integrated', ['b.txt']]].sort());
      for (const row of rows) {
        assert.ok(row.sourceHead && row.targetBefore && row.targetAfter);
        assert.equal(git(fixture.workspace, 'merge-base', '--is-ancestor', row.targetAfter!, 'main'), '');
        assert.equal(existsSync(row.path), false, 'integrated worktree removed');
        assert.equal(row.removedAt !== undefined, true, JSON.stringify(row));
      }
      assert.equal(git(fixture.workspace, 'branch', '--list', 'baton/*'), '', 'attempt branches deleted');
      assert.equal(git(fixture.workspace, 'worktree', 'list', '--porcelain').split('\n').filter((l) => l.startsWith('worktree ')).length, 1);
      const view = await engine.overview(run.id);
      assert.deepEqual(view.delegations.map((d) => `${d.id}:${d.status}`), ['D-A-coder-001:COMPLETED', 'D-B-coder-001:COMPLETED']);
    });
  }
});
