// `baton mcp` for real (docs/agents.md): a run driven by `baton start`, whose process workers
// only wait, while this test is their agent — it has a worker start `node dist/cli.js mcp` as its
// child (test/fixtures/workers/relayWorker.js: Baton takes an attempt's token only from its
// worker's processes) and talks to it with the SDK's Client over stdio, as an agent's CLI would.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CLI,
  ROOT,
  cleanEnv,
  describeResult,
  ensureCliBuilt,
  makeWorkspace,
  relayedArgv,
  removeWorkspace,
  runCli,
  spawnCli,
  storeFingerprint,
  waitFor,
  writeFile,
} from '../../support/cli';
import { processesCarrying } from '../../support/processes';

const PLAN = `# Plan

\`\`\`baton-task
id: T1
title: Write the report
agent: coder
files: [notes/**]
verify:
  - [node, -e, "process.exit(require('fs').existsSync('notes/report.txt') ? 0 : 1)"]
\`\`\`
Write notes/report.txt.

\`\`\`baton-task
id: T2
title: Write the summary
agent: coder
\`\`\`
Write notes/summary.txt.
`;

/** The worker: test/fixtures/workers/relayWorker.js, which runs the test's `baton` commands as its children. */
const WORKER = join(ROOT, 'test/fixtures/workers/relayWorker.js');

interface Answer {
  isError?: boolean;
  text: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  data: any;
}

describe('baton mcp: a real attempt, its agent connected over stdio with the SDK client', function () {
  this.timeout(120_000);
  let ws: string;
  let start: ChildProcess | undefined;
  let startOutput = '';
  const clients: Client[] = [];
  const workerEnv: Record<string, Record<string, string>> = {};

  /** The socket of a delegation's worker: `asWorker` runs a command as its child. */
  const worker = (delegationId: string): string => join(ws, 'worker-sock', `${delegationId}.sock`);

  /** `baton mcp` run by the delegation's worker (`env` over the worker's), or by this process with `env` alone. */
  async function connect(
    from: { worker: string; env?: Record<string, string> } | { env: Record<string, string> },
  ): Promise<Client> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: 'worker' in from ? relayedArgv(worker(from.worker), ['mcp'], from.env) : [CLI, 'mcp'],
      env: cleanEnv('worker' in from ? {} : from.env) as Record<string, string>,
      cwd: ws,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'baton-system-test', version: '1.0.0' });
    // What the server said on stderr: a failure shows it (a server that ended at once says why there).
    let said = '';
    transport.stderr?.on('data', (chunk: Buffer) => (said = (said + chunk.toString('utf8')).slice(-4000)));
    serverStderr.set(client, () => said);
    await client.connect(transport).catch((err: Error) => {
      throw new Error(`${err.message}; the server said: ${said || '(nothing)'}`);
    });
    clients.push(client);
    return client;
  }
  const serverStderr = new Map<Client, () => string>();

  async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Answer> {
    const result = await client.callTool({ name, arguments: args }).catch((err: Error) => {
      throw new Error(`${err.message}; the server said: ${serverStderr.get(client)?.() || '(nothing)'}`);
    });
    const content = result.content as Array<{ type: string; text: string }>;
    return { ...(result.isError ? { isError: true } : {}), text: content[0]!.text, data: result.structuredContent };
  }

  const status = async () => {
    const r = await runCli(['--json', 'status'], { cwd: ws });
    assert.equal(r.code, 0, describeResult(r));
    return r.json();
  };

  before(async () => {
    ensureCliBuilt();
    ws = makeWorkspace('baton-mcp-');
    writeFile(ws, 'plan.md', PLAN);
    writeFile(
      ws,
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'sleeper',
        workers: { sleeper: { type: 'process', command: process.execPath, args: [WORKER], promptOnStdin: false } },
        // Long leases: nothing renews a lease while the test compares the store's files around a dry run.
        leaseSeconds: 600,
        coordinatorLeaseSeconds: 600,
        maxConcurrency: 2,
      }),
    );
    start = spawnCli(['start', 'plan.md'], { cwd: ws });
    start.stdout!.setEncoding('utf8').on('data', (chunk: string) => (startOutput += chunk));
    start.stderr!.setEncoding('utf8').on('data', (chunk: string) => (startOutput += chunk));
    for (const d of ['D-T1-coder-001', 'D-T2-coder-001']) {
      const file = join(ws, 'worker-env', `${d}.json`);
      await waitFor(() => existsSync(file), `the worker of ${d} to start (${startOutput})`, 60_000);
      await waitFor(() => readFileSync(file, 'utf8').endsWith('}'), `${d}'s environment`);
      workerEnv[d] = JSON.parse(readFileSync(file, 'utf8'));
    }
  });
  after(async () => {
    for (const client of clients) await client.close().catch(() => undefined);
    start?.kill('SIGKILL');
    removeWorkspace(ws);
  });

  it('lists the five tools, and baton_task gives the attempt its task', async () => {
    const client = await connect({ worker: 'D-T1-coder-001' });
    assert.equal(client.getServerVersion()?.name, 'baton');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [
      'baton_ask',
      'baton_check_result',
      'baton_progress',
      'baton_submit_result',
      'baton_task',
    ]);
    const { data, isError, text } = await call(client, 'baton_task');
    assert.equal(isError, undefined, text);
    assert.equal(data.delegationId, 'D-T1-coder-001');
    assert.equal(data.attempt, 1);
    assert.equal(data.task.id, 'T1');
    assert.deepEqual(data.task.files, ['notes/**']);
    assert.equal(data.task.verify[0][0], 'node');
    assert.equal(data.result.path, workerEnv['D-T1-coder-001']!.BATON_ARTIFACT_PATH);
    assert.equal(data.workspace, ws);
  });

  it('baton_progress lands as a heartbeat with the note (baton status shows it)', async () => {
    const client = await connect({ worker: 'D-T1-coder-001' });
    const sent = await call(client, 'baton_progress', { note: 'drafting the report' });
    assert.equal(sent.data.delivery, 'sent', sent.text);
    const runtime = (await status()).runtimes.find(
      (r: { delegationId: string }) => r.delegationId === 'D-T1-coder-001',
    );
    assert.equal(runtime.progress, 'drafting the report');
    assert.equal(runtime.id, workerEnv['D-T1-coder-001']!.BATON_RUNTIME_ID);
    assert.ok(runtime.workerBeatAt, 'recorded as the worker’s own beat');
  });

  it('baton_check_result: a bad draft’s issues with line and column, the store’s files untouched; then a good one', async () => {
    const client = await connect({ worker: 'D-T1-coder-001' });
    writeFile(
      ws,
      'drafts/T1.md',
      '# Report\n\n```baton-result\ncontract: baton-result-v1\ntask: T2\nagent: coder\nstatus: DONE\nsummary: x\nartifacts: []\n```\n',
    );
    const before = storeFingerprint(ws);
    const bad = await call(client, 'baton_check_result', { path: 'drafts/T1.md' });
    assert.equal(bad.isError, undefined, bad.text);
    assert.equal(bad.data.acceptable, false);
    assert.deepEqual(
      bad.data.issues.map((i: { code: string; range: { start: unknown } }) => [i.code, i.range.start]),
      [
        ['result.task-mismatch', { line: 5, column: 7 }],
        ['result.invalid-status', { line: 7, column: 9 }],
      ],
    );
    assert.deepEqual(storeFingerprint(ws), before, 'the dry run wrote nothing to the store');
    // The same check for a plain process worker: `baton check-result` in the worker's environment.
    const cli = await runCli(['check-result', '--artifact', 'drafts/T1.md', '--json'], {
      cwd: ws,
      asWorker: worker('D-T1-coder-001'),
    });
    assert.equal(cli.code, 4, describeResult(cli));
    assert.deepEqual(
      cli.json().check.issues.map((i: { code: string }) => i.code),
      ['result.task-mismatch', 'result.invalid-status'],
    );
    const human = await runCli(['check-result', '--artifact', 'drafts/T1.md'], {
      cwd: ws,
      asWorker: worker('D-T1-coder-001'),
    });
    assert.match(human.stdout, /^drafts\/T1\.md:5:7: error result\.task-mismatch: /m, describeResult(human));
    assert.deepEqual(storeFingerprint(ws), before, 'nor did baton check-result');
    writeFile(ws, 'notes/report.txt', 'the report\n');
    writeFile(
      ws,
      `.baton/runs/${workerEnv['D-T1-coder-001']!.BATON_RUN_ID}/artifacts/D-T1-coder-001.md`,
      '# Report\n\n```baton-result\ncontract: baton-result-v1\ntask: T1\nagent: coder\nstatus: PASS\nsummary: wrote it\nartifacts: [notes/report.txt]\n```\n',
    );
    const good = await call(client, 'baton_check_result');
    assert.equal(good.data.acceptable, true, good.text);
    assert.deepEqual(good.data.issues, []);
    const cliGood = await runCli(['check-result'], { cwd: ws, asWorker: worker('D-T1-coder-001') });
    assert.equal(cliGood.code, 0, describeResult(cliGood));
    assert.match(cliGood.stdout, /ingestion would accept this PASS result for D-T1-coder-001 \(nothing was recorded\)/);
    assert.deepEqual(storeFingerprint(ws), before, 'nor did the second');
  });

  it('refuses bad input by naming the field, another attempt’s token, and a path outside the workspace', async () => {
    const client = await connect({ worker: 'D-T1-coder-001' });
    const bad = await call(client, 'baton_progress', { note: 42 });
    assert.equal(bad.isError, true);
    assert.match(bad.text, /Input validation error.*expected string.*\bnote\b/s);
    const smuggled = await call(client, 'baton_task', { token: 'x' });
    assert.match(smuggled.text, /Unrecognized key.*"token"/s);
    const outside = await call(client, 'baton_check_result', { path: '/etc/hostname' });
    assert.match(outside.text, /^ingest\.artifact-outside-workspace: /);
    const forged = await connect({
      worker: 'D-T1-coder-001',
      env: { BATON_RUNTIME_TOKEN: workerEnv['D-T2-coder-001']!.BATON_RUNTIME_TOKEN! },
    });
    for (const tool of ['baton_task', 'baton_check_result', 'baton_submit_result'])
      assert.match((await call(forged, tool)).text, /^runtime\.wrong-token: /, tool);
    // The worker's own environment, token and all, on a process that does not run under it (issue 25, item 2.7).
    const outsider = await connect({ env: workerEnv['D-T1-coder-001']! });
    for (const tool of ['baton_task', 'baton_check_result', 'baton_submit_result'])
      assert.match((await call(outsider, tool)).text, /^runtime\.not-its-worker: /, tool);
    // The stop hook with another attempt's token, or with no identity, cannot check: it lets the agent end (exit 0)
    // and says so on stderr — the attempt's log — recording nothing.
    const hookInput = JSON.stringify({ hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'x' });
    for (const from of [
      {
        asWorker: worker('D-T1-coder-001'),
        env: { BATON_RUNTIME_TOKEN: workerEnv['D-T2-coder-001']!.BATON_RUNTIME_TOKEN! },
      },
      { env: { BATON_WORKSPACE: ws } },
    ]) {
      const hook = await runCli(['check-result', '--stop-hook'], { cwd: ws, ...from, input: hookInput });
      assert.equal(hook.code, 0, describeResult(hook));
      assert.match(
        hook.stderr,
        /^baton stop hook: could not check the result \(.+\); the agent ends/,
        describeResult(hook),
      );
    }
    const events = await runCli(['--json', 'events'], { cwd: ws });
    assert.match(events.stdout, /delegation:claimed/, describeResult(events));
    assert.doesNotMatch(events.stdout, /result:checked/, 'no round was recorded');
    assert.equal(
      (await status()).tasks.find((t: { id: string }) => t.id === 'T1').status,
      'running',
      'T1 still runs: nothing was handed in',
    );
  });

  /** The open question gate of an attempt, once `baton gates` lists it. */
  async function openQuestion(delegationId: string): Promise<{ id: string; reason: string }> {
    for (let look = 0; look < 600; look++) {
      const r = await runCli(['--json', 'gates'], { cwd: ws });
      const found = r
        .json()
        .gates.find(
          (g: { kind: string; delegationId: string }) => g.kind === 'question' && g.delegationId === delegationId,
        );
      if (found) return found;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no question of ${delegationId} was listed`);
  }

  it('baton_ask: the question waits at a gate (with progress), baton answer answers it once, the tool returns it', async () => {
    const client = await connect({ worker: 'D-T1-coder-001' });
    const bad = await call(client, 'baton_ask', { question: 42 });
    assert.match(bad.text, /Input validation error.*expected string.*\bquestion\b/s);
    const many = await call(client, 'baton_ask', {
      question: 'q',
      choices: Array.from({ length: 11 }, (_, i) => `c${i}`),
    });
    assert.match(many.text, /Input validation error.*at most 10 choices.*\bchoices\b/s);
    const progress: Array<{ progress: number; message?: string }> = [];
    const asked = client.callTool(
      { name: 'baton_ask', arguments: { question: 'Which database?', choices: ['postgres', 'sqlite'] } },
      undefined,
      { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true },
    );
    const gate = await openQuestion('D-T1-coder-001');
    assert.match(gate.reason, /^D-T1-coder-001 asks: Which database\? Choices: postgres \| sqlite\./);
    const approve = await runCli(['approve', gate.id], { cwd: ws });
    assert.equal(approve.code, 2, describeResult(approve));
    assert.match(approve.stderr, new RegExp(`takes an answer, not an approval: baton answer ${gate.id}`));
    const notAChoice = await runCli(['answer', gate.id, 'mysql'], { cwd: ws });
    assert.equal(notAChoice.code, 2, describeResult(notAChoice));
    const answered = await runCli(['answer', gate.id, 'sqlite'], { cwd: ws });
    assert.equal(answered.code, 0, describeResult(answered));
    const result = await asked;
    assert.equal(result.isError, undefined, JSON.stringify(result.content));
    assert.equal((result.structuredContent as { answer: string }).answer, 'sqlite');
    assert.match(progress[0]?.message ?? '', new RegExp(`^waiting for an answer at ${gate.id}`));
    const again = await runCli(['answer', gate.id, 'postgres'], { cwd: ws });
    assert.equal(again.code, 4, describeResult(again));
    assert.match(again.stderr, /already answered by .*"sqlite"\. The first answer stands/);
    assert.equal((await status()).tasks.find((t: { id: string }) => t.id === 'T1').status, 'running');
  });

  it('baton ask: a plain process worker asks on the command line and gets the answer on stdout', async () => {
    const asking = runCli(['ask', 'Go on?', '--choice', 'yes', '--choice', 'no'], {
      cwd: ws,
      asWorker: worker('D-T2-coder-001'),
    });
    const gate = await openQuestion('D-T2-coder-001');
    const answered = await runCli(['answer', gate.id, 'yes'], { cwd: ws });
    assert.equal(answered.code, 0, describeResult(answered));
    const asked = await asking;
    assert.equal(asked.code, 0, describeResult(asked));
    assert.equal(asked.stdout, 'yes\n');
    const empty = await runCli(['ask', '  '], { cwd: ws, asWorker: worker('D-T2-coder-001') });
    assert.equal(empty.code, 2, describeResult(empty));
    assert.match(empty.stderr, /question: a question has some text/);
  });

  it('baton_submit_result: accepted, verified, the task completes; every call after the end is refused', async () => {
    const client = await connect({ worker: 'D-T1-coder-001' });
    const submitted = await call(client, 'baton_submit_result');
    assert.equal(submitted.isError, undefined, submitted.text);
    assert.equal(submitted.data.accepted, true);
    assert.equal(submitted.data.delegation.status, 'COMPLETED');
    assert.equal((await status()).tasks.find((t: { id: string }) => t.id === 'T1').status, 'completed');
    // The attempt was decided by its agent: its coordinator ends the worker that still slept, and with it every
    // process that carries the worker's marker — this server too, as an agent's CLI's server would be.
    const runtimeId = workerEnv['D-T1-coder-001']!.BATON_RUNTIME_ID!;
    await waitFor(() => processesCarrying(`BATON_RUNTIME_ID=${runtimeId}`).length === 0, 'T1’s processes to end');
    // A server started after the end (with the same environment; its worker is gone) refuses every call.
    const late = await connect({ env: workerEnv['D-T1-coder-001']! });
    for (const [tool, args] of [
      ['baton_task', {}],
      ['baton_progress', { note: 'one more thing' }],
      ['baton_check_result', {}],
      ['baton_submit_result', {}],
      ['baton_ask', { question: 'still there?' }],
    ] as const)
      assert.match((await call(late, tool, args)).text, /^runtime\.not-live: /, tool);
  });

  it('the other attempt hands its result in through its own server, and the run completes', async () => {
    const client = await connect({ worker: 'D-T2-coder-001' });
    writeFile(ws, 'notes/summary.txt', 'the summary\n');
    writeFile(
      ws,
      'drafts/T2.md',
      '```baton-result\ncontract: baton-result-v1\ntask: T2\nagent: coder\nstatus: PASS\nsummary: done\nartifacts: [notes/summary.txt]\n```\n',
    );
    const submitted = await call(client, 'baton_submit_result', { path: 'drafts/T2.md' });
    assert.equal(submitted.data.accepted, true, submitted.text);
    const code = await new Promise<number | null>((resolve) => {
      if (start!.exitCode !== null) resolve(start!.exitCode);
      else start!.on('exit', (c) => resolve(c));
    });
    assert.equal(code, 0, startOutput);
    assert.equal((await status()).run.status, 'completed');
  });
});
