import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';
import {
  ChildCoordinator,
  coordinateWhenFree,
  plan,
  readTrace,
  withWorkerEnv,
  type PlanTask,
} from '../../fixtures/executor/harness';

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

function filesPlan(tasks: Array<PlanTask & { files?: string[]; isolation?: string }>): string {
  return plan(tasks).replace(/```baton-task\nid: (\S+)\n/g, (block, id: string) => {
    const task = tasks.find((t) => t.id === id)!;
    return `${block}${task.files ? `files: [${task.files.join(', ')}]\n` : ''}${task.isolation ? `isolation: ${task.isolation}\n` : ''}`;
  });
}

async function drive(engine: Engine, runId: string, maxConcurrency?: number) {
  const taken = await engine.coordinate({
    runId,
    ...(maxConcurrency ? { maxConcurrency } : {}),
    ...(process.env.BATON_TEST_LOG ? { log: (l: string) => console.log(l) } : {}),
  });
  assert.ok('coordinator' in taken, 'the lease is free');
  return taken.coordinator.run();
}

describe('git isolation: a worktree per task, integrated after it passed', function () {
  // A hang detector: a test takes 5–40 s here, several times that at load 10 with three git worktrees per test.
  this.timeout(180_000);
  let fixture: EngineFixture;
  let engine: Engine;

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    await fixture.dispose();
  });

  /** A repository with the plan and config committed, so that its tree is clean. */
  function repo(
    planText: string,
    config: string,
    files: Record<string, string> = { 'README.md': '# demo\n', 'shared.txt': 'one\ntwo\nthree\n' },
  ): string {
    fixture.write('.baton/config.json', config);
    fixture.write('plan.md', planText);
    return initRepo(fixture.workspace, files);
  }

  for (const strategy of ['merge', 'rebase', 'cherry-pick'] as const) {
    it(`runs two tasks in parallel in their own worktrees and integrates both by ${strategy}`, async () => {
      const base = repo(
        filesPlan([
          { id: 'A', files: ['a.txt'] },
          { id: 'B', files: ['b.txt'] },
        ]),
        editConfig({ integration: strategy }),
      );
      const tracePath = join(fixture.workspace, '.baton', 'trace.txt');
      engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const outcome = await withWorkerEnv(
        {
          FAKE_TRACE: tracePath,
          FAKE_TOGETHER: '2',
          FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'from A\n' }, B: { 'b.txt': 'from B\n' } }),
        },
        () => drive(engine, run.id),
      );
      assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });

      // Each worker ran in its own worktree, at the same time.
      const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
      const cwds = readFileSync(tracePath, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('start '))
        .map((l) => l.split(' ')[4]);
      assert.deepEqual(cwds.sort(), [
        join(fixture.workspace, '.baton/worktrees', run.id, 'A-001'),
        join(fixture.workspace, '.baton/worktrees', run.id, 'B-001'),
      ]);
      const ends = readTrace(tracePath).filter((l) => l.kind === 'end');
      assert.ok(Math.max(...starts.map((s) => s.at)) < Math.min(...ends.map((e) => e.at)), 'both ran at once');

      // Both are on main, in the main working tree, which is clean.
      assert.equal(readFileSync(join(fixture.workspace, 'a.txt'), 'utf8'), 'from A\n');
      assert.equal(readFileSync(join(fixture.workspace, 'b.txt'), 'utf8'), 'from B\n');
      assert.equal(git(fixture.workspace, 'status', '--porcelain'), '');
      assert.equal(git(fixture.workspace, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
      const merges = git(fixture.workspace, 'rev-list', '--merges', '--count', `${base}..main`);
      assert.equal(
        merges,
        strategy === 'merge' ? '2' : '0',
        'merge: one merge commit per task; rebase and cherry-pick: linear',
      );

      // Recorded: source head, changed files, target before and after; worktrees and branches removed.
      const rows = await engine.listWorktrees(run.id);
      assert.deepEqual(
        rows.map((w) => [w.taskId, w.status, w.changedFiles]),
        [
          ['A', 'integrated', ['a.txt']],
          ['B', 'integrated', ['b.txt']],
        ].sort(),
      );
      for (const row of rows) {
        assert.ok(row.sourceHead && row.targetBefore && row.targetAfter);
        assert.equal(git(fixture.workspace, 'merge-base', '--is-ancestor', row.targetAfter!, 'main'), '');
        assert.equal(existsSync(row.path), false, 'integrated worktree removed');
        assert.equal(row.removedAt !== undefined, true, JSON.stringify(row));
      }
      assert.equal(git(fixture.workspace, 'branch', '--list', 'baton/*'), '', 'attempt branches deleted');
      assert.equal(
        git(fixture.workspace, 'worktree', 'list', '--porcelain')
          .split('\n')
          .filter((l) => l.startsWith('worktree ')).length,
        1,
      );
      const view = await engine.overview(run.id);
      assert.deepEqual(
        view.delegations.map((d) => `${d.id}:${d.status}`),
        ['D-A-coder-001:COMPLETED', 'D-B-coder-001:COMPLETED'],
      );
    });
  }

  it('opens an integration_conflict gate naming the file when two tasks change the same lines; target and main tree untouched, worktree kept; approve after a fix integrates', async () => {
    const { run, outcome } = await conflictingRunOrdered();
    assert.equal(outcome.kind, 'paused');
    const headAfterA = git(fixture.workspace, 'rev-parse', 'main');
    assert.equal(readFileSync(join(fixture.workspace, 'shared.txt'), 'utf8'), 'one\nTWO by A\nthree\n');
    assert.equal(
      git(fixture.workspace, 'status', '--porcelain'),
      '',
      'main working tree untouched: no conflict markers, no half merge',
    );
    assert.equal(existsSync(join(fixture.workspace, '.git', 'MERGE_HEAD')), false);

    const [gate] = (await engine.listGates({ runId: run.id, status: 'open' })).filter(
      (g) => g.kind === 'integration_conflict',
    );
    assert.ok(gate, 'an integration_conflict gate is open');
    assert.equal(gate.taskId, 'B');
    assert.deepEqual(gate.details.files, ['shared.txt']);
    assert.match(gate.reason, /conflicts in shared\.txt/);
    const [wtB] = (await engine.listWorktrees(run.id)).filter((w) => w.taskId === 'B');
    assert.equal(wtB!.status, 'conflict');
    assert.ok(existsSync(wtB!.path), 'the worktree is preserved');
    assert.equal(readFileSync(join(wtB!.path, 'shared.txt'), 'utf8'), 'one\n2 by B\nthree\n', 'with the work in it');

    // A person resolves it in the worktree: merges main and settles the line.
    const merge = spawnSyncGit(wtB!.path, ['merge', '--no-edit', 'main']);
    assert.notEqual(merge, 0, 'the manual merge conflicts too');
    writeFileSync(join(wtB!.path, 'shared.txt'), 'one\nTWO by A, 2 by B\nthree\n');
    git(wtB!.path, 'add', 'shared.txt');
    git(wtB!.path, 'commit', '--quiet', '--no-edit');
    await engine.decideGate({ gateId: gate.id, decision: 'approved', note: 'resolved in the worktree' });
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });

    assert.equal(readFileSync(join(fixture.workspace, 'shared.txt'), 'utf8'), 'one\nTWO by A, 2 by B\nthree\n');
    assert.equal(readFileSync(join(fixture.workspace, 'b-notes.txt'), 'utf8'), 'B was here\n');
    assert.equal(git(fixture.workspace, 'merge-base', '--is-ancestor', headAfterA, 'main'), '');
    const after = (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'B')!;
    assert.equal(after.status, 'integrated');
    assert.equal(after.targetBefore, headAfterA);
    assert.equal(existsSync(after.path), false, 'removed once integrated');
  });

  it('discards the attempt when the conflict gate is rejected: the task fails, its worktree and branch go, the target keeps only the other task', async () => {
    const { run, outcome } = await conflictingRunOrdered();
    assert.equal(outcome.kind, 'paused');
    const head = git(fixture.workspace, 'rev-parse', 'main');
    const gate = (await engine.listGates({ runId: run.id, status: 'open' })).find(
      (g) => g.kind === 'integration_conflict',
    )!;
    const wtB = (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'B')!;
    await engine.decideGate({ gateId: gate.id, decision: 'rejected', note: 'not needed' });
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'failed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-A-coder-001:COMPLETED', 'D-B-coder-001:FAILED'],
    );
    assert.equal(view.tasks.find((t) => t.id === 'B')!.status, 'failed');
    assert.equal(existsSync(wtB.path), false, 'discarded worktree removed');
    assert.equal(git(fixture.workspace, 'branch', '--list', wtB.branch), '');
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), head, 'the target is untouched');
  });

  /** B's worker waits until A's integration is recorded, so that A always wins. */
  async function conflictingRunOrdered() {
    repo(filesPlan([{ id: 'A' }, { id: 'B' }]), editConfig());
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const edits = {
      A: { 'shared.txt': 'one\nTWO by A\nthree\n' },
      B: { 'shared.txt': 'one\n2 by B\nthree\n', 'b-notes.txt': 'B was here\n' },
    };
    const outcome = await withWorkerEnv(
      { FAKE_EDITS: JSON.stringify(edits), FAKE_DELAY_MS: '0', FAKE_DELAY_MS_B: '1500' },
      async () => {
        const taken = await engine.coordinate({ runId: run.id });
        assert.ok('coordinator' in taken);
        return taken.coordinator.run();
      },
    );
    return { run, outcome };
  }

  it('integrates again as soon as a conflict gate is approved, while other tasks are still running', async () => {
    repo(filesPlan([{ id: 'A' }, { id: 'B' }, { id: 'C' }]), editConfig());
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const edits = {
      A: { 'shared.txt': 'one\nTWO by A\nthree\n' },
      B: { 'shared.txt': 'one\n2 by B\nthree\n' },
      C: { 'c.txt': 'C\n' },
    };
    // C finishes only once the test lets it (after B's integration), however slow the machine.
    const releaseC = join(fixture.workspace, '.baton', 'release-C');
    await withWorkerEnv(
      { FAKE_EDITS: JSON.stringify(edits), FAKE_DELAY_MS: '0', FAKE_DELAY_MS_B: '800', FAKE_HOLD_C: releaseC },
      async () => {
        const taken = await engine.coordinate({ runId: run.id });
        assert.ok('coordinator' in taken);
        const running = taken.coordinator.run();
        const gate = await waitForValue(async () =>
          (await engine.listGates({ runId: run.id, status: 'open' })).find((g) => g.kind === 'integration_conflict'),
        );
        const wtB = (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'B')!;
        writeFileSync(join(wtB.path, 'shared.txt'), 'one\nTWO by A\nthree\n'); // resolved by taking A's line; left uncommitted
        spawnSyncGit(wtB.path, ['merge', '--no-edit', '-s', 'ours', 'main']);
        await engine.decideGate({ gateId: gate.id, decision: 'approved' });
        await waitForValue(async () =>
          (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'B')!.status === 'integrated'
            ? true
            : undefined,
        );
        assert.equal(
          (await engine.overview(run.id)).tasks.find((t) => t.id === 'C')!.status,
          'running',
          'C was still running when B was integrated',
        );
        writeFileSync(releaseC, '');
        assert.deepEqual(await running, { kind: 'finished', status: 'completed' });
      },
    );
  });

  it('holds back a task whose files: overlap a running task, and dispatches it once that one is done', async () => {
    repo(
      filesPlan([
        { id: 'A', files: ['src/**'] },
        { id: 'B', files: ['src/b.ts'] },
        { id: 'C', files: ['docs/c.md'] },
      ]),
      editConfig({ isolation: 'none' }),
    );
    const tracePath = join(fixture.workspace, '.baton', 'trace.txt');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const reasons: string[] = [];
    const seen = engine.onEvent(() => undefined);
    await withWorkerEnv(
      {
        FAKE_TRACE: tracePath,
        FAKE_DELAY_MS: '500',
        // A and C run together however slow their starts are (each shared-tree start records the tree first).
        FAKE_TOGETHER: '2',
        FAKE_EDITS: JSON.stringify({ A: { 'src/a.ts': 'a' }, B: { 'src/b.ts': 'b' }, C: { 'docs/c.md': 'c' } }),
      },
      async () => {
        const taken = await engine.coordinate({ runId: run.id, maxConcurrency: 3 });
        assert.ok('coordinator' in taken);
        const running = taken.coordinator.run();
        await waitForTask(engine, run.id, 'A', 'running');
        // The pass that started A goes on to B right after (A's start and B's reason are two commits).
        reasons.push(
          await waitForValue(
            async () => (await engine.overview(run.id)).tasks.find((t) => t.id === 'B')!.statusReason || undefined,
          ),
        );
        assert.equal(
          (await engine.overview(run.id)).tasks.find((t) => t.id === 'A')!.status,
          'running',
          'B was held back while A was running',
        );
        assert.deepEqual(await running, { kind: 'finished', status: 'completed' });
      },
    );
    seen.dispose();
    assert.match(reasons[0]!, /waits for A: its files overlap \(src\/b\.ts \/ src\/\*\*\)/);
    const lines = readFileSync(tracePath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    const at = (kind: string, task: string) => Number(lines.find((l) => l[0] === kind && l[1] === task)![2]);
    assert.ok(at('start', 'B') >= at('end', 'A'), 'B started only after A ended');
    assert.ok(at('start', 'C') < at('end', 'A'), 'C (no overlap) ran alongside A');
  });

  it('opens an isolation gate on a dirty tree, saying which files; approving runs the tasks in the shared working tree', async () => {
    repo(filesPlan([{ id: 'A' }, { id: 'B' }]), editConfig());
    writeFileSync(join(fixture.workspace, 'README.md'), '# edited, not committed\n');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'A' }, B: { 'b.txt': 'B' } }) }, async () => {
      const taken = await engine.coordinate({ runId: run.id });
      assert.ok('coordinator' in taken);
      const outcome = await taken.coordinator.run();
      assert.equal(outcome.kind, 'paused');
      const gates = (await engine.listGates({ runId: run.id, status: 'open' })).filter((g) => g.kind === 'isolation');
      assert.equal(gates.length, 1, 'one gate for the run, not one per task');
      assert.match(gates[0]!.reason, /uncommitted changes \(README\.md\)/);
      assert.equal(existsSync(join(fixture.workspace, '.baton', 'worktrees')), false, 'no worktree was made');
      await engine.decideGate({ gateId: gates[0]!.id, decision: 'approved' });
      const again = await engine.coordinate({ runId: run.id });
      assert.ok('coordinator' in again);
      assert.deepEqual(await again.coordinator.run(), { kind: 'finished', status: 'completed' });
    });
    assert.equal(readFileSync(join(fixture.workspace, 'a.txt'), 'utf8'), 'A', 'worked in the shared tree');
    assert.equal(
      git(fixture.workspace, 'status', '--porcelain').includes('a.txt'),
      true,
      'and nothing was committed for it',
    );
    assert.deepEqual(await engine.listWorktrees(run.id), []);
  });

  it('outside a git repository: isolation worktree opens a gate that says so; auto runs in the shared tree without asking', async () => {
    fixture.write('.baton/config.json', editConfig({ isolation: 'worktree' }));
    fixture.write('plan.md', filesPlan([{ id: 'A' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    assert.equal((await taken.coordinator.run()).kind, 'paused');
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.equal(gate!.kind, 'isolation');
    assert.match(gate!.reason, /is not in a git repository/);
    await engine.close();

    const other = new EngineFixture({ realClock: true });
    try {
      other.write('.baton/config.json', editConfig());
      other.write('plan.md', filesPlan([{ id: 'A' }, { id: 'B' }]));
      const auto = await other.open({ follow: true });
      const { run: autoRun } = await auto.runForPlan('plan.md');
      await withWorkerEnv({ FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'A' } }) }, async () => {
        const t = await auto.coordinate({ runId: autoRun.id });
        assert.ok('coordinator' in t);
        assert.deepEqual(await t.coordinator.run(), { kind: 'finished', status: 'completed' });
      });
      assert.deepEqual(await auto.listGates({ runId: autoRun.id }), []);
      assert.equal(readFileSync(join(other.workspace, 'a.txt'), 'utf8'), 'A');
    } finally {
      await other.dispose();
    }
  });

  it('cleanup removes the worktrees of attempts that are over and stray folders, and keeps one waiting at a gate', async () => {
    const { run } = await conflictingRunOrdered();
    // A failed attempt's worktree (kept for inspection) and a stray folder.
    const stray = join(fixture.workspace, '.baton', 'worktrees', run.id, 'Z-009');
    fixture.write(`.baton/worktrees/${run.id}/Z-009/leftover.txt`, 'x'.repeat(1000));
    const wtB = (await engine.listWorktrees(run.id)).find((w) => w.taskId === 'B')!;
    const before = await engine.diagnose(run.id);
    assert.ok(before.worktreeBytes > 1000, 'diagnose shows the disk the worktrees use');
    assert.ok(before.worktreeFindings.some((f) => f.path === stray && /no attempt of this run knows/.test(f.finding)));
    const report = await engine.cleanupWorktrees(run.id);
    assert.deepEqual(
      report.removed.map((r) => r.path),
      [stray],
    );
    assert.deepEqual(
      report.kept.map((k) => [k.delegationId, k.finding.replace(/G-\d+/, 'G-n')]),
      [['D-B-coder-001', 'waits at G-n (integration_conflict); decide the gate first']],
    );
    assert.equal(existsSync(stray), false);
    assert.ok(existsSync(wtB.path), 'the worktree at an open gate stays');

    // Once the attempt is over (the gate rejected), cleanup removes it.
    const gate = (await engine.listGates({ runId: run.id, status: 'open' }))[0]!;
    await engine.decideGate({ gateId: gate.id, decision: 'rejected' });
    const second = await engine.cleanupWorktrees(run.id);
    assert.deepEqual(
      second.removed.map((r) => r.delegationId),
      ['D-B-coder-001'],
    );
    assert.equal(existsSync(wtB.path), false);
    assert.equal(
      git(fixture.workspace, 'worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      1,
    );
    assert.deepEqual((await engine.cleanupWorktrees(run.id)).removed, [], 'a second cleanup finds nothing');
  });

  it('reconcile reports an integration whose commit is no longer on the target branch, and does not redo it', async () => {
    const base = repo(filesPlan([{ id: 'A' }, { id: 'B' }]), editConfig());
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'A' }, B: { 'b.txt': 'B' } }) }, async () => {
      const taken = await engine.coordinate({ runId: run.id });
      assert.ok('coordinator' in taken);
      assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
    });
    git(fixture.workspace, 'reset', '--quiet', '--hard', base); // someone rewinds main
    const report = await engine.reconcile(run.id);
    const flagged = report.entries.filter((e) => /not on main/.test(e.classification));
    assert.deepEqual(flagged.map((e) => e.delegationId).sort(), ['D-A-coder-001', 'D-B-coder-001']);
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base, 'nothing was integrated again');
  });
});

describe('git isolation: a coordinator killed during an integration', function () {
  this.timeout(60_000);
  let fixture: EngineFixture;
  const children: ChildCoordinator[] = [];
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    await fixture.dispose();
  });

  for (const point of ['integration:after-commit', 'integration:after-advance'] as const) {
    it(`resumes after a SIGKILL at ${point} and integrates exactly once`, async () => {
      fixture.write('.baton/config.json', editConfig());
      fixture.write('plan.md', filesPlan([{ id: 'A' }, { id: 'B', depends: ['A'] }]));
      const base = initRepo(fixture.workspace, { 'README.md': '# demo\n' });
      const engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const env = { FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'A\n' }, B: { 'b.txt': 'B\n' } }) };
      const child = new ChildCoordinator(
        fixture.workspace,
        run.id,
        { leaseMs: 1000, maxConcurrency: 2 },
        { ...env, BATON_FAULT_POINT: point },
      );
      children.push(child);
      const exit = await child.exited;
      assert.equal(exit.signal, 'SIGKILL', `the coordinator died at ${point}: ${child.stderr}`);
      await engine.refresh();
      const mid = (await engine.listWorktrees(run.id))[0]!;
      assert.equal(mid.status, 'committed', 'the commit was recorded, the integration was not');
      if (point === 'integration:after-commit')
        assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base, 'nothing integrated yet');
      else assert.notEqual(git(fixture.workspace, 'rev-parse', 'main'), base, 'main moved before the crash');

      await withWorkerEnv(env, async () => {
        const taken = await coordinateWhenFree(engine, run.id, { maxConcurrency: 2 });
        assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
      });
      assert.equal(
        git(fixture.workspace, 'rev-list', '--merges', '--count', `${base}..main`),
        '2',
        'one merge commit per task, none twice',
      );
      assert.equal(
        git(fixture.workspace, 'log', '--format=%s', `${base}..main`)
          .split('\n')
          .filter((l) => l.includes('integrate A')).length,
        1,
      );
      const done = (await engine.listEvents(run.id)).filter(
        (e) => e.type === 'integration:done' && (e.data as { taskId: string }).taskId === 'A',
      );
      assert.equal(done.length, 1, 'recorded once');
      assert.equal(
        Boolean((done[0]!.data as { alreadyOnTarget?: boolean }).alreadyOnTarget),
        point === 'integration:after-advance',
      );
      assert.equal(readFileSync(join(fixture.workspace, 'a.txt'), 'utf8'), 'A\n');
      assert.equal(
        readFileSync(join(fixture.workspace, 'b.txt'), 'utf8'),
        'B\n',
        "B started from A's integrated work and integrated too",
      );
    });
  }
});

function spawnSyncGit(cwd: string, args: string[]): number {
  try {
    git(cwd, ...args);
    return 0;
  } catch (err) {
    return (err as { status: number }).status;
  }
}

async function waitForTask(engine: Engine, runId: string, taskId: string, status: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if ((await engine.overview(runId)).tasks.find((t) => t.id === taskId)?.status === status) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${taskId} never became ${status}`);
}

async function waitForValue<T>(probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
