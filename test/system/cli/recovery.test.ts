import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  runCli,
  spawnCli,
  writeFile,
  type CliResult,
} from '../../support/cli';
import { processesCarrying } from '../../support/processes';
import { config, killQuietly, plan, readTrace, waitFor } from '../../fixtures/executor/harness';

/**
 * Recovery that never hangs (issue 15, items 10, 12, 13): `baton start` / `resume` beside a
 * coordinator that crashed, was stopped or returned early take the run over instead of
 * observing forever; an observer exits with the code the driver would have given; a run
 * that only waits for a person returns exit 8.
 */
describe('baton start / resume: recovery never hangs', function () {
  this.timeout(120_000);
  let workspace: string;
  const children: ChildProcess[] = [];
  before(() => ensureCliBuilt());
  beforeEach(() => {
    workspace = makeWorkspace('baton-recovery-');
  });
  afterEach(() => {
    for (const child of children.splice(0)) {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    }
    for (const pid of processesCarrying(`BATON_WORKSPACE=${workspace}`)) killQuietly(pid, workspace);
    removeWorkspace(workspace);
  });

  /** A `baton …` left running, with its output collected and its exit awaited. */
  function background(args: string[], env: Record<string, string> = {}) {
    const child = spawnCli(args, { cwd: workspace, env });
    children.push(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    return { child, exited, output: () => `stdout: ${stdout}\nstderr: ${stderr}` };
  }

  async function status(): Promise<{
    run: { status: string };
    delegations: Array<{ id: string; status: string }>;
    gates: Array<{ kind: string; status: string }>;
  }> {
    const r = await runCli(['status', '--json'], { cwd: workspace, timeoutMs: 60_000 });
    assert.equal(r.code, 0, describeResult(r));
    return r.json();
  }

  const starts = (trace: string): string[] =>
    readTrace(trace)
      .filter((l) => l.kind === 'start')
      .map((l) => l.delegation);

  it('item 10: `start` beside a coordinator that was SIGKILLed takes the run over once its lease runs out, and finishes it', async () => {
    writeFile(workspace, '.baton/config.json', config());
    writeFile(workspace, 'plan.md', plan([{ id: 'A' }, { id: 'B', depends: ['A'] }]));
    const trace = join(workspace, 'trace.txt');
    const env = { FAKE_TRACE: trace, FAKE_DELAY_MS: '1500' };
    const first = background(['start', 'plan.md'], env);
    await waitFor('attempt A to start', () => starts(trace).length === 1, 30_000);
    first.child.kill('SIGKILL');
    await first.exited;
    // Its lease still runs (30 s): this one observes first, then takes over — it adopts A and runs B.
    const second: CliResult = await runCli(['start', 'plan.md'], { cwd: workspace, env, timeoutMs: 100_000 });
    assert.equal(second.code, 0, describeResult(second));
    assert.match(second.stdout, /This process observes/);
    assert.match(second.stdout, /this process drives it now/);
    const view = await status();
    assert.equal(view.run.status, 'completed');
    assert.deepEqual(starts(trace), ['D-A-coder-001', 'D-B-coder-001'], 'A ran once (adopted), then B');
  });

  it('item 10: `start` beside a `start --task A` that is done with its task takes over the rest of the run', async () => {
    writeFile(workspace, '.baton/config.json', config());
    writeFile(workspace, 'plan.md', plan([{ id: 'A' }, { id: 'B' }]));
    const trace = join(workspace, 'trace.txt');
    // A takes long enough for the second start to find it driving, even on a loaded machine.
    const env = { FAKE_TRACE: trace, FAKE_DELAY_MS: '8000' };
    const first = background(['start', 'plan.md', '--task', 'A'], env);
    await waitFor('attempt A to start', () => starts(trace).length === 1, 30_000);
    const second = await runCli(['start', 'plan.md'], { cwd: workspace, env, timeoutMs: 60_000 });
    assert.equal(await first.exited, 0, first.output());
    assert.equal(second.code, 0, describeResult(second));
    assert.match(second.stdout, /This process observes/);
    assert.match(second.stdout, /this process drives it now/);
    assert.equal((await status()).run.status, 'completed');
    assert.deepEqual(starts(trace).sort(), ['D-A-coder-001', 'D-B-coder-001']);
  });

  it('item 10: `resume` beside a coordinator stopped by a signal (Ctrl-Z) takes the run over; the stopped one, continued, steps down', async () => {
    writeFile(workspace, '.baton/config.json', config());
    writeFile(workspace, 'plan.md', plan([{ id: 'A' }]));
    const trace = join(workspace, 'trace.txt');
    const env = { FAKE_TRACE: trace, FAKE_DELAY_MS: '1000' };
    const first = background(['start', 'plan.md'], env);
    await waitFor('attempt A to start', () => starts(trace).length === 1, 30_000);
    first.child.kill('SIGSTOP');
    const second = await runCli(['resume'], { cwd: workspace, env, timeoutMs: 100_000 });
    assert.equal(second.code, 0, describeResult(second));
    assert.equal((await status()).run.status, 'completed');
    first.child.kill('SIGCONT');
    assert.equal(await first.exited, 3, `the continued coordinator lost its lease: ${first.output()}`);
  });

  // A run paused by a stop waits for a person's resume: 8, as the task-executor seed says (docs/cli.md, "Exit codes").
  for (const [what, stopArgs, expected] of [
    ['an immediate stop', ['stop', '--mode', 'immediate'], 8],
    ['a graceful stop', ['stop'], 8],
  ] as const) {
    it(`observer exit code: after ${what} the observing \`start\` exits ${expected}, like the coordinating one`, async () => {
      writeFile(workspace, '.baton/config.json', config({ stopGraceSeconds: 1 }));
      writeFile(workspace, 'plan.md', plan([{ id: 'A' }, { id: 'B', depends: ['A'] }]));
      const trace = join(workspace, 'trace.txt');
      const env = { FAKE_TRACE: trace, FAKE_DELAY_MS: '10000' };
      const driver = background(['start', 'plan.md'], env);
      await waitFor('attempt A to start', () => starts(trace).length === 1, 30_000);
      const observer = background(['start', 'plan.md'], env);
      await waitFor('the second start to observe', () => observer.output().includes('This process observes'), 60_000);
      const stop = await runCli([...stopArgs], { cwd: workspace, timeoutMs: 30_000 });
      assert.equal(stop.code, 0, describeResult(stop));
      assert.equal(await driver.exited, expected, driver.output());
      assert.equal(await observer.exited, expected, observer.output());
    });
  }

  it('item 12: `start` with a manual worker returns exit 8 and leaves the hand-off waiting; ingesting it completes the run', async () => {
    writeFile(workspace, '.baton/config.json', config({ workers: { person: { type: 'manual' } } }));
    writeFile(workspace, 'plan.md', plan([{ id: 'A', worker: 'person' }]));
    const started = await runCli(['start', 'plan.md'], { cwd: workspace, timeoutMs: 30_000 });
    assert.equal(started.code, 8, describeResult(started));
    assert.match(started.stdout, /manual_handoff/);
    const view = await status();
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-A-coder-001:RUNNING'],
      'the hand-off is still the person’s',
    );
    assert.deepEqual(
      view.gates.map((g) => `${g.kind}:${g.status}`),
      ['manual_handoff:open'],
    );
    writeFile(
      workspace,
      'result.md',
      [
        '```baton-result',
        'contract: baton-result-v1',
        'task: A',
        'agent: coder',
        'status: PASS',
        'summary: done by hand',
        'artifacts: []',
        '```',
        '',
      ].join('\n'),
    );
    const ingested = await runCli(['ingest', '--delegation', 'D-A-coder-001', '--artifact', 'result.md'], {
      cwd: workspace,
    });
    assert.equal(ingested.code, 0, describeResult(ingested));
    assert.equal((await status()).run.status, 'completed');
    // Run again: nothing is left to do.
    const again = await runCli(['resume'], { cwd: workspace, timeoutMs: 30_000 });
    assert.equal(again.code, 0, describeResult(again));
  });

  it('item 12: `resume` of a run whose only attempt is a person’s hand-off returns exit 8 (it does not wait for the person)', async () => {
    writeFile(workspace, '.baton/config.json', config({ workers: { person: { type: 'manual' } } }));
    writeFile(workspace, 'plan.md', plan([{ id: 'A', worker: 'person' }, { id: 'B' }]));
    const started = await runCli(['start', 'plan.md'], { cwd: workspace, timeoutMs: 30_000 });
    assert.equal(started.code, 8, describeResult(started));
    const resumed = await runCli(['resume'], { cwd: workspace, timeoutMs: 30_000 });
    assert.equal(resumed.code, 8, describeResult(resumed));
    const view = await status();
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`),
      ['D-A-coder-001:RUNNING', 'D-B-coder-001:COMPLETED'],
    );
  });

  it('item 12: Ctrl-C on `start` ends its workers but leaves a person’s hand-off with the person', async () => {
    writeFile(
      workspace,
      '.baton/config.json',
      config({ workers: { person: { type: 'manual' } }, stopGraceSeconds: 1 }),
    );
    writeFile(workspace, 'plan.md', plan([{ id: 'A', worker: 'person' }, { id: 'B' }]));
    const trace = join(workspace, 'trace.txt');
    const driver = background(['start', 'plan.md'], {
      FAKE_TRACE: trace,
      FAKE_BEHAVIOUR: JSON.stringify({ B: 'hang' }),
    });
    await waitFor('attempt B to start', () => starts(trace).length === 1, 30_000);
    driver.child.kill('SIGINT');
    await driver.exited;
    const view = await status();
    assert.deepEqual(
      view.delegations.map((d) => `${d.id}:${d.status}`).sort(),
      ['D-A-coder-001:RUNNING', 'D-B-coder-001:CANCELLED'],
      driver.output(),
    );
    assert.deepEqual(
      view.gates.filter((g) => g.status === 'open').map((g) => g.kind),
      ['manual_handoff'],
    );
  });

  it('item 13: `start --isolation worktree` outside a git repository pauses at the isolation gate with exit 8', async () => {
    writeFile(workspace, '.baton/config.json', config());
    writeFile(workspace, 'plan.md', plan([{ id: 'A' }]));
    const r = await runCli(['start', 'plan.md', '--isolation', 'worktree'], { cwd: workspace, timeoutMs: 30_000 });
    assert.equal(r.code, 8, describeResult(r));
    assert.match(r.stdout, /isolation/);
    const again = await runCli(['resume'], { cwd: workspace, timeoutMs: 30_000 });
    assert.equal(again.code, 8, describeResult(again));
  });
});
