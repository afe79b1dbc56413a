// Coordinator failover across machines on one PostgreSQL store (docs/team.md, "Failover").
// Two "machines": two workspaces (two clones) with their own `baton` processes, each in its
// own process group, told apart by BATON_HOST_ID — so neither can probe or signal the other's
// processes, exactly as on two hosts. A coordinates the run; its coordinator is SIGKILLed (and,
// in the second test, SIGSTOPped past its lease, then continued). B's `baton resume --observe` takes
// the run over with a higher epoch once A's lease and its workers' watchdog time have passed (a B that joins
// the run, the default on a team store, is in postgresJoin.test.ts):
// by then A's watchdog has ended A's worker, so the task never runs on both machines at once;
// B runs it again and finishes the run. A stopped-then-continued A writes nothing after it
// lost the lease.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git, initRepo } from '../../support/gitRepo';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { machineBatons, storedEvents as storedEventsOf, type StoredEvent } from '../../support/machines';
import { hostPid, PID_TOKEN_EXPRESSION } from '../../support/pidToken';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  resultText,
  ROOT,
  runCli,
  waitFor,
  writeFile,
} from '../../support/cli';

interface TraceLine {
  kind: 'start' | 'end' | 'stopped';
  at: number;
  pid: number;
  delegation: string;
}

/** One task with a verify command (verify.js below). */
const VERIFY_PLAN = `# Plan

\`\`\`baton-task
id: T1
title: Task T1
agent: coder
verify:
  - [node, verify.js]
\`\`\`

Do T1.
`;

/**
 * The verify command: traces its start to $FAKE_TRACE (verify-start <ms> <pid>@<its PID namespace> <cwd>: the test
 * maps it to the machine's pid, test/support/pidToken.ts); where a
 * file \`linger\` is, it runs until it is ended (verify-stopped on SIGTERM), elsewhere it passes
 * (verify-end).
 */
const VERIFY_SCRIPT = `const fs = require('node:fs');
const trace = (kind) => fs.appendFileSync(process.env.FAKE_TRACE, [kind, Date.now(), ${PID_TOKEN_EXPRESSION}, process.cwd()].join(' ') + '\\n');
trace('verify-start');
if (fs.existsSync('linger')) {
  process.on('SIGTERM', () => {
    trace('verify-stopped');
    setTimeout(() => process.exit(143), 150);
  });
  setInterval(() => undefined, 1000);
} else {
  trace('verify-end');
}
`;

const STOP_GRACE_SECONDS = 1;
const LEASE_SECONDS = 5;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX] /.test(stat);
  } catch {
    return false;
  }
}

describe('coordinator failover across machines on one PostgreSQL store', function () {
  this.timeout(240_000);
  let cluster: PostgresCluster;
  const batons = machineBatons();
  const cleanups: Array<() => void> = [];

  before(async function () {
    this.timeout(600_000);
    ensureCliBuilt();
    cluster = await sharedPostgresCluster();
  });
  afterEach(() => {
    batons.killAll();
    for (const cleanup of cleanups.splice(0)) cleanup();
  });

  /** Both machines' config: short leases, the attempt worker, the store in `schema`. */
  function failoverConfig(schema: string, isolation: 'none' | 'worktree'): string {
    return JSON.stringify({
      store: { kind: 'postgres', schema },
      leaseSeconds: LEASE_SECONDS,
      coordinatorLeaseSeconds: LEASE_SECONDS,
      stopGraceSeconds: STOP_GRACE_SECONDS,
      retryBackoffSeconds: 0,
      isolation,
      defaultWorker: 'fake',
      workers: {
        fake: {
          type: 'process',
          command: process.execPath,
          args: [join(ROOT, 'test/fixtures/workers/attemptWorker.js'), '{taskId}'],
        },
      },
    });
  }

  /** A's `baton start`, once its first worker runs (FAKE_TRACE has its start line). */
  async function startOnA(cwd: string, env: Record<string, string>, trace: string) {
    const coordinator = startBaton(['start', 'plan.md'], cwd, env);
    await waitFor(
      () => existsSync(trace) && / D-T1-coder-001$/m.test(readFileSync(trace, 'utf8')),
      "A's worker to start",
      60_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${coordinator.output()}`));
    return coordinator;
  }

  /** Two clones of one project on one store; A's first attempt of T1 hangs until it is ended. */
  function twoMachines(name: string, firstAttempt: 'linger' | 'forge-deadline' | 'pass' = 'linger') {
    const schema = schemaFor(`failover-${name}-${process.pid}`);
    const config = failoverConfig(schema, 'none');
    const a = makeWorkspace('baton-failover-a-');
    const b = makeWorkspace('baton-failover-b-');
    const scratch = mkdtempSync(join(tmpdir(), 'baton-failover-trace-'));
    cleanups.push(() => {
      removeWorkspace(a);
      removeWorkspace(b);
      rmSync(scratch, { recursive: true, force: true });
    });
    for (const dir of [a, b]) {
      writeFile(dir, '.baton/config.json', config);
      writeFile(dir, 'plan.md', planText([{ id: 'T1' }]));
    }
    const trace = join(scratch, 'trace');
    const common = {
      BATON_STORE_URL: cluster.url,
      NO_COLOR: '1',
      FAKE_TRACE: trace,
      FAKE_DELAY_MS: '300',
      FAKE_BEHAVIOUR: JSON.stringify({ 'D-T1-coder-001': firstAttempt }),
    };
    const envA = { ...common, BATON_HOST_ID: 'machine-a' };
    const envB = { ...common, BATON_HOST_ID: 'machine-b' };
    const traced = (): TraceLine[] =>
      (existsSync(trace) ? readFileSync(trace, 'utf8') : '')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [kind, , at, pid, delegation] = line.split(' ');
          return {
            kind: kind as TraceLine['kind'],
            at: Number(at),
            pid: hostPid(pid!),
            pidToken: pid!,
            delegation: delegation!,
          };
        });
    return { a, b, envA, envB, traced, trace };
  }

  /** A machine's `baton`, in a process group of its own (test/support/machines.ts). */
  const startBaton = (args: string[], cwd: string, env: Record<string, string>, clockAhead?: string) =>
    batons.start(args, cwd, env, clockAhead);

  async function storedEvents(cwd: string, env: Record<string, string>): Promise<StoredEvent[]> {
    const { runId, events } = await storedEventsOf(cwd, env);
    runIds.set(cwd, runId);
    return events;
  }
  const runIds = new Map<string, string>();

  /** What both tests check once B finished the run: one task, run on one machine at a time, once to its end. */
  async function assertTakenOverCleanly(
    machines: ReturnType<typeof twoMachines>,
    aLostAt: number,
    bOutput: string,
  ): Promise<StoredEvent[]> {
    const { b, envB, traced } = machines;
    const events = await storedEvents(b, envB);
    const acquired = events.filter((e) => e.type === 'coordinator:acquired');
    assert.equal(acquired.length, 2, `A took the run, then B: ${JSON.stringify(acquired)}`);
    assert.ok(Number(acquired[1]!.data.epoch) > Number(acquired[0]!.data.epoch), 'B holds a higher epoch');
    assert.match(String(acquired[1]!.data.holder), /machine-b/, 'B is the second holder');
    // Not before A's lease and its watchdog's time had passed (the clocks here are one clock).
    const graceMs = 500 + STOP_GRACE_SECONDS * 1000 + 2000 + 2000;
    assert.ok(
      acquired[1]!.at >= aLostAt + graceMs - 50,
      `B took over ${acquired[1]!.at - aLostAt} ms after A's last renewal could have run out, not before ${graceMs} ms`,
    );

    // A's worker was ended on A by its watchdog — before B started the task again.
    const lines = traced();
    const first = lines.filter((l) => l.delegation === 'D-T1-coder-001');
    const second = lines.filter((l) => l.delegation === 'D-T1-coder-002');
    const stopped = first.find((l) => l.kind === 'stopped');
    const restarted = second.find((l) => l.kind === 'start');
    assert.ok(stopped, `A's worker got SIGTERM: ${JSON.stringify(lines)}`);
    assert.ok(restarted, `B started the task again: ${JSON.stringify(lines)}\n${bOutput}`);
    assert.ok(stopped.at < restarted.at, `attempt 1 ended (${stopped.at}) before attempt 2 started (${restarted.at})`);
    assert.ok(!alive(stopped.pid), "A's worker is gone");
    assert.ok(
      second.some((l) => l.kind === 'end'),
      'attempt 2 ran to its end',
    );
    const log = readFileSync(join(machines.a, '.baton/runs', runIds.get(b)!, 'logs/D-T1-coder-001.log'), 'utf8');
    assert.match(log, /\[baton lease watchdog\] the lease of D-T1-coder-001 ran out at .* ending the worker/);
    assert.match(log, /\[baton lease watchdog\] ended \d+ process\(es\), confirmed gone/);

    // The store: attempt 1 lost (STALE, by B after the grace), attempt 2 completed the task, nothing else.
    const statuses = events.filter((e) => e.type === 'delegation:status');
    const ofFirst = statuses.filter((e) => e.data.delegationId === 'D-T1-coder-001').map((e) => e.data.to);
    assert.deepEqual(ofFirst, ['STALE'], 'attempt 1: only its expiry, by B');
    assert.deepEqual(
      statuses.filter((e) => e.data.delegationId === 'D-T1-coder-002').map((e) => e.data.to),
      ['COMPLETED'],
    );
    assert.equal(events.filter((e) => e.type === 'delegation:created').length, 2, 'two attempts, no third');
    const end = events.filter((e) => e.type === 'run:status').pop();
    assert.equal(end?.data.to, 'completed');
    return events;
  }

  it('B takes over when A’s coordinator is SIGKILLed: after the lease, with a higher epoch; A’s worker was ended by its watchdog first', async () => {
    const machines = twoMachines('kill');
    const { a, b, envA, envB, traced, trace } = machines;
    const coordinatorA = await startOnA(a, envA, trace);
    const lastRenewal = Date.now();
    process.kill(coordinatorA.child.pid!, 'SIGKILL');
    await coordinatorA.exited;
    const worker = traced().find((l) => l.delegation === 'D-T1-coder-001')!;
    assert.ok(alive(worker.pid), "A's worker outlives its coordinator for now (its lease still runs)");

    const coordinatorB = startBaton(['resume', '--observe'], b, envB);
    const bExit = await coordinatorB.exited;
    assert.equal(bExit, 0, coordinatorB.output());
    assert.match(coordinatorB.output(), /runs on another host \(machine-a\)|runs until/, 'B first observes A');
    assert.match(coordinatorB.output(), /this process drives it now/);
    // A's lease ran out at most one lease after its last renewal, which was before the kill.
    await assertTakenOverCleanly(machines, lastRenewal - LEASE_SECONDS * 1000, coordinatorB.output());
  });

  it("a worker that rewrites its watchdog's deadline file a day ahead is still ended by it before B runs the task again (issue 25, item 4.3)", async () => {
    // Before, the watchdog took any number in the file: A's worker outlived the takeover and ran beside attempt 2.
    const machines = twoMachines('forge', 'forge-deadline');
    const { a, b, envA, envB, trace } = machines;
    const coordinatorA = await startOnA(a, envA, trace);
    const lastRenewal = Date.now();
    process.kill(coordinatorA.child.pid!, 'SIGKILL');
    await coordinatorA.exited;
    const coordinatorB = startBaton(['resume', '--observe'], b, envB);
    assert.equal(await coordinatorB.exited, 0, coordinatorB.output());
    await assertTakenOverCleanly(machines, lastRenewal - LEASE_SECONDS * 1000, coordinatorB.output());
  });

  it("a host whose clock runs a minute ahead keeps time by the database's: it takes nothing over from a live coordinator (issue 26)", async () => {
    // Before, B judged A's lease by its own clock: expired at once. It took the run, expired attempt 1 and ran the
    // task again while A's worker still ran (hosts had to agree within 2 s).
    const machines = twoMachines('clock', 'pass');
    const { a, b, envA, envB, traced, trace } = machines;
    const slow = { FAKE_DELAY_MS: '8000' };
    const coordinatorA = await startOnA(a, { ...envA, ...slow }, trace);
    const coordinatorB = startBaton(['resume'], b, { ...envB, ...slow }, '+60s');
    assert.equal(await coordinatorA.exited, 0, coordinatorA.output());
    assert.equal(await coordinatorB.exited, 0, coordinatorB.output());
    const events = await storedEvents(a, envA);
    const acquired = events.filter((e) => e.type === 'coordinator:acquired');
    assert.equal(acquired.length, 1, `only A drove the run: ${JSON.stringify(acquired)}\n${coordinatorB.output()}`);
    assert.deepEqual(
      traced().map((l) => `${l.kind} ${l.delegation}`),
      ['start D-T1-coder-001', 'end D-T1-coder-001'],
      'the task ran once, on A',
    );
    assert.equal(events.filter((e) => e.type === 'run:status').pop()?.data.to, 'completed');
  });

  it('a coordinator SIGSTOPped past its lease and continued writes nothing: B took over and finished; A steps down', async () => {
    const machines = twoMachines('stop');
    const { a, b, envA, envB, trace } = machines;
    const coordinatorA = await startOnA(a, envA, trace);
    const stoppedAt = Date.now();
    process.kill(coordinatorA.child.pid!, 'SIGSTOP');

    const coordinatorB = startBaton(['resume', '--observe'], b, envB);
    assert.equal(await coordinatorB.exited, 0, coordinatorB.output());
    const before = await assertTakenOverCleanly(machines, stoppedAt - LEASE_SECONDS * 1000, coordinatorB.output());

    // A wakes up: it finds the run taken over, writes nothing, and ends.
    process.kill(coordinatorA.child.pid!, 'SIGCONT');
    const aExit = await Promise.race([
      coordinatorA.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000)),
    ]);
    assert.notEqual(aExit, 'still running', `A ends once continued:\n${coordinatorA.output()}`);
    assert.match(coordinatorA.output(), /no longer holds|superseded|took the run over|lost/i, coordinatorA.output());
    const after = await storedEvents(b, envB);
    assert.deepEqual(
      after.map((e) => `${e.seq} ${e.type}`),
      before.map((e) => `${e.seq} ${e.type}`),
      'nothing was written after A lost the lease',
    );
  });

  it('a verify command A started is ended by its watchdog when A’s coordinator is SIGKILLed; B verifies again only after that, in its own clone', async () => {
    const machines = twoMachines('verify');
    const { a, b, envB, trace } = machines;
    // T1's worker passes at once; its verify command lingers in A's clone (until it is ended) and passes in B's.
    for (const dir of [a, b]) {
      writeFile(dir, 'plan.md', VERIFY_PLAN);
      writeFile(dir, 'verify.js', VERIFY_SCRIPT);
    }
    writeFile(a, 'linger', '');
    const passing = { FAKE_BEHAVIOUR: '{}' };
    const verifies = (): Array<{ kind: string; at: number; pid: string; cwd: string }> =>
      (existsSync(trace) ? readFileSync(trace, 'utf8') : '')
        .split('\n')
        .filter((line) => line.startsWith('verify-'))
        .map((line) => {
          const [kind, at, pid, cwd] = line.split(' ');
          return { kind: kind!, at: Number(at), pid: pid!, cwd: cwd! };
        });
    const coordinatorA = startBaton(['start', 'plan.md'], a, { ...machines.envA, ...passing });
    await waitFor(() => verifies().some((v) => v.kind === 'verify-start'), "A's verify command to start", 60_000).catch(
      (err: Error) => assert.fail(`${err.message}\n${coordinatorA.output()}`),
    );
    process.kill(coordinatorA.child.pid!, 'SIGKILL');
    await coordinatorA.exited;
    const onA = verifies()[0]!;
    assert.equal(onA.cwd, a);
    assert.ok(alive(hostPid(onA.pid)), "A's verify command outlives its coordinator for now (A's lease still runs)");

    const coordinatorB = startBaton(['resume'], b, { ...envB, ...passing });
    const bExit = await Promise.race([
      coordinatorB.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 120_000)),
    ]);
    assert.equal(bExit, 0, `B finishes the run:\n${coordinatorB.output()}\n${JSON.stringify(verifies())}`);

    // A's command got its SIGTERM from its watchdog, and is gone, before B verified again — in B's clone.
    // A process is told apart by its line's place and folder, not its number: a PID namespace ended, the next one
    // may get the same name (`pid:[…]`), and its first process the same number.
    const lines = verifies();
    const stopped = lines.find((v) => v.kind === 'verify-stopped' && v.pid === onA.pid && v.cwd === onA.cwd);
    const againAt = lines.findIndex((v, i) => v.kind === 'verify-start' && i > 0);
    const again = againAt < 0 ? undefined : lines[againAt];
    assert.ok(stopped, `A's verify command got SIGTERM: ${JSON.stringify(lines)}`);
    assert.ok(again, `B ran the verify command again: ${JSON.stringify(lines)}\n${coordinatorB.output()}`);
    assert.ok(stopped.at < again.at, `A's ended (${stopped.at}) before B's started (${again.at})`);
    assert.ok(!alive(hostPid(onA.pid)), "A's verify command is gone");
    assert.equal(again.cwd, b, "B verified in its own clone, not in A's folder");
    assert.ok(
      lines.slice(againAt).some((v) => v.kind === 'verify-end' && v.pid === again.pid && v.cwd === again.cwd),
      "B's verify command passed",
    );

    const events = await storedEvents(b, envB);
    const log = readFileSync(join(a, '.baton/runs', runIds.get(b)!, 'logs/D-T1-coder-001.verify.log'), 'utf8');
    assert.match(
      log,
      /\[baton lease watchdog\] the lease of the coordinator verifying D-T1-coder-001 ran out at .*: ending its verify command/,
    );
    assert.match(log, /\[baton lease watchdog\] ended \d+ process\(es\), confirmed gone/);
    // One attempt, completed once verified on B; the run completed.
    assert.equal(events.filter((e) => e.type === 'delegation:created').length, 1, 'one attempt');
    assert.deepEqual(
      events
        .filter((e) => e.type === 'delegation:status' && e.data.delegationId === 'D-T1-coder-001')
        .map((e) => e.data.to),
      ['COMPLETED'],
    );
    assert.equal(events.filter((e) => e.type === 'run:status').pop()?.data.to, 'completed');
  });

  it('work that finished on A after its coordinator was SIGKILLed is handed in by its watchdogs: B settles it, each task done once (issue 26)', async () => {
    // Before, the results and exit statuses stayed in A's clone: B ran all three tasks again once their leases ran out.
    const machines = twoMachines('handin');
    const { a, b, envA, envB, trace } = machines;
    // Each worker traces its start, works until the test lets it end (the file `go` in A's clone: so none can end
    // before its coordinator is killed, however slow the machine), then ends: T1 with a result artifact, T2 and T3
    // by their exit status (0 and 1).
    const worker = (code: number, artifact: boolean) => ({
      type: 'process',
      command: process.execPath,
      args: [
        '-e',
        `const fs = require('node:fs');
fs.appendFileSync(process.env.FAKE_TRACE, 'start ' + process.env.BATON_DELEGATION_ID + ' ' + process.cwd() + '\\n');
const wait = setInterval(() => {
  if (!fs.existsSync('go')) return;
  clearInterval(wait);
  setTimeout(() => {
    if (${artifact}) fs.writeFileSync(process.env.BATON_ARTIFACT_PATH, ${JSON.stringify(
      resultText({ task: 'T1', agent: 'coder', status: 'PASS', summary: 'done on A' }),
    )});
    process.exit(${code});
  }, 500);
}, 100);`,
      ],
      ...(artifact ? {} : { result: 'exit-code' }),
    });
    const config = {
      ...(JSON.parse(readFileSync(join(a, '.baton/config.json'), 'utf8')) as Record<string, unknown>),
      // The workers' leases outlast A's coordinator's by far: B takes the run over while their watchdogs still let
      // them run, and a loaded machine finishes them well within.
      leaseSeconds: 30,
      maxConcurrency: 3,
      maxAttempts: 1,
      workers: { result: worker(0, true), passes: worker(0, false), fails: worker(1, false) },
    };
    for (const dir of [a, b]) {
      writeFile(dir, '.baton/config.json', JSON.stringify(config));
      writeFile(
        dir,
        'plan.md',
        ['T1', 'T2', 'T3']
          .map((id, i) =>
            [
              '```baton-task',
              `id: ${id}`,
              `title: Task ${id}`,
              'agent: coder',
              `worker: ${['result', 'passes', 'fails'][i]}`,
              '```',
              '',
              `Do ${id}.`,
              '',
            ].join('\n'),
          )
          .join('\n'),
      );
    }
    const starts = (): string[] =>
      (existsSync(trace) ? readFileSync(trace, 'utf8') : '').split('\n').filter((l) => l.startsWith('start '));
    const coordinatorA = startBaton(['start', 'plan.md'], a, envA);
    await waitFor(() => starts().length === 3, "A's three workers to start", 60_000).catch((err: Error) =>
      assert.fail(`${err.message}\n${coordinatorA.output()}`),
    );
    process.kill(coordinatorA.child.pid!, 'SIGKILL');
    await coordinatorA.exited;
    // They finish on A with no coordinator alive there.
    writeFile(a, 'go', '');

    const coordinatorB = startBaton(['resume'], b, envB);
    const bExit = await coordinatorB.exited;
    assert.equal(bExit, 5, `the run ends failed (T3's exit status):\n${coordinatorB.output()}`);
    assert.match(
      coordinatorB.output(),
      /while no coordinator watched \(handed in by its lease watchdog on machine-a\)/,
    );

    // Each task ran once, on A.
    assert.deepEqual(
      starts()
        .map((l) => l.split(' '))
        .map(([, delegation, cwd]) => `${delegation} ${cwd === a ? 'A' : cwd}`)
        .sort(),
      ['D-T1-coder-001 A', 'D-T2-coder-001 A', 'D-T3-coder-001 A'],
    );
    const events = await storedEvents(b, envB);
    assert.equal(events.filter((e) => e.type === 'delegation:created').length, 3, 'three attempts, no retry');
    assert.deepEqual(
      events.filter((e) => e.type === 'runtime:stale'),
      [],
      'nothing went stale',
    );
    const exited = events.filter((e) => e.type === 'runtime:exited');
    assert.deepEqual(
      exited
        .map((e) => `${String(e.data.delegationId)} ${String(e.data.exitCode)} ${String(e.data.handedInBy)}`)
        .sort(),
      ['D-T1-coder-001 0 machine-a', 'D-T2-coder-001 0 machine-a', 'D-T3-coder-001 1 machine-a'],
    );
    const ended = (id: string) =>
      events.filter((e) => e.type === 'delegation:status' && e.data.delegationId === id).map((e) => e.data.to);
    assert.deepEqual(ended('D-T1-coder-001'), ['COMPLETED']);
    assert.deepEqual(ended('D-T2-coder-001'), ['COMPLETED']);
    assert.deepEqual(ended('D-T3-coder-001'), ['FAILED']);
    // T1's result is the one its worker wrote on A, now in B's clone too.
    assert.match(
      readFileSync(join(b, '.baton/runs', runIds.get(b)!, 'artifacts/D-T1-coder-001.md'), 'utf8'),
      /summary: done on A/,
    );
  });

  it('drives a worktree-isolated run only from the clone that started it: another clone is refused (exit 3), that clone takes it over', async () => {
    const schema = schemaFor(`failover-clone-${process.pid}`);
    const config = failoverConfig(schema, 'worktree');
    const scratch = mkdtempSync(join(tmpdir(), 'baton-failover-clones-'));
    cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
    const a = join(scratch, 'a');
    const b = join(scratch, 'b');
    mkdirSync(a);
    initRepo(a, { '.baton/config.json': config, 'plan.md': planText([{ id: 'T1' }]) });
    git(scratch, 'clone', '--quiet', a, b);
    const trace = join(scratch, 'trace');
    const common = {
      BATON_STORE_URL: cluster.url,
      NO_COLOR: '1',
      FAKE_TRACE: trace,
      FAKE_BEHAVIOUR: JSON.stringify({ 'D-T1-coder-001': 'linger' }),
    };
    const coordinatorA = await startOnA(a, { ...common, BATON_HOST_ID: 'machine-a' }, trace);
    process.kill(coordinatorA.child.pid!, 'SIGKILL');
    await coordinatorA.exited;

    // B, another clone: refused at once, whatever the lease says; it still sees the run.
    const envB = { ...common, BATON_HOST_ID: 'machine-b' };
    const refused = await runCli(['resume'], { cwd: b, env: envB, timeoutMs: 30_000 });
    assert.equal(refused.code, 3, describeResult(refused));
    assert.match(
      refused.stderr,
      /works in worktrees of the git repository at .*\/a, the clone that started it; this workspace is in .*\/b\. Drive it from that clone/,
    );
    const status = await runCli(['status'], { cwd: b, env: envB });
    assert.equal(status.code, 0, describeResult(status));
    assert.match(status.stdout, /T1/);

    // A's clone (the same machine, a new process) takes it over and finishes it — once A's worker, which lingers until
    // it is ended, has been ended by its watchdog (lease and grace run out): resumed sooner, it would be adopted and
    // the run would wait on it for ever. Which of the two a resume meets depended on how fast the machine was.
    await waitFor(
      () =>
        / D-T1-coder-001$/m.test(
          readFileSync(trace, 'utf8')
            .split('\n')
            .filter((l) => l.startsWith('stopped '))
            .join('\n'),
        ),
      "A's worker to be ended by its watchdog",
      60_000,
    );
    const resumed = await runCli(['resume'], {
      cwd: a,
      env: { ...common, BATON_HOST_ID: 'machine-a' },
      timeoutMs: 120_000,
    });
    assert.equal(resumed.code, 0, describeResult(resumed));
    const end = (await storedEvents(a, { ...common, BATON_HOST_ID: 'machine-a' }))
      .filter((e) => e.type === 'run:status')
      .pop();
    assert.equal(end?.data.to, 'completed');
    // The attempts' branches are in A's clone; B's has none.
    assert.match(git(a, 'branch', '--list', 'baton/*'), /baton\/R-[\w-]+\/T1\//);
    assert.equal(git(b, 'branch', '--list', 'baton/*'), '', "B's clone is untouched");
  });
});
