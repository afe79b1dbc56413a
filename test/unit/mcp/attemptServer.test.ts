// The MCP server of one attempt (src/mcp/attemptServer.ts, docs/agents.md), driven in process by
// the SDK's own Client over its in-memory transport against a real engine on a fake clock: the
// tools, their typed results, the refusals with the CLI's codes, and the dry run that writes nothing.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { AttemptCredential, Engine } from '../../../src/engine/index';
import { createAttemptServer, type AttemptServer } from '../../../src/mcp/attemptServer';
import { EngineFixture } from '../../support/engineFixture';

const PLAN = `# Plan

\`\`\`baton-task
id: T0
title: Lay the ground
agent: coder
\`\`\`
Create the module.

\`\`\`baton-task
id: T1
title: Write the report
agent: coder
depends: [T0]
files: [notes/**]
\`\`\`
Write notes/report.txt.
`;

const storeBytes = (workspace: string): Record<string, string> => {
  const dir = join(workspace, '.baton', 'store');
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n)).toString('base64')]));
};

interface ToolAnswer {
  isError?: boolean;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

describe('baton mcp: the tools of one attempt, bound by its runtime token', () => {
  let fixture: EngineFixture;
  let engine: Engine;
  let credential: AttemptCredential;
  let other: { token: string };
  const open: Array<{ client: Client; served: AttemptServer }> = [];

  /** A client connected to a server bound to `binding`, as an agent's CLI connects to `baton mcp`. */
  async function connect(binding: AttemptCredential, progressWindowMs = 1000): Promise<Client> {
    const served = createAttemptServer(engine, binding, { version: '0.1.0', progressWindowMs });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await served.server.connect(serverSide);
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(clientSide);
    open.push({ client, served });
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const result = await client.callTool({ name, arguments: args });
    const content = result.content as Array<{ type: string; text: string }>;
    return { ...(result.isError ? { isError: true } : {}), text: content[0]!.text, data: result.structuredContent };
  }

  beforeEach(async () => {
    fixture = new EngineFixture();
    fixture.write('plan.md', PLAN);
    engine = await fixture.open();
    const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T0', leaseSeconds: 60 });
    await engine.ingest({
      delegationId: first.delegation.id,
      runId: first.runId,
      artifactPath: fixture.writeResult('T0.md', { task: 'T0' }),
      token: first.token,
    });
    const claim = await engine.claimTask({ runId: first.runId, taskId: 'T1', leaseSeconds: 60 });
    credential = {
      runId: claim.runId,
      delegationId: claim.delegation.id,
      runtimeId: claim.runtimeId,
      token: claim.token,
    };
    other = first;
  });
  afterEach(async () => {
    for (const { client, served } of open.splice(0)) {
      await client.close();
      await served.server.close();
    }
    await fixture.dispose();
  });

  it('lists its five tools, each with an input and an output schema', async () => {
    const client = await connect(credential);
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'baton_ask',
      'baton_check_result',
      'baton_progress',
      'baton_submit_result',
      'baton_task',
    ]);
    for (const tool of tools) {
      assert.equal(tool.inputSchema.type, 'object', tool.name);
      assert.ok(tool.outputSchema, `${tool.name} declares its result`);
    }
    assert.match(client.getInstructions() ?? '', /baton_check_result/);
  });

  it('speaks MCP 2025-11-25, and answers a client of an older version in that version (docs/agents.md)', async () => {
    const answers: Record<string, string> = {};
    for (const asked of ['2025-11-25', '2025-06-18', '2024-11-05']) {
      const served = createAttemptServer(engine, credential, { version: '0.1.0' });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await served.server.connect(serverSide);
      const reply = new Promise<{ result: { protocolVersion: string; serverInfo: { name: string } } }>((resolve) => {
        clientSide.onmessage = (message) => resolve(message as never);
      });
      await clientSide.start();
      await clientSide.send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'old-agent', version: '1' } },
      });
      const { result } = await reply;
      assert.equal(result.serverInfo.name, 'baton');
      answers[asked] = result.protocolVersion;
      await served.server.close();
    }
    assert.deepEqual(answers, { '2025-11-25': '2025-11-25', '2025-06-18': '2025-06-18', '2024-11-05': '2024-11-05' });
  });

  it('baton_task: the task from the run, the files, dependencies, verify commands, the result contract, the attempt', async () => {
    const client = await connect(credential);
    const { isError, data } = await call(client, 'baton_task');
    assert.equal(isError, undefined);
    assert.equal(data.delegationId, credential.delegationId);
    assert.equal(data.attempt, 1);
    assert.equal(data.task.id, 'T1');
    assert.equal(data.task.title, 'Write the report');
    assert.equal(data.task.instructions, 'Write notes/report.txt.');
    assert.deepEqual(data.task.files, ['notes/**']);
    assert.deepEqual(data.task.dependencies, [{ id: 'T0', title: 'Lay the ground' }]);
    assert.deepEqual(data.task.verify, [], 'none here (the unit tier starts no process); the system test has one');
    assert.equal(data.result.workspacePath, `.baton/runs/${credential.runId}/artifacts/${credential.delegationId}.md`);
    assert.equal(data.result.path, join(fixture.workspace, data.result.workspacePath));
    assert.equal(data.result.contract.contract, 'baton-result-v1');
    assert.match(
      data.result.contract.template,
      /^```baton-result\ncontract: baton-result-v1\ntask: T1\nagent: coder\n/,
    );
  });

  it('baton_progress: a heartbeat with the note; within the window, accepted and coalesced, the newest sent at its end', async () => {
    const client = await connect(credential, 100);
    const first = await call(client, 'baton_progress', { note: 'reading the plan' });
    assert.equal(first.data.delivery, 'sent');
    assert.equal(first.data.heartbeatCount, 1);
    const second = await call(client, 'baton_progress', { note: 'writing the report' });
    assert.equal(second.data.delivery, 'coalesced');
    assert.equal(second.data.replaced, false);
    const third = await call(client, 'baton_progress', { note: 'checking the report' });
    assert.equal(third.data.delivery, 'coalesced');
    assert.equal(third.data.replaced, true, 'the newer note takes the waiting one’s place');
    const runtime = async () =>
      (await engine.overview(credential.runId)).runtimes.find((r) => r.id === credential.runtimeId)!;
    assert.equal((await runtime()).progress, 'reading the plan');
    const deadline = Date.now() + 5000;
    while ((await runtime()).heartbeatCount < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.equal((await runtime()).heartbeatCount, 2, 'two notes in one window: one more heartbeat, not two');
    assert.equal((await runtime()).progress, 'checking the report');
  });

  it('baton_check_result: the issues of a bad draft with line and column, and nothing written to the store', async () => {
    const client = await connect(credential);
    const draft = fixture.write(
      'drafts/bad.md',
      '# Report\n\n```baton-result\ncontract: baton-result-v1\ntask: T9\nagent: coder\nstatus: DONE\nsummary: x\nartifacts: [notes/missing.txt]\n```\n',
    );
    const before = storeBytes(fixture.workspace);
    const events = (await engine.listEvents(credential.runId)).length;
    const { isError, data } = await call(client, 'baton_check_result', { path: draft });
    assert.equal(isError, undefined);
    assert.equal(data.acceptable, false);
    assert.equal(data.recorded, false);
    assert.equal(data.path, 'drafts/bad.md');
    const byCode = Object.fromEntries(data.issues.map((i: { code: string }) => [i.code, i]));
    assert.deepEqual(byCode['result.task-mismatch'].range.start, { line: 5, column: 7 });
    assert.deepEqual(byCode['result.invalid-status'].range.start, { line: 7, column: 9 });
    assert.ok(!byCode['result.artifact-missing'], 'paths are checked once the block itself is sound');
    assert.deepEqual(storeBytes(fixture.workspace), before, 'the store’s files are byte for byte the same');
    assert.equal((await engine.listEvents(credential.runId)).length, events);
    assert.equal((await engine.listIngestions(credential.runId)).length, 1, 'only T0’s ingestion');
  });

  it('baton_check_result: a good draft at the default path (relative paths from the working folder) is acceptable', async () => {
    const client = await connect(credential);
    fixture.write('notes/report.txt', 'the report\n');
    fixture.write(
      `.baton/runs/${credential.runId}/artifacts/${credential.delegationId}.md`,
      readFileSync(fixture.writeResult('good.md', { task: 'T1', artifacts: ['notes/report.txt'] }), 'utf8'),
    );
    const byDefault = await call(client, 'baton_check_result');
    assert.equal(byDefault.data.acceptable, true, byDefault.text);
    assert.equal(byDefault.data.resultStatus, 'PASS');
    assert.deepEqual(byDefault.data.issues, []);
    const relative = await call(client, 'baton_check_result', { path: 'results/good.md' });
    assert.equal(relative.data.acceptable, true, relative.text);
  });

  it('refuses bad input by naming the field, and never reads outside the workspace', async () => {
    const client = await connect(credential);
    const wrongType = await call(client, 'baton_progress', { note: 5 });
    assert.equal(wrongType.isError, true);
    assert.match(wrongType.text, /Input validation error.*\bnote\b/s);
    const missing = await call(client, 'baton_progress', {});
    assert.equal(missing.isError, true);
    assert.match(missing.text, /\bnote\b/);
    const tooLong = await call(client, 'baton_progress', { note: 'x'.repeat(501) });
    assert.match(tooLong.text, /at most 500 characters.*\bnote\b/s);
    const smuggled = await call(client, 'baton_submit_result', { token: credential.token });
    assert.equal(smuggled.isError, true);
    assert.match(smuggled.text, /Unrecognized key.*"token"/s);
    const outside = await call(client, 'baton_check_result', { path: '/etc/passwd' });
    assert.equal(outside.isError, true);
    assert.match(outside.text, /^ingest\.artifact-outside-workspace: /);
    const climbing = await call(client, 'baton_submit_result', { path: '../../etc/passwd' });
    assert.match(climbing.text, /^ingest\.artifact-outside-workspace: /);
    symlinkSync('/etc', join(fixture.workspace, 'etc-link'));
    const linked = await call(client, 'baton_check_result', { path: 'etc-link/passwd' });
    assert.match(linked.text, /^ingest\.artifact-outside-workspace: /);
    assert.equal((await engine.listIngestions(credential.runId)).length, 1, 'nothing was recorded');
  });

  it("refuses another attempt's token and a runtime that is not the attempt's, with the CLI's codes", async () => {
    const forged = await connect({ ...credential, token: other.token });
    for (const tool of ['baton_task', 'baton_check_result', 'baton_submit_result'])
      assert.match((await call(forged, tool)).text, /^runtime\.wrong-token: /, tool);
    assert.match((await call(forged, 'baton_progress', { note: 'hi' })).text, /^runtime\.wrong-token: /);
    const crossed = await connect({ ...credential, delegationId: 'D-T0-coder-001' });
    assert.match((await call(crossed, 'baton_task')).text, /^runtime\.wrong-token: .*holds D-T1-coder-001/);
    const unknown = await connect({ ...credential, runtimeId: 'W-nothere' });
    assert.match((await call(unknown, 'baton_task')).text, /^runtime\.unknown: /);
  });

  it('baton_submit_result: the result is accepted and the attempt ends; every call after the end is refused', async () => {
    const client = await connect(credential);
    fixture.write('notes/report.txt', 'the report\n');
    const good = fixture.writeResult('good.md', { task: 'T1', artifacts: ['notes/report.txt'] });
    const submitted = await call(client, 'baton_submit_result', { path: good });
    assert.equal(submitted.isError, undefined, submitted.text);
    assert.equal(submitted.data.accepted, true);
    assert.equal(submitted.data.resultStatus, 'PASS');
    assert.equal(submitted.data.delegation.id, credential.delegationId);
    assert.equal(submitted.data.delegation.status, 'COMPLETED');
    for (const [tool, args] of [
      ['baton_task', {}],
      ['baton_progress', { note: 'still here' }],
      ['baton_check_result', { path: good }],
      ['baton_submit_result', { path: good }],
    ] as const)
      assert.match((await call(client, tool, args)).text, /^runtime\.not-live: /, tool);
  });

  it('refuses every call once the lease ran out, writing nothing (the engine makes the expiry official elsewhere)', async () => {
    const client = await connect(credential);
    fixture.fakeClock.advance(61_000);
    const before = storeBytes(fixture.workspace);
    assert.match((await call(client, 'baton_task')).text, /^runtime\.lease-expired: /);
    assert.match((await call(client, 'baton_check_result')).text, /^runtime\.lease-expired: /);
    assert.deepEqual(storeBytes(fixture.workspace), before);
  });
});
