import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  runCli,
  spawnCli,
  writeFile,
} from '../../support/cli';
import { processesCarrying } from '../../support/processes';
import { FAKE_CLAUDE, config, killQuietly, pidAlive, plan, waitFor } from '../../fixtures/executor/harness';

interface StatusJson {
  run: { id: string; status: string };
  tasks: Array<{ id: string; status: string }>;
  delegations: Array<{ id: string; taskId: string; status: string; attempt: number; reason?: string }>;
  runtimes: Array<{ id: string; delegationId: string; pid?: number; processGone?: boolean }>;
}

interface EventJson {
  type: string;
  data: Record<string, unknown>;
}

/**
 * Work that finished while no coordinator watched is kept (issue 25, item 1): the coordinator
 * is SIGKILLed while two plain-command workers (`"result": "exit-code"`) run; they end (exit 0,
 * exit 1) with nobody watching. `baton status` does not call them alive, and `baton resume`
 * settles both from their exit records as the coordinator that watched would have — A completed,
 * B failed by its exit code — with no second attempt, and only once. A third, an agent preset (the
 * stand-in Claude), ends at its plan's usage limit meanwhile: resume parks it, as a watching
 * coordinator would have (issue 23), and its next attempt continues the session — not a failure.
 */
describe('baton resume: work that ended while no coordinator watched is kept', function () {
  // The dead coordinator's lease (30 s) runs out before resume takes the run: generous for a machine at load 10.
  this.timeout(180_000);
  let workspace: string;
  const children: ChildProcess[] = [];
  before(() => ensureCliBuilt());
  beforeEach(() => {
    workspace = makeWorkspace('baton-kept-');
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    for (const pid of processesCarrying(`BATON_WORKSPACE=${workspace}`)) killQuietly(pid, workspace);
    removeWorkspace(workspace);
  });

  async function cli(args: string[], timeoutMs = 60_000) {
    return runCli(args, { cwd: workspace, timeoutMs });
  }

  async function status(): Promise<StatusJson> {
    const r = await cli(['status', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    return r.json();
  }

  async function events(): Promise<EventJson[]> {
    const r = await cli(['events', '--json']);
    assert.equal(r.code, 0, describeResult(r));
    const parsed = r.json<{ events: EventJson[] } | EventJson[]>();
    return Array.isArray(parsed) ? parsed : parsed.events;
  }

  /**
   * A plain command that says it started (a file in the workspace), works until the test lets it
   * end (the file `go`: so it cannot end before its coordinator is killed, however slow the
   * machine), works a second more, and exits with `code`.
   */
  const sleeper = (name: string, code: number) => ({
    type: 'process',
    command: 'sh',
    args: ['-c', `touch ${name}.started; while [ ! -e go ]; do sleep 0.2; done; sleep 1; exit ${code}`],
    result: 'exit-code',
  });

  it('settles both exit-code workers from their exit records: no attempt 2, A completed, B failed by its exit code, once', async () => {
    const claude = join(workspace, 'claude');
    copyFileSync(FAKE_CLAUDE, claude);
    chmodSync(claude, 0o755);
    // Its limit lifts a few seconds after it ends: long before resume comes (the dead coordinator's lease).
    const limited = {
      type: 'claude-code',
      executable: claude,
      env: {
        FAKE_CLAUDE_WAIT_FOR: join(workspace, 'go'),
        FAKE_CLAUDE_LIMIT_RESET: String(Math.floor(Date.now() / 1000) + 20),
      },
    };
    writeFile(
      workspace,
      '.baton/config.json',
      config({
        maxAttempts: 1,
        maxConcurrency: 3,
        workers: { pass: sleeper('a', 0), fail: sleeper('b', 1), limited },
      }),
    );
    writeFile(
      workspace,
      'plan.md',
      plan([
        { id: 'A', worker: 'pass' },
        { id: 'B', worker: 'fail' },
        { id: 'C', worker: 'limited' },
      ]),
    );
    const first = spawnCli(['start', 'plan.md'], { cwd: workspace });
    children.push(first);
    const firstExited = new Promise<NodeJS.Signals | null>((resolve) =>
      first.on('close', (_code, signal) => resolve(signal)),
    );
    await waitFor(
      'both workers to start',
      () => existsSync(join(workspace, 'a.started')) && existsSync(join(workspace, 'b.started')),
      60_000,
    );
    const running = await waitFor(
      'the three workers recorded with their pids',
      async () => {
        const view = await status();
        const pids = view.runtimes.map((r) => r.pid).filter((pid): pid is number => pid !== undefined);
        return pids.length === 3 ? pids : undefined;
      },
      60_000,
    );
    first.kill('SIGKILL');
    assert.equal(await firstExited, 'SIGKILL', 'the coordinator was killed while its workers ran');
    writeFile(workspace, 'go', '');

    // The workers outlive their coordinator and end with nobody watching.
    await waitFor('the workers to end', () => running.every((pid) => !pidAlive(pid)), 60_000);
    const watchless = await status();
    assert.deepEqual(
      watchless.runtimes.map((r) => r.processGone),
      [true, true, true],
      `status looked at the processes: gone ${JSON.stringify(watchless.delegations.map((d) => d.reason))}`,
    );
    const text = await cli(['status']);
    assert.equal(text.code, 0, describeResult(text));
    assert.doesNotMatch(text.stdout, /alive/, 'no exited worker is called alive');
    for (const pid of running) assert.match(text.stdout, new RegExp(`ended · pid ${pid}`));
    // Each left its exit record in its attempt's folder.
    for (const d of watchless.delegations) {
      const record = readFileSync(join(workspace, '.baton/runs', watchless.run.id, 'exits', `${d.id}.exit`), 'utf8');
      assert.match(
        record,
        new RegExp(`^baton-exit-v1 delegation=${d.id} runtime=\\S+\\nstarted\\nended status=[01]\\n$`),
      );
    }

    const resumed = await cli(['resume'], 150_000);
    assert.notEqual(resumed.code, 0, `the run failed (B): ${describeResult(resumed)}`);
    const after = await status();
    assert.deepEqual(
      after.delegations.map((d) => `${d.taskId}:${d.attempt}:${d.status}`).sort(),
      ['A:1:COMPLETED', 'B:1:FAILED', 'C:1:CANCELLED', 'C:2:COMPLETED'],
      'no attempt 2 of A or B: both settled from their exit records; C parked, then continued',
    );
    assert.deepEqual(after.tasks.map((t) => `${t.id}:${t.status}`).sort(), ['A:completed', 'B:failed', 'C:completed']);
    const parkedC = after.delegations.find((d) => d.taskId === 'C' && d.attempt === 1)!;
    assert.match(parkedC.reason ?? '', /^parked: /, 'parked, not failed');
    const told = (await events()).filter((e) => e.type === 'runtime:exited');
    assert.deepEqual(
      told.map((e) => `${String(e.data.delegationId)}:${String(e.data.exitCode)}`).sort(),
      watchless.delegations.map((d) => `${d.id}:${d.taskId === 'A' ? 0 : 1}`).sort(),
      'the events say how each was settled',
    );
    const park = (await events()).find((e) => e.type === 'attempt:parked');
    assert.equal(park?.data.delegationId, parkedC.id);
    assert.equal(park?.data.cause, 'usage-limit');
    const resumedC = (await events()).find((e) => e.type === 'attempt:resumed');
    assert.match(String(resumedC?.data.sessionId), /^fake-session-/, 'the next attempt continued its session');
    const all = await events();
    assert.equal(all.filter((e) => e.type === 'runtime:stale').length, 0, 'nothing went stale');

    // Exactly once: a second resume (and a reconcile) find nothing left to settle.
    const again = await cli(['resume'], 150_000);
    assert.notEqual(again.code, 1, describeResult(again));
    const reconcile = await cli(['reconcile']);
    assert.equal(reconcile.code, 0, describeResult(reconcile));
    const last = await events();
    assert.equal(last.filter((e) => e.type === 'runtime:exited').length, 3, 'each exit record consumed once');
    assert.equal(
      last.filter((e) => e.type === 'ingestion:recorded').length,
      all.filter((e) => e.type === 'ingestion:recorded').length,
      'no result ingested twice',
    );
    assert.deepEqual((await status()).delegations.map((d) => `${d.taskId}:${d.attempt}:${d.status}`).sort(), [
      'A:1:COMPLETED',
      'B:1:FAILED',
      'C:1:CANCELLED',
      'C:2:COMPLETED',
    ]);
  });
});
