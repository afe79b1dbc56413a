import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { git, initRepo } from '../../support/gitRepo';
import {
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  ROOT,
  runCli,
  STACK_FRAME,
  writeFile,
} from '../../support/cli';

describe('baton CLI: git isolation', function () {
  this.timeout(90_000);
  let dir: string | undefined;
  before(() => ensureCliBuilt());
  afterEach(() => {
    removeWorkspace(dir);
    dir = undefined;
  });

  it('the parallel demo, from a fresh copy: three tasks in three worktrees at once, two merged into main, one stopped at the planned conflict (exit 6)', async () => {
    dir = makeWorkspace('baton-demo-parallel-');
    const target = join(dir, 'notes');
    const demo = spawnSync(process.execPath, [join(ROOT, 'scripts', 'demoParallel.mjs'), target], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, DEMO_AGENT_STEP_MS: '150', NO_COLOR: '1' },
      timeout: 60_000,
    });
    assert.equal(demo.status, 6, `${demo.stdout}\n${demo.stderr}`);
    assert.doesNotMatch(demo.stdout + demo.stderr, STACK_FRAME);
    assert.match(demo.stdout, /T3 waits at G-1\. Resolve it/);

    // The three ran at once: all three were claimed before the first result came in.
    const { events } = (await runCli(['--json', 'events'], { cwd: target })).json<{
      events: Array<{ type: string; data: Record<string, unknown> }>;
    }>();
    const firstResult = events.findIndex((e) => e.type === 'ingestion:recorded');
    assert.equal(events.slice(0, firstResult).filter((e) => e.type === 'delegation:claimed').length, 3);

    // main carries T1 and T2, each as one merge commit; the README has T2's title, untouched by T3.
    const log = git(target, 'log', '--format=%s', 'main');
    assert.match(log, /Baton: integrate T1 \(D-T1-coder-001\)/);
    assert.match(log, /Baton: integrate T2 \(D-T2-writer-001\)/);
    assert.doesNotMatch(log, /integrate T3/);
    assert.equal(git(target, 'rev-list', '--merges', '--count', 'main'), '2');
    assert.equal(readFileSync(join(target, 'README.md'), 'utf8').split('\n')[0], '# Notes: a tiny notes app');
    assert.equal(git(target, 'status', '--porcelain'), '', 'the main working tree is clean');

    const gate = (await runCli(['--json', 'gates'], { cwd: target })).json<{
      gates: Array<{ kind: string; taskId: string; details: { files: string[]; worktree: string } }>;
    }>().gates[0]!;
    assert.equal(gate.kind, 'integration_conflict');
    assert.equal(gate.taskId, 'T3');
    assert.deepEqual(gate.details.files, ['README.md']);
    assert.equal(
      readFileSync(join(gate.details.worktree, 'README.md'), 'utf8').split('\n')[0],
      '# Notes 1.0 is here',
      "T3's work is kept in its worktree",
    );

    // status and cleanup: the kept worktree is shown with its disk, and cleanup keeps it while the gate is open.
    const status = await runCli(['status'], { cwd: target, env: { NO_COLOR: '1' } });
    assert.match(
      status.stdout,
      /Isolation {2}worktree per task, merge into main \(base [0-9a-f]{8}\) {2}· {2}1 worktree on disk, \d+(\.\d)? KiB/,
    );
    const cleanup = await runCli(['cleanup'], { cwd: target, env: { NO_COLOR: '1' } });
    assert.equal(cleanup.code, 0, cleanup.stderr);
    assert.match(
      cleanup.stdout,
      /kept +D-T3-writer-001 .*waits at G-1 \(integration_conflict\); decide the gate first/,
    );
  });

  it('start --isolation worktree without git on PATH: exit 7, one readable line, nothing written', async () => {
    dir = makeWorkspace();
    writeFile(dir, 'plan.md', planText([{ id: 'T1' }]));
    await runCli(['init'], { cwd: dir });
    // A worker that is there (by its absolute path): what is missing is git alone.
    const worker = { type: 'process', command: process.execPath, args: ['-e', ''] };
    writeFile(dir, '.baton/config.json', JSON.stringify({ defaultWorker: 'node', workers: { node: worker } }));
    initRepo(dir, {});
    const r = await runCli(['start', 'plan.md', '--isolation', 'worktree'], {
      cwd: dir,
      env: { PATH: '/nonexistent' },
    });
    assert.equal(r.code, 7, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1);
    assert.match(r.stderr, /git is not installed or not on PATH/);
    assert.doesNotMatch(r.stderr, STACK_FRAME);
    const status = await runCli(['--json', 'status'], { cwd: dir });
    assert.equal(status.json<{ error: { code: string } }>().error.code, 'run.unknown', 'no run was created');
  });
});
