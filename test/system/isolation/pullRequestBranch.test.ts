// `integration: branch` (issue 27; docs/isolation.md, "Branch and pull request"): a passed task's branch is pushed
// to a remote — here a local bare repository — instead of being merged, and its pull request is suggested, or opened
// with gh. Real git, real workers, a real pre-receive hook; gh is a script on a PATH made for the test.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Engine } from '../../../src/engine/index';
import { describeEvent } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';
import { makeTempDir } from '../../support/tempDir';
import { editWorkerConfig, withWorkerEnv } from '../../fixtures/executor/harness';

describe('git isolation: integration branch pushes each passed task to a remote and suggests its pull request', function () {
  // A hang detector: each test is a few seconds of git and node alone, several times that at load 10.
  this.timeout(180_000);
  let fixture: EngineFixture;
  let engine: Engine;
  let outside: string;
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
    outside = makeTempDir('baton-remote-');
  });
  afterEach(async () => {
    await fixture.dispose();
    rmSync(outside, { recursive: true, force: true });
  });

  /**
   * A repository with `tasks` (each with a title) whose remote `origin` is a bare repository; a PATH with git and no
   * gh. Returns main's first commit, the bare repository, the bin folder on that PATH and where merged trees are
   * counted.
   */
  async function begin(tasks: string[]) {
    const counter = join(outside, 'merged-runs.txt');
    const record = `require("node:fs").appendFileSync(process.argv[1], process.cwd() + "\\n")`;
    fixture.write(
      '.baton/config.json',
      editWorkerConfig({
        maxConcurrency: 2,
        isolation: 'worktree',
        integration: 'branch',
        verifyIntegrated: [[process.execPath, '-e', record, counter]],
      }),
    );
    fixture.write(
      'plan.md',
      tasks
        .map((id) => [
          '```baton-task',
          `id: ${id}`,
          `title: Add the ${id} notes`,
          'agent: coder',
          '```',
          `Do ${id}.`,
          '',
        ])
        .flat()
        .join('\n'),
    );
    const base = initRepo(fixture.workspace, { 'README.md': 'hello\n' });
    const bare = join(outside, 'remote.git');
    git(outside, 'init', '--quiet', '--bare', bare);
    git(fixture.workspace, 'remote', 'add', 'origin', bare);
    const bin = join(outside, 'bin');
    mkdirSync(bin);
    symlinkSync(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(bin, 'git'));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    return { base, bare, bin, counter, run };
  }

  async function drive(runId: string) {
    const taken = await engine.coordinate({ runId });
    assert.ok('coordinator' in taken, 'the lease is free');
    return taken.coordinator.run();
  }

  function remoteBranches(bare: string): string[] {
    return git(bare, 'for-each-ref', '--format=%(refname:short)', 'refs/heads/').split('\n').filter(Boolean).sort();
  }

  it('two tasks pass: their merged trees are verified, both branches are on the bare remote, main did not move, and gh absent is a suggestion, not a failure', async () => {
    const { base, bare, bin, counter, run } = await begin(['A', 'B']);
    const env = {
      FAKE_EDITS: JSON.stringify({ A: { 'notes/a.md': 'A\n' }, B: { 'notes/b.md': 'B\n' } }),
      PATH: bin,
    };
    assert.deepEqual(
      await withWorkerEnv(env, () => drive(run.id)),
      { kind: 'finished', status: 'completed' },
      'gh absent does not fail the run',
    );

    const branches = [`baton/${run.id}/A/001`, `baton/${run.id}/B/001`];
    assert.deepEqual(remoteBranches(bare), branches, 'each task is a branch on the remote');
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base, 'the target branch did not move');
    assert.equal(existsSync(join(fixture.workspace, 'notes')), false, 'nor the working tree');
    for (const branch of branches) {
      assert.equal(
        git(bare, 'rev-parse', branch),
        git(fixture.workspace, 'rev-parse', branch),
        'the local branch stays',
      );
      assert.equal(
        git(fixture.workspace, 'rev-parse', `${branch}~1`),
        base,
        'one commit on main, as the worker left it',
      );
    }
    const merged = readFileSync(counter, 'utf8').split('\n').filter(Boolean);
    assert.equal(merged.length, 2, 'each merged tree was verified before its push');
    assert.ok(merged.every((cwd) => cwd.endsWith('.merged')));

    const worktrees = await engine.listWorktrees(run.id);
    assert.deepEqual(worktrees.map((w) => w.status).sort(), ['pushed', 'pushed']);
    assert.ok(
      worktrees.every((w) => !existsSync(w.path)),
      'the worktrees are gone, the branches are not',
    );
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.tasks.map((t) => [t.id, t.status]),
      [
        ['A', 'completed'],
        ['B', 'completed'],
      ],
    );

    const events = await engine.listEvents(run.id);
    assert.deepEqual(
      events
        .filter((e) => e.type === 'integration:pushed')
        .map((e) => (e.data as { branch: string }).branch)
        .sort(),
      branches,
    );
    assert.equal(events.filter((e) => e.type === 'integration:done').length, 0, 'nothing was integrated');
    const suggested = events.filter((e) => e.type === 'integration:pull-request');
    assert.equal(suggested.length, 2);
    const a = suggested.find((e) => (e.data as { taskId: string }).taskId === 'A')!;
    const data = a.data as { opened: boolean; gh?: string; title: string; bodyFile: string; command: string };
    assert.equal(data.opened, false);
    assert.equal(data.gh, 'absent');
    assert.equal(data.title, 'Add the A notes');
    assert.equal(
      data.command,
      `gh pr create --head baton/${run.id}/A/001 --base main --title 'Add the A notes' --body-file ${data.bodyFile}`,
    );
    const body = readFileSync(data.bodyFile, 'utf8');
    assert.match(body, /^edited 1 file\(s\)\n/, 'the body opens with the result summary');
    assert.match(body, /- `notes\/a\.md`/, 'its artifacts');
    assert.match(body, /exit 0, \d+ ms on the merged tree [0-9a-f]{10}/, 'and its verify receipts');
    assert.match(describeEvent(a), /pull request suggested \(gh is not installed\): Add the A notes — gh pr create/);
  });

  it("the remote refuses the push (a pre-receive hook): an integration_failed gate with git's answer, the branch kept; approved after the hook is gone, it is pushed and gh opens the pull request", async () => {
    const { base, bare, bin, run } = await begin(['A']);
    writeFileSync(join(bare, 'hooks', 'pre-receive'), '#!/bin/sh\necho "no pushes today" >&2\nexit 1\n');
    chmodSync(join(bare, 'hooks', 'pre-receive'), 0o755);
    const env = { FAKE_EDITS: JSON.stringify({ A: { 'notes/a.md': 'A\n' } }), PATH: bin };
    assert.equal((await withWorkerEnv(env, () => drive(run.id))).kind, 'paused');

    const branch = `baton/${run.id}/A/001`;
    assert.deepEqual(remoteBranches(bare), [], 'nothing reached the remote');
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base);
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.equal(gate?.kind, 'integration_failed');
    assert.equal(gate.details.push, true);
    assert.match(String(gate.details.output), /no pushes today/, "the hook's words are in the gate");
    assert.match(
      gate.reason,
      new RegExp(
        `^A passed, but pushing its branch ${branch} to origin failed: .*pre-receive hook declined.*\\. Nothing was pushed`,
      ),
    );
    const [wt] = await engine.listWorktrees(run.id);
    assert.ok(existsSync(join(wt!.path, 'notes', 'a.md')), 'the work is kept in its worktree');
    const head = git(fixture.workspace, 'rev-parse', branch);
    assert.ok((await engine.listEvents(run.id)).some((e) => e.type === 'integration:push-failed'));

    // The hook is gone and gh is there and logged in (a script that says so and records what it was asked).
    rmSync(join(bare, 'hooks', 'pre-receive'));
    const asked = join(outside, 'gh-args.txt');
    writeFileSync(
      join(bin, 'gh'),
      `#!/bin/sh\nprintf '%s\\n' "$*" >> '${asked}'\n[ "$1" = pr ] && echo https://example.invalid/pull/7\nexit 0\n`,
    );
    chmodSync(join(bin, 'gh'), 0o755);
    await engine.decideGate({ gateId: gate.id, decision: 'approved', note: 'hook removed' });
    assert.deepEqual(await withWorkerEnv(env, () => drive(run.id)), { kind: 'finished', status: 'completed' });

    assert.deepEqual(remoteBranches(bare), [branch]);
    assert.equal(git(bare, 'rev-parse', branch), head, 'the very commit that was kept');
    assert.equal(git(fixture.workspace, 'rev-parse', 'main'), base);
    const bodyFile = join(fixture.workspace, '.baton', 'runs', run.id, 'pull-requests', `${wt!.delegationId}.md`);
    assert.deepEqual(readFileSync(asked, 'utf8').split('\n').filter(Boolean), [
      'auth status',
      `pr create --head ${branch} --base main --title Add the A notes --body-file ${bodyFile}`,
    ]);
    const opened = (await engine.listEvents(run.id)).find((e) => e.type === 'integration:pull-request')!;
    assert.deepEqual(
      [(opened.data as { opened: boolean }).opened, (opened.data as { url?: string }).url],
      [true, 'https://example.invalid/pull/7'],
    );
  });
});
