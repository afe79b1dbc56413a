// Every machine works (docs/team.md, "Every machine works"; issue 26): a run on one PostgreSQL store driven by
// coordinators on two "machines" at once — two workspaces (two clones) with their own `baton` processes, each in its
// own process group, told apart by BATON_HOST_ID, so neither can probe or signal the other's processes. A starts the
// run; B's `baton resume` joins it instead of only watching. Each task runs once, on one of them.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { machineBatons, storedEvents as storedEventsOf, type StoredEvent } from '../../support/machines';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { ensureCliBuilt, makeWorkspace, removeWorkspace, waitFor, writeFile } from '../../support/cli';

/**
 * The worker: traces its start (`start <delegation> <cwd>`) to $FAKE_TRACE, works $WORK_MS, writes a passing result
 * and traces its end.
 */
const WORKER = `const fs = require('node:fs');
const trace = (kind) => fs.appendFileSync(process.env.FAKE_TRACE, [kind, process.env.BATON_DELEGATION_ID, process.cwd()].join(' ') + '\\n');
trace('start');
setTimeout(() => {
  const task = process.env.BATON_DELEGATION_ID.split('-')[1];
  const fence = String.fromCharCode(96).repeat(3);
  fs.writeFileSync(process.env.BATON_ARTIFACT_PATH, ['# ' + task, '', fence + 'baton-result', 'contract: baton-result-v1',
    'task: ' + task, 'agent: coder', 'status: PASS', 'summary: done', 'artifacts: []', fence, ''].join('\\n'));
  trace('end');
}, Number(process.env.WORK_MS));`;

const TASKS = ['T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7', 'T8'];

describe('every machine works: a second host joins a run on one PostgreSQL store', function () {
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

  /** Clones of one project on one store (machines `names`), a plan of eight independent tasks of `workMs` each. */
  function onMachines<Name extends string>(name: string, workMs: number, names: readonly Name[]) {
    const schema = schemaFor(`join-${name}-${process.pid}`);
    const config = JSON.stringify({
      store: { kind: 'postgres', schema },
      isolation: 'none',
      maxConcurrency: 2,
      leaseSeconds: 15,
      coordinatorLeaseSeconds: 5,
      stopGraceSeconds: 1,
      retryBackoffSeconds: 0,
      defaultWorker: 'work',
      workers: { work: { type: 'process', command: process.execPath, args: ['-e', WORKER] } },
    });
    const plan = TASKS.map(
      (id) => `\`\`\`baton-task\nid: ${id}\ntitle: Task ${id}\nagent: coder\n\`\`\`\n\nDo ${id}.\n`,
    ).join('\n');
    const dirs = names.map((n) => makeWorkspace(`baton-join-${n.toLowerCase()}-`));
    const scratch = mkdtempSync(join(tmpdir(), 'baton-join-trace-'));
    cleanups.push(() => {
      for (const dir of dirs) removeWorkspace(dir);
      rmSync(scratch, { recursive: true, force: true });
    });
    for (const dir of dirs) {
      writeFile(dir, '.baton/config.json', config);
      writeFile(dir, 'plan.md', plan);
    }
    const trace = join(scratch, 'trace');
    const common = {
      BATON_STORE_URL: cluster.url,
      NO_COLOR: '1',
      FAKE_TRACE: trace,
      WORK_MS: String(workMs),
    };
    const lines = (kind: 'start' | 'end'): Array<{ delegation: string; on: Name }> =>
      (existsSync(trace) ? readFileSync(trace, 'utf8') : '')
        .split('\n')
        .filter((l) => l.startsWith(`${kind} `))
        .map((l) => {
          const [, delegation, cwd] = l.split(' ');
          const at = dirs.indexOf(cwd!);
          return { delegation: delegation!, on: at >= 0 ? names[at]! : assert.fail(`a worker in ${cwd}`) };
        });
    const envs = names.map((n) => ({ ...common, BATON_HOST_ID: `machine-${n.toLowerCase()}` }));
    return { dirs, envs, lines, schema };
  }

  /** Two clones of one project on one store, a plan of eight independent tasks of `workMs` each. */
  function twoMachines(name: string, workMs: number) {
    const { dirs, envs, lines, schema } = onMachines(name, workMs, ['A', 'B'] as const);
    return { a: dirs[0]!, b: dirs[1]!, envA: envs[0]!, envB: envs[1]!, lines, schema };
  }

  const startBaton = (args: string[], cwd: string, env: Record<string, string>) => batons.start(args, cwd, env);
  const storedEvents = async (cwd: string, env: Record<string, string>) => (await storedEventsOf(cwd, env)).events;

  /** A starts the run; once its first worker runs, B joins it; returns once B's first worker runs too. */
  async function bothWorking(m: Pick<ReturnType<typeof twoMachines>, 'a' | 'b' | 'envA' | 'envB' | 'lines'>) {
    const coordinatorA = startBaton(['start', 'plan.md'], m.a, m.envA);
    await waitFor(() => m.lines('start').length > 0, "A's first worker", 60_000);
    const coordinatorB = startBaton(['resume'], m.b, m.envB);
    await waitFor(() => m.lines('start').some((l) => l.on === 'B'), "B's first worker", 60_000).catch((err: Error) =>
      assert.fail(`${err.message}\n${coordinatorB.output()}`),
    );
    return { coordinatorA, coordinatorB };
  }

  /** Each task started once and completed once; the run completed. */
  function assertEachTaskOnce(
    events: StoredEvent[],
    lines: (kind: 'start' | 'end') => Array<{ delegation: string; on: string }>,
    output: string,
  ): void {
    const started = lines('start').map((l) => l.delegation);
    assert.deepEqual(
      [...started].sort(),
      TASKS.map((id) => `D-${id}-coder-001`),
      `each task started once: ${JSON.stringify(lines('start'))}\n${output}`,
    );
    assert.equal(events.filter((e) => e.type === 'delegation:created').length, TASKS.length, 'one attempt each');
    assert.deepEqual(
      events.filter((e) => e.type === 'delegation:status').map((e) => e.data.to),
      TASKS.map(() => 'COMPLETED'),
    );
    assert.equal(events.filter((e) => e.type === 'run:status').pop()?.data.to, 'completed');
  }

  it('B’s `baton resume` joins the run A drives: both run its tasks, each task once, and both end when it completes', async () => {
    const { a, b, envA, envB, lines, schema } = twoMachines('both', 2500);
    const coordinatorA = startBaton(['start', 'plan.md'], a, envA);
    await waitFor(() => lines('start').length > 0, "A's first worker", 60_000).catch((err: Error) =>
      assert.fail(`${err.message}\n${coordinatorA.output()}`),
    );
    const coordinatorB = startBaton(['resume'], b, envB);
    const [aExit, bExit] = await Promise.all([coordinatorA.exited, coordinatorB.exited]);
    assert.equal(aExit, 0, coordinatorA.output());
    assert.equal(bExit, 0, coordinatorB.output());
    assert.match(coordinatorB.output(), /is driven by machine-a:\d+; this process joins it and runs its tasks too/);

    const events = await storedEvents(a, envA);
    assertEachTaskOnce(events, lines, `${coordinatorA.output()}\n${coordinatorB.output()}`);
    const on = lines('start').map((l) => l.on);
    assert.ok(on.includes('A') && on.includes('B'), `both machines ran tasks: ${JSON.stringify(lines('start'))}`);
    const joined = events.filter((e) => e.type === 'coordinator:joined');
    assert.equal(joined.length, 1);
    assert.match(String(joined[0]!.data.holder), /^machine-b:/);
    assert.equal(events.filter((e) => e.type === 'coordinator:acquired').length, 1, 'A held the lease throughout');
    assert.equal(events.filter((e) => e.type === 'coordinator:left').length, 1, 'B left once the run completed');
    // Both coordinators lived: each took its workers' ends itself, and no watchdog handed one in.
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      const handIns = await client.query<{ n: string }>(`SELECT COUNT(*) AS n FROM ${schema}.hand_ins`);
      assert.equal(Number(handIns.rows[0]!.n), 0);
    } finally {
      await client.end();
    }
  });

  it('with --observe, B only watches, as before: every task runs on A', async () => {
    const { a, b, envA, envB, lines } = twoMachines('observe', 300);
    const coordinatorA = startBaton(['start', 'plan.md'], a, envA);
    await waitFor(() => lines('start').length > 0, "A's first worker", 60_000);
    const coordinatorB = startBaton(['resume', '--observe'], b, envB);
    const [aExit, bExit] = await Promise.all([coordinatorA.exited, coordinatorB.exited]);
    assert.equal(aExit, 0, coordinatorA.output());
    assert.equal(bExit, 0, coordinatorB.output());
    assert.match(coordinatorB.output(), /This process observes/);
    assertEachTaskOnce(await storedEvents(a, envA), lines, coordinatorB.output());
    assert.deepEqual([...new Set(lines('start').map((l) => l.on))], ['A'], 'B ran nothing');
  });

  it('Ctrl-C on B’s joined `baton resume` ends only B’s workers and gives their tasks back: A runs them, the run completes', async () => {
    const { a, b, envA, envB, lines } = twoMachines('leave', 4000);
    const { coordinatorA, coordinatorB } = await bothWorking({ a, b, envA, envB, lines });
    process.kill(coordinatorB.child.pid!, 'SIGINT');
    await coordinatorB.exited;
    assert.equal(await coordinatorA.exited, 0, coordinatorA.output());

    const events = await storedEvents(a, envA);
    const byB = lines('start').filter((l) => l.on === 'B');
    const released = events.filter(
      (e) => e.type === 'delegation:status' && e.data.to === 'CANCELLED' && /left the run/.test(String(e.data.reason)),
    );
    // B's attempts were released: those whose workers ran, and any it had claimed and not started yet; none of A's.
    const releasedIds = released.map((e) => String(e.data.delegationId));
    for (const l of byB)
      assert.ok(releasedIds.includes(l.delegation), `${l.delegation} (B's) released: ${releasedIds}`);
    const onA = lines('start')
      .filter((l) => l.on === 'A')
      .map((l) => l.delegation);
    assert.deepEqual(
      releasedIds.filter((id) => onA.includes(id)),
      [],
      `only B's attempts were released: ${JSON.stringify(lines('start'))}\n${coordinatorB.output()}`,
    );
    assert.deepEqual(
      lines('end').filter((l) => l.on === 'B'),
      [],
      'B’s workers were ended before they finished',
    );
    // Every task completed, those B let go by a second attempt on A (not counted against their attempts).
    const completed = events.filter((e) => e.type === 'delegation:status' && e.data.to === 'COMPLETED');
    assert.equal(completed.length, TASKS.length);
    assert.equal(events.filter((e) => e.type === 'run:status').pop()?.data.to, 'completed');
    assert.equal(events.filter((e) => e.type === 'coordinator:left').length, 1, 'B left');
  });

  it('A’s coordinator SIGKILLed while B is joined: B takes the run over after the rule’s time and finishes it, each task once', async () => {
    const { a, b, envA, envB, lines } = twoMachines('holder', 2500);
    const { coordinatorA, coordinatorB } = await bothWorking({ a, b, envA, envB, lines });
    process.kill(coordinatorA.child.pid!, 'SIGKILL');
    await coordinatorA.exited;

    assert.equal(await coordinatorB.exited, 0, coordinatorB.output());
    assert.match(
      coordinatorB.output(),
      /The coordinator that held run R-[\w-]+ is gone: this process takes the run over/,
    );
    const events = await storedEvents(b, envB);
    assertEachTaskOnce(events, lines, coordinatorB.output());
    const acquired = events.filter((e) => e.type === 'coordinator:acquired');
    assert.equal(acquired.length, 2, 'A, then B');
    assert.match(String(acquired[1]!.data.holder), /^machine-b:/);
    assert.equal(events.filter((e) => e.type === 'runtime:stale').length, 0, 'nothing A ran was lost');
  });

  it('B’s joined coordinator SIGSTOPped (Ctrl-Z): A goes on, settles what B’s workers finished from their hand-ins, and B, continued, writes nothing', async () => {
    const { a, b, envA, envB, lines } = twoMachines('stopped', 2500);
    const { coordinatorA, coordinatorB } = await bothWorking({ a, b, envA, envB, lines });
    process.kill(coordinatorB.child.pid!, 'SIGSTOP');

    // A finishes the run alone: B's place lapses, A retires it, and what B's workers finished meanwhile (handed in by
    // their watchdogs, since their coordinator is stopped) is settled, not run again.
    assert.equal(await coordinatorA.exited, 0, coordinatorA.output());
    const before = await storedEvents(a, envA);
    assert.equal(before.filter((e) => e.type === 'run:status').pop()?.data.to, 'completed');
    assert.equal(
      before.filter((e) => e.type === 'delegation:status' && e.data.to === 'COMPLETED').length,
      TASKS.length,
      'every task completed',
    );
    assert.ok(
      before.some((e) => e.type === 'coordinator:left' && e.data.lapsed === true),
      "A retired B's lapsed place",
    );
    const finishedOnB = lines('end')
      .filter((l) => l.on === 'B')
      .map((l) => l.delegation.split('-')[1]!);
    assert.ok(finishedOnB.length > 0, `a worker of B finished while B was stopped: ${JSON.stringify(lines('end'))}`);
    for (const task of finishedOnB)
      assert.deepEqual(
        lines('start')
          .filter((l) => l.delegation.split('-')[1] === task)
          .map((l) => l.on),
        ['B'],
        `${task}, finished on B, was not run again\n${coordinatorA.output()}`,
      );

    // B, continued, finds its place retired: it steps down and writes nothing.
    process.kill(coordinatorB.child.pid!, 'SIGCONT');
    const bExit = await Promise.race([
      coordinatorB.exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000)),
    ]);
    assert.notEqual(bExit, 'still running', `B ends once continued:\n${coordinatorB.output()}`);
    const after = await storedEvents(a, envA);
    assert.deepEqual(
      after.map((e) => `${e.seq} ${e.type}`),
      before.map((e) => `${e.seq} ${e.type}`),
      `nothing was written after B's place was retired:\n${coordinatorB.output()}`,
    );
  });

  it('four machines drive one run at once: each runs tasks, each task once, and all four end when it completes', async () => {
    const names = ['A', 'B', 'C', 'D'] as const;
    const { dirs, envs, lines } = onMachines('four', 5000, names);
    const coordinators = [startBaton(['start', 'plan.md'], dirs[0]!, envs[0]!)];
    await waitFor(() => lines('start').length > 0, "A's first worker", 60_000);
    for (let i = 1; i < names.length; i++) coordinators.push(startBaton(['resume'], dirs[i]!, envs[i]!));
    for (const [i, coordinator] of coordinators.entries())
      assert.equal(await coordinator.exited, 0, `${names[i]}:\n${coordinator.output()}`);

    const events = await storedEvents(dirs[0]!, envs[0]!);
    assertEachTaskOnce(events, lines, coordinators.map((c) => c.output()).join('\n'));
    const machinesThatWorked = new Set(lines('start').map((l) => l.on));
    // Two slots each, eight tasks of 5 s: A alone would take four rounds; the three that joined take part.
    assert.ok(
      machinesThatWorked.size >= 3,
      `tasks ran on ${[...machinesThatWorked].join(', ')}: ${JSON.stringify(lines('start'))}`,
    );
    assert.equal(events.filter((e) => e.type === 'coordinator:joined').length, 3, 'B, C and D joined');
  });
});
