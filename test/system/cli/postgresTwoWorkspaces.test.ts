// Two workspaces on one PostgreSQL store — two clones, as two machines of a team would have —
// each with its own `baton` processes (docs/team.md): A coordinates the run (`baton start`), B
// only observes and decides. A's run stops at a risk gate; B approves it; A resumes and
// dispatches; B's `events --follow` hears A's claim, its worker's heartbeats and the run's
// end live, through LISTEN/NOTIFY, without polling.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  ROOT,
  runCli,
  spawnCli,
  waitFor,
  writeFile,
} from '../../support/cli';

interface FollowedEvent {
  runId: string;
  type: string;
  seq?: number;
  data: Record<string, unknown>;
}

describe('two workspaces on one PostgreSQL run', function () {
  this.timeout(180_000);
  let cluster: PostgresCluster;
  const children: ChildProcess[] = [];
  const workspaces: string[] = [];

  before(async function () {
    this.timeout(600_000);
    ensureCliBuilt();
    cluster = await sharedPostgresCluster();
  });
  afterEach(() => {
    for (const child of children.splice(0))
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of workspaces.splice(0)) removeWorkspace(dir);
  });

  it('B follows A’s run live, approves its gate, and A dispatches; heartbeats of A’s worker reach B', async () => {
    const schema = schemaFor(`two-${process.pid}`);
    const config = JSON.stringify({
      store: { kind: 'postgres', schema },
      // The coordinator renews its workers' leases every third of this: heartbeats B should hear.
      leaseSeconds: 5,
      isolation: 'none',
      defaultWorker: 'fake',
      workers: {
        fake: {
          type: 'process',
          command: process.execPath,
          args: [join(ROOT, 'test/fixtures/workers/attemptWorker.js'), '{taskId}'],
        },
      },
    });
    const a = makeWorkspace('baton-team-a-');
    const b = makeWorkspace('baton-team-b-');
    workspaces.push(a, b);
    for (const dir of [a, b]) writeFile(dir, '.baton/config.json', config);
    writeFile(a, 'plan.md', planText([{ id: 'T1', risk: ['database'] }]));
    const env = { BATON_STORE_URL: cluster.url, FAKE_DELAY_MS: '6000', NO_COLOR: '1' };

    // A starts the run: T1 waits at its risk gate, so A's coordinator stops there (exit 8).
    const started = await runCli(['start', 'plan.md'], { cwd: a, env, timeoutMs: 60_000 });
    assert.equal(started.code, 8, describeResult(started));

    // B sees the gate in its own workspace.
    const gates = await runCli(['gates', '--json'], { cwd: b, env });
    assert.equal(gates.code, 0, describeResult(gates));
    const gateId = gates
      .json<{ gates: Array<{ id: string; taskId: string }> }>()
      .gates.find((g) => g.taskId === 'T1')?.id;
    assert.ok(gateId, `B sees A's gate: ${gates.stdout}`);

    // B follows the run.
    const follower = spawnCli(['events', '--follow', '--json'], { cwd: b, env });
    children.push(follower);
    let followed = '';
    follower.stdout!.setEncoding('utf8').on('data', (c: string) => (followed += c));
    follower.stderr!.setEncoding('utf8').on('data', (c: string) => (followed += c));
    const events = (): FollowedEvent[] =>
      followed
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as FollowedEvent);
    await waitFor(() => events().some((e) => e.type === 'gate:opened'), 'the backlog on B', 20_000);

    // B decides; A resumes the run and dispatches.
    const approved = await runCli(['approve', gateId, '--note', 'reviewed on B'], {
      cwd: b,
      env: { ...env, BATON_USER: 'bea' },
    });
    assert.equal(approved.code, 0, describeResult(approved));
    const coordinator = spawnCli(['resume'], { cwd: a, env });
    children.push(coordinator);
    let coordinatorOutput = '';
    coordinator.stdout!.setEncoding('utf8').on('data', (c: string) => (coordinatorOutput += c));
    coordinator.stderr!.setEncoding('utf8').on('data', (c: string) => (coordinatorOutput += c));
    const coordinatorExit = new Promise<number | null>((resolve) => coordinator.on('exit', (code) => resolve(code)));
    await waitFor(
      () => events().some((e) => e.type === 'delegation:claimed' && e.data.delegationId === 'D-T1-coder-001'),
      `A's claim of T1, heard on B:\n${followed}\n--- A ---\n${coordinatorOutput}`,
      30_000,
    );
    await waitFor(
      () => events().some((e) => e.type === 'runtime:heartbeat' && e.data.delegationId === 'D-T1-coder-001'),
      `a heartbeat of A's worker, heard on B:\n${followed}`,
      30_000,
    );
    assert.equal(await coordinatorExit, 0, coordinatorOutput);
    await waitFor(
      () => events().some((e) => e.type === 'run:status' && e.data.to === 'completed'),
      `the run's end, heard on B:\n${followed}`,
      20_000,
    );
    const decided = events().find((e) => e.type === 'gate:decided');
    assert.equal(decided?.data.by, 'bea');
    const logged = events()
      .filter((e) => e.seq !== undefined)
      .map((e) => e.seq!);
    for (let i = 1; i < logged.length; i++)
      assert.ok(logged[i]! > logged[i - 1]!, `in order, once each: ${logged.join(',')}`);
    assert.ok(!`${followed}${coordinatorOutput}`.includes(cluster.password), 'the password is printed nowhere');
  });
});
