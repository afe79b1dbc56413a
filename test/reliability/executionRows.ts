/**
 * Rows of the fault matrix that run real coordinators and real worker processes
 * (docs/reliability.md, rows 6, 8, 9, 11, 12, 17). Each returns trials and failures; the
 * matrix (matrix.ts) runs them.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../../src/engine/index';
import { storeDirOf } from '../../src/engine/engine';
import {
  ChildCoordinator,
  config,
  coordinateWhenFree,
  plan,
  pumpClock,
  readTrace,
  sleepReal,
  stopOutsideCommit,
  waitFor,
  withWorkerEnv,
} from '../fixtures/executor/harness';
import { processesCarrying } from '../support/processes';
import { FakeClock } from '../support/fakeClock';
import { makeTempDir } from '../support/tempDir';
import type { RowOutcome } from './matrix';

const RESULT_WRITER = resolve(__dirname, '../fixtures/workers/resultWriter.js');

function killAll(marker: string): void {
  for (const pid of processesCarrying(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

async function inWorkspace<T>(prefix: string, work: (workspace: string) => Promise<T>): Promise<T> {
  const workspace = makeTempDir(prefix);
  try {
    return await work(workspace);
  } finally {
    killAll(`BATON_WORKSPACE=${workspace}`);
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * Row 6: a coordinator paused (SIGSTOP) past its lease; a successor takes over; on SIGCONT the old one steps down
 * before writing.
 */
export async function pausedHolder(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    await inWorkspace('baton-paused-', async (workspace) => {
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'A' }]));
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(join(workspace, '.baton', 'config.json'), config({ leaseSeconds: 5 }));
      const tracePath = join(workspace, 'trace.txt');
      const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '1500' };
      const engine = await Engine.open({ workspace, follow: true });
      try {
        const { run } = await engine.runForPlan('plan.md');
        const first = new ChildCoordinator(workspace, run.id, { leaseMs: 600 }, env);
        try {
          await waitFor('A to start', () => readTrace(tracePath).find((l) => l.kind === 'start'));
          await stopOutsideCommit(first, storeDirOf(workspace));
          await sleepReal(700); // past its lease
          const outcome = await withWorkerEnv(env, async () => {
            const taken = await coordinateWhenFree(engine, run.id);
            first.kill('SIGCONT');
            return taken.coordinator.run();
          });
          const exit = await Promise.race([first.exited, sleepReal(10_000).then(() => undefined)]);
          const said = first.find('outcome');
          if (outcome.kind !== 'finished' || outcome.status !== 'completed')
            failures.push(`trial ${trial}: the successor ended ${JSON.stringify(outcome)}`);
          if (!exit) failures.push(`trial ${trial}: the paused coordinator did not end after waking`);
          else if (said && said.kind !== 'lease-lost')
            failures.push(
              `trial ${trial}: the woken coordinator ended ${JSON.stringify(said)} instead of stepping down`,
            );
          const accepted = (await engine.listEvents(run.id)).filter(
            (e) => e.type === 'ingestion:recorded' && e.data.accepted,
          ).length;
          if (accepted !== 1) failures.push(`trial ${trial}: ${accepted} accepted ingestions of A (want 1)`);
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
    note: 'SIGSTOP at a moment it holds no store lock, resumed after a successor took the run',
  };
}

/**
 * Row 8: a worker SIGKILLed mid-task → its attempt fails → retried as a new attempt → terminal at the limit; nothing
 * shows running after.
 */
export async function workerKilled(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  let kills = 0;
  const rounds = Math.max(1, Math.ceil(trials / 2));
  for (let round = 0; round < rounds; round++) {
    await inWorkspace('baton-killed-', async (workspace) => {
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'K' }, { id: 'L', depends: ['K'] }]));
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(join(workspace, '.baton', 'config.json'), config({ leaseSeconds: 5, maxAttempts: 2 }));
      const tracePath = join(workspace, 'trace.txt');
      const engine = await Engine.open({ workspace, follow: true });
      try {
        const { run } = await engine.runForPlan('plan.md');
        const outcome = await withWorkerEnv(
          { FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ K: 'hang' }) },
          async () => {
            const taken = await engine.coordinate({ runId: run.id });
            if (!('coordinator' in taken)) throw new Error('no lease');
            const running = taken.coordinator.run();
            for (const attempt of ['D-K-coder-001', 'D-K-coder-002']) {
              const started = await waitFor(`${attempt} to start`, () =>
                readTrace(tracePath).find((l) => l.delegation === attempt),
              );
              process.kill(started.pid, 'SIGKILL');
              kills++;
            }
            return running;
          },
        );
        const view = await engine.overview(run.id);
        const summary = view.delegations.map((d) => `${d.id}:${d.status}`).join(',');
        if (outcome.kind !== 'finished' || outcome.status !== 'failed')
          failures.push(`round ${round}: the run ended ${JSON.stringify(outcome)}`);
        if (summary !== 'D-K-coder-001:FAILED,D-K-coder-002:FAILED')
          failures.push(`round ${round}: attempts ${summary}`);
        if (view.tasks.find((t) => t.id === 'L')?.status !== 'blocked')
          failures.push(`round ${round}: L is ${view.tasks.find((t) => t.id === 'L')?.status}, not blocked`);
        const live = view.runtimes.filter((r) => r.status !== 'terminal');
        if (live.length > 0) failures.push(`round ${round}: ${live.length} runtime(s) still shown live`);
        if (!/killed by SIGKILL/.test(view.delegations[0]?.reason ?? ''))
          failures.push(`round ${round}: the reason does not say what happened: ${view.delegations[0]?.reason}`);
      } finally {
        await engine.close();
      }
    });
  }
  return {
    trials: kills,
    failures,
    note: `${rounds} run(s), each worker SIGKILLed at both of its attempts (maxAttempts 2)`,
  };
}

/**
 * Row 9: a slow worker returns after its attempt was declared stale and retried: its late result is refused, with no
 * second terminal transition.
 */
export async function lateResult(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    await inWorkspace('baton-late-', async (workspace) => {
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'S' }]));
      // The retry is claimed at once (a claim obeys the retry backoff like a driven worker).
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(join(workspace, '.baton', 'config.json'), JSON.stringify({ retryBackoffSeconds: 0 }));
      const clock = new FakeClock();
      const engine = await Engine.open({ workspace, clock });
      try {
        const first = await engine.claimTask({ planPath: join(workspace, 'plan.md'), taskId: 'S', leaseSeconds: 30 });
        clock.advance(31_000);
        await engine.expireStaleRuntimes();
        const second = await engine.claimTask({ runId: first.runId, taskId: 'S', leaseSeconds: 30 });
        const artifact = join(workspace, 'late.md');
        writeFileSync(
          artifact,
          '```baton-result\ncontract: baton-result-v1\ntask: S\nagent: coder\nstatus: PASS\nsummary: late\nartifacts: []\n```\n',
        );
        const late = await engine
          .ingest({ runId: first.runId, delegationId: first.delegation.id, token: first.token, artifactPath: artifact })
          .then(
            () => 'accepted',
            (err: Error) => err.message,
          );
        if (late === 'accepted') failures.push(`trial ${trial}: the late result of a STALE attempt was accepted`);
        const onTime = await engine.ingest({
          runId: first.runId,
          delegationId: second.delegation.id,
          token: second.token,
          artifactPath: artifact,
        });
        const view = await engine.overview(first.runId);
        const summary = view.delegations.map((d) => `${d.id}:${d.status}`).join(',');
        if (summary !== `${first.delegation.id}:STALE,${second.delegation.id}:COMPLETED`)
          failures.push(`trial ${trial}: ${summary}`);
        const terminal = (await engine.listEvents(first.runId)).filter(
          (e) => e.type === 'delegation:status' && e.data.delegationId === first.delegation.id,
        ).length;
        if (terminal !== 1) failures.push(`trial ${trial}: ${terminal} status changes of the stale attempt (want 1)`);
        if (onTime.delegation.status !== 'COMPLETED')
          failures.push(`trial ${trial}: the retry is ${onTime.delegation.status}`);
      } finally {
        await engine.close();
      }
    });
  }
  return {
    trials,
    failures,
    note: 'claim, lease runs out (fake clock), retry claimed, then the first attempt hands in its result',
  };
}

/**
 * Row 11: immediate stop of workers with grandchildren, a detached child and a setsid descendant; then a coordinator
 * killed outright, and reconcile.
 */
export async function processTrees(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  let ended = 0;
  for (let trial = 0; trial < trials; trial++) {
    await inWorkspace('baton-tree-', async (workspace) => {
      const marker = `BATON_WORKSPACE=${workspace}`;
      writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'P' }, { id: 'Q' }]));
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(
        join(workspace, '.baton', 'config.json'),
        JSON.stringify({
          defaultWorker: 'tree',
          stopGraceSeconds: 1,
          leaseSeconds: 5,
          workers: {
            tree: {
              type: 'process',
              command: process.execPath,
              args: [RESULT_WRITER, '{taskId}'],
              promptOnStdin: true,
            },
          },
        }),
      );
      const engine = await Engine.open({ workspace, follow: true });
      try {
        const { run } = await engine.runForPlan('plan.md');
        const env = { FAKE_BEHAVIOUR: JSON.stringify({ P: 'children', Q: 'children' }) };
        if (trial % 2 === 0) {
          // Stop immediate, from this process, while its own coordinator drives the workers.
          await withWorkerEnv(env, async () => {
            const taken = await engine.coordinate({ runId: run.id });
            if (!('coordinator' in taken)) throw new Error('no lease');
            const running = taken.coordinator.run();
            await waitFor('two workers with their children', () => processesCarrying(marker).length >= 8, 20_000);
            const { request } = await engine.requestStop({
              runId: run.id,
              mode: 'immediate',
              by: 'matrix',
              waitMs: 15_000,
            });
            if (!request.report.every((r) => r.confirmed))
              failures.push(`trial ${trial}: termination not confirmed: ${JSON.stringify(request.report)}`);
            await running;
          });
        } else {
          // The coordinator's process is killed outright (an extension host crash); reconcile ends what it left.
          const child = new ChildCoordinator(workspace, run.id, { leaseMs: 500 }, env);
          await waitFor(
            'two workers with their children',
            () => processesCarrying(marker).filter((pid) => pid !== child.pid).length >= 8,
            20_000,
          );
          child.kill('SIGKILL');
          await child.exited;
          await sleepReal(700); // its lease runs out
          await engine.refresh();
          await engine.reconcile(run.id);
        }
        const survivors = processesCarrying(marker);
        if (survivors.length > 0)
          failures.push(`trial ${trial}: ${survivors.length} process(es) survived: ${survivors.join(', ')}`);
        else ended++;
        const view = await engine.overview(run.id);
        if (view.runtimes.some((r) => r.status === 'active' || r.status === 'claimed'))
          failures.push(`trial ${trial}: a runtime is still shown live`);
      } finally {
        await engine.close();
      }
    });
  }
  return {
    trials,
    failures,
    note: `each worker leaves a child, a grandchild and a setsid descendant; ${ended} trial(s) checked in /proc: nothing left; even trials stop immediate, odd ones SIGKILL the coordinator and reconcile`,
  };
}

/** Row 12: the coordinator killed again and again during resume; the run converges and nothing runs twice. */
export async function crashDuringResume(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  let kills = 0;
  await inWorkspace('baton-resume-crash-', async (workspace) => {
    const tasks = ['A', 'B', 'C', 'D', 'E', 'F'].map((id, i) => ({
      id,
      ...(i >= 3 ? { depends: [['A', 'B', 'C'][i - 3]!] } : {}),
    }));
    writeFileSync(join(workspace, 'plan.md'), plan(tasks));
    mkdirSync(join(workspace, '.baton'), { recursive: true });
    writeFileSync(join(workspace, '.baton', 'config.json'), config({ leaseSeconds: 5, maxAttempts: 20 }));
    const tracePath = join(workspace, 'trace.txt');
    const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '400' };
    const engine = await Engine.open({ workspace, follow: true });
    try {
      const { run } = await engine.runForPlan('plan.md');
      for (let i = 0; i < trials; i++) {
        if ((await engine.getRun(run.id)).status === 'completed') break;
        const child = new ChildCoordinator(workspace, run.id, { leaseMs: 400, maxConcurrency: 2 }, env);
        // Killed anywhere: while it takes over and reconciles, or mid-run.
        await sleepReal(50 + Math.random() * 600);
        child.kill('SIGKILL');
        await child.exited;
        kills++;
        await sleepReal(450); // its lease runs out
      }
      const outcome = await withWorkerEnv(env, async () =>
        (await coordinateWhenFree(engine, run.id, { maxConcurrency: 2 })).coordinator.run(),
      );
      if (outcome.kind !== 'finished' || outcome.status !== 'completed')
        failures.push(`the run ended ${JSON.stringify(outcome)}`);
      const view = await engine.overview(run.id);
      for (const task of tasks) {
        const completed = view.delegations.filter((d) => d.taskId === task.id && d.status === 'COMPLETED').length;
        if (completed !== 1) failures.push(`${task.id} completed ${completed} times`);
      }
      const accepted = (await engine.listEvents(run.id)).flatMap((e) =>
        e.type === 'ingestion:recorded' && e.data.accepted ? [e.data.taskId] : [],
      );
      const perTask = new Map<string, number>();
      for (const taskId of accepted) perTask.set(taskId, (perTask.get(taskId) ?? 0) + 1);
      for (const [task, n] of perTask) if (n !== 1) failures.push(`${task}: ${n} accepted results`);
      // No two attempts of one task ran at the same time.
      const trace = readTrace(tracePath);
      for (const task of tasks) {
        const spans = trace
          .filter((l) => l.kind === 'start' && l.task === task.id)
          .map((s) => ({
            from: s.at,
            to: trace.find((l) => l.kind === 'end' && l.delegation === s.delegation)?.at ?? Number.POSITIVE_INFINITY,
            d: s.delegation,
          }))
          .sort((a, b) => a.from - b.from);
        for (let i = 1; i < spans.length; i++)
          if (spans[i]!.from < spans[i - 1]!.to && spans[i - 1]!.to !== Number.POSITIVE_INFINITY)
            failures.push(`${task.id}: ${spans[i]!.d} started while ${spans[i - 1]!.d} ran`);
      }
    } finally {
      await engine.close();
    }
  });
  return {
    trials: kills,
    failures,
    note: `6 tasks (3 chains of 2), a coordinator SIGKILLed ${kills} times at a random moment (50–650 ms after it started), then one that finishes`,
  };
}

/**
 * Row 13, the driven case: a coordinator drives a real (hanging) worker on a fake clock; the
 * wall clock jumps forward or back by minutes; the worker's lease must not expire early —
 * the coordinator judges its own workers on the monotonic clock — and renewals go on.
 */
export async function drivenClockJump(trial: number): Promise<string[]> {
  const failures: string[] = [];
  await inWorkspace('baton-jump-', async (workspace) => {
    writeFileSync(join(workspace, 'plan.md'), plan([{ id: 'W' }]));
    mkdirSync(join(workspace, '.baton'), { recursive: true });
    writeFileSync(join(workspace, '.baton', 'config.json'), config({ leaseSeconds: 30, taskTimeoutSeconds: 3600 }));
    const tracePath = join(workspace, 'trace.txt');
    const clock = new FakeClock();
    const engine = await Engine.open({ workspace, clock, follow: true });
    let stopPump: (() => void) | undefined;
    try {
      const { run } = await engine.runForPlan('plan.md');
      await withWorkerEnv({ FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ W: 'hang' }) }, async () => {
        const taken = await engine.coordinate({ runId: run.id, leaseMs: 3_600_000 });
        if (!('coordinator' in taken)) throw new Error('no lease');
        const running = taken.coordinator.run();
        const worker = await waitFor('W to start', () => readTrace(tracePath).find((l) => l.task === 'W'));
        const minutes = (1 + Math.floor(Math.random() * 30)) * (trial % 2 === 0 ? 1 : -1);
        clock.jumpWall(minutes * 60_000);
        await engine.liftStops(run.id); // a store change wakes the coordinator for a pass
        clock.advance(10_000); // the renewal comes due (monotonic)
        await waitFor(
          'the renewal',
          async () => ((await engine.overview(run.id)).runtimes[0]?.heartbeatCount ?? 0) >= 1,
        );
        const view = await engine.overview(run.id);
        if (view.delegations[0]?.status !== 'RUNNING')
          failures.push(`trial ${trial} (${minutes} min): the attempt is ${view.delegations[0]?.status}`);
        if (view.runtimes[0]?.status !== 'active')
          failures.push(`trial ${trial} (${minutes} min): the runtime is ${view.runtimes[0]?.status}`);
        if ((view.runtimes[0]?.leaseExpiresAt ?? 0) <= clock.now())
          failures.push(`trial ${trial} (${minutes} min): the lease ran out`);
        try {
          process.kill(worker.pid, 0);
        } catch {
          failures.push(`trial ${trial} (${minutes} min): the worker was ended`);
        }
        // Ending the worker waits on the injected clock (the grace period): time has to move.
        stopPump = pumpClock(clock);
        await taken.coordinator.shutdown();
        await running;
      });
    } finally {
      stopPump?.();
      await engine.close();
    }
  });
  return failures;
}

/**
 * Row 17: the coordinator SIGKILLed while two plain-command workers (`"result": "exit-code"`)
 * run; they end with nobody watching — A exits 0, B exits 1 (even trials) or is killed by
 * SIGKILL (odd ones). Nothing may call them alive meanwhile; the next coordinator settles both
 * from their exit records as the one that watched would have (A completed, B failed with how it
 * ended), with no second attempt, and a reconcile after it settles nothing again.
 */
export async function keptWork(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const ends = { code: 0, signal: 0 };
  for (let trial = 0; trial < trials; trial++) {
    await inWorkspace('baton-kept-', async (workspace) => {
      const marker = `BATON_WORKSPACE=${workspace}`;
      const bySignal = trial % 2 === 1;
      // Each works until the trial lets it end (the file `go`): it cannot end before its coordinator is killed.
      const worker = (name: string, end: string) => ({
        type: 'process',
        command: 'sh',
        args: ['-c', `touch ${name}.started; while [ ! -e go ]; do sleep 0.05; done; ${end}`],
        result: 'exit-code',
      });
      writeFileSync(
        join(workspace, 'plan.md'),
        plan([
          { id: 'A', worker: 'pass' },
          { id: 'B', worker: 'fail' },
        ]),
      );
      mkdirSync(join(workspace, '.baton'), { recursive: true });
      writeFileSync(
        join(workspace, '.baton', 'config.json'),
        config({
          maxAttempts: 1,
          workers: { pass: worker('a', 'exit 0'), fail: worker('b', bySignal ? 'kill -KILL $$' : 'exit 1') },
        }),
      );
      const engine = await Engine.open({ workspace, follow: true });
      try {
        const { run } = await engine.runForPlan('plan.md');
        const child = new ChildCoordinator(workspace, run.id, { leaseMs: 500, maxConcurrency: 2 });
        // Running, not only recorded: a worker still at its gate never runs once its coordinator is gone.
        await waitFor(
          'both workers to run',
          () => existsSync(join(workspace, 'a.started')) && existsSync(join(workspace, 'b.started')),
          20_000,
        );
        child.kill('SIGKILL');
        await child.exited;
        writeFileSync(join(workspace, 'go'), '');
        await waitFor('both workers to end', () => processesCarrying(marker).length === 0, 20_000);
        await engine.refresh();
        const watchless = await engine.overview(run.id);
        if (!watchless.runtimes.every((r) => r.processGone === true))
          failures.push(`trial ${trial}: a worker that ended was not shown gone`);
        await sleepReal(700); // its coordinator's lease runs out
        const taken = await coordinateWhenFree(engine, run.id);
        const settled = taken.reconcile.entries.filter((e) => e.repair?.startsWith('settled from its exit record'));
        if (settled.length !== 2)
          failures.push(
            `trial ${trial}: settled ${settled.length} from exit records: ${JSON.stringify(taken.reconcile.entries)}; ${readdirSync(
              join(workspace, '.baton/runs', run.id, 'exits'),
            )
              .map((f) => readFileSync(join(workspace, '.baton/runs', run.id, 'exits', f), 'utf8'))
              .join(' | ')}`,
          );
        const outcome = await taken.coordinator.run();
        if (outcome.kind !== 'finished' || outcome.status !== 'failed')
          failures.push(`trial ${trial}: the run ended ${JSON.stringify(outcome)}`);
        const view = await engine.overview(run.id);
        const attempts = view.delegations.map((d) => `${d.taskId}:${d.attempt}:${d.status}`).sort();
        if (attempts.join() !== 'A:1:COMPLETED,B:1:FAILED') failures.push(`trial ${trial}: ${attempts.join()}`);
        // B failed by how it ended, as the result Baton writes for a plain command says.
        const b = view.delegations.find((d) => d.taskId === 'B');
        const how = bySignal ? 'was killed by SIGKILL' : 'exited with code 1';
        const artifact = join(workspace, '.baton', 'runs', run.id, 'artifacts', `${b?.id}.md`);
        const result = existsSync(artifact) ? readFileSync(artifact, 'utf8') : '';
        if (!result.includes(`sh ${how}`)) failures.push(`trial ${trial}: B's result says ${JSON.stringify(result)}`);
        else ends[bySignal ? 'signal' : 'code']++;
        await engine.reconcile(run.id);
        const events = await engine.listEvents(run.id);
        const told = events.filter((e) => e.type === 'runtime:exited').length;
        if (told !== 2) failures.push(`trial ${trial}: ${told} runtime:exited events`);
        if (events.some((e) => e.type === 'runtime:stale')) failures.push(`trial ${trial}: an attempt went stale`);
      } finally {
        await engine.close();
      }
    });
  }
  return {
    trials,
    failures,
    note: `two exit-code workers end after their coordinator was SIGKILLed: B by exit 1 ×${ends.code}, by SIGKILL ×${ends.signal}; shown gone, settled from their exit records, no attempt 2, told once`,
  };
}
