/**
 * Rows of the fault matrix for exactly-once integration (issue 25, item 4): a coordinator
 * killed right after it moved the target by cherry-pick; the disk full while the fast-forward
 * writes the working tree. Each trial is a real run in a real
 * repository, with the coordinator in a child process (test/reliability/children/coordinatorChild.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../../src/engine/index';
import type { CoordinatorOutcome } from '../../src/engine/index';
import { ChildCoordinator, coordinateWhenFree, plan, waitFor, withWorkerEnv } from '../fixtures/executor/harness';
import { git, initRepo } from '../support/gitRepo';
import { makeTempDir } from '../support/tempDir';
import type { RowOutcome } from './matrix';

const EDIT_WORKER = resolve(__dirname, '../fixtures/workers/editWorker.js');
const FILL_WORKER = resolve(__dirname, '../fixtures/workers/fillDiskWorker.js');

function editConfig(extra: Record<string, unknown>): string {
  return JSON.stringify({
    defaultWorker: 'edit',
    workers: {
      edit: { type: 'process', command: process.execPath, args: [EDIT_WORKER, '{taskId}'], promptOnStdin: true },
    },
    retryBackoffSeconds: 0,
    isolation: 'worktree',
    ...extra,
  });
}

/**
 * Row 18: two tasks run in parallel from the base and integrate by cherry-pick, so the second
 * one's commit is copied onto the first one's (a new commit, not its own). The coordinator is
 * SIGKILLed right after it moved main for the second (`integration:after-advance`, the second
 * pass). A new coordinator must see the copy on main, record the integration once
 * (alreadyOnTarget), copy nothing again and open no gate.
 */
export async function cherryPickCrash(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const workspace = makeTempDir('baton-once-');
    const fail = (what: string) => failures.push(`trial ${trial}: ${what}`);
    try {
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'A' }, { id: 'B' }]));
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(join(workspace, '.baton', 'config.json'), editConfig({ integration: 'cherry-pick' }));
      const base = initRepo(workspace, { 'README.md': '# demo\n' });
      const subjects = () =>
        git(workspace, 'log', '--format=%s', `${base}..main`)
          .split('\n')
          .map((s) => s.replace(/ \(.*/, ''));
      const env = { FAKE_EDITS: JSON.stringify({ A: { 'a.txt': 'A\n' }, B: { 'b.txt': 'B\n' } }) };
      const engine = await Engine.open({ workspace, follow: true });
      try {
        const { run } = await engine.runForPlan('plan.md');
        const child = new ChildCoordinator(
          workspace,
          run.id,
          { leaseMs: 1000, maxConcurrency: 2 },
          { ...env, BATON_FAULT_POINT: 'integration:after-advance', BATON_FAULT_SKIP: '1' },
        );
        if ((await child.exited).signal !== 'SIGKILL') {
          fail(`the coordinator was not killed after moving main: ${child.stderr}`);
          continue;
        }
        await engine.refresh();
        const second = (await engine.listWorktrees(run.id)).find((w) => w.status === 'committed');
        if (!second || subjects()[0] !== `Baton: ${second.taskId}`) {
          fail(`no unrecorded copy on main: ${subjects().join(' | ')}`);
          continue;
        }
        const outcome = await withWorkerEnv(env, async () => {
          const taken = await coordinateWhenFree(engine, run.id, { maxConcurrency: 2 });
          return taken.coordinator.run();
        });
        if (outcome.kind !== 'finished' || outcome.status !== 'completed')
          fail(`the resumed run ended ${JSON.stringify(outcome)}`);
        const gates = await engine.listGates({ runId: run.id });
        if (gates.length > 0) fail(`gates opened: ${gates.map((g) => `${g.kind} ${g.reason}`).join('; ')}`);
        if (subjects().sort().join() !== 'Baton: A,Baton: B') fail(`main has ${subjects().join(' | ')}`);
        const done = (await engine.listEvents(run.id)).filter(
          (e) => e.type === 'integration:done' && (e.data as { taskId: string }).taskId === second.taskId,
        );
        if (done.length !== 1 || (done[0]!.data as { alreadyOnTarget?: boolean }).alreadyOnTarget !== true)
          fail(`integration:done for ${second.taskId}: ${JSON.stringify(done.map((e) => e.data))}`);
        if (git(workspace, 'status', '--porcelain', '--untracked-files=no') !== '')
          fail('the working tree is not clean');
        if (readFileSync(join(workspace, 'b.txt'), 'utf8') !== 'B\n') fail('b.txt is not on main');
      } finally {
        await engine.close();
      }
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  }
  return {
    trials,
    failures,
    note: 'two parallel tasks by cherry-pick; SIGKILL right after main moved for the second; resumed: recorded once (alreadyOnTarget), no second copy, no gate',
  };
}

const BIG_BYTES = 16 * 1024 * 1024;

/**
 * Row 19: the disk fills while the fast-forward writes a task's file into the working tree.
 * The workspace lives on a small tmpfs; the task's worker writes a 16 MiB file (a few KiB for
 * git) and then fills the disk, leaving 8 MiB: Baton's commit fits, the fast-forward of the
 * main working tree does not. The coordinator must put back what it wrote and try again
 * later, with no gate; odd trials plant a half-written copy in the working tree meanwhile (as
 * a coordinator killed during the fast-forward leaves it). With space again the run
 * completes: integrated once, the file whole, the tree clean. A run that paused instead is
 * resumed once, as a person would after freeing space.
 */
export async function diskFullFastForward(trials: number): Promise<RowOutcome> {
  const mountPoint = makeTempDir('baton-fullfs-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64m', 'tmpfs', mountPoint], { stdio: 'ignore' });
  } catch {
    rmSync(mountPoint, { recursive: true, force: true });
    return { trials: 0, failures: ['mounting a tmpfs needs root (CAP_SYS_ADMIN)'] };
  }
  const failures: string[] = [];
  let planted = 0;
  try {
    for (let trial = 0; trial < trials; trial++) {
      const fail = (what: string) => failures.push(`trial ${trial}: ${what}`);
      const workspace = join(mountPoint, `ws-${trial}`);
      const filler = join(mountPoint, 'filler');
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'A' }]));
      writeFileSync(
        join(workspace, '.baton', 'config.json'),
        JSON.stringify({
          defaultWorker: 'fill',
          workers: { fill: { type: 'process', command: process.execPath, args: [FILL_WORKER, '{taskId}'] } },
          isolation: 'worktree',
          maxAttempts: 1,
        }),
      );
      initRepo(workspace, { 'README.md': '# demo\n' });
      const env = {
        FILL_DISK_FILE: filler,
        FILL_LEAVE_BYTES: String(8 * 1024 * 1024),
        FILL_BIG_BYTES: String(BIG_BYTES),
      };
      const engine = await Engine.open({ workspace, follow: true });
      try {
        const { run } = await engine.runForPlan('plan.md');
        const logs: string[] = [];
        let first: CoordinatorOutcome | undefined;
        const running = withWorkerEnv(env, async () => {
          const taken = await engine.coordinate({ runId: run.id, log: (l) => logs.push(l) });
          if (!('coordinator' in taken)) throw new Error('the lease is taken');
          return taken.coordinator.run();
        }).then((o) => (first = o));
        const reported = await waitFor('the failed fast-forward', () =>
          // Under load the disk may fill already at Baton's commit (git add / commit-tree): retried the same way.
          first
            ? 'ended'
            : logs.some((l) => /failed while writing|Out of diskspace|No space left/.test(l))
              ? 'reported'
              : undefined,
        ).catch(() => 'silent');
        if (reported === 'silent')
          fail(`a minute after the disk filled, the run neither reported it nor ended: ${logs.slice(-4).join(' | ')}`);
        if (reported === 'reported' && trial % 2 === 1) {
          // What a coordinator killed during the fast-forward leaves: the file half-written, untracked.
          writeFileSync(join(workspace, 'big.txt'), 'the same line, again'.slice(0, 12));
          planted++;
        }
        rmSync(filler, { force: true });
        let outcome = await running;
        if (outcome.kind !== 'finished') {
          fail(`with the disk full the run ended ${JSON.stringify(outcome)}, not waiting for space`);
          outcome = await withWorkerEnv(env, async () => (await coordinateWhenFree(engine, run.id)).coordinator.run());
        }
        if (outcome.kind !== 'finished' || outcome.status !== 'completed')
          fail(`with space again the run ended ${JSON.stringify(outcome)}`);
        const gates = await engine.listGates({ runId: run.id });
        if (gates.length > 0) fail(`gates: ${gates.map((g) => `${g.kind}: ${g.reason}`).join('; ')}`);
        const status = git(workspace, 'status', '--porcelain', '--untracked-files=all');
        if (status !== '') fail(`the working tree is not clean: ${status}`);
        const size = statSync(join(workspace, 'big.txt'), { throwIfNoEntry: false })?.size;
        if (size === undefined || size < BIG_BYTES) fail(`big.txt has ${size} bytes`);
        const done = (await engine.listEvents(run.id)).filter((e) => e.type === 'integration:done');
        if (done.length !== 1) fail(`${done.length} integration:done events`);
      } finally {
        await engine.close();
        rmSync(join(mountPoint, 'filler'), { force: true });
        rmSync(workspace, { recursive: true, force: true });
      }
    }
  } finally {
    execFileSync('umount', [mountPoint], { stdio: 'ignore' });
    rmSync(mountPoint, { recursive: true, force: true });
  }
  return {
    trials,
    failures,
    note: `a 16 MiB file fast-forwarded into a working tree on a tmpfs with 8 MiB left; ${planted} trial(s) with a half-written copy planted meanwhile; integrated once with space again, no gate, the tree clean`,
  };
}
