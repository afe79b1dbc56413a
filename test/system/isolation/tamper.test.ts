// The target branch is checked before every move, and `files:` at integration (issue 15, item 8;
// docs/isolation.md, "The expected head" and "`files:` at integration"). Real git, real workers.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCliBuilt, runCli } from '../../support/cli';
import { git } from '../../support/gitRepo';
import {
  targetFailures,
  targetScenario,
  undeclaredFailures,
  undeclaredScenario,
  type TargetScenario,
  type UndeclaredScenario,
} from '../../reliability/tamperRows';

describe('git isolation: the target branch moved by someone else', function () {
  this.timeout(90_000);
  let scenario: TargetScenario | undefined;
  afterEach(async () => {
    await scenario?.dispose();
    scenario = undefined;
  });

  async function driveAgain(s: TargetScenario) {
    const taken = await s.engine.coordinate({ runId: s.runId });
    assert.ok('coordinator' in taken, 'the lease is free');
    return taken.coordinator.run();
  }

  it("a worker rewinds main through the shared refs: B is not integrated onto it; a target_moved gate names the heads and the missing commits (the user's among them) and how to get them back", async () => {
    scenario = await targetScenario('rewound-by-worker');
    const s = scenario;
    assert.deepEqual(targetFailures(s, 'rewound-by-worker'), []);
    assert.equal(s.outcome.kind, 'paused');
    const gate = s.gates[0]!;
    assert.equal(gate.details.direction, 'backwards');
    const missing = (gate.details.missing as Array<{ sha: string; subject: string }>).map((c) => c.subject);
    assert.ok(missing.includes('user: notes'), `the user's commit is named: ${missing.join(' | ')}`);
    assert.ok(
      missing.some((m) => /integrate A/.test(m)),
      "and A's integration",
    );
    assert.match(gate.reason, /main was rewound from [0-9a-f]{10} to [0-9a-f]{10}/);
    assert.match(gate.reason, /3 commits went missing/);
    assert.match(gate.reason, /Approve to accept main as it is now/);
    // Nothing of B's reached main; its work waits in its worktree, its attempt BLOCKED.
    const wtB = (await s.engine.listWorktrees(s.runId)).find((w) => w.taskId === 'B')!;
    assert.notEqual(wtB.status, 'integrated');
    assert.ok(existsSync(join(wtB.path, 'b.txt')), "B's work is kept");
    const view = await s.engine.overview(s.runId);
    assert.equal(view.delegations.find((d) => d.taskId === 'B')!.status, 'BLOCKED');
    assert.equal(view.tasks.find((t) => t.id === 'B')!.status, 'gated');

    // reconcile and status say so too.
    const report = await s.engine.reconcile(s.runId);
    assert.ok(
      report.entries.some(
        (e) => /main was rewound from/.test(e.classification) && /git branch rescue/.test(e.classification),
      ),
      JSON.stringify(report.entries),
    );
    const summary = await s.engine.isolationSummary(s.runId);
    assert.equal(summary.target?.kind, 'backwards');
    const diagnosis = await s.engine.diagnose(s.runId);
    assert.ok(diagnosis.worktreeFindings.some((f) => /main was rewound/.test(f.finding)));
    // What a person sees at the terminal.
    ensureCliBuilt();
    const status = await runCli(['status'], { cwd: s.workspace, env: { NO_COLOR: '1' } });
    assert.equal(status.code, 0, status.stderr);
    assert.match(
      status.stdout,
      /! main moved backwards \(expected [0-9a-f]{10}, found [0-9a-f]{10}; 3 commits missing from it\): nothing is integrated until a person decides/,
    );
    const json = (await runCli(['--json', 'status'], { cwd: s.workspace })).json<{
      isolation: { target: { kind: string; expected: string; found: string; missingCount: number } };
    }>();
    assert.deepEqual(
      [json.isolation.target.kind, json.isolation.target.expected, json.isolation.target.found],
      ['backwards', s.afterA, s.moved],
    );
    const diagnose = await runCli(['diagnose'], { cwd: s.workspace, env: { NO_COLOR: '1' } });
    assert.match(diagnose.stdout, new RegExp(`main was rewound from .*git branch rescue ${s.afterA}`));

    // The way back the gate names: put main back, approve; B integrates onto everything.
    git(s.workspace, 'update-ref', 'refs/heads/main', s.afterA);
    git(s.workspace, 'reset', '--quiet', '--hard', 'main');
    await s.engine.decideGate({ gateId: gate.id, decision: 'approved', note: 'put main back' });
    assert.deepEqual(await driveAgain(s), { kind: 'finished', status: 'completed' });
    for (const file of ['notes.txt', 'a.txt', 'b.txt'])
      assert.ok(git(s.workspace, 'ls-tree', '--name-only', 'main').split('\n').includes(file), `${file} on main`);
    assert.equal(git(s.workspace, 'merge-base', '--is-ancestor', s.afterA, 'main'), '');
    assert.equal((await s.engine.isolationSummary(s.runId)).target?.kind, 'as-expected');
  });

  it('approving accepts the branch as it is now: B integrates onto the rewound main, and the next check expects that', async () => {
    scenario = await targetScenario('rewound-by-worker');
    const s = scenario;
    const gate = s.gates.find((g) => g.status === 'open')!;
    git(s.workspace, 'reset', '--quiet', '--hard', 'main'); // the person takes main as it is, working tree too
    await s.engine.decideGate({ gateId: gate.id, decision: 'approved' });
    assert.deepEqual(await driveAgain(s), { kind: 'finished', status: 'completed' });
    const main = git(s.workspace, 'rev-parse', 'main');
    assert.equal(git(s.workspace, 'rev-parse', 'main~1'), s.moved, 'B was merged onto the rewound head');
    assert.equal(readFileSync(join(s.workspace, 'b.txt'), 'utf8'), 'from B\n');
    const wtB = (await s.engine.listWorktrees(s.runId)).find((w) => w.taskId === 'B')!;
    assert.equal(wtB.targetBefore, s.moved);
    assert.equal(wtB.targetAfter, main);
    assert.equal((await s.engine.isolationSummary(s.runId)).target?.kind, 'as-expected');
  });

  it('rejecting fails B and integrates nothing; its worktree is kept for baton cleanup', async () => {
    scenario = await targetScenario('rewound-by-worker');
    const s = scenario;
    const gate = s.gates.find((g) => g.status === 'open')!;
    await s.engine.decideGate({ gateId: gate.id, decision: 'rejected', note: 'look at it first' });
    assert.deepEqual(await driveAgain(s), { kind: 'finished', status: 'failed' });
    assert.equal(git(s.workspace, 'rev-parse', 'main'), s.moved, 'main untouched');
    const view = await s.engine.overview(s.runId);
    assert.equal(view.tasks.find((t) => t.id === 'B')!.status, 'failed');
    assert.equal(view.delegations.find((d) => d.taskId === 'B')!.status, 'FAILED');
    const wtB = (await s.engine.listWorktrees(s.runId)).find((w) => w.taskId === 'B')!;
    assert.ok(existsSync(wtB.path), 'kept: the work may be wanted elsewhere');
  });

  it('a worker points main at an unrelated commit (sideways): the same gate, direction sideways; put back and approved, B integrates', async () => {
    scenario = await targetScenario('moved-sideways');
    const s = scenario;
    assert.deepEqual(targetFailures(s, 'moved-sideways'), []);
    const gate = s.gates[0]!;
    assert.equal(gate.details.direction, 'sideways');
    assert.match(gate.reason, /was moved sideways from/);
    assert.equal((await s.engine.isolationSummary(s.runId)).target?.kind, 'sideways');
    git(s.workspace, 'update-ref', 'refs/heads/main', s.afterA);
    git(s.workspace, 'reset', '--quiet', '--hard', 'main');
    await s.engine.decideGate({ gateId: gate.id, decision: 'approved' });
    assert.deepEqual(await driveAgain(s), { kind: 'finished', status: 'completed' });
    assert.equal(git(s.workspace, 'merge-base', '--is-ancestor', s.afterA, 'main'), '');
    assert.equal(readFileSync(join(s.workspace, 'b.txt'), 'utf8'), 'from B\n');
  });

  it('the user commits on main during the run (forward): no gate, the commit stays, B integrates on top', async () => {
    scenario = await targetScenario('forward-by-user');
    const s = scenario;
    assert.deepEqual(targetFailures(s, 'forward-by-user'), []);
    assert.equal(git(s.workspace, 'merge-base', '--is-ancestor', s.moved, 'main'), '');
    assert.equal(readFileSync(join(s.workspace, 'more-notes.txt'), 'utf8'), 'the user again\n');
    assert.equal(readFileSync(join(s.workspace, 'b.txt'), 'utf8'), 'from B\n');
  });
});

describe('git isolation: files: enforced at integration', function () {
  this.timeout(90_000);
  let scenario: UndeclaredScenario | undefined;
  afterEach(async () => {
    await scenario?.dispose();
    scenario = undefined;
  });

  it('an edit outside files: opens an undeclared_files gate listing it; nothing integrated; approve integrates anyway', async () => {
    scenario = await undeclaredScenario('edit');
    const s = scenario;
    assert.deepEqual(undeclaredFailures(s, 'edit'), []);
    const gate = s.gates[0]!;
    assert.deepEqual(gate.details.declared, ['src/**']);
    assert.match(gate.reason, /changed 1 file outside its declaration \(files: src\/\*\*\): docs\/guide\.md/);
    assert.equal(readFileSync(join(s.workspace, 'docs/guide.md'), 'utf8'), '# guide\n', 'main working tree untouched');
    await s.engine.decideGate({ gateId: gate.id, decision: 'approved', note: 'the guide needed it' });
    const taken = await s.engine.coordinate({ runId: s.runId });
    assert.ok('coordinator' in taken);
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
    assert.equal(readFileSync(join(s.workspace, 'docs/guide.md'), 'utf8'), '# guide, rewritten\n');
    assert.equal(readFileSync(join(s.workspace, 'src/a.ts'), 'utf8'), 'export const a = 1;\n');
  });

  it('a deletion outside files: is listed; reject fails the task, discards the attempt, and README.md stays on main', async () => {
    scenario = await undeclaredScenario('delete');
    const s = scenario;
    assert.deepEqual(undeclaredFailures(s, 'delete'), []);
    const gate = s.gates[0]!;
    const wt = (await s.engine.listWorktrees(s.runId))[0]!;
    await s.engine.decideGate({ gateId: gate.id, decision: 'rejected' });
    const taken = await s.engine.coordinate({ runId: s.runId });
    assert.ok('coordinator' in taken);
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'failed' });
    assert.equal(git(s.workspace, 'rev-parse', 'main'), s.base);
    assert.equal(readFileSync(join(s.workspace, 'README.md'), 'utf8'), '# demo\n');
    assert.equal((await s.engine.overview(s.runId)).tasks[0]!.status, 'failed');
    assert.equal(existsSync(wt.path), false, 'the discarded worktree is removed');
  });

  it('a rename out of the declared folder lists the new name only (the old one is inside)', async () => {
    scenario = await undeclaredScenario('rename');
    assert.deepEqual(undeclaredFailures(scenario, 'rename'), []);
  });
});
