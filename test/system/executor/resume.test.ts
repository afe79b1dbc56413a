import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../../../src/engine/index';
import { storeDirOf } from '../../../src/engine/engine';
import { FileStore } from '../../../src/engine/store/fileStore';
import { runPaths } from '../../../src/engine/effects/workspaceLayout';
import { systemIds } from '../../../src/engine/domain/clock';
import { claimDelegation } from '../../../src/engine/operations/delegations/claimDelegation';
import { enqueueDelegation } from '../../../src/engine/operations/delegations/enqueueDelegation';
import { spawnWorker } from '../../../src/engine/effects/processes/spawnSupervised';
import { workerLaunch } from '../../../src/engine/domain/workerLaunch';
import { EngineFixture } from '../../support/engineFixture';
import { hostPid, PID_TOKEN_EXPRESSION } from '../../support/pidToken';
import {
  ATTEMPT_WORKER,
  ChildCoordinator,
  config,
  coordinateWhenFree,
  killQuietly,
  PID_TOKEN_SH,
  pidAlive,
  plan,
  readTrace,
  stopOutsideCommit,
  waitFor,
  withWorkerEnv,
  type TraceLine,
} from '../../fixtures/executor/harness';

/** [start, end] of every attempt in the trace; an attempt that never ended lasts until `killedAt` (or now). */
function intervals(
  trace: TraceLine[],
  killedAt: Map<string, number>,
): Map<string, Array<{ delegation: string; from: number; to: number }>> {
  const byTask = new Map<string, Array<{ delegation: string; from: number; to: number }>>();
  for (const start of trace.filter((l) => l.kind === 'start')) {
    const end = trace.find((l) => l.kind === 'end' && l.delegation === start.delegation);
    const list = byTask.get(start.task) ?? [];
    list.push({
      delegation: start.delegation,
      from: start.at,
      to: end?.at ?? killedAt.get(start.delegation) ?? Date.now(),
    });
    byTask.set(start.task, list);
  }
  return byTask;
}

async function acceptedIngestions(engine: Engine, runId: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const e of await engine.listEvents(runId)) {
    if (e.type === 'ingestion:recorded' && e.data.accepted)
      counts.set(String(e.data.taskId), (counts.get(String(e.data.taskId)) ?? 0) + 1);
  }
  return counts;
}

describe('coordinator: crash, takeover and resume (coordinators in child processes)', () => {
  let fixture: EngineFixture;
  const children: ChildCoordinator[] = [];
  const pids: number[] = [];
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    for (const pid of pids.splice(0)) killQuietly(pid, fixture.workspace);
    for (const line of readTrace(join(fixture.workspace, 'trace.txt')))
      if (line.kind === 'start') killQuietly(line.pid, fixture.workspace);
    await fixture.dispose();
  });

  it('after the coordinator is SIGKILLed mid-run, a new one adopts live workers, settles one that died from its exit record (and retries it), and every task completes exactly once', async () => {
    fixture.write('.baton/config.json', config({ leaseSeconds: 5, maxAttempts: 3 }));
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }, { id: 'C' }, { id: 'D', depends: ['A'] }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    // Long enough that the survivor still runs when the next coordinator takes over (its lease of 1 s ran out, and
    // its reconcile ran) on a loaded machine; at 2 s it sometimes finished first and was settled instead of adopted.
    const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '4000' };
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');

    const first = new ChildCoordinator(fixture.workspace, run.id, { leaseMs: 1000, maxConcurrency: 2 }, env);
    children.push(first);
    const running = await waitFor('two workers of the first coordinator', () => {
      const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
      return starts.length >= 2 ? starts : undefined;
    });
    for (const s of running) pids.push(s.pid);
    first.kill('SIGKILL');
    assert.equal((await first.exited).signal, 'SIGKILL');
    // One worker dies with its coordinator (killed: its exit record says so); the other lives on.
    const [survivor, casualty] = running as [TraceLine, TraceLine];
    process.kill(casualty.pid, 'SIGKILL');
    const killedAt = new Map([[casualty.delegation, Date.now()]]);
    await waitFor('the worker to die', () => !pidAlive(casualty.pid));
    assert.equal(pidAlive(survivor.pid), true);

    const outcome = await withWorkerEnv(env, async () => {
      const taken = await coordinateWhenFree(engine, run.id, { maxConcurrency: 2 });
      const repairs = taken.reconcile.entries.filter((e) => e.repair).map((e) => `${e.delegationId}: ${e.repair}`);
      assert.deepEqual(
        repairs.sort(),
        [
          `${casualty.delegation}: settled from its exit record: FAILED: the worker was killed by SIGKILL without a result`,
          `${survivor.delegation}: adopted: lease renewed by this coordinator`,
        ].sort(),
      );
      return taken.coordinator.run();
    });
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });

    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.tasks.map((t) => `${t.id}:${t.status}`),
      ['A:completed', 'B:completed', 'C:completed', 'D:completed'],
    );
    for (const task of ['A', 'B', 'C', 'D']) {
      assert.equal(
        view.delegations.filter((d) => d.taskId === task && d.status === 'COMPLETED').length,
        1,
        `${task} completed once`,
      );
    }
    // Known, not stale: killed by SIGKILL, as the coordinator that watched would have seen it.
    assert.equal(view.delegations.find((d) => d.id === casualty.delegation)!.status, 'FAILED');
    assert.equal(
      view.delegations.find((d) => d.id === survivor.delegation)!.status,
      'COMPLETED',
      'the adopted worker finished its attempt',
    );
    assert.deepEqual([...(await acceptedIngestions(engine, run.id)).entries()].sort(), [
      ['A', 1],
      ['B', 1],
      ['C', 1],
      ['D', 1],
    ]);
    const trace = readTrace(tracePath);
    for (const [task, list] of intervals(trace, killedAt)) {
      const sorted = [...list].sort((a, b) => a.from - b.from);
      for (let i = 1; i < sorted.length; i++) {
        assert.ok(
          sorted[i]!.from >= sorted[i - 1]!.to,
          `${task}: ${sorted[i]!.delegation} started before ${sorted[i - 1]!.delegation} ended`,
        );
      }
    }
    assert.equal(trace.filter((l) => l.kind === 'end').length, 4, 'each task produced one result');
  });

  it('does not run a verify command again on resume when it passed for the same artifact; receipts record command, exit, duration, output digest and log', async () => {
    fixture.write(
      'count.js',
      `require('node:fs').appendFileSync('runs.txt', 'cmd1 ' + ${PID_TOKEN_EXPRESSION} + '\\n'); console.log('cmd1 ok');\n`,
    );
    fixture.write(
      'slow.js',
      [
        `const fs = require('node:fs');`,
        `fs.appendFileSync('runs.txt', 'cmd2 ' + ${PID_TOKEN_EXPRESSION} + '\\n');`,
        `const check = () => { if (fs.existsSync('release')) { console.log('cmd2 ok'); process.exit(0); } };`,
        `check(); setInterval(check, 20);`,
      ].join('\n'),
    );
    fixture.write('.baton/config.json', config());
    fixture.write(
      'plan.md',
      plan([
        {
          id: 'V',
          verify: [
            [process.execPath, 'count.js'],
            [process.execPath, 'slow.js'],
          ],
        },
      ]),
    );
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const runs = (): string[] =>
      existsSync(join(fixture.workspace, 'runs.txt'))
        ? readFileSync(join(fixture.workspace, 'runs.txt'), 'utf8').trim().split('\n')
        : [];

    const first = new ChildCoordinator(fixture.workspace, run.id, { leaseMs: 1000 });
    children.push(first);
    // Killed between the two commands: the first passed, the second is running.
    const cmd2 = await waitFor('the second verify command to start', () => runs().find((l) => l.startsWith('cmd2')));
    pids.push(hostPid(cmd2.split(' ')[1]!));
    first.kill('SIGKILL');
    await first.exited;
    assert.equal((await engine.overview(run.id)).tasks[0]!.status, 'verifying');
    fixture.write('release', '');

    const taken = await coordinateWhenFree(engine, run.id);
    assert.deepEqual(
      taken.reconcile.entries.map((e) => e.classification),
      ['verifying: the coordinator finishes it (passed commands are not run again)'],
    );
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });

    assert.deepEqual(
      runs().map((l) => l.split(' ')[0]),
      ['cmd1', 'cmd2', 'cmd2'],
      'cmd1 ran once; cmd2, which had not passed, ran again',
    );
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-V-coder-001:COMPLETED'],
    );
    assert.match(view.delegations[0]!.reason ?? '', /verified \(2 commands\)/);

    await engine.refresh();
    const store = await FileStore.open(storeDirOf(fixture.workspace));
    try {
      const receipts = await store.read((r) =>
        r.all<{
          delegation_id: string;
          command_json: string;
          exit_code: number | null;
          duration_ms: number;
          output_digest: string;
          log_path: string;
          artifact_digest: string;
        }>(
          `SELECT delegation_id, command_json, exit_code, duration_ms, output_digest, log_path, artifact_digest FROM verification_receipts WHERE run_id = ? ORDER BY id`,
          [run.id],
        ),
      );
      assert.deepEqual(
        receipts.map((r) => [r.delegation_id, JSON.parse(r.command_json)[1], r.exit_code]),
        [
          ['D-V-coder-001', 'count.js', 0],
          ['D-V-coder-001', 'slow.js', 0],
        ],
      );
      for (const r of receipts) {
        assert.match(r.output_digest, /^sha256:[0-9a-f]{64}$/);
        assert.match(r.artifact_digest, /^sha256:[0-9a-f]{64}$/);
        assert.ok(r.duration_ms >= 0);
        assert.ok(existsSync(r.log_path));
      }
      const log = readFileSync(receipts[0]!.log_path, 'utf8');
      assert.match(log, /count\.js\n\(passed before for this artifact; not run again\)/);
      assert.match(log, /cmd2 ok/);
    } finally {
      await store.close();
    }
  });

  it('lets exactly one of two coordinator processes started together drive; the other observes; after the driver releases, a later one takes the lease', async () => {
    fixture.write('.baton/config.json', config());
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const env = { FAKE_DELAY_MS: '200' };
    const pair = [
      new ChildCoordinator(fixture.workspace, run.id, { holdMs: 1500 }, env),
      new ChildCoordinator(fixture.workspace, run.id, { holdMs: 1500 }, env),
    ];
    children.push(...pair);
    const exits = await Promise.all(pair.map((c) => c.exited));
    assert.deepEqual(
      exits.map((e) => e.code),
      [0, 0],
      pair.map((c) => c.stderr).join('\n'),
    );
    const drivers = pair.filter((c) => c.find('taken'));
    const observers = pair.filter((c) => c.find('held'));
    assert.equal(drivers.length, 1, 'exactly one drives');
    assert.equal(observers.length, 1, 'the other observes');
    assert.equal(observers[0]!.find('held')!.holder.endsWith(`:${drivers[0]!.pid}`), true, 'it is told who drives');
    assert.deepEqual(drivers[0]!.find('outcome'), { kind: 'finished', status: 'completed' });
    const later = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in later, 'the released lease can be taken');
    assert.ok(later.coordinator.leaseEpoch > drivers[0]!.find('taken')!.epoch);
    assert.deepEqual(await later.coordinator.run(), { kind: 'finished', status: 'completed' });
  });

  it('a coordinator paused past its lease is superseded: its writes are refused, it steps down, and its successor ingests the result once', async () => {
    fixture.write('.baton/config.json', config({ leaseSeconds: 5 }));
    fixture.write('plan.md', plan([{ id: 'P' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    const env = { FAKE_TRACE: tracePath, FAKE_DELAY_MS: '1500' };
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const first = new ChildCoordinator(fixture.workspace, run.id, { leaseMs: 900 }, env);
    children.push(first);
    const worker = await waitFor('P to start', () => readTrace(tracePath).find((l) => l.kind === 'start'));
    pids.push(worker.pid);
    const firstEpoch = first.find('taken')!.epoch;
    await stopOutsideCommit(first, storeDirOf(fixture.workspace));
    const taken = await coordinateWhenFree(engine, run.id);
    assert.ok(taken.coordinator.leaseEpoch > firstEpoch);
    assert.deepEqual(
      taken.reconcile.entries.map((e) => e.repair),
      ['adopted: lease renewed by this coordinator'],
    );
    first.kill('SIGCONT');
    const outcome = await taken.coordinator.run();
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
    await first.exited;
    const stepped = first.find('outcome') as { kind: string; detail: string };
    assert.equal(stepped.kind, 'lease-lost', first.stderr);
    assert.match(stepped.detail, new RegExp(`epoch ${firstEpoch}\\) no longer holds run`));
    assert.deepEqual([...(await acceptedIngestions(engine, run.id)).entries()], [['P', 1]]);
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-P-coder-001:COMPLETED'],
    );
  });
});

describe('reconcile: a worker its coordinator started but never recorded', () => {
  let fixture: EngineFixture;
  const pids: number[] = [];
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    for (const pid of pids.splice(0)) killQuietly(pid, fixture.workspace);
    for (const line of readTrace(join(fixture.workspace, 'trace.txt')))
      if (line.kind === 'start') killQuietly(line.pid, fixture.workspace);
    await fixture.dispose();
  });

  it('finds it by the runtime marker in its environment and adopts it instead of starting a second attempt beside it', async () => {
    fixture.write('.baton/config.json', config());
    fixture.write('plan.md', plan([{ id: 'A' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    // What a coordinator leaves when it dies between spawning the worker and recording its pid.
    const paths = runPaths(fixture.workspace, run.id);
    const store = await FileStore.open(storeDirOf(fixture.workspace));
    let claim;
    try {
      claim = await store.transact(async (tx) => {
        const queued = await enqueueDelegation(tx, { runId: run.id, taskId: 'A' }, Date.now());
        const claimed = await claimDelegation(
          tx,
          { runId: run.id, delegationId: queued.id, leaseMs: 60_000, holder: 'vm:1' },
          { now: Date.now(), ids: systemIds() },
        );
        await tx.run(`UPDATE runtimes SET worker = 'fake', log_path = ?, cwd = ? WHERE id = ?`, [
          paths.log(claimed.delegation.id),
          fixture.workspace,
          claimed.runtimeId,
        ]);
        return claimed;
      });
    } finally {
      await store.close();
    }
    const artifactPath = paths.artifact(claim.delegation.id);
    const worker = await withWorkerEnv({ FAKE_TRACE: tracePath, FAKE_DELAY_MS: '800' }, () =>
      spawnWorker(
        workerLaunch(
          'fake',
          { type: 'process', command: process.execPath, args: [ATTEMPT_WORKER, '{taskId}'], env: {} },
          { prompt: 'p', promptFile: '', artifactPath, taskId: 'A', workspace: fixture.workspace },
        ),
        {
          cwd: fixture.workspace,
          logPath: paths.log(claim.delegation.id),
          env: {
            BATON_RUN_ID: run.id,
            BATON_DELEGATION_ID: claim.delegation.id,
            BATON_RUNTIME_ID: claim.runtimeId,
            BATON_ARTIFACT_PATH: artifactPath,
            BATON_WORKSPACE: fixture.workspace,
          },
        },
      ),
    );
    pids.push(worker.identity.pid);
    await waitFor('the worker to start', () => readTrace(tracePath).length > 0);

    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    assert.deepEqual(
      taken.reconcile.entries.map((e) => `${e.delegationId}: ${e.repair}`),
      [`${claim.delegation.id}: adopted: lease renewed by this coordinator`],
    );
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-A-coder-001:COMPLETED'],
    );
    assert.equal(readTrace(tracePath).filter((l) => l.kind === 'start').length, 1, 'no second attempt ran');
  });
});

describe('verification: retried attempts, timeouts and the processes of verify commands', () => {
  let fixture: EngineFixture;
  const pids: number[] = [];
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
  });
  afterEach(async () => {
    for (const pid of pids.splice(0)) killQuietly(pid, fixture.workspace);
    await fixture.dispose();
  });

  it('kills a verify command that outlives its timeout together with everything it started, and fails the verification at once', async () => {
    fixture.write('.baton/config.json', config({ verifyTimeoutSeconds: 1 }));
    // Each process notes its own pid (PID_TOKEN_SH); the shell waits for all three before it sleeps.
    const script = `sh -c '${PID_TOKEN_SH} >> pids; exec sleep 600' & setsid sh -c '${PID_TOKEN_SH} >> pids; exec sleep 600' & ${PID_TOKEN_SH} >> pids; until [ "$(wc -l < pids)" -ge 3 ]; do sleep 0.05; done; sleep 600`;
    fixture.write('plan.md', plan([{ id: 'V', verify: [['sh', '-c', script]] }]));
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    const started = Date.now();
    assert.deepEqual(await taken.coordinator.run(), { kind: 'paused', status: 'paused', openGates: 1, stopped: false });
    // Long before its command's 600 s: the 1 s timeout ended it (a bound that holds at load 10).
    assert.ok(
      Date.now() - started < 45_000,
      `verification ended soon after its 1 s timeout (${Date.now() - started} ms)`,
    );
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.equal(gate!.kind, 'verification_failed');
    assert.equal(gate!.details.timedOut, true);
    // Ended like a worker: TERM first (the shell honours it), then the look that proves it gone.
    assert.match(readFileSync(String(gate!.details.logPath), 'utf8'), /\(exit SIGTERM, timed out\)/);
    const started3 = readFileSync(join(fixture.workspace, 'pids'), 'utf8').trim().split('\n').map(hostPid);
    pids.push(...started3);
    assert.equal(started3.length, 3);
    await waitFor('every process of the command to be gone', () => started3.every((pid) => !pidAlive(pid)), 30_000);
  });

  it('gives a verify command that ignores TERM its grace period, then KILL, and proves it gone', async () => {
    fixture.write('.baton/config.json', config({ verifyTimeoutSeconds: 1, stopGraceSeconds: 1 }));
    const script = `trap '' TERM; ${PID_TOKEN_SH} >> pids; while :; do sleep 0.1; done`;
    fixture.write('plan.md', plan([{ id: 'V', verify: [['sh', '-c', script]] }]));
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    const started = Date.now();
    assert.deepEqual(await taken.coordinator.run(), { kind: 'paused', status: 'paused', openGates: 1, stopped: false });
    const took = Date.now() - started;
    assert.ok(took >= 1900, `TERM was ignored: KILL came only after the 1 s grace (${took} ms)`);
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.match(readFileSync(String(gate!.details.logPath), 'utf8'), /\(exit SIGKILL, timed out\)/);
    const shell = hostPid(readFileSync(join(fixture.workspace, 'pids'), 'utf8').trim());
    pids.push(shell);
    assert.equal(pidAlive(shell), false, 'gone when the verification ended, not later');
  });

  it('ends what a passing verify command left running in the background, without waiting for it', async () => {
    fixture.write('.baton/config.json', config());
    const script = `sh -c '${PID_TOKEN_SH} > bg.tmp && mv bg.tmp bg; exec sleep 600' & until [ -e bg ]; do sleep 0.05; done; echo started`;
    fixture.write('plan.md', plan([{ id: 'V', verify: [['sh', '-c', script]] }]));
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    const started = Date.now();
    assert.deepEqual(await taken.coordinator.run(), { kind: 'finished', status: 'completed' });
    // Long before the background sleep's 600 s (a bound that holds at load 10).
    assert.ok(Date.now() - started < 45_000, 'the background process did not hold the verification');
    const bg = hostPid(readFileSync(join(fixture.workspace, 'bg'), 'utf8').trim());
    pids.push(bg);
    await waitFor('the background process to be gone', () => !pidAlive(bg), 30_000);
  });

  it('fails the verification with a clear reason when a verify command cannot start', async () => {
    fixture.write('.baton/config.json', config());
    fixture.write('plan.md', plan([{ id: 'V', verify: [['baton-no-such-checker', '--all']] }]));
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    assert.equal((await taken.coordinator.run()).kind, 'paused');
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.equal(gate!.kind, 'verification_failed');
    assert.equal(gate!.details.exitCode, null);
    assert.match(
      readFileSync(String(gate!.details.logPath), 'utf8'),
      /\$ baton-no-such-checker --all\n\(could not start: ENOENT\)/,
    );
  });

  it('runs every verify command again for a new attempt, even when its artifact is byte-identical to the failed one', async () => {
    fixture.write('count.js', `require('node:fs').appendFileSync('runs.txt', 'cmd1\\n');\n`);
    fixture.write(
      'needs.js',
      `require('node:fs').appendFileSync('runs.txt', 'cmd2\\n'); process.exit(require('node:fs').existsSync('fixed') ? 0 : 3);\n`,
    );
    // resultWriter.js writes the same artifact on every attempt.
    fixture.write(
      '.baton/config.json',
      config({
        workers: {
          same: {
            type: 'process',
            command: process.execPath,
            args: [join(__dirname, '../../fixtures/workers/resultWriter.js'), '{taskId}'],
          },
        },
        defaultWorker: 'same',
      }),
    );
    fixture.write(
      'plan.md',
      plan([
        {
          id: 'V',
          verify: [
            [process.execPath, 'count.js'],
            [process.execPath, 'needs.js'],
          ],
        },
      ]),
    );
    const engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const first = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in first);
    assert.deepEqual(await first.coordinator.run(), { kind: 'paused', status: 'paused', openGates: 1, stopped: false });
    const [gate] = await engine.listGates({ runId: run.id, status: 'open' });
    assert.equal(gate!.kind, 'verification_failed');
    assert.equal(gate!.details.exitCode, 3);
    fixture.write('fixed', '');
    await engine.decideGate({ gateId: gate!.id, decision: 'approved' });
    const second = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in second);
    assert.deepEqual(await second.coordinator.run(), { kind: 'finished', status: 'completed' });
    assert.deepEqual(readFileSync(join(fixture.workspace, 'runs.txt'), 'utf8').trim().split('\n'), [
      'cmd1',
      'cmd2',
      'cmd1',
      'cmd2',
    ]);
    const view = await engine.overview(run.id);
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-V-coder-001:FAILED', 'D-V-coder-002:COMPLETED'],
    );
  });
});
