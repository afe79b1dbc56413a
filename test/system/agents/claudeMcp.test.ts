// The real Claude Code as a Baton worker, wired to its attempt's MCP server (`baton mcp`,
// docs/agents.md): the claude-code preset passes `--mcp-config` with the server and allows its
// tools, and the scripted model server (test/support/modelServer.ts) makes the model call
// `baton_progress` — which lands as the attempt's heartbeat with the note. The preset also installs
// the attempt's Stop hook (`baton check-result --stop-hook`): a result with the wrong task id is sent
// back into the session and repaired there. No stand-in: the installed `claude`, the built
// `dist/cli.js`, the engine's coordinator. Skipped where Claude Code cannot be installed.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAgentCli } from '../../../scripts/agentClis.mjs';
import { Engine, type CoordinatorOutcome, type Run } from '../../../src/engine/index';
import { PASSED_RESET_RECHECK_MS } from '../../../src/engine/domain/parking';
import { waitFor } from '../../fixtures/executor/harness';
import { claudeCode } from '../../support/agentClis';
import { CLI, ensureCliBuilt } from '../../support/cli';
import { EngineFixture } from '../../support/engineFixture';
import { initRepo } from '../../support/gitRepo';
import { startModelServer, type ModelServer } from '../../support/modelServer';
import { makeTempDir } from '../../support/tempDir';

const DELEGATION = 'D-T1-coder-001';
const NOTE = 'reading the task through baton mcp';
const RESULT_TEXT = [
  'Done.',
  '',
  '```baton-result',
  'contract: baton-result-v1',
  'task: T1',
  'agent: coder',
  'status: PASS',
  'summary: Reported progress through MCP',
  'artifacts: []',
  '```',
].join('\n');

describe('Claude Code wired to its attempt’s MCP server and stop hook', function () {
  this.timeout(180_000);
  let server: ModelServer;
  let fixture: EngineFixture;
  let home: string;
  let executable = '';
  let engine: Engine | undefined;

  before(async function () {
    this.timeout(600_000);
    try {
      executable = ensureAgentCli('claude');
    } catch (error) {
      console.log(`      skipped: claude could not be installed here: ${(error as Error).message}`);
      this.skip();
    }
    ensureCliBuilt();
    server = await startModelServer();
  });
  after(async () => {
    await server?.close();
  });
  beforeEach(() => {
    fixture = new EngineFixture({ realClock: true });
    home = makeTempDir('baton-agent-home-claude-');
    initRepo(fixture.workspace, { 'README.md': '# scratch repo\n', '.gitignore': '.baton/\nplan.md\n' });
  });
  afterEach(async () => {
    await engine?.close();
    engine = undefined;
    await fixture.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  /** The claude-code preset with the recipe's environment (its home, the model server), as in realClisThroughBaton. */
  function presetWorker(): Record<string, unknown> {
    const recipe = claudeCode.launch({
      home,
      cwd: fixture.workspace,
      serverUrl: server.url,
      prompt: '',
      mode: 'write',
    });
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(recipe.env))
      if (value !== undefined && process.env[key] !== value) env[key] = value;
    for (const key of Object.keys(process.env)) if (!(key in recipe.env) && !key.startsWith('BATON_')) env[key] = '';
    return { type: 'claude-code', executable, env };
  }

  /**
   * Runs plan.md under a coordinator of this process to its end, noting each progress its runtimes showed. The CLI's
   * coordinator hands its workers its own script (BATON_CLI): the preset starts `baton mcp` with it.
   */
  async function driveToEnd(): Promise<{ run: Run; outcome: CoordinatorOutcome; progress: Set<string> }> {
    engine = await Engine.open({ workspace: fixture.workspace, cliPath: CLI, follow: true });
    const { run } = await engine.runForPlan('plan.md');
    const taken = await engine.coordinate({ runId: run.id });
    assert.ok('coordinator' in taken);
    const progress = new Set<string>();
    let done = false;
    const driving = taken.coordinator.run().finally(() => (done = true));
    await waitFor(
      'the run to end',
      async () => {
        for (const rt of (await engine!.overview(run.id)).runtimes) if (rt.progress) progress.add(rt.progress);
        return done;
      },
      // A hang detector: each test passes in under 30 s.
      170_000,
    );
    return { run, outcome: await driving, progress };
  }

  // One run of the CLI proves both (a CLI start is most of this test's cost): the MCP server, and the stop hook.
  it('connects the server with its five tools; baton_progress becomes the worker’s heartbeat; the stop hook sends a wrong task id back into the session, where the agent fixes it: one attempt, PASS, no gate', async () => {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({ defaultWorker: 'agent', workers: { agent: presetWorker() }, isolation: 'none', maxAttempts: 1 }),
    );
    fixture.write(
      'plan.md',
      '```baton-task\nid: T1\nagent: coder\npermissions: edit\n```\nSay what you do, then report.\n',
    );
    server.setScript({
      steps: [
        { toolCalls: [{ name: 'mcp__baton__baton_progress', input: { note: NOTE } }], usage: { input: 10, output: 5 } },
        // The agent tries to end with another task's id (Claude Code runs the Stop hook first). Long enough for the
        // test to see the note as the runtime's progress before the next beat replaces it.
        { text: RESULT_TEXT.replace('task: T1', 'task: T9'), usage: { input: 20, output: 5 }, delayMs: 3000 },
        // The session goes on with the hook's feedback as the next message; the scripted model answers it corrected.
        { text: RESULT_TEXT, usage: { input: 30, output: 5 } },
      ],
      side: () => ({ text: 'Scripted side answer', usage: { input: 1, output: 1 } }),
    });
    const { run, outcome, progress } = await driveToEnd();
    const logPath = join(fixture.workspace, '.baton', 'runs', run.id, 'logs', `${DELEGATION}.log`);
    const main = server.mainRequests();
    const explain = [
      `server errors: ${JSON.stringify(server.errors)}`,
      `tools offered: ${main[0]?.tools.map((t) => t.name).join(', ')}`,
      `tool results: ${JSON.stringify(main[1]?.toolResults)}`,
      `progress seen: ${JSON.stringify([...progress])}`,
      `log:\n${existsSync(logPath) ? readFileSync(logPath, 'utf8').slice(-4000) : '(none)'}`,
    ].join('\n');

    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' }, explain);
    // Claude Code connected the server and knows its five tools (it defers MCP tools: the model finds them through its
    // tool search, so the first request need not list them; its init event does).
    const init = readFileSync(logPath, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { type?: string; subtype?: string; tools?: string[]; mcp_servers?: unknown[] })
      .find((e) => e.type === 'system' && e.subtype === 'init');
    assert.ok(
      (init?.mcp_servers as Array<{ name: string; status: string }>).some(
        (m) => m.name === 'baton' && m.status === 'connected',
      ),
      explain,
    );
    for (const tool of ['baton_task', 'baton_progress', 'baton_check_result', 'baton_submit_result', 'baton_ask'])
      assert.ok(init?.tools?.includes(`mcp__baton__${tool}`), `${tool} known to Claude Code\n${explain}`);
    // Claude Code ran the call (allowed by the preset, no person asked) and gave the model the server's answer.
    const answer = main[1]!.toolResults.find((r) => r.output.includes('"delivery"'));
    assert.ok(answer && !answer.isError, explain);
    assert.match(answer.output, /"delivery":\s*"sent"/, explain);
    // The note was the attempt's progress while it ran (the stream follower's later beats say what came next), and it
    // came as the worker's own heartbeat: only a beat by the runtime's token sets workerBeatAt.
    assert.ok(progress.has(NOTE), explain);
    const overview = await engine!.overview(run.id);
    const runtime = overview.runtimes.find((r) => r.delegationId === DELEGATION)!;
    assert.ok(runtime.workerBeatAt, `a beat of the worker itself, not its coordinator's renewal\n${explain}`);

    // The stop hook: the wrong id reached the model in the same session, as the hook's feedback (its exit 2's stderr).
    assert.equal(main.length, 3, explain);
    const feedback = main[2]!.userTexts.join('\n');
    assert.match(feedback, /Stop hook feedback/, explain);
    assert.match(feedback, /result\.task-mismatch/, explain);
    // Two rounds in the store: the wrong id sent back, then the corrected result let through.
    const checks = (await engine!.listEvents(run.id)).filter((e) => e.type === 'result:checked').map((e) => e.data);
    assert.deepEqual(
      checks,
      [
        { delegationId: DELEGATION, taskId: 'T1', attempt: 1, round: 1, issues: 1, sentBack: true },
        { delegationId: DELEGATION, taskId: 'T1', attempt: 1, round: 2, issues: 0, sentBack: false },
      ],
      explain,
    );
    // One attempt, its result accepted as it ended; no gate was needed.
    assert.deepEqual(
      overview.delegations.map((d) => [d.id, d.status, d.resultStatus]),
      [[DELEGATION, 'COMPLETED', 'PASS']],
      explain,
    );
    assert.equal(overview.gates.length, 0, explain);
  });

  it('a usage-limit reply parks the task until its reset, then it resumes in its session and passes; a silence is seen', async () => {
    fixture.write(
      '.baton/config.json',
      JSON.stringify({
        defaultWorker: 'agent',
        workers: { agent: presetWorker() },
        isolation: 'none',
        // One attempt: the parked one must not use it.
        maxAttempts: 1,
        silenceSeconds: 2,
      }),
    );
    fixture.write('plan.md', '```baton-task\nid: T1\nagent: coder\npermissions: edit\n```\nReport.\n');
    let resetAt = 0;
    server.setScript({
      steps: [
        // Claude Code's own limit message (the reset in epoch seconds), a few seconds ahead of the request.
        () => {
          resetAt = Math.ceil((Date.now() + 4000) / 1000) * 1000;
          return { text: `Claude AI usage limit reached|${resetAt / 1000}`, usage: { input: 10, output: 5 } };
        },
        // The resumed session's answer, after a silence longer than silenceSeconds.
        { text: RESULT_TEXT, usage: { input: 20, output: 5 }, delayMs: 3500 },
      ],
      side: () => ({ text: 'Scripted side answer', usage: { input: 1, output: 1 } }),
    });
    const { run, outcome, progress } = await driveToEnd();
    const view = await engine!.overview(run.id);
    const events = await engine!.listEvents(run.id);
    const of = <K extends string>(type: K) => events.filter((e) => e.type === type);
    const main = server.mainRequests();
    const explain = [
      `server errors: ${JSON.stringify(server.errors)}`,
      `delegations: ${JSON.stringify(view.delegations.map((d) => [d.id, d.status, d.reason]))}`,
      `events: ${events.map((e) => e.type).join(', ')}`,
      `progress seen: ${JSON.stringify([...progress])}`,
    ].join('\n');

    assert.deepEqual(outcome, { kind: 'finished', status: 'completed' }, explain);
    const [parked, resumed] = view.delegations;
    assert.equal(parked?.status, 'CANCELLED', explain);
    assert.match(parked!.reason!, /^parked: agent hit its usage limit/, explain);
    assert.equal(resumed?.status, 'COMPLETED', explain);
    const park = of('attempt:parked')[0];
    // Until the reset it named — or, when the CLI exited only after that (a loaded machine), a short recheck.
    assert.ok(park?.type === 'attempt:parked', explain);
    assert.equal(park.data.until, resetAt > park.at ? resetAt : park.at + PASSED_RESET_RECHECK_MS, explain);
    // Not before the reset the CLI named; in the session the parked attempt had begun (its earlier answer is in it).
    assert.ok(resumed!.startedAt! >= resetAt, explain);
    const resume = of('attempt:resumed')[0];
    assert.ok(resume?.type === 'attempt:resumed' && resume.data.sessionId, explain);
    assert.ok(
      main.at(-1)!.turn === 1 && JSON.stringify(main.at(-1)!.body).includes('usage limit reached'),
      `the resumed request carries the parked turn\n${explain}`,
    );
    // The silence before the resumed answer was seen: an event, and "silent Ns" in the worker's progress.
    assert.ok(of('attempt:silent').length > 0, explain);
    assert.ok(
      [...progress].some((p) => /^silent \d+s · /.test(p)),
      explain,
    );
  });
});
