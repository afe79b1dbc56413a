import { pidNamespaceLauncher } from '../../../src/engine/effects/processes/pidNamespace';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  runCli,
  spawnCli,
  STACK_FRAME,
  copyDemo,
} from '../../support/cli';
import { processesCarrying } from '../../support/processes';

interface StatusJson {
  run: { id: string; status: string };
  tasks: Array<{ id: string; status: string; statusReason?: string }>;
  runtimes: Array<{ id: string; delegationId: string; status: string }>;
  gates: Array<{ id: string; status: string; note?: string }>;
}

/**
 * `baton cancel` against a run another process drives (`baton start` in a second terminal),
 * with the demo's agent taking a minute per step so that its workers surely run: the workers
 * are ended and gone (no process carries their marker), the open gate is closed, the run is
 * cancelled for good, and the coordinating `baton start` returns.
 */
describe('baton cancel: a run driven by another process', function () {
  this.timeout(120_000);
  let dir: string | undefined;
  let ws: string;
  let start: ChildProcess | undefined;
  const env = { DEMO_AGENT_STEP_MS: '60000', NO_COLOR: '1' };

  before(() => {
    ensureCliBuilt();
    dir = makeWorkspace('baton-cancel-');
    ws = copyDemo(dir);
  });
  after(() => {
    start?.kill('SIGKILL');
    removeWorkspace(dir);
  });

  const status = async (): Promise<StatusJson> => (await runCli(['--json', 'status'], { cwd: ws, env })).json();

  it('ends the workers and proves it, closes the gate, cancels the tasks; the coordinator returns; a second cancel changes nothing', async () => {
    start = spawnCli(['start', 'plan.md'], { cwd: ws, env });
    let startOutput = '';
    start.stdout!.setEncoding('utf8').on('data', (chunk: string) => (startOutput += chunk));
    const exited = new Promise<number | null>((resolve) => start!.on('exit', (code) => resolve(code)));

    // T1 and T6 run (their workers beat once when they start); T3 waits at its risk gate.
    let live: StatusJson['runtimes'] = [];
    const deadline = Date.now() + 60_000;
    while (live.length < 2 && Date.now() < deadline) {
      live = ((await status()).runtimes ?? []).filter((r) => r.status === 'active');
      if (live.length < 2) await new Promise((r) => setTimeout(r, 300));
    }
    assert.equal(live.length, 2, `two workers beat: ${startOutput}`);
    for (const r of live) assert.ok(processesCarrying(`BATON_RUNTIME_ID=${r.id}`).length > 0, `${r.id} runs`);

    const cancelled = await runCli(['cancel', '--note', 'wrong plan'], {
      cwd: ws,
      env: { ...env, BATON_USER: 'ana' },
      timeoutMs: 60_000,
    });
    assert.equal(cancelled.code, 0, describeResult(cancelled));
    assert.doesNotMatch(cancelled.stdout + cancelled.stderr, STACK_FRAME);
    const lines = cancelled.stdout.trim().split('\n');
    assert.match(
      lines[0]!,
      /^Cancelled run R-\d{8}-\w+ \(was running\): 2 attempts and 6 tasks cancelled, 1 gate closed\.$/,
    );
    // The worker and its exit waiter (docs/workers.md, "The exit record"), and unshare where it holds the worker's PID
    // namespace ("Process identity").
    const ended = 'unavailable' in pidNamespaceLauncher() ? 2 : 3;
    assert.deepEqual(lines.slice(1).sort(), [
      `  ✓ D-T1-coder-001: ${ended} process(es) ended, confirmed gone`,
      `  ✓ D-T6-coder-001: ${ended} process(es) ended, confirmed gone`,
    ]);
    // Proven from outside Baton: nothing carries the workers' markers any more.
    for (const r of live) assert.deepEqual(processesCarrying(`BATON_RUNTIME_ID=${r.id}`), [], `${r.id} is gone`);

    assert.equal(await exited, 0, `the coordinating baton start returns: ${startOutput}`);
    const after = await status();
    assert.equal(after.run.status, 'cancelled');
    assert.deepEqual(
      after.tasks.map((t) => t.status),
      ['cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled', 'cancelled'],
    );
    assert.equal(after.tasks[0]!.statusReason, 'run cancelled by ana: wrong plan');
    assert.deepEqual(
      after.gates.map((g) => g.status),
      ['rejected'],
      "T3's risk gate is closed",
    );

    const again = await runCli(['cancel'], { cwd: ws, env });
    assert.equal(again.code, 0, describeResult(again));
    assert.equal(again.stdout, `Run ${after.run.id} was already cancelled; nothing changed.\n`);
    const resumed = await runCli(['resume'], { cwd: ws, env, timeoutMs: 30_000 });
    assert.equal(resumed.code, 0, describeResult(resumed));
    assert.equal((await status()).run.status, 'cancelled', 'resuming a cancelled run starts nothing');
  });
});
