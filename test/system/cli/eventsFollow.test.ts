import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  spawnCli,
  waitFor,
  writeFile,
} from '../../support/cli';

interface FollowedEvent {
  protocolVersion: number;
  runId: string;
  type: string;
  seq?: number;
  data: Record<string, unknown>;
}

/** `baton events --follow --json` sees what other processes do, live, and stops cleanly on SIGINT. */
describe('baton CLI: events --follow', () => {
  let ws: string;
  let follower: ChildProcess | undefined;

  before(() => {
    ensureCliBuilt();
    ws = makeWorkspace();
    writeFile(ws, 'plan.md', planText([{ id: 'A' }, { id: 'B' }]));
  });
  afterEach(() => {
    if (follower && follower.exitCode === null && follower.signalCode === null) follower.kill('SIGKILL');
    follower = undefined;
  });
  after(() => removeWorkspace(ws));

  it('prints the backlog, then NDJSON lines for a claim and a heartbeat made by other processes within seconds, and exits 0 on SIGINT', async function () {
    this.timeout(120_000);
    const first = await runCli(['claim', '--plan', 'plan.md', '--task', 'A', '--json'], { cwd: ws });
    assert.equal(first.code, 0, describeResult(first));
    const runId = first.json().runId as string;

    const child = spawnCli(['events', '--follow', '--json'], { cwd: ws });
    follower = child;
    let stdout = '';
    let stderr = '';
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.stdout!.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const exited = new Promise<void>((resolve) =>
      child.on('exit', (code, signal) => ((exit = { code, signal }), resolve())),
    );
    const lines = (): FollowedEvent[] =>
      stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => {
          try {
            return JSON.parse(l) as FollowedEvent;
          } catch {
            throw new Error(`events --follow --json printed a line that is not JSON: ${l}`);
          }
        });
    const alive = (what: string): void => {
      if (exit)
        throw new Error(
          `events --follow exited (code ${exit.code}, signal ${exit.signal}) before ${what}\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        );
    };
    const seen = (type: string, delegationId?: string): boolean =>
      lines().some((e) => e.type === type && (delegationId === undefined || e.data.delegationId === delegationId));

    // the backlog: everything the first claim logged
    await waitFor(
      () => (alive('printing its backlog'), seen('delegation:claimed', 'D-A-coder-001')),
      'the backlog',
      10_000,
    );
    // give the follower a moment past its backlog so what follows is live, not backlog
    await new Promise((r) => setTimeout(r, 300));
    alive('the second claim');

    const claimB = await runCli(['claim', '--plan', 'plan.md', '--task', 'B', '--json'], { cwd: ws });
    assert.equal(claimB.code, 0, describeResult(claimB));
    const { runtimeId, token } = claimB.json();
    const beat = await runCli(
      ['heartbeat', '--runtime', runtimeId, '--token', token, '--progress', 'halfway', '--json'],
      { cwd: ws },
    );
    assert.equal(beat.code, 0, describeResult(beat));
    // From the moment both commands have returned (their writes are committed): the latency of
    // following, not of starting two CLI processes on a loaded machine.
    const committed = Date.now();

    await waitFor(
      () => (alive('the live claim arrived'), seen('delegation:claimed', 'D-B-coder-001')),
      'delegation:claimed of D-B-coder-001',
      15_000,
    );
    await waitFor(
      () => (alive('the live heartbeat arrived'), seen('runtime:heartbeat', 'D-B-coder-001')),
      'runtime:heartbeat of D-B-coder-001',
      15_000,
    );
    const latency = Date.now() - committed;
    // Live, not at the end: within seconds of the commits even on a machine at load 10 (a figure belongs in
    // docs/benchmarks.md: "heartbeat across processes").
    assert.ok(latency < 15_000, `live events arrived within a few seconds (${latency} ms)`);

    const events = lines();
    for (const e of events) {
      assert.equal(e.protocolVersion, 1);
      assert.equal(e.runId, runId);
    }
    const logged = events.filter((e) => e.seq !== undefined).map((e) => e.seq!);
    for (let i = 1; i < logged.length; i++)
      assert.ok(logged[i]! > logged[i - 1]!, `no event printed twice or out of order: ${logged.join(',')}`);
    const heartbeat = events.find((e) => e.type === 'runtime:heartbeat')!;
    assert.equal(heartbeat.data.runtimeId, runtimeId);
    assert.equal(heartbeat.data.progress, 'halfway');

    child.kill('SIGINT');
    await Promise.race([
      exited,
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error(`events --follow did not exit within 15 s of SIGINT\nstderr:\n${stderr}`)),
          15_000,
        ),
      ),
    ]);
    assert.deepEqual(exit, { code: 0, signal: null }, `stderr:\n${stderr}`);
    assert.equal(stderr, '');
  });

  it('moves on to a newer run of the plan when one starts; a run named with --run is followed until it ends', async function () {
    this.timeout(120_000);
    // The first test's run (A and B claimed) is the plan's latest.
    const first = (await runCli(['status', '--json'], { cwd: ws })).json<{ run: { id: string } }>().run.id;
    const watch = (args: string[]) => {
      const child = spawnCli(['events', '--follow', ...args], { cwd: ws });
      const out = { stdout: '', exit: undefined as number | null | undefined };
      child.stdout!.setEncoding('utf8').on('data', (c: string) => (out.stdout += c));
      child.on('exit', (code) => (out.exit = code));
      return { child, out };
    };
    const pinned = watch(['--run', first]);
    const latest = watch(['--json']);
    follower = latest.child;
    await waitFor(
      () => pinned.out.stdout.includes('delegation:claimed') && latest.out.stdout.includes('"seq"'),
      'both backlogs',
      10_000,
    );

    const cancelled = await runCli(['cancel', '--run', first], { cwd: ws });
    assert.equal(cancelled.code, 0, describeResult(cancelled));
    // The pinned follower prints the run's end and exits by itself.
    await waitFor(() => pinned.out.exit !== undefined, 'the --run follower to exit at its run’s end', 15_000);
    assert.equal(pinned.out.exit, 0, pinned.out.stdout);
    assert.match(
      pinned.out.stdout,
      new RegExp(
        `run:status +run \\w+ → cancelled\\b.*\\n.*Run ${first} cancelled; nothing more will happen in it\\.\\n$`,
      ),
    );

    // A new run of the plan: the other follower moves on to it.
    const claim = await runCli(['claim', '--plan', 'plan.md', '--task', 'A', '--json'], { cwd: ws });
    assert.equal(claim.code, 0, describeResult(claim));
    const second = claim.json().runId as string;
    assert.notEqual(second, first);
    const events = (): FollowedEvent[] =>
      latest.out.stdout
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as FollowedEvent);
    await waitFor(
      () => events().some((e) => e.runId === second && e.type === 'delegation:claimed'),
      'the newer run’s claim',
      15_000,
    );
    const ofSecond = events().filter((e) => e.runId === second);
    assert.equal(ofSecond[0]?.type, 'run:created', 'its log from the start');
    assert.deepEqual(
      ofSecond.map((e) => e.seq),
      ofSecond.map((_, i) => i + 1),
      'every event of the newer run once, in order',
    );
    assert.equal(latest.out.exit, undefined, 'still following');
  });
});
