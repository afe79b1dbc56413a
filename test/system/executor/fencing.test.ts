import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { storeDirOf } from '../../../src/engine/engine';
import { FileStore } from '../../../src/engine/store/fileStore';
import { requestStop as requestStopOperation } from '../../../src/engine/operations/stops/stopRequests';
import { EngineFixture } from '../../support/engineFixture';
import { processesCarrying } from '../../support/processes';
import {
  ChildCoordinator,
  FAKE_CLAUDE,
  config,
  coordinateWhenFree,
  killQuietly,
  pidAlive,
  plan,
  readTrace,
  sleepReal,
  stopOutsideCommit,
  waitFor,
  withWorkerEnv,
} from '../../fixtures/executor/harness';
import { pidNamespaceLauncher } from '../../../src/engine/effects/processes/pidNamespace';
import { hostPid, PID_TOKEN_EXPRESSION } from '../../support/pidToken';

/** The state letter of /proc/<pid>/stat: T when stopped by a signal. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

/** How long a child coordinator may take to get going: a bundle, a store, real workers, on a shared 2-core machine. */
const STARTUP_MS = 60_000;

async function summary(engine: Engine, runId: string): Promise<string[]> {
  return (await engine.overview(runId)).delegations.map((d) => `${d.id}:${d.status}`);
}

describe('fencing: a coordinator stopped between its check and its side effect (SIGSTOP at a fault point)', function () {
  this.timeout(180_000);
  let fixture: EngineFixture;
  const children: ChildCoordinator[] = [];
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    for (const pid of processesCarrying(`BATON_WORKSPACE=${fixture.workspace}`)) killQuietly(pid, fixture.workspace);
    await fixture.dispose();
  });

  const launchMoments = [
    ['launch:after-fence', 'after the fence, before the spawn'],
    ['launch:before-release', 'after the spawn and its record, before the worker is let go'],
  ] as const;
  for (const [point, moment] of launchMoments) {
    for (const signal of ['SIGSTOP', 'SIGKILL'] as const) {
      it(`item 1: a coordinator ${signal === 'SIGSTOP' ? 'stopped' : 'killed'} ${moment} never runs the attempt its successor retried`, async () => {
        fixture.write('.baton/config.json', config({ leaseSeconds: 5 }));
        fixture.write('plan.md', plan([{ id: 'A' }]));
        const tracePath = join(fixture.workspace, 'trace.txt');
        const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '300' };
        const engine = await fixture.open({ follow: true });
        const { run } = await engine.runForPlan('plan.md');
        const first = new ChildCoordinator(
          fixture.workspace,
          run.id,
          { leaseMs: 600 },
          { ...env, BATON_FAULT_POINT: point, BATON_FAULT_SIGNAL: signal },
        );
        children.push(first);
        if (signal === 'SIGSTOP')
          await waitFor(`the first coordinator to stop ${moment}`, () => processState(first.pid) === 'T', STARTUP_MS);
        else assert.equal((await first.exited).signal, 'SIGKILL');

        const outcome = await withWorkerEnv(env, async () => {
          const taken = await coordinateWhenFree(engine, run.id);
          const running = taken.coordinator.run();
          // The old coordinator wakes while its successor drives: it must not start attempt 1 now.
          first.kill('SIGCONT');
          return running;
        });
        assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
        if (signal === 'SIGSTOP') {
          const exit = await Promise.race([first.exited, sleepReal(10_000).then(() => undefined)]);
          assert.ok(exit, 'the woken coordinator ended');
          assert.equal((first.find('outcome') as { kind: string } | undefined)?.kind, 'lease-lost', first.stderr);
        }
        // Give a late start time to show itself in the trace.
        await sleepReal(500);
        const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
        assert.deepEqual(
          starts.map((s) => s.delegation),
          ['D-A-coder-002'],
          'only the retry ran; attempt 1 was never started by anyone',
        );
        assert.deepEqual(await summary(engine, run.id), ['D-A-coder-001:STALE', 'D-A-coder-002:COMPLETED']);
        assert.deepEqual(
          processesCarrying(`BATON_WORKSPACE=${fixture.workspace}`).filter((pid) => pid !== first.pid),
          [],
          'nothing of attempt 1 is left running',
        );
      });
    }
  }

  for (const when of ['after the fence, before the kill', 'before its timer fired'] as const) {
    it(`item 2: a task timeout of a coordinator stopped ${when} never kills a worker its successor adopted`, async () => {
      // The first coordinator runs with a 2 s task timeout; the person raises it and resumes elsewhere.
      fixture.write('.baton/config.json', config({ leaseSeconds: 5, taskTimeoutSeconds: 2, stopGraceSeconds: 1 }));
      fixture.write('plan.md', plan([{ id: 'A' }]));
      const tracePath = join(fixture.workspace, 'trace.txt');
      const atFault = when === 'after the fence, before the kill';
      // At the fault, attempt 1 hangs (only its timeout ends it); otherwise it ends after 4.5 s, past the old timeout.
      const env: Record<string, string> = atFault
        ? { FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ 'D-A-coder-001': 'hang' }) }
        : { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '4500' };
      const engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const first = new ChildCoordinator(
        fixture.workspace,
        run.id,
        { leaseMs: 600 },
        atFault ? { ...env, BATON_FAULT_POINT: 'kill:after-fence', BATON_FAULT_SIGNAL: 'SIGSTOP' } : env,
      );
      children.push(first);
      const worker = await waitFor(
        'attempt 1 to start',
        () => readTrace(tracePath).find((l) => l.kind === 'start'),
        STARTUP_MS,
      );
      if (atFault)
        await waitFor('the first coordinator to stop at its kill', () => processState(first.pid) === 'T', STARTUP_MS);
      else await stopOutsideCommit(first, storeDirOf(fixture.workspace));
      fixture.write('.baton/config.json', config({ leaseSeconds: 5, taskTimeoutSeconds: 600 }));
      const successor = await fixture.open({ follow: true });

      let repairs: string[] = [];
      const outcome = await withWorkerEnv(env, async () => {
        const taken = await coordinateWhenFree(successor, run.id);
        repairs = taken.reconcile.entries.filter((e) => e.repair).map((e) => `${e.delegationId}: ${e.repair}`);
        const running = taken.coordinator.run();
        if (!atFault) await sleepReal(2500); // its task timeout passes while it is stopped
        first.kill('SIGCONT');
        return running;
      });
      assert.deepEqual(
        outcome,
        { kind: 'finished', status: 'completed' },
        JSON.stringify((await successor.overview(run.id)).delegations),
      );
      await Promise.race([first.exited, sleepReal(10_000)]);
      const view = await successor.overview(run.id);
      const attempt1 = view.delegations.find((d) => d.id === 'D-A-coder-001')!;
      assert.doesNotMatch(
        attempt1.reason ?? '',
        /killed by SIG/,
        'no worker was killed under the coordinator that drove it',
      );
      if (atFault) {
        // The timeout was decided (and recorded) while the first coordinator held the run: the successor respects it.
        assert.equal(attempt1.status, 'FAILED');
        assert.match(attempt1.reason ?? '', /timed out after 2 s/);
        // ... and ends the worker of that decided attempt itself, before it dispatches the retry.
        // Two: the worker and its exit waiter (docs/workers.md, "The exit record"); three where unshare holds the
        // worker's PID namespace ("Process identity").
        const ended = 'unavailable' in pidNamespaceLauncher() ? 2 : 3;
        assert.deepEqual(repairs, [`D-A-coder-001: ended ${ended} process(es)`]);
        assert.deepEqual(
          view.delegations.map((d) => `${d.id}:${d.status}`),
          ['D-A-coder-001:FAILED', 'D-A-coder-002:COMPLETED'],
        );
      } else {
        // Stopped before deciding: the successor adopted the worker and let it run; the old timer decided nothing.
        assert.deepEqual(repairs, ['D-A-coder-001: adopted: lease renewed by this coordinator']);
        assert.deepEqual(
          view.delegations.map((d) => `${d.id}:${d.status}`),
          ['D-A-coder-001:COMPLETED'],
        );
      }
      assert.equal(pidAlive(worker.pid), false);
    });
  }

  it('item 2b: a budget crossing is decided before the kill: a coordinator stopped at its kill leaves a cancelled attempt its successor ends, and adopts nothing it could kill', async () => {
    // A stand-in Claude Code that streams tool calls for ~20 s; the task budget is crossed after a few of them.
    const claude = join(fixture.workspace, 'bin', 'claude');
    fixture.write('bin/.keep', '');
    copyFileSync(FAKE_CLAUDE, claude);
    chmodSync(claude, 0o755);
    fixture.write(
      '.baton/config.json',
      config({
        leaseSeconds: 5,
        stopGraceSeconds: 1,
        defaultWorker: 'claude',
        workers: { claude: { type: 'claude-code', executable: claude } },
        budget: { task: { tokens: 250 } },
      }),
    );
    fixture.write('plan.md', plan([{ id: 'A' }]));
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const first = new ChildCoordinator(
      fixture.workspace,
      run.id,
      { leaseMs: 600 },
      {
        FAKE_CLAUDE_STEPS: '40',
        FAKE_CLAUDE_STEP_MS: '500',
        BATON_FAULT_POINT: 'kill:after-fence',
        BATON_FAULT_SIGNAL: 'SIGSTOP',
      },
    );
    children.push(first);
    await waitFor('the first coordinator to stop at its kill', () => processState(first.pid) === 'T', STARTUP_MS);
    await engine.refresh();
    let view = await engine.overview(run.id);
    const worker = view.runtimes.find((r) => r.delegationId === 'D-A-coder-001')?.pid;
    assert.ok(worker && pidAlive(worker), `the agent still runs while its coordinator is stopped (pid ${worker})`);
    // The decision went through the fenced store before any signal: the attempt is over, the task at its gate.
    assert.deepEqual(await summary(engine, run.id), ['D-A-coder-001:CANCELLED']);
    const gate = view.gates.find((g) => g.kind === 'budget');
    assert.equal(gate?.status, 'open', JSON.stringify(view.gates));
    assert.match(gate!.reason, /the task budget of 250 tokens is used up/);

    // The successor finds a decided attempt with a live process: it ends it, and has nothing to adopt.
    const taken = await coordinateWhenFree(engine, run.id);
    const repairs = taken.reconcile.entries.filter((e) => e.repair).map((e) => `${e.delegationId}: ${e.repair}`);
    const running = taken.coordinator.run();
    first.kill('SIGCONT'); // the old coordinator's late kill finds nothing of anyone's left to kill
    const outcome = await running;
    assert.equal(outcome.kind, 'paused', JSON.stringify(outcome));
    assert.equal(repairs.length, 1, JSON.stringify(repairs));
    assert.match(repairs[0]!, /^D-A-coder-001: ended \d+ process\(es\)$/);
    assert.equal(pidAlive(worker), false);
    await Promise.race([first.exited, sleepReal(10_000)]);
    view = await engine.overview(run.id);
    assert.deepEqual(await summary(engine, run.id), ['D-A-coder-001:CANCELLED']);
    assert.equal(view.tasks[0]!.status, 'gated');
    assert.deepEqual(
      processesCarrying(`BATON_WORKSPACE=${fixture.workspace}`).filter((pid) => pid !== first.pid),
      [],
      'nothing of the attempt is left running',
    );
  });

  /**
   * A verify command that notes its start and end (also on TERM) and passes once the file `release` exists. It names
   * itself by its pid in its PID namespace (test/support/pidToken.ts).
   */
  const SLOW_CHECK = [
    `const fs = require('node:fs');`,
    `const self = ${PID_TOKEN_EXPRESSION};`,
    `const note = (what) => fs.appendFileSync('checks.txt', what + ' ' + self + ' ' + Date.now() + '\\n');`,
    `note('start');`,
    `process.on('SIGTERM', () => { note('end'); process.exit(143); });`,
    `setInterval(() => { if (fs.existsSync('release')) { note('end'); process.exit(0); } }, 20);`,
  ].join('\n');

  /** [pid, from, to] of every run of the check (the machine's pid while it runs, else NaN); a running one ends now. */
  function checkRuns(): Array<{ pid: number; from: number; to: number }> {
    let text: string;
    try {
      text = readFileSync(join(fixture.workspace, 'checks.txt'), 'utf8');
    } catch {
      return [];
    }
    const lines = text
      .trim()
      .split('\n')
      .map((l) => l.split(' '));
    // A run's end is the first after its start with its name: a PID namespace that ended may lend its name to the next.
    return lines.flatMap(([kind, pid, at], i) =>
      kind === 'start'
        ? [
            {
              pid: hostPid(pid!),
              from: Number(at),
              to: Number(lines.slice(i).find(([k, p]) => k === 'end' && p === pid)?.[2] ?? Date.now()),
            },
          ]
        : [],
    );
  }

  const verifyFaults = [
    ['SIGKILL', 'killed while its verify command runs'],
    ['SIGSTOP', 'stopped while its verify command runs'],
    ['verify:after-fence', 'stopped after the fence, before its verify command starts'],
  ] as const;
  for (const [fault, what] of verifyFaults) {
    it(`item 3: a coordinator ${what}: its verify command is found and ended before the successor verifies, never run twice at once, never orphaned`, async () => {
      fixture.write('check.js', SLOW_CHECK);
      fixture.write('.baton/config.json', config({ leaseSeconds: 5 }));
      fixture.write('plan.md', plan([{ id: 'V', verify: [[process.execPath, 'check.js']] }]));
      const engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const atFault = fault === 'verify:after-fence';
      const first = new ChildCoordinator(
        fixture.workspace,
        run.id,
        { leaseMs: 600 },
        atFault ? { BATON_FAULT_POINT: fault, BATON_FAULT_SIGNAL: 'SIGSTOP' } : {},
      );
      children.push(first);
      if (atFault)
        await waitFor('the coordinator to stop before verifying', () => processState(first.pid) === 'T', STARTUP_MS);
      else {
        await waitFor('the verify command to start', () => checkRuns().length === 1, STARTUP_MS);
        if (fault === 'SIGKILL') {
          first.kill('SIGKILL');
          await first.exited;
        } else await stopOutsideCommit(first, storeDirOf(fixture.workspace));
      }
      const taken = await coordinateWhenFree(engine, run.id);
      const running = taken.coordinator.run();
      await waitFor(
        'the successor to start its verification',
        () => checkRuns().length >= (atFault ? 1 : 2),
        STARTUP_MS,
      );
      first.kill('SIGCONT'); // a stopped predecessor wakes while its successor verifies
      await sleepReal(300);
      fixture.write('release', '');
      assert.deepEqual(await running, { kind: 'finished', status: 'completed' });
      await Promise.race([first.exited, sleepReal(10_000)]);
      await sleepReal(300); // a late start would show now

      const runs = checkRuns().sort((a, b) => a.from - b.from);
      assert.equal(
        runs.length,
        atFault ? 1 : 2,
        `the check ran once by each coordinator that got to run it: ${JSON.stringify(runs)}`,
      );
      for (let i = 1; i < runs.length; i++)
        assert.ok(
          runs[i]!.from >= runs[i - 1]!.to,
          `a verify command started while another still ran: ${JSON.stringify(runs)}`,
        );
      for (const r of runs) assert.equal(pidAlive(r.pid), false, `verify command ${r.pid} is gone`);
      const view = await engine.overview(run.id);
      assert.deepEqual(
        view.delegations.map((d) => `${d.id}:${d.status}`),
        ['D-V-coder-001:COMPLETED'],
      );
    });
  }

  for (const who of ['its coordinator', 'the stopping process, its coordinator dead'] as const) {
    it(`item 3: an immediate stop during verification ends the verify command (applied by ${who}), reports it, and opens no gate`, async () => {
      fixture.write('check.js', SLOW_CHECK);
      fixture.write('.baton/config.json', config({ leaseSeconds: 5, stopGraceSeconds: 1 }));
      fixture.write('plan.md', plan([{ id: 'V', verify: [[process.execPath, 'check.js']] }]));
      const engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const inProcess = who === 'its coordinator';
      let running: Promise<unknown> | undefined;
      if (inProcess) {
        const taken = await engine.coordinate({ runId: run.id });
        assert.ok('coordinator' in taken);
        running = taken.coordinator.run();
      } else {
        const child = new ChildCoordinator(fixture.workspace, run.id, { leaseMs: 600 });
        children.push(child);
        await waitFor('the verify command to start', () => checkRuns().length === 1, STARTUP_MS);
        child.kill('SIGKILL');
        await child.exited;
        await sleepReal(700); // its lease runs out: nobody coordinates
      }
      await waitFor('the verify command to start', () => checkRuns().length === 1, STARTUP_MS);
      const check = checkRuns()[0]!;
      const { request, appliedBy } = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'test' });
      assert.equal(appliedBy, inProcess ? 'coordinator' : 'this process');
      if (running) await running;
      assert.equal(pidAlive(check.pid), false, 'the verify command is gone');
      const entry = request.report.find((e) => e.delegationId === 'D-V-coder-001');
      assert.ok(
        entry?.processes.includes(check.pid),
        `the report lists the verify command: ${JSON.stringify(request.report)}`,
      );
      assert.equal(entry!.confirmed, true);
      await engine.refresh();
      const view = await engine.overview(run.id);
      assert.deepEqual(
        view.delegations.map((d) => `${d.id}:${d.status}`),
        ['D-V-coder-001:CANCELLED'],
      );
      assert.deepEqual(
        view.gates.filter((g) => g.status === 'open').map((g) => g.kind),
        [],
      );
    });
  }

  for (const how of ['asked for while it is paused', 'left pending when its coordinator is taken over'] as const) {
    it(`item 4: a stop ${how} cancels every attempt (not STALE) and reports them all`, async () => {
      // Worker leases run out while the coordinator is paused: a lease expiry must not win over a person's stop.
      fixture.write('.baton/config.json', config({ leaseSeconds: 5, stopGraceSeconds: 1 }));
      fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
      const tracePath = join(fixture.workspace, 'trace.txt');
      const env = { FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ A: 'hang', B: 'hang' }) };
      const engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const paused = how === 'asked for while it is paused';
      const first = new ChildCoordinator(
        fixture.workspace,
        run.id,
        { leaseMs: paused ? 15_000 : 600, maxConcurrency: 2 },
        env,
      );
      children.push(first);
      const workers = await waitFor(
        'both workers to start',
        () => {
          const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
          return starts.length === 2 ? starts : undefined;
        },
        STARTUP_MS,
      );
      await stopOutsideCommit(first, storeDirOf(fixture.workspace));
      await sleepReal(5500); // the workers' leases run out

      let report;
      if (paused) {
        // Its coordinator lease still runs; the coordinator cannot apply anything while stopped: this process does.
        const stop = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'test', waitMs: 2000 });
        assert.equal(stop.appliedBy, 'this process');
        report = stop.request.report;
        first.kill('SIGCONT');
        const said = await Promise.race([first.exited.then(() => first.find('outcome')), sleepReal(15_000)]);
        assert.deepEqual(said, { kind: 'paused', status: 'paused', openGates: 0, stopped: true }, first.stderr);
      } else {
        // A `baton stop` that recorded its request and died before applying it.
        const store = await FileStore.open(storeDirOf(fixture.workspace));
        try {
          await store.transact((tx) =>
            requestStopOperation(tx, { runId: run.id, mode: 'immediate', by: 'test' }, Date.now()),
          );
        } finally {
          await store.close();
        }
        await engine.refresh();
        const taken = await coordinateWhenFree(engine, run.id);
        assert.deepEqual(await taken.coordinator.run(), {
          kind: 'paused',
          status: 'paused',
          openGates: 0,
          stopped: true,
        });
        report = (await engine.diagnose(run.id)).stops[0]!.report;
      }
      assert.deepEqual(
        report.map((e) => `${e.delegationId}:${e.confirmed}`).sort(),
        ['D-A-coder-001:true', 'D-B-coder-001:true'],
        JSON.stringify(report),
      );
      await engine.refresh();
      assert.deepEqual(await summary(engine, run.id), ['D-A-coder-001:CANCELLED', 'D-B-coder-001:CANCELLED']);
      for (const w of workers) assert.equal(pidAlive(w.pid), false);
    });
  }
});
