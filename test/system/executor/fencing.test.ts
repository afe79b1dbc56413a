import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { storeDirOf } from '../../../src/engine/engine';
import { EngineFixture } from '../../support/engineFixture';
import { processesCarrying } from '../../support/processes';
import {
  ChildCoordinator,
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

/** The state letter of /proc/<pid>/stat: T when stopped by a signal. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
  } catch {
    return undefined;
  }
}

async function summary(engine: Engine, runId: string): Promise<string[]> {
  return (await engine.overview(runId)).delegations.map((d) => `${d.id}:${d.status}`);
}

describe('fencing: a coordinator stopped between its check and its side effect (SIGSTOP at a fault point)', () => {
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
          await waitFor(`the first coordinator to stop ${moment}`, () => processState(first.pid) === 'T');
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
      const worker = await waitFor('attempt 1 to start', () => readTrace(tracePath).find((l) => l.kind === 'start'));
      if (atFault)
        await waitFor('the first coordinator to stop at its kill', () => processState(first.pid) === 'T', 20_000);
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
        assert.deepEqual(repairs, ['D-A-coder-001: ended 1 process(es)']);
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
});
