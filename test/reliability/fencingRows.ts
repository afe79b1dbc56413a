/**
 * Rows of the fault matrix for issue 15 (docs/reliability.md, rows 15 and 16): a coordinator
 * stopped or killed between its epoch check and its side effect, and a process stopped while
 * it holds the store's lock. Each returns trials and failures; matrix.ts runs them.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../../src/engine/domain/errors';
import { storeDirOf } from '../../src/engine/engine';
import { Engine } from '../../src/engine/index';
import { FileStore } from '../../src/engine/store/fileStore';
import {
  ChildCoordinator,
  config,
  coordinateWhenFree,
  plan,
  readTrace,
  sleepReal,
  waitFor,
  withWorkerEnv,
} from '../fixtures/executor/harness';
import { processesCarrying } from '../support/processes';
import { makeTempDir } from '../support/tempDir';
import type { RowOutcome } from './matrix';
import { PID_TOKEN_EXPRESSION } from '../support/pidToken';

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

async function inWorkspace<T>(prefix: string, work: (workspace: string) => Promise<T>): Promise<T> {
  const workspace = makeTempDir(prefix);
  try {
    return await work(workspace);
  } finally {
    for (const pid of processesCarrying(`BATON_WORKSPACE=${workspace}`)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(workspace, { recursive: true, force: true });
  }
}

/** The moments of row 15, taken in turn: [fault point, signal]. */
const FENCE_FAULTS = [
  ['launch:after-fence', 'SIGSTOP'],
  ['launch:before-release', 'SIGSTOP'],
  ['launch:after-fence', 'SIGKILL'],
  ['launch:before-release', 'SIGKILL'],
  ['verify:after-fence', 'SIGSTOP'],
] as const;

/**
 * Row 15: a coordinator stopped (SIGSTOP, then SIGCONT once a successor drives) or killed at
 * the moment between its epoch check and a spawn, a worker's release or a verify command; the
 * attempt's work is done exactly once, by the successor, and nothing is left running.
 */
export async function fencedSideEffects(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let trial = 0; trial < trials; trial++) {
    const [point, signal] = FENCE_FAULTS[trial % FENCE_FAULTS.length]!;
    const label = `${point} ${signal}`;
    seen.set(label, (seen.get(label) ?? 0) + 1);
    await inWorkspace('baton-fence-', async (workspace) => {
      const verifying = point === 'verify:after-fence';
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(join(workspace, '.baton', 'config.json'), config({ leaseSeconds: 5 }));
      // The verify command notes each run; it is the side effect counted in verify trials.
      writeFileSync(
        join(workspace, 'check.js'),
        `require('node:fs').appendFileSync('checks.txt', ${PID_TOKEN_EXPRESSION} + '\\n');`,
      );
      writeFileSync(
        join(workspace, 'plan.md'),
        plan([{ id: 'A', ...(verifying ? { verify: [[process.execPath, 'check.js']] } : {}) }]),
      );
      const tracePath = join(workspace, 'trace.txt');
      const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '200' };
      const engine = await Engine.open({ workspace, follow: true });
      try {
        const { run } = await engine.runForPlan('plan.md');
        const first = new ChildCoordinator(
          workspace,
          run.id,
          { leaseMs: 600 },
          { ...env, BATON_FAULT_POINT: point, BATON_FAULT_SIGNAL: signal },
        );
        try {
          if (signal === 'SIGSTOP')
            await waitFor('the coordinator to stop at its fault point', () => processState(first.pid) === 'T', 30_000);
          else await first.exited;
          const outcome = await withWorkerEnv(env, async () => {
            const taken = await coordinateWhenFree(engine, run.id, {}, 30_000);
            const running = taken.coordinator.run();
            first.kill('SIGCONT'); // it wakes while its successor drives
            return running;
          });
          if (outcome.kind !== 'finished' || outcome.status !== 'completed')
            failures.push(`trial ${trial} (${label}): the successor ended ${JSON.stringify(outcome)}`);
          await Promise.race([first.exited, sleepReal(10_000)]);
          await sleepReal(300); // a late side effect would show now
          const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
          // The worker ran once: the retry (a launch fault) or attempt 1 (a verify fault, after the worker).
          if (starts.length !== 1)
            failures.push(`trial ${trial} (${label}): ${starts.length} worker start(s): ${JSON.stringify(starts)}`);
          if (!verifying && starts[0]?.delegation !== 'D-A-coder-002')
            failures.push(`trial ${trial} (${label}): attempt 1 ran (${starts[0]?.delegation})`);
          if (verifying) {
            let checks = 0;
            try {
              checks = readFileSync(join(workspace, 'checks.txt'), 'utf8').trim().split('\n').length;
            } catch {
              // never ran
            }
            if (checks !== 1) failures.push(`trial ${trial} (${label}): the verify command ran ${checks} time(s)`);
          }
          const left = processesCarrying(`BATON_WORKSPACE=${workspace}`).filter((pid) => pid !== first.pid);
          if (left.length > 0) failures.push(`trial ${trial} (${label}): ${left.length} process(es) left running`);
        } finally {
          first.kill('SIGCONT');
          first.kill('SIGKILL');
        }
      } finally {
        await engine.close();
      }
    });
  }
  return {
    trials,
    failures,
    note: [...seen].map(([label, n]) => `${label} ×${n}`).join(', '),
  };
}

/**
 * Row 16: a coordinator stopped (SIGSTOP) inside a commit, holding the store's lock, at a
 * random commit of its run. Readers answer from what is committed; a writer is refused at
 * once with the holder's pid, and writes nothing; continued, the holder finishes the run.
 */
export async function lockHolderStopped(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  let refusedMs = 0;
  for (let trial = 0; trial < trials; trial++) {
    await inWorkspace('baton-lockstop-', async (workspace) => {
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(join(workspace, '.baton', 'config.json'), config({ leaseSeconds: 5 }));
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'A' }, { id: 'B', depends: ['A'] }]));
      const env = { FAKE_DELAY_MS: '100' };
      let runId: string;
      const setup = await Engine.open({ workspace });
      try {
        runId = (await setup.runForPlan('plan.md')).run.id;
      } finally {
        await setup.close();
      }
      const skip = String(Math.floor(Math.random() * 12));
      const holder = new ChildCoordinator(
        workspace,
        runId,
        { leaseMs: 5000 },
        { ...env, BATON_FAULT_POINT: 'commit:locked', BATON_FAULT_SIGNAL: 'SIGSTOP', BATON_FAULT_SKIP: skip },
      );
      try {
        const stopped = await Promise.race([
          waitFor('the holder to stop in a commit', () => processState(holder.pid) === 'T', 30_000),
          holder.exited.then(() => false),
        ]);
        if (!stopped) {
          failures.push(`trial ${trial}: the run ended before commit ${skip} (${holder.stderr})`);
          return;
        }
        const dir = storeDirOf(workspace);
        // A reader answers.
        const reader = await FileStore.open(dir, { readWhileHolderStopped: true });
        try {
          const status = await reader.read((r) =>
            r.get<{ status: string }>(`SELECT status FROM runs WHERE id = ?`, [runId]),
          );
          if (!status) failures.push(`trial ${trial}: the reader does not see the run`);
          if (!reader.recovery.notices.some((n) => n.includes(`pid ${holder.pid}`)))
            failures.push(`trial ${trial}: the reader is not told who holds the lock`);
        } finally {
          await reader.close();
        }
        // A writer is refused at once, naming the holder.
        const started = Date.now();
        try {
          const writer = await FileStore.open(dir);
          await writer.close();
          failures.push(`trial ${trial}: a writer opened the store under a stopped holder`);
        } catch (err) {
          refusedMs = Math.max(refusedMs, Date.now() - started);
          if (!BatonError.is(err, 'store.holder-stopped') || !err.message.includes(`pid ${holder.pid}`))
            failures.push(`trial ${trial}: the writer got ${(err as Error).message}`);
          else if (Date.now() - started > 5000)
            failures.push(`trial ${trial}: the refusal took ${Date.now() - started} ms`);
        }
        // Continued, it finishes its run.
        holder.kill('SIGCONT');
        await Promise.race([holder.exited, sleepReal(30_000)]);
        const outcome = holder.find('outcome');
        if (outcome?.kind !== 'finished')
          failures.push(`trial ${trial}: continued, it ended ${JSON.stringify(outcome)}`);
      } finally {
        holder.kill('SIGCONT');
        holder.kill('SIGKILL');
      }
    });
  }
  return {
    trials,
    failures,
    note: `a coordinator stopped inside a random one of its first 12 commits; readers answered; writers refused in ≤ ${refusedMs} ms; continued, each finished its run`,
  };
}
