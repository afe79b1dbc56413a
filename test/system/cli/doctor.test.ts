// `baton doctor` as a user runs it: the real CLI, the real agent CLI binaries (installed on
// first use into .cache/agents), a worker that is not installed; and `baton start` refusing a
// run whose worker is missing before anything is dispatched.
import assert from 'node:assert/strict';
import { CLAUDE_BIN, ensureAgentCli } from '../../../scripts/agentClis.mjs';
import {
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  storeFingerprint,
  writeFile,
} from '../../support/cli';

const SECRET = 'sk-ant-doctor-test-must-never-print-0123456789';

describe('baton doctor', function () {
  this.timeout(180_000);
  let workspace: string;

  before(function () {
    this.timeout(600_000);
    ensureCliBuilt();
    ensureAgentCli('claude'); // first use installs it into .cache/agents (about a minute)
  });
  beforeEach(() => {
    workspace = makeWorkspace('baton-doctor-');
    writeFile(
      workspace,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'agent',
        workers: {
          agent: { type: 'claude-code', executable: CLAUDE_BIN },
          ghost: { type: 'codex', executable: 'baton-no-such-codex' },
        },
      }),
    );
    writeFile(workspace, 'plan.md', planText([{ id: 'T1' }]));
  });
  afterEach(() => removeWorkspace(workspace));

  it('reports a present CLI with its version and its credentials without their value; an unused missing one warns; exit 0', async () => {
    const r = await runCli(['doctor', 'plan.md'], { cwd: workspace, env: { ANTHROPIC_API_KEY: SECRET } });
    assert.equal(r.code, 0, describeResult(r));
    assert.match(r.stdout, /✓ worker agent +\S+claude\S* — 2\.1\.\d+/, 'the installed Claude Code and its version');
    assert.match(r.stdout, /✓ worker agent credentials +ANTHROPIC_API_KEY set/);
    assert.match(
      r.stdout,
      /! worker ghost +baton-no-such-codex is not found on PATH: no task of the plan needs it now/,
    );
    assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET), 'the key is never printed');
    assert.match(r.stdout, /Ready to run \(\d warnings?\)\./);
  });

  it('says whether workers get a PID namespace of their own, and why not when they do not (BATON_PID_NAMESPACE=off)', async () => {
    const here = await runCli(['doctor', 'plan.md'], { cwd: workspace });
    assert.match(here.stdout, /✓ process identity +workers run in a PID namespace of their own \(unshare --pid/);
    const off = await runCli(['doctor', 'plan.md'], { cwd: workspace, env: { BATON_PID_NAMESPACE: 'off' } });
    assert.equal(off.code, 0, describeResult(off));
    assert.match(
      off.stdout,
      /! process identity +no PID namespace for workers \(BATON_PID_NAMESPACE=off\): their processes are found by their marker/,
    );
  });

  it('fails with exit 7 when a worker the plan needs is not installed, and says how to fix it; --json says the same', async () => {
    writeFile(workspace, 'plan.md', planText([{ id: 'T1' }]).replace('agent: coder', 'agent: coder\nworker: ghost'));
    const r = await runCli(['doctor', 'plan.md'], { cwd: workspace });
    assert.equal(r.code, 7, describeResult(r));
    assert.match(
      r.stdout,
      /✗ worker ghost +baton-no-such-codex is not found on PATH: tasks that use this worker cannot start \(install it: npm install -g @openai\/codex;/,
    );
    assert.match(r.stdout, /1 check failed: a run cannot start until it is fixed\./);
    const json = await runCli(['doctor', 'plan.md', '--json'], { cwd: workspace });
    assert.equal(json.code, 7);
    const doc = json.json<{ ok: boolean; checks: Array<{ name: string; status: string }> }>();
    assert.equal(doc.ok, false);
    assert.deepEqual(
      doc.checks.filter((c) => c.status === 'fail').map((c) => c.name),
      ['worker ghost'],
    );
  });

  it('answers for a workspace whose config is invalid, naming the issue with its line', async () => {
    writeFile(workspace, '.baton/config.json', '{ "leaseSeconds": 1 }');
    const r = await runCli(['doctor'], { cwd: workspace });
    assert.equal(r.code, 7, describeResult(r));
    assert.match(r.stdout, /✗ config +\S+config\.json:1:\d+: error config\.invalid-field/);
  });

  it('baton start refuses a run whose worker is not installed before dispatching anything (exit 7, worker.missing), and points to doctor', async () => {
    writeFile(workspace, 'plan.md', planText([{ id: 'T1' }]).replace('agent: coder', 'agent: coder\nworker: ghost'));
    const r = await runCli(['start', 'plan.md', '--json'], { cwd: workspace, timeoutMs: 60_000 });
    assert.equal(r.code, 7, describeResult(r));
    const doc = r.json<{ error: { code: string; message: string } }>();
    assert.equal(doc.error.code, 'worker.missing');
    assert.match(doc.error.message, /baton-no-such-codex is not installed.*baton doctor/);
    const status = await runCli(['status', '--json'], { cwd: workspace });
    const delegations = status.json<{ delegations?: unknown[] }>().delegations ?? [];
    assert.deepEqual(delegations, [], 'no attempt was dispatched');
    assert.ok(storeFingerprint(workspace), 'the store is readable');
  });
});
