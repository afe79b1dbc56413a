// `baton mcp --for-person` for real (docs/extension.md, "Chat tools"): a workspace with a run that `baton start`
// drove to a risk gate, and the SDK's own Client talking to the server over stdio as a person's chat client would —
// the tools listed, the runs and gates read, bad input and unknown ids refused in one line with nothing written, the
// gate approved, and the run then driven to its end by the server; a second plan started from the server likewise.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { readdirSync } from 'node:fs';
import { Engine } from '../../../src/engine/index';
import { join } from 'node:path';
import {
  CLI,
  cleanEnv,
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  planText,
  removeWorkspace,
  runCli,
  storeFingerprint,
  writeFile,
} from '../../support/cli';

const WORKER = join(__dirname, '../../fixtures/workers/resultWriter.js');

interface Answer {
  isError: boolean;
  text: string;
}

describe('baton mcp --for-person: a real MCP client (the SDK Client over stdio) on a real run', function () {
  this.timeout(120_000);
  let ws: string;
  let client: Client;
  let stderr = '';

  async function call(name: string, args: Record<string, unknown> = {}): Promise<Answer> {
    const result = await client.callTool({ name, arguments: args });
    const content = result.content as Array<{ type: string; text: string }>;
    assert.equal(content.length, 1);
    return { isError: result.isError === true, text: content[0]!.text };
  }

  /** A refusal: a tool error of one readable line, led by the tool's name, no stack. */
  function assertRefusal(answer: Answer, name: string, says: RegExp): void {
    assert.equal(answer.isError, true, answer.text);
    assert.ok(answer.text.startsWith(`${name}: `), answer.text);
    assert.doesNotMatch(answer.text, /\n|\bat .+:\d+:\d+/, 'one line, no stack');
    assert.match(answer.text, says);
  }

  async function runStatus(runId: string): Promise<string> {
    const { runs } = JSON.parse((await call('baton_listRuns')).text) as { runs: Array<{ id: string; status: string }> };
    return runs.find((r) => r.id === runId)!.status;
  }

  async function waitForStatus(runId: string, status: string): Promise<void> {
    const until = Date.now() + 60_000;
    let now = '';
    while (Date.now() < until) {
      now = await runStatus(runId);
      if (now === status) return;
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.fail(`run ${runId} is ${now}, not ${status}, after 60 s (server: ${stderr})`);
  }

  before(async () => {
    ensureCliBuilt();
    ws = makeWorkspace('baton-mcp-person-');
    writeFile(
      ws,
      'plan.md',
      planText([
        { id: 'T1', title: 'Write the notes' },
        { id: 'T2', title: 'Migrate the database', depends: ['T1'], risk: ['database'] },
      ]),
    );
    writeFile(ws, 'second.md', planText([{ id: 'S1', title: 'Tidy up' }], 'Second'));
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'fake',
        workers: {
          fake: { type: 'process', command: process.execPath, args: [WORKER, '{taskId}'], promptOnStdin: true },
        },
        isolation: 'none',
        retryBackoffSeconds: 0,
      }),
    );
    // T1 passes, T2 waits at its risk gate: `baton start` pauses there (exit 8) and lets go of the run.
    const started = await runCli(['start', 'plan.md'], { cwd: ws });
    assert.equal(started.code, 8, describeResult(started));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--for-person'],
      env: cleanEnv() as Record<string, string>,
      cwd: ws,
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    client = new Client({ name: 'baton-person-test', version: '1.0.0' });
    await client.connect(transport);
  });
  after(async () => {
    await client?.close().catch(() => undefined);
    removeWorkspace(ws);
  });

  it('lists the eight chat tools with their input schemas; the action tools are not read-only', async () => {
    assert.equal(client.getServerVersion()?.name, 'baton');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'baton_answerQuestion',
      'baton_decideGate',
      'baton_listGates',
      'baton_listRuns',
      'baton_listTasks',
      'baton_startRun',
      'baton_stopRun',
      'baton_taskIssues',
    ]);
    const tool = (name: string) => tools.find((t) => t.name === name)!;
    assert.equal(tool('baton_listGates').annotations?.readOnlyHint, true);
    assert.equal(tool('baton_decideGate').annotations?.readOnlyHint, false);
    assert.equal(tool('baton_decideGate').annotations?.destructiveHint, true);
    assert.equal(tool('baton_stopRun').annotations?.destructiveHint, true);
    assert.deepEqual(tool('baton_decideGate').inputSchema.required, ['gateId', 'decision']);
    assert.equal(tool('baton_decideGate').inputSchema.additionalProperties, false);
  });

  it('baton_listRuns and baton_listGates read the run and its risk gate', async () => {
    const runs = await call('baton_listRuns');
    assert.equal(runs.isError, false, runs.text);
    const listed = JSON.parse(runs.text);
    assert.equal(listed.runs.length, 1);
    assert.equal(listed.runs[0].plan, 'plan.md');
    assert.equal(listed.runs[0].tasks.completed, 1);
    assert.equal(listed.runs[0].openGates, 1);
    const gates = await call('baton_listGates');
    assert.equal(gates.isError, false, gates.text);
    const { gates: open, summary } = JSON.parse(gates.text);
    assert.equal(open.length, 1);
    assert.equal(open[0].kind, 'risk_approval');
    assert.equal(open[0].taskId, 'T2');
    assert.equal(open[0].taskTitle, 'Migrate the database');
    assert.match(summary, /^1 open gate: G-\d+ risk approval of T2\.$/);
  });

  it('refuses bad input, an unknown gate, run or tool in one line, and writes nothing', async () => {
    const before = storeFingerprint(ws);
    const gateId = JSON.parse((await call('baton_listGates')).text).gates[0].id as string;
    assertRefusal(
      await call('baton_decideGate', { gateId, decision: 'maybe' }),
      'baton_decideGate',
      /^baton_decideGate: invalid input — decision: /,
    );
    assertRefusal(
      await call('baton_decideGate', { gateId, decision: 'reject' }),
      'baton_decideGate',
      /note: rejecting a gate needs a note/,
    );
    assertRefusal(
      await call('baton_decideGate', { gateId, decision: 'approve', token: 'x' }),
      'baton_decideGate',
      /token: not an input of this tool/,
    );
    assertRefusal(
      await call('baton_decideGate', { gateId: 'G-99', decision: 'approve' }),
      'baton_decideGate',
      /There is no gate G-99\./,
    );
    assertRefusal(
      await call('baton_answerQuestion', { gateId, answer: 'yes' }),
      'baton_answerQuestion',
      /is a risk_approval gate: approve or reject it\./,
    );
    assertRefusal(await call('baton_listTasks', { runId: 'R-nope' }), 'baton_listTasks', /R-nope/);
    assertRefusal(
      await call('baton_startRun', { plan: '../outside.md' }),
      'baton_startRun',
      /is not a file inside the workspace folder/,
    );
    const unknown = await call('baton_deleteEverything');
    assert.equal(unknown.isError, true);
    assert.match(unknown.text, /^baton_deleteEverything: no such tool/);
    assert.deepEqual(storeFingerprint(ws), before, 'a refusal writes nothing');
  });

  it('baton_decideGate approves the gate, and the server drives the run on to its end', async () => {
    const { gates } = JSON.parse((await call('baton_listGates')).text);
    const gateId = gates[0].id as string;
    const runId = gates[0].runId as string;
    const approved = await call('baton_decideGate', { gateId, decision: 'approve', note: 'migration reviewed' });
    assert.equal(approved.isError, false, approved.text);
    assert.match(approved.text, new RegExp(`^${gateId} approved by .+ with the note “migration reviewed”\\.$`));
    await waitForStatus(runId, 'completed');
    const tasks = JSON.parse((await call('baton_listTasks', { runId })).text);
    assert.deepEqual(
      tasks.tasks.map((t: { id: string; status: string }) => [t.id, t.status]),
      [
        ['T1', 'completed'],
        ['T2', 'completed'],
      ],
    );
    // Decided again: nothing changes, and the answer says who decided it.
    const again = await call('baton_decideGate', { gateId, decision: 'approve' });
    assert.equal(again.isError, false, again.text);
    assert.match(
      again.text,
      new RegExp(`^${gateId} \\(risk approval of T2\\) was already approved by .+; nothing changed\\.$`),
    );
    assertRefusal(
      await call('baton_stopRun', { runId, mode: 'graceful' }),
      'baton_stopRun',
      new RegExp(`Run ${runId} is completed: Stop Run does not apply to it\\.`),
    );
  });

  it('started in a folder without Baton and only asked for its tools, it leaves the folder as it was', async () => {
    const empty = makeWorkspace('baton-mcp-person-empty-');
    try {
      const bare = new Client({ name: 'baton-person-test', version: '1.0.0' });
      await bare.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp', '--for-person'],
          env: cleanEnv() as Record<string, string>,
          cwd: empty,
          stderr: 'pipe',
        }),
      );
      assert.equal((await bare.listTools()).tools.length, 8);
      await bare.close();
      assert.deepEqual(readdirSync(empty), [], 'no .baton/ made');
    } finally {
      removeWorkspace(empty);
    }
  });

  it('closed while it drives a run, it hands the run over with its worker running, as a closing window does', async () => {
    const slow = makeWorkspace('baton-mcp-person-close-');
    let engine: Engine | undefined;
    try {
      writeFile(slow, 'plan.md', planText([{ id: 'L1', title: 'Take a while' }]));
      writeFile(
        slow,
        '.baton/config.json',
        JSON.stringify({
          defaultWorker: 'fake',
          workers: {
            fake: {
              type: 'process',
              command: process.execPath,
              args: [WORKER, '{taskId}'],
              promptOnStdin: true,
              env: { FAKE_DELAY_MS: '60000' },
            },
          },
          isolation: 'none',
        }),
      );
      const chat = new Client({ name: 'baton-person-test', version: '1.0.0' });
      await chat.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [CLI, 'mcp', '--for-person'],
          env: cleanEnv() as Record<string, string>,
          cwd: slow,
          stderr: 'pipe',
        }),
      );
      const started = await chat.callTool({ name: 'baton_startRun', arguments: { plan: 'plan.md' } });
      const text = (started.content as Array<{ text: string }>)[0]!.text;
      const runId = /^Baton started run (R-\S+) /.exec(text)?.[1];
      assert.ok(runId, text);
      engine = await Engine.open({ workspace: slow });
      const until = Date.now() + 60_000;
      while (!(await engine.overview(runId)).runtimes.some((r) => r.pid !== undefined) && Date.now() < until)
        await new Promise((r) => setTimeout(r, 200));
      const worker = (await engine.overview(runId)).runtimes.find((r) => r.pid !== undefined);
      assert.ok(worker?.pid, 'the worker started');

      await chat.close();
      // The server ends once its client is gone; its lease is then released, marked handed over.
      const released = Date.now() + 30_000;
      let lease = (await engine.overview(runId)).coordinatorLease;
      while (lease?.releasedAt === undefined && Date.now() < released) {
        await new Promise((r) => setTimeout(r, 200));
        lease = (await engine.overview(runId)).coordinatorLease;
      }
      assert.deepEqual(lease?.handedOver, { workers: 1 }, JSON.stringify(lease));
      assert.doesNotThrow(() => process.kill(worker.pid!, 0), 'its worker runs on');
      const view = await engine.overview(runId);
      assert.equal(view.delegations[0]!.status, 'RUNNING', 'not stopped, not stale');
      assert.equal(view.run.status, 'running', 'not paused by a stop');
    } finally {
      await engine?.close();
      await runCli(['cancel'], { cwd: slow }).catch(() => undefined);
      removeWorkspace(slow);
    }
  });

  it('baton_startRun starts a run of another plan and the server coordinates it to its end', async () => {
    const started = await call('baton_startRun', { plan: 'second.md' });
    assert.equal(started.isError, false, started.text);
    const match = /^Baton started run (R-\S+) of second\.md\.$/.exec(started.text);
    assert.ok(match, started.text);
    await waitForStatus(match[1]!, 'completed');
  });
});
