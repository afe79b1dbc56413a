/**
 * Rows of the fault matrix for exactly-once integration (issue 25, item 4): a coordinator
 * killed right after it moved the target by cherry-pick. Each trial is a real run in a real
 * repository, with the coordinator in a child process (test/reliability/children/coordinatorChild.ts).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../../src/engine/index';
import { ChildCoordinator, coordinateWhenFree, plan, withWorkerEnv } from '../fixtures/executor/harness';
import { git, initRepo } from '../support/gitRepo';
import { makeTempDir } from '../support/tempDir';
import type { RowOutcome } from './matrix';

const EDIT_WORKER = resolve(__dirname, '../fixtures/workers/editWorker.js');

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
