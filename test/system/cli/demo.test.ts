import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  copyDemo,
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  removeWorkspace,
  runCli,
  type CliResult,
} from '../../support/cli';

interface GateJson {
  id: string;
  kind: string;
  taskId?: string;
  status: string;
}

/**
 * The demo does what the README promises: a risk gate to approve, one result that breaks the
 * contract (T2) and one that fails its verification (T6) — and nothing else fails. Driven to
 * its end with the CLI the way the README walks it: approve the risk gate, correct T2's
 * result and hand it in again, turn down T6's verification; T3, T4 and T5 then run and pass.
 * Or approve T2's gate: its retry is told what went wrong and repairs itself.
 */
describe('the demo (examples/demo) fails exactly where its README says', function () {
  // A dozen CLI processes and a worker that beats through `baton heartbeat`: minutes on a loaded 2-core machine.
  this.timeout(360_000);
  let dir: string | undefined;
  let ws: string;
  const env = { DEMO_AGENT_STEP_MS: '40', NO_COLOR: '1' };
  const run = (args: string[], timeoutMs = 180_000): Promise<CliResult> => runCli(args, { cwd: ws, env, timeoutMs });

  before(() => {
    ensureCliBuilt();
    dir = makeWorkspace('baton-demo-');
    ws = copyDemo(dir);
  });
  after(() => removeWorkspace(dir));

  const gates = async (): Promise<GateJson[]> =>
    (await run(['--json', 'gates', '--all'])).json<{ gates: GateJson[] }>().gates;
  const tasks = async (): Promise<Record<string, string>> =>
    Object.fromEntries(
      (await run(['--json', 'status']))
        .json<{ tasks: Array<{ id: string; status: string }> }>()
        .tasks.map((t) => [t.id, t.status]),
    );

  it('runs to its end with T2 rejected at ingestion, T6 failing its verification, and T5 (the reviewer) passing', async () => {
    const started = await run(['start', 'plan.md']);
    assert.equal(started.code, 8, describeResult(started));
    const first = await gates();
    const open = (kind: string, task: string): GateJson => {
      const gate = first.find((g) => g.kind === kind && g.taskId === task && g.status === 'open');
      assert.ok(gate, `an open ${kind} gate for ${task}: ${JSON.stringify(first)}`);
      return gate;
    };
    const risk = open('risk_approval', 'T3');
    const verification = open('verification_failed', 'T6');
    open('ingestion_failed', 'T2');

    // The README's walk: approve the risk gate, fix T2's result (task and status) and ingest it again.
    assert.equal((await run(['approve', risk.id, '--note', 'backup taken'])).code, 0);
    assert.equal((await run(['reject', verification.id, '--note', 'README not written'])).code, 0);
    const artifact = join(
      ws,
      '.baton',
      'runs',
      JSON.parse((await run(['--json', 'status'])).stdout).run.id,
      'artifacts',
      'D-T2-coder-001.md',
    );
    writeFileSync(
      artifact,
      readFileSync(artifact, 'utf8')
        .replace(/^task: T3$/m, 'task: T2')
        .replace(/^status: DONE$/m, 'status: PASS'),
    );
    const ingested = await run(['ingest', '--delegation', 'D-T2-coder-001', '--artifact', artifact]);
    assert.equal(ingested.code, 0, describeResult(ingested));

    const resumed = await run(['resume']);
    // The run fails because T6 failed: exit 5, not 8 (no gate left waiting).
    assert.equal(resumed.code, 5, describeResult(resumed));
    assert.deepEqual(await tasks(), {
      T1: 'completed',
      T2: 'completed',
      T3: 'completed',
      T4: 'completed',
      T5: 'completed',
      T6: 'failed',
    });
    // Exactly the gates the README announces: the risk approval, T2's rejected result, T6's failed verification.
    assert.deepEqual((await gates()).map((g) => `${g.kind} ${g.taskId}`).sort(), [
      'ingestion_failed T2',
      'risk_approval T3',
      'verification_failed T6',
    ]);
  });

  it('repairs T2 on its retry: approving its ingestion_failed gate runs attempt 2, told what went wrong, and it passes', async () => {
    // A fresh copy of the demo in a folder of its own: this run approves T2's gate instead of correcting the result
    // by hand.
    removeWorkspace(dir);
    dir = makeWorkspace('baton-demo-');
    ws = copyDemo(dir);
    const started = await run(['start', 'plan.md']);
    assert.equal(started.code, 8, describeResult(started));
    const first = await gates();
    const open = (kind: string, task: string): GateJson => {
      const gate = first.find((g) => g.kind === kind && g.taskId === task && g.status === 'open');
      assert.ok(gate, `an open ${kind} gate for ${task}: ${JSON.stringify(first)}`);
      return gate;
    };
    assert.equal((await run(['approve', open('ingestion_failed', 'T2').id, '--note', 'retry'])).code, 0);
    assert.equal((await run(['reject', open('risk_approval', 'T3').id, '--note', 'not today'])).code, 0);
    assert.equal((await run(['reject', open('verification_failed', 'T6').id, '--note', 'README not written'])).code, 0);

    const resumed = await run(['resume']);
    // T3 and T6 were turned down: the run fails (exit 5), with no gate left waiting — T2's retry opened none.
    assert.equal(resumed.code, 5, describeResult(resumed));
    assert.deepEqual(await tasks(), {
      T1: 'completed',
      T2: 'completed',
      T3: 'cancelled',
      T4: 'blocked',
      T5: 'blocked',
      T6: 'failed',
    });
    const status = (await run(['--json', 'status'])).json<{
      run: { id: string };
      delegations: Array<{ id: string; taskId: string; status: string }>;
    }>();
    assert.deepEqual(
      status.delegations.filter((d) => d.taskId === 'T2').map((d) => `${d.id} ${d.status}`),
      ['D-T2-coder-001 FAILED', 'D-T2-coder-002 COMPLETED'],
    );
    const retry = readFileSync(join(ws, '.baton', 'runs', status.run.id, 'prompts', 'D-T2-coder-002.md'), 'utf8');
    assert.match(retry, /## What went wrong before[\s\S]*`result\.task-mismatch`[\s\S]*`result\.invalid-status`/);
    assert.deepEqual(
      (await gates()).filter((g) => g.taskId === 'T2').map((g) => `${g.kind} ${g.status}`),
      ['ingestion_failed approved'],
      'attempt 2 was not rejected: no second gate',
    );
  });
});
