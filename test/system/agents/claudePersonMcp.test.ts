// The real Claude Code as a PERSON's chat client of `baton mcp --for-person` (docs/extension.md, "The same tools over
// MCP"): the server added by hand with `--mcp-config` (inline JSON), the scripted model server
// (test/support/modelServer.ts) making the model read the open gates and approve one. Claude Code's permission rules
// are the confirmation: the two tools allowed run, a stop the person did not allow is refused by Claude Code without
// reaching the server. A real run (`baton start` left it at a risk gate), the built dist/cli.js; skipped where Claude
// Code cannot be installed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAgentCli } from '../../../scripts/agentClis.mjs';
import { claudeCode, runLaunch } from '../../support/agentClis';
import {
  CLI,
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  writeFile,
} from '../../support/cli';
import { startModelServer, type ModelServer } from '../../support/modelServer';
import { makeTempDir } from '../../support/tempDir';

const WORKER = join(__dirname, '../../fixtures/workers/resultWriter.js');

describe('Claude Code as a person’s client of baton mcp --for-person', function () {
  this.timeout(180_000);
  let server: ModelServer;
  let ws: string;
  let home: string;

  before(async function () {
    this.timeout(600_000);
    try {
      ensureAgentCli('claude');
    } catch (error) {
      console.log(`      skipped: claude could not be installed here: ${(error as Error).message}`);
      this.skip();
    }
    ensureCliBuilt();
    server = await startModelServer();
    ws = makeWorkspace('baton-claude-person-');
    home = makeTempDir('baton-agent-home-claude-person-');
    writeFile(
      ws,
      'plan.md',
      planText([
        { id: 'T1', title: 'Write the notes' },
        { id: 'T2', title: 'Migrate the database', depends: ['T1'], risk: ['database'] },
      ]),
    );
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'fake',
        workers: {
          fake: { type: 'process', command: process.execPath, args: [WORKER, '{taskId}'], promptOnStdin: true },
        },
        isolation: 'none',
      }),
    );
    const started = await runCli(['start', 'plan.md'], { cwd: ws });
    assert.equal(started.code, 8, describeResult(started));
  });
  after(async () => {
    await server?.close();
    if (ws) removeWorkspace(ws);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('lists the gates and approves one through the server; a stop it was not allowed is refused by Claude Code', async () => {
    const gates = await runCli(['gates', '--json'], { cwd: ws });
    const gate = (gates.json().gates as Array<{ id: string; runId: string; taskId: string }>)[0]!;
    assert.equal(gate.taskId, 'T2');
    server.setScript({
      steps: [
        { toolCalls: [{ name: 'mcp__baton__baton_listGates', input: {} }], usage: { input: 10, output: 5 } },
        {
          toolCalls: [
            {
              name: 'mcp__baton__baton_decideGate',
              input: { gateId: gate.id, decision: 'approve', note: 'approved from Claude Code' },
            },
          ],
          usage: { input: 10, output: 5 },
        },
        {
          toolCalls: [{ name: 'mcp__baton__baton_stopRun', input: { runId: gate.runId, mode: 'immediate' } }],
          usage: { input: 10, output: 5 },
        },
        { text: 'Approved the gate.', usage: { input: 10, output: 5 } },
      ],
      side: () => ({ text: 'Scripted side answer', usage: { input: 1, output: 1 } }),
    });
    const recipe = claudeCode.launch({ home, cwd: ws, serverUrl: server.url, prompt: 'Approve T2.', mode: 'readOnly' });
    const mcpConfig = JSON.stringify({
      mcpServers: {
        baton: { type: 'stdio', command: process.execPath, args: [CLI, '-C', ws, 'mcp', '--for-person'] },
      },
    });
    // The person's permission rules: the read tool and the decision, not the stop.
    const allowed = ['mcp__baton__baton_listGates', 'mcp__baton__baton_decideGate'];
    const args = recipe.args.filter((a) => a !== 'plan' && a !== '--permission-mode');
    const at = args.indexOf('--');
    args.splice(at, 0, '--mcp-config', mcpConfig, '--strict-mcp-config', '--allowedTools', ...allowed);
    const ran = await runLaunch({ ...recipe, args }, ws, 120_000);
    const main = server.mainRequests();
    const results = main.flatMap((r) => r.toolResults);
    const explain = [
      `exit ${ran.code}, timed out ${ran.timedOut}`,
      `server errors: ${JSON.stringify(server.errors)}`,
      `tool results: ${JSON.stringify(results)}`,
      `stderr: ${ran.stderr.slice(-2000)}`,
      `stdout: ${ran.stdout.slice(-3000)}`,
    ].join('\n');
    assert.equal(ran.code, 0, explain);
    const init = ran.events.find((e) => e.type === 'system' && e.subtype === 'init') as
      { mcp_servers?: Array<{ name: string; status: string }> } | undefined;
    assert.ok(
      init?.mcp_servers?.some((m) => m.name === 'baton' && m.status === 'connected'),
      explain,
    );
    // The model got the server's answers: the open gate, then the decision.
    assert.ok(
      results.some((r) => r.output.includes(`"id": "${gate.id}"`) && !r.isError),
      explain,
    );
    assert.ok(
      results.some((r) => r.output.includes(`${gate.id} approved by`) && !r.isError),
      explain,
    );
    // The stop was not allowed: Claude Code refused it without calling the server.
    const stop = results.find((r) => /permission|not allowed|haven't granted|denied/i.test(r.output));
    assert.ok(stop, `Claude Code refused the stop\n${explain}`);
    // In the store: the gate approved with the note; the run not stopped by the refused call.
    const decided = await runCli(['gates', '--all', '--json'], { cwd: ws });
    const after = (decided.json().gates as Array<{ id: string; status: string; note?: string }>).find(
      (g) => g.id === gate.id,
    )!;
    assert.equal(after.status, 'approved', explain);
    assert.equal(after.note, 'approved from Claude Code');
    // Claude Code's own record of the refusal; the server was never asked (no stop notice came back).
    const result = ran.events.find((e) => e.type === 'result') as
      { permission_denials?: Array<{ tool_name: string }> } | undefined;
    assert.deepEqual(
      result?.permission_denials?.map((d) => d.tool_name),
      ['mcp__baton__baton_stopRun'],
      explain,
    );
    assert.ok(!results.some((r) => /^Stop(ped|ping) /.test(r.output)), explain);
  });
});
