import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { Engine, systemClock, type CoordinatorOutcome, type StopRequest } from '../../../src/engine/index';
import type { Coordinator } from '../../../src/engine/executor/coordinator';
import { terminateWorker } from '../../../src/engine/effects/processes/processes';
import { pidNamespaceLauncher } from '../../../src/engine/effects/processes/pidNamespace';
import { bundleScript } from '../../support/bundleScript';
import { EngineFixture } from '../../support/engineFixture';
import { hostPid } from '../../support/pidToken';

// Real worker processes, checked through /proc with helpers of this file's own (not the ones
// under test): a process is the pair (pid, start time), and a zombie is dead.

const WORKER = resolve(__dirname, '../../fixtures/workers/stopWorker.js');
const LINUX = process.platform === 'linux';
/** Workers run in a PID namespace of their own here (docs/workers.md, "Process identity"). */
const NAMESPACED = LINUX && !('unavailable' in pidNamespaceLauncher());

interface Proc {
  pid: number;
  start: string;
  state: string;
  ppid: number;
  pgrp: number;
  session: number;
}

function procOf(pid: number): Proc | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { pid, state: f[0]!, ppid: Number(f[1]), pgrp: Number(f[2]), session: Number(f[3]), start: f[19]! };
}

function isLive(p: { pid: number; start: string }): boolean {
  const now = procOf(p.pid);
  return now !== undefined && now.start === p.start && now.state !== 'Z' && now.state !== 'X';
}

/** Every live process whose environment carries BATON_RUNTIME_ID=<runtimeId>. */
function processesOfRuntime(runtimeId: string): Proc[] {
  const needle = Buffer.from(`\0BATON_RUNTIME_ID=${runtimeId}\0`);
  const found: Proc[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let environ: Buffer;
    try {
      environ = Buffer.concat([Buffer.from([0]), readFileSync(`/proc/${pid}/environ`)]);
    } catch {
      continue;
    }
    const proc = procOf(pid);
    if (proc && environ.includes(needle) && proc.state !== 'Z' && proc.state !== 'X') found.push(proc);
  }
  return found;
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function plan(tasks: Array<{ id: string; depends?: string[] }>): string {
  return tasks
    .map((t) =>
      [
        '```baton-task',
        `id: ${t.id}`,
        'agent: coder',
        ...(t.depends ? [`depends: [${t.depends.join(', ')}]`] : []),
        '```',
        `Do ${t.id}.`,
        '',
      ].join('\n'),
    )
    .join('\n');
}

type Behaviour = 'tree' | 'hostile' | 'detach-exit' | 'pass';

interface WorkerReport {
  task: string;
  runtimeId: string;
  /** The worker and every process it reported starting, with their start times. */
  procs: Map<string, Proc>;
}

describe('stop: graceful and immediate, with real worker processes', function () {
  if (!LINUX) return; // identities and the environment marker are read from /proc
  this.timeout(60_000); // up to a dozen real processes per test, on a shared machine

  let fixture: EngineFixture;
  let dir: string;
  const engines: Engine[] = [];
  const coordinators: Coordinator[] = [];
  const children: ChildProcess[] = [];
  const seen: WorkerReport[] = [];

  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
    dir = join(fixture.workspace, 'stop');
    fixture.write('stop/.keep', '');
  });

  afterEach(async () => {
    for (const coordinator of coordinators.splice(0)) await coordinator.shutdown('test cleanup').catch(() => undefined);
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    // Whatever a failed test left behind: never a stray `sleep 300`.
    for (const report of seen.splice(0)) {
      for (const p of [...report.procs.values(), ...processesOfRuntime(report.runtimeId)]) {
        if (isLive(p)) process.kill(p.pid, 'SIGKILL');
      }
    }
    for (const engine of engines.splice(0)) await engine.close().catch(() => undefined);
    await fixture.dispose();
  });

  /** A workspace whose every task runs stopWorker.js with the given behaviour. */
  function workspace(tasks: Array<{ id: string; depends?: string[]; behaviour: Behaviour }>): void {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'stopper',
        workers: {
          stopper: {
            type: 'process',
            command: process.execPath,
            args: [WORKER, '{taskId}', '{promptFile}'],
            env: {
              STOP_DIR: dir,
              STOP_BEHAVIOUR: JSON.stringify(Object.fromEntries(tasks.map((t) => [t.id, t.behaviour]))),
            },
          },
        },
        retryBackoffSeconds: 0,
        stopGraceSeconds: 1,
      }),
    );
    fixture.write('plan.md', plan(tasks));
  }

  async function open(): Promise<Engine> {
    // The system's random runtime ids, not the fixture's sequential ones: the environment
    // marker must not match the workers of another test running on this machine.
    const engine = await Engine.open({ workspace: fixture.workspace, follow: true });
    engines.push(engine);
    return engine;
  }

  async function coordinate(
    engine: Engine,
    runId: string,
    maxConcurrency?: number,
  ): Promise<{ coordinator: Coordinator; outcome: Promise<CoordinatorOutcome> }> {
    const taken = await engine.coordinate({ runId, ...(maxConcurrency ? { maxConcurrency } : {}) });
    assert.ok('coordinator' in taken, 'the lease is free');
    coordinators.push(taken.coordinator);
    return { coordinator: taken.coordinator, outcome: taken.coordinator.run() };
  }

  /** Waits for a worker's report, and pins each process it names to its start time. */
  async function workerOf(task: string): Promise<WorkerReport> {
    const file = join(dir, `${task}.json`);
    const raw = await waitFor(
      `the worker of ${task}`,
      () =>
        existsSync(file) &&
        (JSON.parse(readFileSync(file, 'utf8')) as { worker: string; runtimeId: string; pids: Record<string, string> }),
      30_000, // six processes and two launchers to start, on a loaded machine
    );
    const procs = new Map<string, Proc>();
    for (const [name, token] of Object.entries({ worker: raw.worker, ...raw.pids })) {
      const pid = hostPid(token);
      const proc = procOf(pid);
      assert.ok(proc && proc.state !== 'Z', `${task}'s ${name} (pid ${pid}) runs before the stop`);
      procs.set(name, proc);
    }
    const report = { task, runtimeId: raw.runtimeId, procs };
    seen.push(report);
    return report;
  }

  function assertAllGone(report: WorkerReport): void {
    for (const [name, proc] of report.procs)
      assert.equal(isLive(proc), false, `${report.task}'s ${name} (pid ${proc.pid}) is gone`);
    assert.deepEqual(
      processesOfRuntime(report.runtimeId).map((p) => p.pid),
      [],
      `no live process carries BATON_RUNTIME_ID=${report.runtimeId}`,
    );
  }

  /**
   * The stop's entry for the attempt is confirmed and names each of the worker's processes that ran when it was
   * applied.
   */
  function assertConfirmed(
    request: StopRequest,
    report: WorkerReport,
    delegationId: string,
    exitedBefore: string[] = [],
  ): void {
    const entry = request.report.find((e) => e.delegationId === delegationId);
    assert.ok(entry, `the stop reports ${delegationId}`);
    assert.equal(entry.confirmed, true, `termination of ${delegationId} is confirmed`);
    assert.deepEqual(entry.survivors, []);
    const reported = new Set(entry.processes);
    for (const [name, proc] of report.procs) {
      if (!exitedBefore.includes(name))
        assert.ok(reported.has(proc.pid), `the stop of ${delegationId} names ${name} (pid ${proc.pid})`);
    }
  }

  /** Lets a `pass` worker write its result, or a `detach-exit` worker exit. */
  function go(task: string): void {
    writeFileSync(join(dir, `${task}.go`), '');
  }

  async function delegationOf(engine: Engine, task: string): Promise<{ id: string; status: string }> {
    const found = (await engine.overview()).delegations.filter((d) => d.taskId === task);
    assert.equal(found.length, 1, `one attempt of ${task}`);
    return found[0]!;
  }

  it('immediate: ends every process of every worker (setsid, grandchildren, TERM-ignoring, detached), confirmed, and pauses the run', async () => {
    workspace([
      { id: 'A', behaviour: 'tree' },
      { id: 'B', behaviour: 'tree' },
    ]);
    const engine = await open();
    const { run } = await engine.runForPlan('plan.md');
    const { outcome } = await coordinate(engine, run.id, 2);
    const workers = [await workerOf('A'), await workerOf('B')];

    for (const w of workers) {
      const worker = w.procs.get('worker')!;
      const detached = w.procs.get('detached')!;
      const setsid = w.procs.get('setsid')!;
      // These are the hard ones: nothing but the environment ties `detached` to the worker.
      assert.notEqual(detached.ppid, worker.pid);
      assert.notEqual(detached.session, worker.session);
      assert.notEqual(detached.pgrp, worker.pgrp);
      assert.notEqual(setsid.session, worker.session);
      const envless = w.procs.get('envless')!;
      assert.notEqual(envless.session, worker.session);
      assert.doesNotMatch(
        readFileSync(`/proc/${envless.pid}/environ`, 'utf8'),
        /BATON_/,
        'the daemon cleared its environment',
      );
      // Beside them, carrying the marker too, is the worker's exit waiter, its parent (docs/workers.md) — and, where
      // the worker has a PID namespace of its own, unshare, the waiter's parent, which holds it ("Process identity").
      const carriers = processesOfRuntime(w.runtimeId);
      const waiter = carriers.find((p) => p.pid === worker.ppid);
      assert.ok(waiter, "the worker's exit waiter is its parent");
      assert.equal(readFileSync(`/proc/${waiter.pid}/cmdline`, 'utf8').split('\0')[3], 'baton-waiter');
      const launcher = NAMESPACED ? carriers.find((p) => p.pid === waiter.ppid) : undefined;
      if (NAMESPACED) {
        assert.ok(launcher, "the waiter's parent carries the marker");
        assert.match(readFileSync(`/proc/${launcher.pid}/cmdline`, 'utf8').split('\0')[0]!, /\/unshare$/);
      }
      const others = carriers.filter((p) => p !== waiter && p !== launcher);
      assert.deepEqual(
        others.map((p) => p.pid).sort((a, b) => a - b),
        [...w.procs]
          .filter(([name]) => name !== 'envless')
          .map(([, p]) => p.pid)
          .sort((a, b) => a - b),
        'the worker reported every process that carries its marker',
      );
    }

    const stop = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'test' });
    assert.equal(stop.appliedBy, 'coordinator');
    assert.equal(stop.repeated, false);
    assert.equal(stop.request.status, 'applied');
    assert.equal(stop.request.report.length, 2, 'one entry per in-flight attempt');
    for (const w of workers) {
      assertAllGone(w);
      assertConfirmed(stop.request, w, (await delegationOf(engine, w.task)).id);
      assert.equal((await delegationOf(engine, w.task)).status, 'CANCELLED');
    }

    assert.deepEqual(await outcome, { kind: 'paused', status: 'paused', openGates: 0, stopped: true });
    assert.equal((await engine.getRun(run.id)).status, 'paused');
    const overview = await engine.overview(run.id);
    assert.deepEqual(
      overview.tasks.map((t) => `${t.id}:${t.status}`),
      ['A:ready', 'B:ready'],
      'a run stop leaves the tasks to run again on resume',
    );

    // Asking again changes nothing and answers with the first request.
    const again = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'someone else' });
    assert.equal(again.repeated, true);
    assert.equal(again.request.id, stop.request.id);
    assert.equal(again.request.requestedBy, 'test');
  });

  it('immediate: ends a daemon that changed everything it can about itself (real-time limit, session, environment, parent)', async function () {
    // Issue 25, item 3.5: the worker's PID namespace is what ties the daemon to it (docs/workers.md, "Process
    // identity"); where there is none Baton falls back to the marker, which such a daemon escapes (documented).
    if (!NAMESPACED) this.skip();
    workspace([{ id: 'A', behaviour: 'hostile' }]);
    const engine = await open();
    const { run } = await engine.runForPlan('plan.md');
    const { outcome } = await coordinate(engine, run.id);
    const w = await workerOf('A');
    const worker = w.procs.get('worker')!;
    const daemon = w.procs.get('hostile')!;
    assert.notEqual(daemon.ppid, worker.pid);
    assert.notEqual(daemon.session, worker.session);
    assert.notEqual(daemon.pgrp, worker.pgrp);
    assert.doesNotMatch(
      readFileSync(`/proc/${daemon.pid}/environ`, 'utf8'),
      /BATON_/,
      'the daemon cleared its environment',
    );
    const rttime = (pid: number): string =>
      /^Max realtime timeout\s+(\S+)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'))![1]!;
    assert.notEqual(rttime(daemon.pid), rttime(worker.pid), 'the daemon changed the real-time limit it inherited');

    const stop = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'test' });
    assert.equal(stop.request.status, 'applied');
    assertConfirmed(stop.request, w, (await delegationOf(engine, 'A')).id);
    assert.equal(isLive(daemon), false, 'the daemon is gone');
    assertAllGone(w);
    assert.deepEqual(await outcome, { kind: 'paused', status: 'paused', openGates: 0, stopped: true });
  });

  it('graceful: in-flight attempts finish and are ingested, nothing new starts, and the run pauses', async () => {
    workspace(['A', 'B', 'C', 'D'].map((id) => ({ id, behaviour: 'pass' as const })));
    go('C'); // were C or D dispatched after the stop, they would finish at once and show up below
    go('D');
    const engine = await open();
    const { run } = await engine.runForPlan('plan.md');
    const { outcome } = await coordinate(engine, run.id, 2);
    const workers = [await workerOf('A'), await workerOf('B')];

    const stop = await engine.requestStop({ runId: run.id, mode: 'graceful', by: 'test' });
    assert.equal(stop.appliedBy, 'coordinator');
    assert.deepEqual(
      stop.request.report.map((e) => e.delegationId).sort(),
      [(await delegationOf(engine, 'A')).id, (await delegationOf(engine, 'B')).id].sort(),
    );
    for (const entry of stop.request.report) assert.match(entry.note ?? '', /graceful/);
    for (const w of workers)
      assert.equal(isLive(w.procs.get('worker')!), true, `${w.task} still runs after a graceful stop`);
    assert.equal((await engine.getRun(run.id)).status, 'stopping');
    go('A');
    go('B');

    assert.deepEqual(await outcome, { kind: 'paused', status: 'paused', openGates: 0, stopped: true });
    const overview = await engine.overview(run.id);
    assert.deepEqual(
      overview.delegations.map((d) => `${d.taskId}:${d.status}`),
      ['A:COMPLETED', 'B:COMPLETED'],
      'the in-flight attempts were ingested, and nothing else was dispatched',
    );
    assert.deepEqual(
      overview.tasks.map((t) => `${t.id}:${t.status}`),
      ['A:completed', 'B:completed', 'C:ready', 'D:ready'],
    );
    assert.equal(overview.run.status, 'paused');
    const trace = readFileSync(join(dir, 'trace.txt'), 'utf8').trim().split('\n');
    assert.deepEqual(
      trace
        .map((l) => l.split(' ').slice(0, 2).join(' '))
        .filter((l) => l.startsWith('start'))
        .sort(),
      ['start A', 'start B'],
    );
  });

  it('stopping one delegation ends only its worker, cancels its task and blocks its dependents; the rest runs on', async () => {
    workspace([
      { id: 'A', behaviour: 'tree' },
      { id: 'B', behaviour: 'pass', depends: ['A'] },
      { id: 'C', behaviour: 'pass' },
    ]);
    const engine = await open();
    const { run } = await engine.runForPlan('plan.md');
    const { outcome } = await coordinate(engine, run.id, 2);
    const a = await workerOf('A');
    const c = await workerOf('C');
    const target = await delegationOf(engine, 'A');

    const stop = await engine.requestStop({ runId: run.id, delegationId: target.id, mode: 'immediate', by: 'test' });
    assert.equal(stop.appliedBy, 'coordinator');
    assert.equal(stop.request.delegationId, target.id);
    assert.deepEqual(
      stop.request.report.map((e) => e.delegationId),
      [target.id],
    );
    assertConfirmed(stop.request, a, target.id);
    assertAllGone(a);
    assert.equal(isLive(c.procs.get('worker')!), true, 'the other worker was not touched');
    assert.deepEqual(
      (await engine.overview(run.id)).tasks.map((t) => `${t.id}:${t.status}`),
      ['A:cancelled', 'B:blocked', 'C:running'],
    );
    assert.equal((await engine.getRun(run.id)).status, 'running');
    go('C');

    assert.deepEqual(await outcome, { kind: 'finished', status: 'blocked' });
    const overview = await engine.overview(run.id);
    assert.deepEqual(overview.delegations.map((d) => `${d.taskId}:${d.status}`).sort(), ['A:CANCELLED', 'C:COMPLETED']);
    assert.deepEqual(
      overview.tasks.map((t) => `${t.id}:${t.status}`),
      ['A:cancelled', 'B:blocked', 'C:completed'],
    );
  });

  it('repeating a stop returns the first request and records nothing; immediate after graceful escalates; resuming ends them', async () => {
    workspace([{ id: 'A', behaviour: 'pass' }]);
    const engine = await open();
    const { run } = await engine.runForPlan('plan.md');
    const { outcome } = await coordinate(engine, run.id);
    const a = await workerOf('A');
    const requested = async () => (await engine.listEvents(run.id)).filter((e) => e.type === 'stop:requested').length;

    const first = await engine.requestStop({ runId: run.id, mode: 'graceful', by: 'first' });
    assert.equal(first.repeated, false);
    const again = await engine.requestStop({ runId: run.id, mode: 'graceful', by: 'second' });
    assert.deepEqual(
      { repeated: again.repeated, id: again.request.id, by: again.request.requestedBy },
      { repeated: true, id: first.request.id, by: 'first' },
    );
    assert.equal(await requested(), 1, 'the repeat recorded nothing');
    assert.equal(isLive(a.procs.get('worker')!), true, 'graceful lets the worker run');

    // Immediate is not a repeat of graceful: it is what someone asks for when graceful takes too long.
    const harder = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'third' });
    assert.equal(harder.repeated, false);
    assert.notEqual(harder.request.id, first.request.id);
    assert.equal(harder.appliedBy, 'coordinator');
    assertConfirmed(harder.request, a, (await delegationOf(engine, 'A')).id);
    assertAllGone(a);
    assert.deepEqual(await outcome, { kind: 'paused', status: 'paused', openGates: 0, stopped: true });

    const harderAgain = await engine.requestStop({ runId: run.id, mode: 'immediate', by: 'fourth' });
    assert.deepEqual(
      { repeated: harderAgain.repeated, id: harderAgain.request.id },
      { repeated: true, id: harder.request.id },
    );
    const softer = await engine.requestStop({ runId: run.id, mode: 'graceful', by: 'fifth' });
    assert.deepEqual(
      { repeated: softer.repeated, id: softer.request.id },
      { repeated: true, id: harder.request.id },
      'graceful is covered by the immediate stop in force',
    );
    assert.equal(await requested(), 2);

    const target = (await delegationOf(engine, 'A')).id;
    const one = await engine.requestStop({ runId: run.id, delegationId: target, mode: 'immediate', by: 'sixth' });
    const oneAgain = await engine.requestStop({ runId: run.id, delegationId: target, mode: 'graceful', by: 'seventh' });
    assert.deepEqual({ repeated: oneAgain.repeated, id: oneAgain.request.id }, { repeated: true, id: one.request.id });

    await engine.liftStops(run.id);
    const afterResume = await engine.requestStop({ runId: run.id, mode: 'graceful', by: 'eighth' });
    assert.equal(afterResume.repeated, false, 'after a resume a stop is new');
  });

  it('with no coordinator alive, the stop ends the orphaned workers and their descendants itself; reconcile then changes nothing', async () => {
    workspace([
      { id: 'A', behaviour: 'tree' },
      { id: 'B', behaviour: 'detach-exit' },
    ]);
    const child = spawn(
      process.execPath,
      [bundleScript('test/fixtures/workers/coordinatorChild.ts'), fixture.workspace, 'plan.md'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.push(child);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const runId = await waitFor(
      'the child to coordinate',
      () => /coordinating (\S+)/.exec(output)?.[1] ?? (child.exitCode !== null ? assert.fail(output) : undefined),
    );
    const a = await workerOf('A');
    const b = await workerOf('B');

    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    // B's worker exits now that nobody watches it, leaving its detached child behind.
    go('B');
    await waitFor("B's worker to exit", () => !isLive(b.procs.get('worker')!));
    // In a PID namespace its end ends the namespace: the kernel kills what it left; without one it runs on.
    if (NAMESPACED) await waitFor("B's detached child to end with its worker", () => !isLive(b.procs.get('detached')!));
    else assert.equal(isLive(b.procs.get('detached')!), true);
    for (const [name, proc] of a.procs) assert.equal(isLive(proc), true, `A's ${name} outlived the coordinator`);

    const engine = await open();
    const stop = await engine.requestStop({ runId, mode: 'immediate', by: 'test' });
    assert.equal(stop.appliedBy, 'this process');
    assert.equal(stop.request.status, 'applied');
    assert.equal(stop.request.report.length, 2);
    assertConfirmed(stop.request, a, (await delegationOf(engine, 'A')).id);
    assertConfirmed(
      stop.request,
      b,
      (await delegationOf(engine, 'B')).id,
      NAMESPACED ? ['worker', 'detached'] : ['worker'],
    );
    assertAllGone(a);
    assertAllGone(b);

    const before = await engine.overview(runId);
    assert.deepEqual(before.delegations.map((d) => `${d.taskId}:${d.status}`).sort(), ['A:CANCELLED', 'B:CANCELLED']);
    assert.equal(before.run.status, 'paused');
    const reconciled = await engine.reconcile(runId);
    assert.equal(reconciled.reportOnly, false);
    assert.deepEqual(
      reconciled.entries.filter((e) => e.repair),
      [],
      'nothing left to repair',
    );
    const after = await engine.overview(runId);
    assert.deepEqual(
      {
        run: after.run.status,
        tasks: after.tasks.map((t) => `${t.id}:${t.status}`),
        delegations: after.delegations.map((d) => `${d.id}:${d.status}`),
      },
      {
        run: before.run.status,
        tasks: before.tasks.map((t) => `${t.id}:${t.status}`),
        delegations: before.delegations.map((d) => `${d.id}:${d.status}`),
      },
    );
  });

  it('a worker that exits by itself leaves no process behind: what it detached is ended with it', async () => {
    workspace([{ id: 'A', behaviour: 'detach-exit' }]);
    const engine = await open();
    const { run } = await engine.runForPlan('plan.md');
    const { outcome } = await coordinate(engine, run.id);
    const report = await workerOf('A');
    assert.equal(isLive(report.procs.get('detached')!), true, 'the detached child runs while the worker does');
    go('A');
    await waitFor(
      'the first attempt to fail (no result)',
      async () => (await engine.overview()).delegations[0]?.status === 'FAILED',
    );
    await waitFor('the detached child to be ended', () => !isLive(report.procs.get('detached')!));
    for (const [name, proc] of report.procs) assert.equal(isLive(proc), false, `${name} (pid ${proc.pid}) is gone`);
    await engine.requestStop({ runId: run.id, mode: 'immediate' });
    await outcome;
  });

  it('never signals a pid that now belongs to another process', async () => {
    const signals: string[] = [];
    const onTerm = (): void => void signals.push('SIGTERM');
    process.on('SIGTERM', onTerm);
    // A process in a group of its own, as a worker would be: neither it nor its group may be signalled.
    const bystander = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    children.push(bystander);
    try {
      const self = procOf(process.pid)!;
      const other = await waitFor('the bystander', () => procOf(bystander.pid!));
      for (const proc of [self, other]) {
        const report = await terminateWorker(
          { pid: proc.pid, startTime: String(Number(proc.start) - 1), host: hostname() },
          { graceMs: 200, clock: systemClock },
        );
        assert.deepEqual(
          report,
          { processes: [], survivors: [], confirmed: true, killed: false },
          `pid ${proc.pid} with another start time is not this worker`,
        );
      }
      // No start time recorded: the pid alone proves nothing, so nothing is signalled (and nothing confirmed).
      const unproven = await terminateWorker(
        { pid: other.pid, startTime: null, host: hostname() },
        { graceMs: 200, clock: systemClock },
      );
      assert.deepEqual(unproven, { processes: [], survivors: [], confirmed: false, killed: false });
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(isLive(other), true, 'the bystander was not signalled');
      assert.deepEqual(signals, [], 'this process was not signalled');
    } finally {
      process.off('SIGTERM', onTerm);
    }
  });

  it('without a recorded worker process, ends what carries the marker', async () => {
    const runtimeId = `W-stoptest-${process.pid}-${Date.now()}`;
    const orphan = spawn('sh', ['-c', 'sleep 30 & wait'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, BATON_RUNTIME_ID: runtimeId },
    });
    children.push(orphan);
    const found = await waitFor('the orphan and its child', () => {
      const procs = processesOfRuntime(runtimeId);
      return procs.length === 2 && procs;
    });
    const report = await terminateWorker(undefined, {
      marker: `BATON_RUNTIME_ID=${runtimeId}`,
      graceMs: 1000,
      clock: systemClock,
    });
    assert.equal(report.confirmed, true);
    assert.deepEqual(report.processes.map((p) => p.pid).sort(), found.map((p) => p.pid).sort());
    for (const p of found) assert.equal(isLive(p), false, `pid ${p.pid} is gone`);
  });

  it('a stopped (SIGSTOP) worker is continued so that it can act on SIGTERM within the grace period', async () => {
    const marker = join(dir, 'termed');
    const script = `process.on('SIGTERM', () => { require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'term'); process.exit(0); }); require('node:fs').writeFileSync(${JSON.stringify(`${marker}.ready`)}, ''); setInterval(() => {}, 1 << 30);`;
    const worker = spawn(process.execPath, ['-e', script], { detached: true, stdio: 'ignore' });
    children.push(worker);
    await waitFor('the worker to be ready', () => existsSync(`${marker}.ready`));
    process.kill(worker.pid!, 'SIGSTOP');
    const proc = await waitFor('the worker to stop', () => procOf(worker.pid!)?.state === 'T' && procOf(worker.pid!));
    const report = await terminateWorker(
      { pid: proc.pid, startTime: proc.start, host: hostname() },
      { graceMs: 5000, clock: systemClock },
    );
    assert.equal(report.confirmed, true);
    assert.equal(report.killed, false, 'it ended on TERM, no KILL was needed');
    assert.equal(readFileSync(marker, 'utf8'), 'term');
  });
});
