import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { config, readTrace } from '../fixtures/executor/harness';
import { makeWorkspace, planText, removeWorkspace, runCli, spawnCli, waitFor, writeFile } from '../support/cli';
import { schemaFor, sharedPostgresCluster, type PostgresCluster } from '../support/postgresCluster';
import { cutCommitAnswer } from '../support/commitCut';
import { processesCarrying } from '../support/processes';
import type { RowOutcome } from './matrix';

/**
 * Issue 26, "No attempt lost to a short outage" (row 20): the PostgreSQL server goes down between a claim's commit and
 * its worker's start — the coordinator stopped there (fault point `launch:after-fence`, SIGSTOP), the server stopped,
 * the coordinator continued: it spawns the worker held at its gate, cannot record it, and ends it before it ran. Once
 * the server is up again the claim is released (CANCELLED, not counted) and the task runs at once as attempt 2 — with
 * `maxAttempts: 1` and a 60 s lease, an attempt that counted or waited out its lease fails the task. Throws (assert)
 * when a guarantee does not hold. test/system/cli/postgresRestart.test.ts runs it once.
 */
export async function launchCutByOutage(cluster: PostgresCluster, trial = 0): Promise<void> {
  const dir = makeWorkspace('baton-pg-launch-');
  const schema = schemaFor(`${dir}-${trial}`);
  const settings = { store: { kind: 'postgres', schema }, leaseSeconds: 60, maxAttempts: 1, isolation: 'none' };
  writeFile(dir, '.baton/config.json', config(settings));
  writeFile(dir, 'plan.md', planText([{ id: 'T1' }]));
  const trace = join(dir, 'trace.txt');
  const env = { BATON_STORE_URL: cluster.url, FAKE_TRACE: trace };
  const coordinator = spawnCli(['start', 'plan.md', '--json'], {
    cwd: dir,
    env: { ...env, BATON_FAULT_POINT: 'launch:after-fence', BATON_FAULT_SIGNAL: 'SIGSTOP' },
  });
  let output = '';
  coordinator.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  coordinator.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => coordinator.on('exit', (code) => resolve(code)));
  let down = false;
  try {
    await waitFor(() => processState(coordinator.pid!) === 'T', 'the coordinator at launch:after-fence', 60_000);
    cluster.down();
    down = true;
    coordinator.kill('SIGCONT');
    // It spawns the worker held at its gate (its log is opened), cannot record it, and ends it before it ran.
    await waitFor(() => firstLog(dir) !== undefined, `the held worker of attempt 1\n${output}`, 60_000);
    await waitFor(
      () => processesCarrying(`BATON_WORKSPACE=${dir}`).length === 0,
      `attempt 1's held worker ended\n${output}`,
      60_000,
    );
    cluster.up();
    down = false;
    const code = await Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`baton start did not finish\n${output}`)), 90_000),
      ),
    ]);
    assert.equal(code, 0, output);
    // Attempt 1's worker never ran; attempt 2's ran once.
    await assertReleasedThenCompleted(dir, env, trace, output);
  } finally {
    if (down) cluster.up();
    if (coordinator.exitCode === null && coordinator.signalCode === null) coordinator.kill('SIGKILL');
    for (const pid of processesCarrying(`BATON_WORKSPACE=${dir}`)) process.kill(pid, 'SIGKILL');
    removeWorkspace(dir);
  }
}

/** Row 20: launchCutByOutage, again and again, on a cluster of its own. */
export function launchCutByOutageRow(trials: number): Promise<RowOutcome> {
  return rowOnCluster(
    trials,
    launchCutByOutage,
    'per trial: one claim, the server stopped before its worker started, started again once the worker was ended',
  );
}

/**
 * Issue 26, "No attempt lost to a short outage", the claim's own commit (row 22): the connection is cut after the
 * claim's COMMIT reached the server and before its answer reached the coordinator (test/support/commitCut.ts), and new
 * connections are refused for 400 ms. The claim landed, but the coordinator cannot know it: once the store answers it
 * finds the attempt it claimed (its holder, no worker process recorded) and releases it — CANCELLED, not counted — and
 * the task runs at once as attempt 2. With `maxAttempts: 1` and a 60 s lease, a claim left RUNNING until its lease ran
 * out fails the task, and waiting for it breaks the time bound.
 */
export async function claimAnswerLost(cluster: PostgresCluster, trial = 0): Promise<void> {
  const dir = makeWorkspace('baton-pg-claim-cut-');
  const schema = schemaFor(`${dir}-${trial}`);
  const settings = { store: { kind: 'postgres', schema }, leaseSeconds: 60, maxAttempts: 1, isolation: 'none' };
  writeFile(dir, '.baton/config.json', config(settings));
  writeFile(dir, 'plan.md', planText([{ id: 'T1' }]));
  const trace = join(dir, 'trace.txt');
  const proxy = await cutCommitAnswer({ targetPort: cluster.port, marker: 'INSERT INTO runtimes', outageMs: 400 });
  const url = cluster.url.replace(`:${cluster.port}/`, `:${proxy.port}/`);
  const coordinator = spawnCli(['start', 'plan.md', '--json'], {
    cwd: dir,
    env: { BATON_STORE_URL: url, FAKE_TRACE: trace },
  });
  let output = '';
  coordinator.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  coordinator.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => coordinator.on('exit', (code) => resolve(code)));
  try {
    // Well under the 60 s lease, whatever the load: a claim left to its lease cannot finish in time.
    const code = await Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`baton start did not finish within 45 s\n${output}`)), 45_000),
      ),
    ]);
    assert.equal(code, 0, output);
    await proxy.cut;
    // The claim landed (the cut came after its commit) and was released, not counted; attempt 2 ran once.
    await assertReleasedThenCompleted(dir, { BATON_STORE_URL: cluster.url }, trace, output);
  } finally {
    if (coordinator.exitCode === null && coordinator.signalCode === null) coordinator.kill('SIGKILL');
    for (const pid of processesCarrying(`BATON_WORKSPACE=${dir}`)) process.kill(pid, 'SIGKILL');
    await proxy.close();
    removeWorkspace(dir);
  }
}

/** Row 22: claimAnswerLost, again and again. */
export function claimAnswerLostRow(trials: number): Promise<RowOutcome> {
  return rowOnCluster(
    trials,
    claimAnswerLost,
    'per trial: one claim whose COMMIT landed and whose answer was cut with the connection, 400 ms of refused connections',
  );
}

/** The log of attempt 1's worker, once its spawn opened it. */
/** After an outage cut the first launch: attempt 1 released uncounted (its worker never ran), attempt 2 completed. */
async function assertReleasedThenCompleted(
  dir: string,
  env: Record<string, string>,
  trace: string,
  output: string,
): Promise<void> {
  const status = await runCli(['status', '--json'], { cwd: dir, env });
  const view = status.json<{
    run: { status: string };
    delegations: Array<{ id: string; status: string; reason?: string }>;
  }>();
  assert.deepEqual(
    view.delegations.map((d) => `${d.id}:${d.status}`),
    ['D-T1-coder-001:CANCELLED', 'D-T1-coder-002:COMPLETED'],
    output,
  );
  assert.match(view.delegations[0]!.reason ?? '', /^not launched: the store went out of reach/);
  assert.equal(view.run.status, 'completed');
  assert.deepEqual(
    readTrace(trace)
      .filter((l) => l.kind === 'start')
      .map((l) => l.delegation),
    ['D-T1-coder-002'],
  );
}

function firstLog(dir: string): string | undefined {
  const runs = join(dir, '.baton', 'runs');
  const run = existsSync(runs) ? readdirSync(runs)[0] : undefined;
  const log = run && join(runs, run, 'logs', 'D-T1-coder-001.log');
  return log && existsSync(log) ? log : undefined;
}

/** A process's state letter from /proc (T: stopped), or undefined once it is gone. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/**
 * Issue 25, item 4.4 (row 21): the server goes down once two workers run, for longer than their leases (20 s leases,
 * a 24 s outage), and both workers finish meanwhile (after 8 s). Their work was done within their leases: once the
 * server is back each result is recorded as its attempt's — no attempt goes STALE, no task runs twice. A run of two
 * tasks here; test/system/cli/postgresRestart.test.ts runs the same outage in a run of four with an observer.
 */
export async function finishedDuringOutage(cluster: PostgresCluster, trial = 0): Promise<void> {
  const dir = makeWorkspace('baton-pg-finished-');
  const schema = schemaFor(`${dir}-${trial}`);
  writeFile(
    dir,
    '.baton/config.json',
    config({ store: { kind: 'postgres', schema }, leaseSeconds: 20, maxConcurrency: 2, isolation: 'none' }),
  );
  writeFile(dir, 'plan.md', planText([{ id: 'T1' }, { id: 'T2' }]));
  const trace = join(dir, 'trace.txt');
  const env = { BATON_STORE_URL: cluster.url, FAKE_TRACE: trace, FAKE_DELAY_MS: '8000' };
  const coordinator = spawnCli(['start', 'plan.md', '--json'], { cwd: dir, env });
  let output = '';
  coordinator.stdout!.setEncoding('utf8').on('data', (c: string) => (output += c));
  coordinator.stderr!.setEncoding('utf8').on('data', (c: string) => (output += c));
  const exited = new Promise<number | null>((resolve) => coordinator.on('exit', (code) => resolve(code)));
  let down = false;
  try {
    const started = (l: { kind: string }) => l.kind === 'start';
    await waitFor(() => existsSync(trace) && readTrace(trace).filter(started).length === 2, `both workers\n${output}`);
    cluster.down();
    down = true;
    const downAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 24_000));
    const upAt = Date.now();
    cluster.up();
    down = false;
    const code = await Promise.race([
      exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error(`baton start did not finish\n${output}`)), 90_000),
      ),
    ]);
    assert.equal(code, 0, output);
    const view = (await runCli(['status', '--json'], { cwd: dir, env })).json<{
      delegations: Array<{ id: string; status: string }>;
    }>();
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`).sort(),
      ['D-T1-coder-001:COMPLETED', 'D-T2-coder-001:COMPLETED'],
      output,
    );
    const trail = readTrace(trace);
    assert.deepEqual(
      trail
        .filter(started)
        .map((l) => l.delegation)
        .sort(),
      ['D-T1-coder-001', 'D-T2-coder-001'],
    );
    // Both ended by themselves while the server was down (else the trial proves nothing).
    const ends = trail.filter((l) => l.kind === 'end');
    assert.equal(ends.length, 2, 'both workers ended by themselves');
    for (const end of ends) assert.ok(end.at > downAt && end.at < upAt, `${end.delegation} ended during the outage`);
  } finally {
    if (down) cluster.up();
    if (coordinator.exitCode === null && coordinator.signalCode === null) coordinator.kill('SIGKILL');
    for (const pid of processesCarrying(`BATON_WORKSPACE=${dir}`)) process.kill(pid, 'SIGKILL');
    removeWorkspace(dir);
  }
}

/** Row 21: finishedDuringOutage, again and again. */
export function finishedDuringOutageRow(trials: number): Promise<RowOutcome> {
  return rowOnCluster(
    trials,
    finishedDuringOutage,
    'per trial: two workers of 8 s, the server down 24 s from their start (leases of 20 s)',
  );
}

/**
 * Issue 25, item 4.3 (row H14): on a PostgreSQL store, two "machines" (two workspaces, BATON_HOST_ID machine-a and
 * machine-b). A's worker rewrites its lease watchdog's deadline file a day ahead every 100 ms (unsigned, and with the
 * last signature it saw); A's coordinator is SIGKILLed; B resumes the run. A's watchdog must still end A's worker
 * when the lease it was told of runs out — before B starts the task again — and B completes it.
 */
export async function forgedDeadline(cluster: PostgresCluster, trial = 0): Promise<void> {
  const [a, b] = [makeWorkspace('baton-forge-a-'), makeWorkspace('baton-forge-b-')];
  const settings = {
    store: { kind: 'postgres', schema: schemaFor(`${a}-forge-${trial}`) },
    leaseSeconds: 5,
    coordinatorLeaseSeconds: 5,
    stopGraceSeconds: 1,
    isolation: 'none',
  };
  const trace = join(a, 'trace.txt');
  const common = {
    BATON_STORE_URL: cluster.url,
    FAKE_TRACE: trace,
    FAKE_DELAY_MS: '300',
    FAKE_BEHAVIOUR: JSON.stringify({ 'D-T1-coder-001': 'forge-deadline' }),
  };
  for (const dir of [a, b]) {
    writeFile(dir, '.baton/config.json', config(settings));
    writeFile(dir, 'plan.md', planText([{ id: 'T1' }]));
  }
  const coordinatorA = spawnCli(['start', 'plan.md'], { cwd: a, env: { ...common, BATON_HOST_ID: 'machine-a' } });
  try {
    await waitFor(() => readTrace(trace).some((l) => l.kind === 'start'), "A's worker", 60_000);
    coordinatorA.kill('SIGKILL');
    const resumed = await runCli(['resume'], {
      cwd: b,
      env: { ...common, BATON_HOST_ID: 'machine-b' },
      timeoutMs: 120_000,
    });
    assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
    const trail = readTrace(trace);
    const stopped = trail.find((l) => l.kind === 'stopped' && l.delegation === 'D-T1-coder-001');
    const again = trail.find((l) => l.kind === 'start' && l.delegation === 'D-T1-coder-002');
    assert.ok(stopped, `A's worker was ended by its watchdog: ${JSON.stringify(trail)}`);
    assert.ok(again && stopped.at < again.at, `attempt 1 ended before attempt 2 started: ${JSON.stringify(trail)}`);
    assert.ok(
      trail.some((l) => l.kind === 'end' && l.delegation === 'D-T1-coder-002'),
      'attempt 2 ran to its end',
    );
  } finally {
    if (coordinatorA.exitCode === null && coordinatorA.signalCode === null) coordinatorA.kill('SIGKILL');
    for (const dir of [a, b]) {
      for (const pid of processesCarrying(`BATON_WORKSPACE=${dir}`)) process.kill(pid, 'SIGKILL');
      removeWorkspace(dir);
    }
  }
}

/** Row H14: forgedDeadline, again and again. */
export function forgedDeadlineRow(trials: number): Promise<RowOutcome> {
  return rowOnCluster(
    trials,
    forgedDeadline,
    'per trial: a deadline file rewritten a day ahead every 100 ms, the coordinator SIGKILLed, another host resuming',
  );
}

/** Runs a PostgreSQL scenario `trials` times on the shared cluster; each trial's failure is its first line. */
async function rowOnCluster(
  trials: number,
  scenario: (cluster: PostgresCluster, trial: number) => Promise<void>,
  note: string,
): Promise<RowOutcome> {
  const cluster = await sharedPostgresCluster();
  const failures: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    try {
      await scenario(cluster, trial);
    } catch (err) {
      failures.push(`trial ${trial}: ${(err as Error).message.split('\n')[0]}`);
    }
  }
  return { trials, failures, note };
}
