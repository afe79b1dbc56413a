import { takeCoordinatorLease } from '../../../src/engine/usecases/coordinatorLiveness';
import assert from 'node:assert/strict';
import { BatonError } from '../../../src/engine/index';
import { chmodSync, copyFileSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CoordinatorOutcome, Engine } from '../../../src/engine/index';
import { EngineFixture } from '../../support/engineFixture';
import { FileStore } from '../../../src/engine/store/fileStore';
import { selfIdentity } from '../../../src/engine/effects/processes/processes';
import { storeDirOf } from '../../../src/engine/engine';
import { hostPid } from '../../support/pidToken';
import {
  FAKE_CLAUDE,
  config,
  killQuietly,
  PID_TOKEN_SH,
  pidAlive,
  plan,
  pumpClock,
  readTrace,
  waitFor,
  withWorkerEnv,
} from '../../fixtures/executor/harness';

const WORKER = resolve(__dirname, '../../fixtures/workers/resultWriter.js');

function resultWriterConfig(extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    defaultWorker: 'fake',
    workers: { fake: { type: 'process', command: process.execPath, args: [WORKER, '{taskId}'], promptOnStdin: true } },
    retryBackoffSeconds: 0,
    ...extra,
  });
}

function trace(path: string): Array<{ kind: string; task: string; at: number }> {
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((line) => {
      const [kind, task, at] = line.split(' ');
      return { kind: kind!, task: task!, at: Number(at) };
    });
}

/** The largest number of tasks that were between start and end at the same moment. */
function peakParallelism(events: ReturnType<typeof trace>): number {
  let running = 0;
  let peak = 0;
  for (const e of [...events].sort((a, b) => a.at - b.at || (a.kind === 'end' ? -1 : 1))) {
    running += e.kind === 'start' ? 1 : -1;
    peak = Math.max(peak, running);
  }
  return peak;
}

async function drive(
  engine: Engine,
  runId: string,
  options: { maxConcurrency?: number } = {},
): Promise<CoordinatorOutcome> {
  const taken = await engine.coordinate({ runId, ...options });
  assert.ok('coordinator' in taken, 'the lease is free');
  return taken.coordinator.run();
}

const summary = (view: Awaited<ReturnType<Engine['overview']>>): string[] =>
  view.delegations.map((d) => `${d.id}:${d.status}`);

describe('coordinator: dispatch to real worker processes', () => {
  let fixture: EngineFixture;
  let engine: Engine;
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

  it('runs independent tasks in parallel up to the cap and dependents after their dependencies', async () => {
    fixture.write('.baton/config.json', resultWriterConfig());
    fixture.write(
      'plan.md',
      plan([{ id: 'A' }, { id: 'B' }, { id: 'C' }, { id: 'D' }, { id: 'E', depends: ['A', 'B'] }]),
    );
    const tracePath = join(fixture.workspace, 'trace.txt');
    process.env.FAKE_TRACE = tracePath;
    // Long enough that two workers overlap even when each start (claim, spawn, record, release) is slow under load.
    process.env.FAKE_DELAY_MS = '1500';
    try {
      engine = await fixture.open({ follow: true });
      const { run } = await engine.runForPlan('plan.md');
      const outcome = await drive(engine, run.id, { maxConcurrency: 2 });
      assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
    } finally {
      delete process.env.FAKE_TRACE;
      delete process.env.FAKE_DELAY_MS;
    }
    const events = trace(tracePath);
    assert.equal(peakParallelism(events), 2, 'two at a time, never more');
    const endOf = (t: string) => events.find((e) => e.kind === 'end' && e.task === t)!.at;
    const startOfE = events.find((e) => e.kind === 'start' && e.task === 'E')!.at;
    assert.ok(startOfE >= endOf('A') && startOfE >= endOf('B'), 'E starts after A and B ended');
    const view = await engine.overview();
    assert.deepEqual(view.delegations.map((d) => `${d.taskId}:${d.status}`).sort(), [
      'A:COMPLETED',
      'B:COMPLETED',
      'C:COMPLETED',
      'D:COMPLETED',
      'E:COMPLETED',
    ]);
  });

  it('kills an attempt that outlives the task timeout, fails it as timed out, and retries it after the backoff until maxAttempts', async () => {
    fixture.write(
      '.baton/config.json',
      config({ taskTimeoutSeconds: 1, maxAttempts: 2, retryBackoffSeconds: 0.6, stopGraceSeconds: 1 }),
    );
    fixture.write('plan.md', plan([{ id: 'T' }, { id: 'U', depends: ['T'] }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv({ FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ T: 'hang' }) }, () =>
      drive(engine, run.id),
    );
    assert.deepEqual(outcome, { kind: 'finished', status: 'failed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), ['D-T-coder-001:FAILED', 'D-T-coder-002:FAILED']);
    for (const d of view.delegations) assert.match(d.reason ?? '', /timed out after 1 s/);
    assert.doesNotMatch(view.delegations[0]!.reason ?? '', /NOT confirmed/);
    const [first, second] = view.delegations;
    assert.ok(
      second!.startedAt! - first!.finishedAt! >= 600,
      `attempt 2 waited for the backoff (${second!.startedAt! - first!.finishedAt!} ms)`,
    );
    // Both attempts' processes, as the store recorded them at launch, are gone. (On a loaded machine the second
    // worker can be killed at its 1 s timeout before it wrote its own start line, so the trace may hold one.)
    assert.equal(view.runtimes.length, 2, 'two attempts were launched');
    for (const r of view.runtimes) assert.equal(pidAlive(r.pid!), false, `worker ${r.pid} was killed`);
    const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
    for (const s of starts) assert.equal(pidAlive(s.pid), false, `worker ${s.pid} was killed`);
    assert.deepEqual(
      view.tasks.map((t) => `${t.id}:${t.status}`),
      ['T:failed', 'U:blocked'],
    );
  });

  it('refuses to coordinate a run whose worker is not installed, before dispatching anything (worker.missing)', async () => {
    fixture.write(
      '.baton/config.json',
      config({ workers: { missing: { type: 'process', command: 'baton-no-such-agent-cli', args: [] } } }),
    );
    fixture.write('plan.md', plan([{ id: 'M', worker: 'missing' }, { id: 'OK' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await assert.rejects(engine.coordinate({ runId: run.id }), (err: unknown) => {
      assert.ok(BatonError.is(err, 'worker.missing'));
      assert.match(err.message, /baton-no-such-agent-cli is not installed/);
      return true;
    });
    assert.deepEqual((await engine.overview(run.id)).delegations, [], 'nothing was dispatched');
  });

  it('fails an attempt whose worker cannot start with the reason, retries it per policy, and does not hang', async () => {
    // Installed when the run is taken (so it is not refused), gone by the time the worker starts:
    // the spawn itself fails, and that is a failed attempt with the reason, not a hang.
    const program = fixture.write('bin/vanishing-agent', '#!/bin/sh\nexit 0\n');
    chmodSync(program, 0o755);
    fixture.write(
      '.baton/config.json',
      config({ maxAttempts: 2, workers: { broken: { type: 'process', command: program, args: [] } } }),
    );
    fixture.write('plan.md', plan([{ id: 'M', worker: 'broken' }, { id: 'OK' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken, 'the lease is free');
    rmSync(program);
    const outcome = await taken.coordinator.run();
    assert.deepEqual(outcome, { kind: 'finished', status: 'failed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view).sort(), [
      'D-M-coder-001:FAILED',
      'D-M-coder-002:FAILED',
      'D-OK-coder-001:COMPLETED',
    ]);
    for (const d of view.delegations.filter((x) => x.taskId === 'M'))
      assert.match(d.reason ?? '', /Could not start worker "broken" \(.*vanishing-agent\): ENOENT/);
    assert.match(view.tasks.find((t) => t.id === 'M')!.statusReason ?? '', /no attempts left \(2\)/);
  });

  it('ingests a result the worker printed on stdout instead of writing the artifact file', async () => {
    fixture.write('.baton/config.json', config());
    fixture.write('plan.md', plan([{ id: 'S' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv({ FAKE_BEHAVIOUR: JSON.stringify({ S: 'stdout' }) }, () =>
      drive(engine, run.id),
    );
    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), ['D-S-coder-001:COMPLETED']);
    assert.equal(view.delegations[0]!.resultStatus, 'PASS');
    const ingested = (await engine.listEvents(run.id)).filter((e) => e.type === 'ingestion:recorded');
    assert.equal(ingested.length, 1);
    assert.equal(ingested[0]!.data.accepted, true);
  });

  it('ends what finished workers left running (a background and a setsid child) by the time the run returns, however many exited together', async () => {
    // Each worker writes its result, leaves two sleepers behind and exits at once.
    const result = `printf '\\x60\\x60\\x60baton-result\\ncontract: baton-result-v1\\ntask: %s\\nagent: coder\\nstatus: PASS\\nsummary: done\\nartifacts: []\\n\\x60\\x60\\x60\\n' "$1" > "$BATON_ARTIFACT_PATH"`;
    // Each sleeper notes its own pid (PID_TOKEN_SH) and its worker waits until both have.
    const sleeper = (kind: string): string =>
      `sh -c '${PID_TOKEN_SH} >> "$BATON_WORKSPACE/pids"; : > "$BATON_WORKSPACE/$0.${kind}"; exec sleep 30' "$1"`;
    const script = `${result}; ${sleeper('bg')} & setsid ${sleeper('setsid')} & until [ -e "$BATON_WORKSPACE/$1.bg" ] && [ -e "$BATON_WORKSPACE/$1.setsid" ]; do sleep 0.05; done; exit 0`;
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'sh',
        workers: { sh: { type: 'process', command: 'bash', args: ['-c', script, 'worker', '{taskId}'] } },
        retryBackoffSeconds: 0,
      }),
    );
    fixture.write('plan.md', plan([{ id: 'L1' }, { id: 'L2' }, { id: 'L3' }, { id: 'L4' }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    assert.deepEqual(await drive(engine, run.id, { maxConcurrency: 4 }), { kind: 'finished', status: 'completed' });
    const left = readFileSync(join(fixture.workspace, 'pids'), 'utf8').trim().split('\n').map(hostPid);
    pids.push(...left);
    assert.equal(left.length, 8, 'two sleepers per worker');
    // No waiting: the coordinator swept them before returning.
    assert.deepEqual(
      left.filter((pid) => pidAlive(pid)),
      [],
    );
  });

  it('drives the claude-code preset: its event stream, prompt on stdin, the result from the final message; a bad flag fails the attempt', async () => {
    const claude = join(fixture.workspace, 'bin', 'claude');
    fixture.write('bin/.keep', '');
    copyFileSync(FAKE_CLAUDE, claude);
    chmodSync(claude, 0o755);
    const callLog = join(fixture.workspace, 'claude-calls.jsonl');
    fixture.write(
      '.baton/config.json',
      config({
        maxAttempts: 1,
        workers: {
          claude: {
            type: 'claude-code',
            executable: claude,
            model: 'sonnet',
          },
          'claude-bad': { type: 'claude-code', executable: claude, args: ['--no-such-flag'] },
        },
      }),
    );
    fixture.write(
      'plan.md',
      plan([
        { id: 'C1', worker: 'claude' },
        { id: 'C2', worker: 'claude-bad' },
      ]),
    );
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const outcome = await withWorkerEnv({ FAKE_CLAUDE_LOG: callLog }, () => drive(engine, run.id));
    assert.deepEqual(outcome, { kind: 'finished', status: 'failed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), ['D-C1-coder-001:COMPLETED', 'D-C2-coder-001:FAILED']);
    assert.match(view.delegations[1]!.reason ?? '', /exited with code 1 without a result/);
    const calls = readFileSync(callLog, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { argv: string[]; promptLength: number });
    assert.equal(calls.length, 1, 'the bad flag was refused before the prompt was read');
    assert.deepEqual(calls[0]!.argv, [
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'sonnet',
      '--permission-mode',
      'acceptEdits',
      '--disallowedTools',
      'Bash',
      '--',
    ]);
    assert.ok(calls[0]!.promptLength > 200, 'the prompt arrived on stdin');
    // The result is the final message, not the JSON stream it came in.
    const artifact = readFileSync(
      join(fixture.workspace, '.baton', 'runs', run.id, 'artifacts', 'D-C1-coder-001.md'),
      'utf8',
    );
    assert.match(artifact, /^I read the task C1[\s\S]*```baton-result\n[\s\S]*status: PASS/);
    assert.doesNotMatch(artifact, /"type":/);
    const log = readFileSync(join(fixture.workspace, '.baton', 'runs', run.id, 'logs', 'D-C2-coder-001.log'), 'utf8');
    assert.match(log, /unknown option '--no-such-flag'/);
  });

  it('hands a manual task to a person at a manual_handoff gate and returns (exit 8), the hand-off left open; ingesting its artifact completes it and the next coordinator continues', async () => {
    fixture.write('.baton/config.json', config());
    fixture.write(
      'plan.md',
      plan([
        { id: 'H', worker: 'manual' },
        { id: 'After', depends: ['H'] },
      ]),
    );
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    // Nobody waits days for a person: the coordinator returns paused on the hand-off (baton start exits 8).
    assert.deepEqual(await taken.coordinator.run(), {
      kind: 'paused',
      status: 'paused',
      openGates: 1,
      stopped: false,
      handOffs: 1,
    });
    const gate = (await engine.listGates({ runId: run.id, status: 'open' })).find((g) => g.kind === 'manual_handoff')!;
    assert.equal(gate.taskId, 'H');
    assert.equal(gate.delegationId, 'D-H-coder-001');
    assert.ok(existsSync(String(gate.details.promptPath)), 'the person gets the prompt');
    assert.equal((await engine.getRun(run.id)).status, 'paused');
    assert.deepEqual(summary(await engine.overview(run.id)), ['D-H-coder-001:RUNNING'], 'the hand-off stays open');
    const artifact = fixture.writeResult('H.md', { task: 'H' });
    const ingested = await engine.ingest({ runId: run.id, delegationId: gate.delegationId!, artifactPath: artifact });
    assert.equal(ingested.delegation.status, 'COMPLETED');
    const next = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in next);
    assert.deepEqual(await next.coordinator.run(), { kind: 'finished', status: 'completed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), ['D-H-coder-001:COMPLETED', 'D-After-coder-001:COMPLETED']);
    assert.equal(view.gates.find((g) => g.id === gate.id)!.status, 'approved');
  });

  it('shutdown ends the workers it drives (no orphan), cancels their attempts for a later resume, and releases the lease', async () => {
    fixture.write('.baton/config.json', config({ stopGraceSeconds: 1 }));
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv(
      { FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ A: 'hang', B: 'hang' }) },
      async () => {
        const taken = await engine.coordinate({ runId: run.id });
        assert.ok('coordinator' in taken);
        const running = taken.coordinator.run();
        const workers = await waitFor('both workers', () => {
          const starts = readTrace(tracePath).filter((l) => l.kind === 'start');
          return starts.length === 2 ? starts : undefined;
        });
        pids.push(...workers.map((w) => w.pid));
        const report = await taken.coordinator.shutdown('test');
        assert.deepEqual(await running, { kind: 'shut-down' });
        assert.deepEqual(report.map((e) => [e.delegationId, e.confirmed]).sort(), [
          ['D-A-coder-001', true],
          ['D-B-coder-001', true],
        ]);
        for (const w of workers) assert.equal(pidAlive(w.pid), false, `worker ${w.pid} is gone`);
      },
    );
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), ['D-A-coder-001:CANCELLED', 'D-B-coder-001:CANCELLED']);
    assert.deepEqual(
      view.tasks.map((t) => t.status),
      ['ready', 'ready'],
    );
    const again = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in again, 'the lease was released');
    await again.coordinator.shutdown();
  });

  it('lets exactly one of two coordinators started together drive; the other observes, and a later one can take the released lease', async () => {
    fixture.write('.baton/config.json', config());
    fixture.write('plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    engine = await fixture.open({ follow: true });
    const other = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const [first, second] = await Promise.all([
      engine.coordinate({ runId: run.id }),
      other.coordinate({ runId: run.id }),
    ]);
    const drivers = [first, second].filter((t) => 'coordinator' in t);
    const observers = [first, second].filter((t) => 'heldBy' in t);
    assert.equal(drivers.length, 1, 'exactly one drives');
    assert.equal(observers.length, 1, 'the other observes');
    const driver = drivers[0]!;
    const observer = observers[0]!;
    assert.ok('coordinator' in driver && 'heldBy' in observer);
    assert.equal(observer.heldBy.epoch, driver.coordinator.leaseEpoch);
    const watching = await other.reconcile(run.id);
    assert.equal(watching.reportOnly, true, 'an observer only reports');
    assert.deepEqual(await driver.coordinator.run(), { kind: 'finished', status: 'completed' });
    const later = await other.coordinate({ runId: run.id });
    assert.ok('coordinator' in later, 'the released lease can be taken');
    assert.ok(later.coordinator.leaseEpoch > driver.coordinator.leaseEpoch);
    assert.deepEqual(await later.coordinator.run(), { kind: 'finished', status: 'completed' });
    assert.deepEqual(summary(await engine.overview(run.id)), ['D-A-coder-001:COMPLETED', 'D-B-coder-001:COMPLETED']);
  });
});

describe('coordinator: leases on a fake clock', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  const stops: Array<() => void> = [];
  /** Workers a test started that must not outlive it, whatever happened. */
  const pids: number[] = [];
  beforeEach(() => {
    fixture = new EngineFixture();
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) stop();
    for (const pid of pids.splice(0)) killQuietly(pid, fixture.workspace);
    for (const line of readTrace(join(fixture.workspace, 'trace.txt')))
      if (line.kind === 'start') killQuietly(line.pid, fixture.workspace);
    await fixture.dispose();
  });

  it('keeps a timed-out attempt in flight until its end is recorded: the run is never reported idle while its worker is being ended', async () => {
    const clock = fixture.fakeClock;
    fixture.write(
      '.baton/config.json',
      config({
        leaseSeconds: 600,
        taskTimeoutSeconds: 10,
        maxAttempts: 2,
        retryBackoffSeconds: 5,
        stopGraceSeconds: 5,
      }),
    );
    fixture.write('plan.md', plan([{ id: 'T' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ T: 'linger' }) }, async () => {
      const taken = await engine.coordinate({ runId: run.id, leaseMs: 3_600_000 });
      assert.ok('coordinator' in taken);
      let settled: CoordinatorOutcome | undefined;
      const running = taken.coordinator.run().then((o) => (settled = o));
      const first = await waitFor('attempt 001', () =>
        readTrace(tracePath).find((l) => l.delegation === 'D-T-coder-001'),
      );
      pids.push(first.pid);
      clock.advance(10_000);
      // The worker exits 150 ms after its SIGTERM, while the termination's grace loop waits on the (stopped) fake
      // clock.
      await waitFor('the worker to end', () => !pidAlive(first.pid));
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(settled, undefined, 'still ending the attempt: not idle, not finished');
      stops.push(pumpClock(clock, 50));
      await waitFor('attempt 002', () => readTrace(tracePath).find((l) => l.delegation === 'D-T-coder-002'));
      assert.deepEqual(await running, { kind: 'finished', status: 'failed' });
    });
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), ['D-T-coder-001:FAILED', 'D-T-coder-002:FAILED']);
    assert.match(view.delegations[0]!.reason ?? '', /timed out after 10 s/);
    const [a, b] = view.delegations;
    assert.ok(b!.startedAt! - a!.finishedAt! >= 5_000, 'attempt 002 waited out the 5 s backoff on the injected clock');
  });

  it('marks an attempt whose lease was not renewed in time STALE, ends its worker, and retries the task as attempt 002', async () => {
    const clock = fixture.fakeClock;
    fixture.write('.baton/config.json', config({ leaseSeconds: 30, maxAttempts: 2 }));
    fixture.write('plan.md', plan([{ id: 'L' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv(
      { FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ 'D-L-coder-001': 'hang' }) },
      async () => {
        const taken = await engine.coordinate({ runId: run.id, leaseMs: 600_000 });
        assert.ok('coordinator' in taken);
        const running = taken.coordinator.run();
        const first = await waitFor('attempt 001 to start', () =>
          readTrace(tracePath).find((l) => l.delegation === 'D-L-coder-001'),
        );
        pids.push(first.pid);
        // The process sleeps past its lease: every renewal timer comes due at once, too late to commit.
        clock.advance(31_000);
        stops.push(pumpClock(clock));
        assert.deepEqual(await running, { kind: 'finished', status: 'completed' });
        assert.equal(pidAlive(first.pid), false, 'the stale worker was ended');
      },
    );
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), ['D-L-coder-001:STALE', 'D-L-coder-002:COMPLETED']);
    assert.match(view.delegations[0]!.reason ?? '', /lease expired/);
  });

  it('does not let a wall-clock jump expire the lease of a worker it drives: leases are timed on the monotonic clock', async () => {
    const clock = fixture.fakeClock;
    fixture.write('.baton/config.json', config({ leaseSeconds: 30, taskTimeoutSeconds: 3600 }));
    fixture.write('plan.md', plan([{ id: 'W' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ W: 'hang' }) }, async () => {
      const taken = await engine.coordinate({ runId: run.id, leaseMs: 3_600_000 });
      assert.ok('coordinator' in taken);
      const running = taken.coordinator.run();
      const worker = await waitFor('W to start', () => readTrace(tracePath).find((l) => l.task === 'W'));
      pids.push(worker.pid);
      const renewed = async (): Promise<number> => (await engine.overview(run.id)).runtimes[0]!.heartbeatCount;
      clock.jumpWall(3_600_000); // NTP, a laptop waking: the wall clock leaps an hour, monotonic time does not
      await engine.liftStops(run.id); // any store change wakes the coordinator for a pass
      clock.advance(10_000); // the renewal comes due on time (monotonic)
      await waitFor('the renewal', async () => (await renewed()) >= 1);
      const view = await engine.overview(run.id);
      assert.deepEqual(summary(view), ['D-W-coder-001:RUNNING']);
      assert.equal(view.runtimes[0]!.status, 'active');
      assert.ok(view.runtimes[0]!.leaseExpiresAt > clock.now(), 'the lease now runs from the new wall time');
      assert.equal(pidAlive(worker.pid), true);
      // Ending the worker waits on the injected clock (the grace period), so time has to move.
      stops.push(pumpClock(clock));
      await taken.coordinator.shutdown();
      await running;
    });
  });

  it('waits for an externally claimed attempt, marks it STALE when its lease runs out without a heartbeat, and runs attempt 002 itself', async () => {
    const clock = fixture.fakeClock;
    fixture.write('.baton/config.json', config({ leaseSeconds: 30, maxAttempts: 2 }));
    fixture.write('plan.md', plan([{ id: 'X' }, { id: 'Y', depends: ['X'] }]));
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const claim = await engine.claimTask({ runId: run.id, taskId: 'X', leaseSeconds: 60 });
    const taken = await engine.coordinate({ runId: run.id, leaseMs: 600_000 });
    assert.ok('coordinator' in taken);
    let settled: CoordinatorOutcome | undefined;
    const running = taken.coordinator.run().then((o) => (settled = o));
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(settled, undefined, 'the coordinator waits while someone else holds X');
    clock.advance(30_000);
    await new Promise((r) => setTimeout(r, 150));
    assert.equal(settled, undefined, 'the external lease still runs');
    assert.equal((await engine.overview(run.id)).delegations[0]!.status, 'RUNNING');
    clock.advance(31_000);
    stops.push(pumpClock(clock));
    assert.deepEqual(await running, { kind: 'finished', status: 'completed' });
    const view = await engine.overview(run.id);
    assert.deepEqual(summary(view), [
      `${claim.delegation.id}:STALE`,
      'D-X-coder-002:COMPLETED',
      'D-Y-coder-001:COMPLETED',
    ]);
  });

  it('refuses the next write of a coordinator whose epoch was superseded, in the same transaction, and steps down without touching its workers', async () => {
    const clock = fixture.fakeClock;
    fixture.write('.baton/config.json', config({ leaseSeconds: 30, taskTimeoutSeconds: 60 }));
    fixture.write('plan.md', plan([{ id: 'P' }, { id: 'Q' }]));
    const tracePath = join(fixture.workspace, 'trace.txt');
    engine = await fixture.open({ follow: true });
    const { run } = await engine.runForPlan('plan.md');
    await withWorkerEnv({ FAKE_TRACE: tracePath, FAKE_BEHAVIOUR: JSON.stringify({ P: 'hang' }) }, async () => {
      const taken = await engine.coordinate({ runId: run.id, maxConcurrency: 1, leaseMs: 600_000 });
      assert.ok('coordinator' in taken);
      const running = taken.coordinator.run();
      const worker = await waitFor('P to start', () => readTrace(tracePath).find((l) => l.task === 'P'));
      pids.push(worker.pid);
      // A successor takes the run over (as after this coordinator was paused past its lease).
      const store = await FileStore.open(storeDirOf(fixture.workspace), { clock });
      let successorEpoch: number;
      try {
        const outcome = await takeCoordinatorLease(store, clock, {
          runId: run.id,
          holder: 'successor',
          identity: selfIdentity(),
          leaseMs: 600_000,
        });
        assert.ok(outcome.acquired);
        successorEpoch = outcome.epoch;
      } finally {
        await store.close();
      }
      await engine.refresh();
      // The old coordinator's next write: its ingestion of P's result.
      const before = await engine.listEvents(run.id);
      const outcome = await running;
      assert.equal(outcome.kind, 'lease-lost');
      assert.match(
        (outcome as { detail: string }).detail,
        new RegExp(
          `epoch ${taken.coordinator.leaseEpoch}\\) no longer holds run ${run.id}; successor does \\(epoch ${successorEpoch}\\)`,
        ),
      );
      clock.advance(120_000); // past its task timeout and renewals: a coordinator that stepped down does nothing
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(pidAlive(worker.pid), true, 'the worker is left for the successor to adopt');
      process.kill(worker.pid, 'SIGKILL');
      const after = await engine.listEvents(run.id);
      assert.deepEqual(
        after.slice(before.length).map((e) => e.type),
        [],
        'nothing written after the takeover',
      );
      const view = await engine.overview(run.id);
      assert.deepEqual(summary(view), ['D-P-coder-001:RUNNING']);
    });
  });
});
