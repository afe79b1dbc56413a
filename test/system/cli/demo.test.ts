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
});
