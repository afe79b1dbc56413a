// The four real agent CLIs (Claude Code, Codex, Gemini CLI, opencode) as Baton workers: each
// one is the worker preset of a workspace's .baton/config.json (type claude-code / codex /
// gemini / opencode, the installed binary, the environment its recipe needs), driven by the
// engine's coordinator against the scripted model server — the same path a user's run takes:
// the preset's argv and permission flags, the spawn, the live stream follower, usage, the
// result from the final message — and the attempt's MCP server (`baton mcp`, docs/agents.md), configured the
// CLI's own way by its preset: the model calls `baton_progress`, the note becomes the worker's heartbeat. A CLI
// that cannot be installed here is skipped.
//
//   npx mocha --no-config -n import=tsx --timeout 300000 test/system/agents/realClisThroughBaton.test.ts
//
// realClis.test.ts runs the same CLIs with the recipes' own argv (what each CLI does);
// agentAttempts.test.ts covers budgets, gates and sessions with a stand-in Claude.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureAgentCli } from '../../../scripts/agentClis.mjs';
import type { AgentKind } from '../../../src/engine/domain/agents/agentActivity';
import type { Engine } from '../../../src/engine/index';
import type { AttemptUsage } from '../../../src/engine/queries/agentUsage';
import { waitFor } from '../../fixtures/executor/harness';
import type { AgentCli } from '../../support/agentClis';
import { AGENT_CLI_RECIPES } from '../../support/agentClis';
import { CLI, ensureCliBuilt } from '../../support/cli';
import { EngineFixture } from '../../support/engineFixture';
import { git, initRepo } from '../../support/gitRepo';
import type { ModelServer, RecordedRequest, Usage } from '../../support/modelServer';
import { startModelServer } from '../../support/modelServer';
import { makeTempDir } from '../../support/tempDir';

const KIND: Record<AgentCli['name'], AgentKind> = {
  claude: 'claude-code',
  codex: 'codex',
  gemini: 'gemini',
  opencode: 'opencode',
};

/** What the preset cannot take from the worker's config: the model, where the recipe names one on its argv. */
const MODEL: Partial<Record<AgentCli['name'], string>> = { gemini: 'gemini-2.5-flash' };

const TASK = 'T1';
const DELEGATION = 'D-T1-coder-001';
const FILE = 'notes/hello.txt';
const SHELL_COMMAND = "printf 'baton-shell-%s\\n' ok";
const SHELL_MARKER = 'baton-shell-ok';
const SHELL_FILE = 'shell-wrote-this.txt';
const RESULT_TEXT = [
  'Done: I wrote notes/hello.txt and ran the check.',
  '',
  '```baton-result',
  'contract: baton-result-v1',
  `task: ${TASK}`,
  'agent: coder',
  'status: PASS',
  'summary: Wrote notes/hello.txt',
  'artifacts:',
  `  - ${FILE}`,
  '```',
].join('\n');

/** Distinct usage per model call, so the attempt's figures can be traced to the requests that made them. */
const USAGE: Usage[] = [
  { input: 1201, output: 31 },
  { input: 1302, output: 42 },
  { input: 1403, output: 53 },
  { input: 1504, output: 64 },
];

/**
 * The CLIs whose model here calls baton_progress. Not yet Codex (0.171 offers MCP tools only through its
 * tool_search and refuses a direct call; the scripted model does not search) — docs/agents.md.
 */
const MCP_PROVEN = new Set<AgentCli['name']>(['claude', 'gemini', 'opencode']);

/**
 * The CLIs with no stop hook wired (Claude Code's hook checks the result as the agent ends: claudeMcp.test.ts): their
 * agent checks a draft of its result itself, with `baton_check_result`, before it answers.
 */
const CHECKS_ITS_DRAFT = new Set<AgentCli['name']>(['gemini', 'opencode']);

/** The result a draft-checking agent ends with, and its first draft, written for another task. */
const CHECKED_RESULT = [
  'Checked my draft and fixed it.',
  '',
  '```baton-result',
  'contract: baton-result-v1',
  `task: ${TASK}`,
  'agent: coder',
  'status: PASS',
  'summary: Fixed the task id the check named',
  'artifacts: []',
  '```',
].join('\n');
const DRAFT = 'drafts/result.md';

/** What the model tells Baton through the attempt's MCP server. */
const NOTE = 'wrote the file, ran the check; reporting';

/**
 * A call of one of the attempt's MCP tools, by the name the CLI offers it under (Codex, Gemini CLI and opencode
 * each prefix it their own way); Claude Code defers MCP tools behind its tool search, so its first requests do not
 * list them, and its name is `mcp__baton__<tool>`.
 */
function batonToolCall(request: RecordedRequest, tool: string, input: Record<string, unknown>) {
  const offered = request.tools.find((t) => t.name === tool || t.name.endsWith(`_${tool}`));
  return { name: offered?.name ?? `mcp__baton__${tool}`, input };
}

/** Long enough for a heartbeat (at most one a second) to carry the tool call before the final answer. */
const THINK_MS = 2500;

function sumUsage(requests: RecordedRequest[]): Usage {
  return requests.reduce(
    (sum, r) => ({
      input: sum.input + (r.reply?.usage?.input ?? 0),
      output: sum.output + (r.reply?.usage?.output ?? 0),
    }),
    { input: 0, output: 0 },
  );
}

describe('real agent CLIs as Baton workers, through the coordinator', function () {
  this.timeout(180_000);
  let server: ModelServer;

  /**
   * A CLI's preset as a worker definition. The recipe writes the CLI's config files into the
   * temporary home (endpoint, no phoning home) and names the environment it needs; the worker's
   * `env` carries what differs from this process's (the rest is inherited), and clears what the
   * recipe removes (real keys, endpoints, NODE_OPTIONS).
   */
  function presetWorker(cli: AgentCli, executable: string, home: string, cwd: string): Record<string, unknown> {
    const recipe = cli.launch({ home, cwd, serverUrl: server.url, prompt: '', mode: 'write' });
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(recipe.env))
      if (value !== undefined && process.env[key] !== value) env[key] = value;
    for (const key of Object.keys(process.env)) if (!(key in recipe.env) && !key.startsWith('BATON_')) env[key] = '';
    // opencode: no undo snapshots (a shadow git repository it commits to at every step, the slowest part of its run
    // here), set the way a user may configure it, through the variable the preset also uses for the task's
    // permissions: both must hold (the read-only case proves the permissions still win). And a user's broad default
    // in OPENCODE_PERMISSION, which opencode merges over every config.
    if (cli.name === 'opencode') {
      env.OPENCODE_CONFIG_CONTENT = JSON.stringify({ snapshot: false });
      env.OPENCODE_PERMISSION = JSON.stringify({ edit: 'allow', bash: 'allow', webfetch: 'allow' });
    }
    const model = MODEL[cli.name];
    return { type: KIND[cli.name], executable, env, ...(model ? { model } : {}) };
  }

  before(async () => {
    // The coordinator hands its workers this CLI script (BATON_CLI): the presets start `baton mcp` with it.
    ensureCliBuilt();
    server = await startModelServer();
  });
  after(async () => {
    await server?.close();
  });

  for (const cli of AGENT_CLI_RECIPES) {
    describe(cli.name, () => {
      let executable = '';
      let fixture: EngineFixture;
      let home = '';
      let engine: Engine;

      before(function () {
        this.timeout(600_000);
        try {
          executable = ensureAgentCli(cli.name);
        } catch (error) {
          console.log(`      skipped: ${cli.name} could not be installed here: ${(error as Error).message}`);
          this.skip();
        }
      });
      beforeEach(() => {
        fixture = new EngineFixture({ realClock: true });
        home = makeTempDir(`baton-agent-home-${cli.name}-`);
        initRepo(fixture.workspace, { 'README.md': '# scratch repo\n', '.gitignore': '.baton/\nplan.md\n' });
      });
      afterEach(async () => {
        await fixture.dispose();
        rmSync(home, { recursive: true, force: true });
      });

      /**
       * The workspace's config: the CLI's preset (presetWorker) as the only worker.
       */
      function setUp(
        profile: 'full' | 'edit' | 'read-only',
        extra: { isolation?: 'none' | 'worktree'; budget?: unknown; maxAttempts?: number } = {},
      ): void {
        fixture.write(
          '.baton/config.json',
          JSON.stringify({
            defaultWorker: 'agent',
            workers: { agent: presetWorker(cli, executable, home, fixture.workspace) },
            isolation: extra.isolation ?? 'none',
            maxAttempts: extra.maxAttempts ?? 1,
            retryBackoffSeconds: 0,
            ...(extra.budget ? { budget: extra.budget } : {}),
          }),
        );
        fixture.write(
          'plan.md',
          [
            '```baton-task',
            `id: ${TASK}`,
            'agent: coder',
            `permissions: ${profile}`,
            '```',
            `Create ${FILE} with a greeting, run the check, then report.`,
            '',
          ].join('\n'),
        );
      }

      /** Drives the run to its end, collecting every runtime progress text seen meanwhile. */
      async function driveWatching(runId: string): Promise<{ outcome: unknown; progress: string[] }> {
        const seen = new Set<string>();
        // Every beat's progress as the engine announces it (no sampling race on a loaded machine: a note that was the
        // progress for a second between two polls is heard), and the runtimes' progress as polled.
        const heard = engine.onEvent((e) => {
          if (e.type === 'runtime:heartbeat' && e.data.progress) seen.add(e.data.progress);
        });
        const taken = await engine.coordinate({ runId });
        assert.ok('coordinator' in taken, 'the lease is free');
        let done = false;
        const driving = taken.coordinator.run().finally(() => (done = true));
        try {
          await waitFor(
            'the run to end',
            async () => {
              for (const rt of (await engine.overview(runId)).runtimes) if (rt.progress) seen.add(rt.progress);
              return done;
            },
            170_000,
          );
        } catch (error) {
          // A run that never ends says what the CLI was doing.
          throw new Error(`${(error as Error).message}\n${why(runId, [...seen])}`, { cause: error });
        } finally {
          heard.dispose();
        }
        return { outcome: await driving, progress: [...seen] };
      }

      function logOf(runId: string): string {
        return readFileSync(join(fixture.workspace, '.baton', 'runs', runId, 'logs', `${DELEGATION}.log`), 'utf8');
      }

      function why(runId: string, progress: string[], usage?: AttemptUsage): string {
        const log = existsSync(join(fixture.workspace, '.baton', 'runs', runId, 'logs', `${DELEGATION}.log`))
          ? logOf(runId)
          : '(no log)';
        return [
          `server errors: ${JSON.stringify(server.errors)}`,
          `requests: ${server.requests.map((r) => `${r.method} ${r.path} turn ${r.turn}${r.main ? '' : ' (side)'}`).join('; ')}`,
          `tools offered: ${server
            .mainRequests()
            .at(-1)
            ?.tools.map((t) => t.name)
            .join(', ')}`,
          `progress seen: ${JSON.stringify(progress)}`,
          `usage: ${JSON.stringify(usage)}`,
          `log:\n${log.slice(-5000)}`,
        ].join('\n');
      }

      const content = `Hello from the scripted model, through ${cli.name}'s own write tool.\n`;

      it('works a task in its own worktree: writes a file and runs a command with its own tools, tells Baton its progress through the MCP server, reports usage, answers with its result; the work is integrated', async () => {
        setUp('full', { isolation: 'worktree' });
        engine = await fixture.open({ follow: true, cliPath: CLI });
        const { run } = await engine.runForPlan('plan.md');
        // The worker's folder is its worktree (docs/isolation.md): the scripted write goes there.
        const worktree = join(fixture.workspace, '.baton', 'worktrees', run.id, `${TASK}-001`);
        server.setScript({
          steps: [
            (request) => ({ toolCalls: [cli.writeFile(request, worktree, FILE, content)], usage: USAGE[0] }),
            (request) => ({ toolCalls: [cli.runShell(request, SHELL_COMMAND)], usage: USAGE[1] }),
            ...(MCP_PROVEN.has(cli.name)
              ? [
                  // After a pause long enough for a beat to name the shell call: the note, newer, then stands
                  // (a description of what the agent began before it does not replace it).
                  (request: RecordedRequest) => ({
                    toolCalls: [batonToolCall(request, 'baton_progress', { note: NOTE })],
                    usage: USAGE[2],
                    delayMs: THINK_MS,
                  }),
                ]
              : []),
            { text: RESULT_TEXT, usage: USAGE[3], delayMs: THINK_MS },
          ],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        const { outcome, progress } = await driveWatching(run.id);
        const view = await engine.overview(run.id);
        const usage = view.usage.find((u) => u.delegationId === DELEGATION);
        const explain = why(run.id, progress, usage);

        assert.deepEqual(server.errors, [], explain);
        assert.deepEqual(outcome, { kind: 'finished', status: 'completed' }, explain);
        assert.equal(view.tasks[0]!.status, 'completed', explain);
        // The prompt Baton built reached the model, naming the task and its agent.
        const main = server.mainRequests();
        const wired = MCP_PROVEN.has(cli.name);
        assert.equal(main.length, wired ? 4 : 3, explain);
        assert.ok(
          main[0]!.userTexts.some((t) => t.includes(`task: ${TASK}`) && t.includes('agent: coder')),
          explain,
        );
        // The prompt names the attempt's MCP tools, not the `baton` commands.
        assert.ok(
          main[0]!.userTexts.some((t) => t.includes('`baton_progress`') && !t.includes('baton heartbeat')),
          explain,
        );
        // The CLI ran the model's baton_progress through `baton mcp` (allowed by the preset, nobody asked) and gave
        // the model the server's answer; the note became the attempt's progress, as the worker's own heartbeat (only
        // a beat with the runtime's token sets workerBeatAt).
        if (wired) {
          const answer = main[3]!.toolResults.find((r) => r.output.includes('delivery'));
          assert.ok(answer && !answer.isError, `baton_progress answered\n${explain}`);
          assert.match(answer.output, /\\?"delivery\\?":\s*\\?"(sent|coalesced)/, explain);
          assert.ok(progress.includes(NOTE), `the note was the attempt's progress\n${explain}`);
          assert.ok(
            view.runtimes.find((r) => r.delegationId === DELEGATION)?.workerBeatAt,
            `a beat of the worker itself\n${explain}`,
          );
        }
        // The file, written by the CLI's own tool in its worktree, integrated into the target branch; the command's
        // output went back to the model.
        assert.equal(git(fixture.workspace, 'show', `main:${FILE}`), content.trimEnd(), explain);
        const integrated = (await engine.listWorktrees(run.id)).find((w) => w.delegationId === DELEGATION);
        assert.equal(integrated?.status, 'integrated', explain);
        // The prompt's recorded digest is the digest of the prompt file the worker got.
        const prompt = readFileSync(join(fixture.workspace, '.baton', 'runs', run.id, 'prompts', `${DELEGATION}.md`));
        assert.equal(
          view.delegations.find((d) => d.id === DELEGATION)?.prompt?.sha256,
          createHash('sha256').update(prompt).digest('hex'),
          explain,
        );
        assert.ok(
          main[2]!.toolResults.some((r) => r.output.includes(SHELL_MARKER)),
          explain,
        );

        // Usage: the tokens the server served (the main calls, or all of them where the CLI counts its side
        // requests too), cost where the CLI prices its calls, the session from the stream, the counts.
        assert.ok(usage, `usage recorded for the attempt\n${explain}`);
        assert.equal(usage.kind, KIND[cli.name]);
        const servedMain = sumUsage(main);
        const served = sumUsage(server.requests);
        assert.ok([servedMain.input, served.input].includes(usage.inputTokens), `input tokens\n${explain}`);
        assert.ok([servedMain.output, served.output].includes(usage.outputTokens), `output tokens\n${explain}`);
        if (cli.name === 'claude' || cli.name === 'opencode') {
          assert.ok((usage.costUsd ?? 0) > 0, `the CLI's own cost\n${explain}`);
          assert.equal(usage.costSource, 'cli', explain);
        }
        const streamEvents = logOf(run.id)
          .split('\n')
          .flatMap((line) => {
            try {
              const value: unknown = JSON.parse(line);
              return value && typeof value === 'object' ? [value as Record<string, unknown>] : [];
            } catch {
              return [];
            }
          });
        assert.ok(usage.sessionId, explain);
        assert.equal(usage.sessionId, cli.sessionId(streamEvents), explain);
        assert.ok(usage.turns >= 2, `turns ${usage.turns}\n${explain}`);
        assert.ok(usage.toolCalls >= (wired ? 3 : 2), `tool calls ${usage.toolCalls}\n${explain}`);
        assert.equal(usage.failedToolCalls, 0, explain);
        assert.equal(usage.permissions.profile, 'full');

        // While it ran, a heartbeat named a tool call it made (its own tool names).
        const toolNames =
          /\b(Write|Bash|apply_patch|exec_command|shell_command|shell|write_file|run_shell_command|write|bash)\b/;
        assert.ok(
          progress.some((p) => toolNames.test(p) && / · \d+ turns?, \d+ tool calls?$/.test(p)),
          `a progress text naming a tool call\n${explain}`,
        );

        // The result artifact is the agent's final message, not its JSON stream.
        const delegation = view.delegations.find((d) => d.id === DELEGATION)!;
        assert.equal(delegation.resultStatus, 'PASS', explain);
        assert.ok(delegation.artifactPath, explain);
        const artifact = readFileSync(join(fixture.workspace, delegation.artifactPath), 'utf8');
        assert.equal(artifact.trim(), RESULT_TEXT, explain);
      });

      if (CHECKS_ITS_DRAFT.has(cli.name))
        it('checks a draft with baton_check_result, gets the wrong task id back with its line, and answers corrected in the same session: one attempt, PASS, no gate', async () => {
          setUp('full');
          engine = await fixture.open({ follow: true, cliPath: CLI });
          const { run } = await engine.runForPlan('plan.md');
          server.setScript({
            steps: [
              (request) => ({
                toolCalls: [
                  cli.writeFile(request, fixture.workspace, DRAFT, CHECKED_RESULT.replace(`task: ${TASK}`, 'task: T9')),
                ],
                usage: USAGE[0],
              }),
              (request) => ({
                toolCalls: [batonToolCall(request, 'baton_check_result', { path: DRAFT })],
                usage: USAGE[1],
              }),
              { text: CHECKED_RESULT, usage: USAGE[2] },
            ],
            side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
          });
          const { outcome, progress } = await driveWatching(run.id);
          const view = await engine.overview(run.id);
          const explain = why(run.id, progress);
          assert.deepEqual(outcome, { kind: 'finished', status: 'completed' }, explain);
          // The check went back to the model as the tool's answer: not acceptable, the mismatch named with its line.
          const main = server.mainRequests();
          assert.equal(main.length, 3, explain);
          const answer = main[2]!.toolResults.find((r) => r.output.includes('acceptable'));
          assert.ok(answer && !answer.isError, `baton_check_result answered\n${explain}`);
          assert.match(answer.output, /\\?"acceptable\\?":\s*false/, explain);
          assert.match(answer.output, /result\.task-mismatch/, explain);
          assert.match(answer.output, /\\?"line\\?":\s*\d+/, explain);
          // One attempt, its corrected answer accepted as it ended; no gate, and the check itself recorded nothing.
          assert.deepEqual(
            view.delegations.map((d) => [d.id, d.status, d.resultStatus]),
            [[DELEGATION, 'COMPLETED', 'PASS']],
            explain,
          );
          assert.equal(view.gates.length, 0, explain);
          const ingestions = (await engine.listEvents(run.id)).filter((e) => e.type.startsWith('ingestion:'));
          assert.equal(ingestions.length, 1, `one ingestion, the answer's\n${explain}`);
        });

      it('a task budget smaller than the script stops the attempt mid-run where the CLI reports its spend as it goes, and opens the budget gate; approving continues to the result', async () => {
        // The first call alone is 1,232 tokens; the second crosses 2,000.
        setUp('full', { budget: { task: { tokens: 2000 } }, maxAttempts: 2 });
        const script = (): Parameters<ModelServer['setScript']>[0] => ({
          steps: [
            (request) => ({ toolCalls: [cli.writeFile(request, fixture.workspace, FILE, content)], usage: USAGE[0] }),
            (request) => ({ toolCalls: [cli.runShell(request, SHELL_COMMAND)], usage: USAGE[1] }),
            // Never reached in the first attempt: it is stopped while the model "thinks" here (not Gemini CLI, Codex).
            { text: RESULT_TEXT, usage: USAGE[2], delayMs: cli.name === 'gemini' || cli.name === 'codex' ? 0 : 60_000 },
          ],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        server.setScript(script());
        engine = await fixture.open({ follow: true });
        const { run } = await engine.runForPlan('plan.md');
        const first = await driveWatching(run.id);
        let view = await engine.overview(run.id);
        const explain = why(run.id, first.progress, view.usage[0]);
        if (cli.name === 'gemini' || cli.name === 'codex') {
          // Gemini CLI and Codex report their tokens only when they are done (final stats, turn.completed;
          // docs/workers.md, "Budgets"): nothing to stop them on mid-run, so they run to their result, and the spend,
          // over the limit, counts from then on — an agent that answered is not stopped for its final figures.
          assert.deepEqual(first.outcome, { kind: 'finished', status: 'completed' }, explain);
          const usage = view.usage[0]!;
          assert.ok(usage.inputTokens + usage.outputTokens > 2000, explain);
          return;
        }
        assert.equal((first.outcome as { kind: string }).kind, 'paused', explain);
        const gate = view.gates.find((g) => g.kind === 'budget' && g.status === 'open');
        assert.ok(gate, `a budget gate opened\n${explain}`);
        assert.match(gate.reason, /the task budget of 2,000 tokens is used up/, explain);
        assert.equal(view.delegations[0]!.status, 'CANCELLED', explain);
        assert.equal(view.tasks[0]!.status, 'gated', explain);

        // Approved: the limit is raised and the retry runs to its result (quickly this time).
        server.setScript({
          ...script(),
          steps: [
            (request) => ({ toolCalls: [cli.writeFile(request, fixture.workspace, FILE, content)], usage: USAGE[0] }),
            { text: RESULT_TEXT, usage: USAGE[2] },
          ],
        });
        await engine.decideGate({ gateId: gate.id, decision: 'approved', by: 'tester' });
        const second = await driveWatching(run.id);
        view = await engine.overview(run.id);
        assert.deepEqual(second.outcome, { kind: 'finished', status: 'completed' }, why(run.id, second.progress));
        assert.deepEqual(
          view.delegations.map((d) => `${d.id}:${d.status}`),
          [`${DELEGATION}:CANCELLED`, 'D-T1-coder-002:COMPLETED'],
        );
      });

      it('in the edit profile, the CLI writes the file but refuses to run a command (each CLI alike)', async () => {
        setUp('edit');
        server.setScript({
          steps: [
            (request) => ({ toolCalls: [cli.writeFile(request, fixture.workspace, FILE, content)], usage: USAGE[0] }),
            // A command that would write a file of its own: `edit` changes files, only `full` runs commands.
            (request) => ({ toolCalls: [cli.runShell(request, `${SHELL_COMMAND} > ${SHELL_FILE}`)], usage: USAGE[1] }),
            { text: RESULT_TEXT, usage: USAGE[2] },
          ],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        engine = await fixture.open({ follow: true });
        const { run } = await engine.runForPlan('plan.md');
        const { progress } = await driveWatching(run.id);
        const view = await engine.overview(run.id);
        const usage = view.usage.find((u) => u.delegationId === DELEGATION);
        const explain = why(run.id, progress, usage);

        assert.equal(readFileSync(join(fixture.workspace, FILE), 'utf8'), content, `the edit was made\n${explain}`);
        assert.equal(existsSync(join(fixture.workspace, SHELL_FILE)), false, `the command must not run\n${explain}`);
        assert.ok(usage, explain);
        assert.equal(usage.permissions.profile, 'edit');
        const afterShell = server.mainRequests()[2];
        assert.ok(afterShell?.toolResults.length, `the refusal went back to the model\n${explain}`);
        assert.ok(
          !afterShell.toolResults.some((r) => JSON.stringify(r).includes(SHELL_MARKER)),
          `the command's output must not come back\n${explain}`,
        );
      });

      it('in the read-only profile, the CLI itself refuses the write', async () => {
        setUp('read-only');
        server.setScript({
          steps: [
            (request) => ({ toolCalls: [cli.writeFile(request, fixture.workspace, FILE, content)], usage: USAGE[0] }),
            // Then a command that would write a file (called even where the profile offers no shell).
            (request) => ({ toolCalls: [cli.runShell(request, `echo sneaky > ${SHELL_FILE}`)], usage: USAGE[1] }),
            { text: 'I could not write the file.', usage: USAGE[2] },
          ],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        engine = await fixture.open({ follow: true });
        const { run } = await engine.runForPlan('plan.md');
        const { progress } = await driveWatching(run.id);
        const view = await engine.overview(run.id);
        const usage = view.usage.find((u) => u.delegationId === DELEGATION);
        const explain = why(run.id, progress, usage);

        assert.equal(existsSync(join(fixture.workspace, FILE)), false, `the file must not exist\n${explain}`);
        assert.equal(existsSync(join(fixture.workspace, SHELL_FILE)), false, explain);
        assert.equal(git(fixture.workspace, 'status', '--porcelain'), '', `the work tree is unchanged\n${explain}`);
        // No result block: the task did not pass.
        assert.notEqual(view.tasks[0]!.status, 'completed', explain);
        assert.ok(usage, explain);
        assert.equal(usage.permissions.profile, 'read-only');
        assert.ok(server.mainRequests()[1]?.toolResults.length, `the refusal went back to the model\n${explain}`);
        // The refusal shows in the attempt's activity.
        assert.ok(usage.failedToolCalls >= 1, `failed tool calls ${usage.failedToolCalls}\n${explain}`);
      });

      if (cli.name === 'opencode')
        it("a repository's own opencode agent permissions (opencode.json, .opencode/agent/*.md) cannot loosen the read-only profile", async () => {
          setUp('read-only');
          // The repository grants its build agent everything, both ways opencode reads agent-level rules.
          fixture.write(
            'opencode.json',
            // With its $schema: opencode, which reads the file now, adds one to a file without.
            `${JSON.stringify({ $schema: 'https://opencode.ai/config.json', agent: { build: { permission: { edit: 'allow', bash: 'allow' } } } }, null, 2)}\n`,
          );
          fixture.write(
            '.opencode/agent/build.md',
            [
              '---',
              'description: Builds',
              'permission:',
              '  edit: allow',
              '  bash: allow',
              '---',
              'Build it.',
              '',
            ].join('\n'),
          );
          // Were the folder read, opencode would npm-install its plugin package there unless it is seeded.
          const plugin = { '@opencode-ai/plugin': '1.18.33' };
          fixture.write('.opencode/node_modules/.keep', '');
          fixture.write('.opencode/package.json', `${JSON.stringify({ dependencies: plugin })}\n`);
          fixture.write(
            '.opencode/package-lock.json',
            `${JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: plugin } } })}\n`,
          );
          git(fixture.workspace, 'add', '--all');
          git(fixture.workspace, 'commit', '--quiet', '-m', 'the repository configures opencode');
          server.setScript({
            steps: [
              (request) => ({ toolCalls: [cli.writeFile(request, fixture.workspace, FILE, content)], usage: USAGE[0] }),
              (request) => ({ toolCalls: [cli.runShell(request, `echo sneaky > ${SHELL_FILE}`)], usage: USAGE[1] }),
              { text: 'I could not write the file.', usage: USAGE[2] },
            ],
            side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
          });
          engine = await fixture.open({ follow: true });
          const { run } = await engine.runForPlan('plan.md');
          const { progress } = await driveWatching(run.id);
          const view = await engine.overview(run.id);
          const usage = view.usage.find((u) => u.delegationId === DELEGATION);
          const explain = why(run.id, progress, usage);

          assert.equal(existsSync(join(fixture.workspace, FILE)), false, `the file must not exist\n${explain}`);
          assert.equal(existsSync(join(fixture.workspace, SHELL_FILE)), false, explain);
          // opencode reads the repository's .opencode/ now, and keeps its own files there (.gitignore, node_modules).
          const changed = git(fixture.workspace, 'status', '--porcelain', '--', '.', ':!.opencode');
          assert.equal(changed, '', `the work tree is unchanged: ${changed}\n${explain}`);
          assert.notEqual(view.tasks[0]!.status, 'completed', explain);
          assert.ok(usage, explain);
          assert.equal(usage.permissions.profile, 'read-only');
          assert.ok(usage.failedToolCalls >= 1, `failed tool calls ${usage.failedToolCalls}\n${explain}`);
        });
    });
  }

  describe('one plan, one task per preset', () => {
    it("runs to completion, each task in its own worktree with its own CLI; every task's edit is integrated", async function () {
      this.timeout(600_000);
      const executables: Partial<Record<AgentCli['name'], string>> = {};
      try {
        for (const cli of AGENT_CLI_RECIPES) executables[cli.name] = ensureAgentCli(cli.name);
      } catch (error) {
        console.log(`      skipped: a CLI could not be installed here: ${(error as Error).message}`);
        this.skip();
      }
      const fixture = new EngineFixture({ realClock: true });
      const home = makeTempDir('baton-agent-home-all-');
      try {
        initRepo(fixture.workspace, { 'README.md': '# scratch repo\n', '.gitignore': '.baton/\nplan.md\n' });
        const workers = Object.fromEntries(
          AGENT_CLI_RECIPES.map((cli) => [
            cli.name,
            presetWorker(cli, executables[cli.name]!, home, fixture.workspace),
          ]),
        );
        fixture.write(
          '.baton/config.json',
          JSON.stringify({ workers, isolation: 'worktree', maxConcurrency: 2, maxAttempts: 1, retryBackoffSeconds: 0 }),
        );
        const taskOf = (cli: AgentCli) => `T-${cli.name}`;
        fixture.write(
          'plan.md',
          AGENT_CLI_RECIPES.map((cli) =>
            [
              '```baton-task',
              `id: ${taskOf(cli)}`,
              'agent: coder',
              `worker: ${cli.name}`,
              'permissions: full',
              `files: [notes/${cli.name}.txt]`,
              '```',
              `Write notes/${cli.name}.txt, then report.`,
              '',
            ].join('\n'),
          ).join('\n'),
        );
        const engine = await fixture.open({ follow: true });
        const { run } = await engine.runForPlan('plan.md');
        // Each request is answered for the CLI that speaks its wire format, in that CLI's task's worktree.
        const byFormat = new Map(AGENT_CLI_RECIPES.map((cli) => [cli.format, cli]));
        const worktreeOf = (cli: AgentCli) =>
          join(fixture.workspace, '.baton', 'worktrees', run.id, `${taskOf(cli)}-001`);
        const resultOf = (cli: AgentCli) =>
          [
            `Done: notes/${cli.name}.txt.`,
            '',
            '```baton-result',
            'contract: baton-result-v1',
            `task: ${taskOf(cli)}`,
            'agent: coder',
            'status: PASS',
            `summary: Wrote notes/${cli.name}.txt`,
            'artifacts:',
            `  - notes/${cli.name}.txt`,
            '```',
          ].join('\n');
        server.setScript({
          steps: [
            (request) => {
              const cli = byFormat.get(request.format)!;
              const file = `notes/${cli.name}.txt`;
              return {
                toolCalls: [cli.writeFile(request, worktreeOf(cli), file, `from ${cli.name}\n`)],
                usage: USAGE[0],
              };
            },
            (request) => ({ text: resultOf(byFormat.get(request.format)!), usage: USAGE[1] }),
          ],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        const taken = await engine.coordinate({ runId: run.id });
        assert.ok('coordinator' in taken, 'the lease is free');
        const outcome = await taken.coordinator.run();
        const view = await engine.overview(run.id);
        const explain = [
          `server errors: ${JSON.stringify(server.errors)}`,
          `tasks: ${view.tasks.map((t) => `${t.id}:${t.status}`).join(', ')}`,
          `gates: ${view.gates.map((g) => `${g.kind}: ${g.reason}`).join('; ')}`,
        ].join('\n');
        assert.deepEqual(outcome, { kind: 'finished', status: 'completed' }, explain);
        for (const cli of AGENT_CLI_RECIPES) {
          assert.equal(git(fixture.workspace, 'show', `main:notes/${cli.name}.txt`), `from ${cli.name}`, explain);
          const usage = view.usage.find((u) => u.taskId === taskOf(cli));
          assert.equal(usage?.kind, KIND[cli.name], explain);
          assert.ok((usage?.toolCalls ?? 0) >= 1, explain);
        }
      } finally {
        await fixture.dispose();
        rmSync(home, { recursive: true, force: true });
      }
    });
  });
});
