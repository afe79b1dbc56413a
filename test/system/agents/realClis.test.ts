// The four real agent CLIs (Claude Code, Codex, Gemini CLI, opencode), run non-interactively
// in a temporary git repository against the scripted model server on loopback: no model, no
// key, no network. Each CLI is installed on first use into .cache/agents/ (scripts/agentClis.mjs).
//
//   npx mocha test/system/agents/realClis.test.ts
//   BATON_SAVE_AGENT_FIXTURES=1 npx mocha test/system/agents/realClis.test.ts   # also rewrites test/fixtures/agents/
//
// What each CLI does here, and why, is in docs/agent-clis.md.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensureAgentCli } from '../../../scripts/agentClis.mjs';
import type { AgentCli, CliRun } from '../../support/agentClis';
import { AGENT_CLI_RECIPES, runLaunch } from '../../support/agentClis';
import { git, initRepo } from '../../support/gitRepo';
import type { ModelServer, RecordedRequest, Usage } from '../../support/modelServer';
import { startModelServer } from '../../support/modelServer';
import { makeTempDir } from '../../support/tempDir';

const FIXTURES = resolve(__dirname, '../../fixtures/agents');
const SAVE_FIXTURES = process.env.BATON_SAVE_AGENT_FIXTURES === '1';
/** A test that runs only to make fixtures; `npm test` proves its behaviour through Baton. */
const fixtureRun = SAVE_FIXTURES ? it : it.skip;

const FILE = 'notes/hello.txt';
const SHELL_COMMAND = "printf 'baton-shell-%s\\n' ok";
const SHELL_MARKER = 'baton-shell-ok';
const SHELL_FILE = 'shell-wrote-this.txt';
const RESULT_TEXT = [
  'Done: I wrote notes/hello.txt and ran the check.',
  '',
  '```baton-result',
  'contract: baton-result-v1',
  'task: T1',
  'agent: coder',
  'status: PASS',
  'summary: Wrote notes/hello.txt',
  'artifacts:',
  '  - notes/hello.txt',
  '```',
].join('\n');
const PROMPT = 'Create notes/hello.txt, run the check, then report with a baton-result block.';

/** Distinct usage per step, so a CLI's totals can be traced to the requests that made them. */
const USAGE: Usage[] = [
  { input: 1201, output: 31 },
  { input: 1302, output: 42 },
  { input: 1403, output: 53 },
];

interface Reported {
  input?: number;
  output?: number;
  costUsd?: number;
}

/** The usage each CLI reports in its stream, summed over the run. */
function reportedUsage(cli: AgentCli['name'], events: Record<string, unknown>[]): Reported {
  const num = (value: unknown) => (typeof value === 'number' ? value : undefined);
  switch (cli) {
    case 'claude': {
      const result = events.find((e) => e.type === 'result') as
        { usage?: { input_tokens?: number; output_tokens?: number }; total_cost_usd?: number } | undefined;
      return {
        input: result?.usage?.input_tokens,
        output: result?.usage?.output_tokens,
        costUsd: result?.total_cost_usd,
      };
    }
    case 'codex': {
      const turns = events.filter((e) => e.type === 'turn.completed') as {
        usage?: { input_tokens?: number; output_tokens?: number };
      }[];
      if (!turns.length) return {};
      return {
        input: turns.reduce((sum, t) => sum + (t.usage?.input_tokens ?? 0), 0),
        output: turns.reduce((sum, t) => sum + (t.usage?.output_tokens ?? 0), 0),
      };
    }
    case 'gemini': {
      const result = events.find((e) => e.type === 'result') as
        { stats?: { input_tokens?: number; output_tokens?: number } } | undefined;
      return { input: num(result?.stats?.input_tokens), output: num(result?.stats?.output_tokens) };
    }
    case 'opencode': {
      const steps = events
        .filter((e) => e.type === 'step_finish')
        .map((e) => (e.part ?? {}) as { tokens?: { input?: number; output?: number }; cost?: number });
      if (!steps.length) return {};
      return {
        input: steps.reduce((sum, s) => sum + (s.tokens?.input ?? 0), 0),
        output: steps.reduce((sum, s) => sum + (s.tokens?.output ?? 0), 0),
        costUsd: steps.reduce((sum, s) => sum + (s.cost ?? 0), 0),
      };
    }
  }
}

/** The final assistant text as the CLI reports it. */
function finalText(cli: AgentCli['name'], events: Record<string, unknown>[]): string {
  switch (cli) {
    case 'claude':
      return String(events.find((e) => e.type === 'result')?.result ?? '');
    case 'codex':
      return events
        .filter((e) => e.type === 'item.completed' && (e.item as { type?: string })?.type === 'agent_message')
        .map((e) => String((e.item as { text?: string }).text ?? ''))
        .join('\n');
    case 'gemini':
      return events
        .filter((e) => e.type === 'message' && e.role === 'assistant')
        .map((e) => String(e.content ?? ''))
        .join('');
    case 'opencode':
      return events
        .filter((e) => e.type === 'text')
        .map((e) => String((e.part as { text?: string })?.text ?? ''))
        .join('\n');
  }
}

function describeRun(run: CliRun, server: ModelServer): string {
  return [
    `exit ${run.code}${run.signal ? ` (${run.signal})` : ''}${run.timedOut ? ', timed out' : ''} after ${run.durationMs} ms`,
    `server errors: ${JSON.stringify(server.errors)}`,
    `requests: ${server.requests.map((r) => `${r.method} ${r.path} turn ${r.turn}${r.main ? '' : ' (side)'}`).join('; ')}`,
    `stdout:\n${run.stdout.slice(-4000)}`,
    `stderr:\n${run.stderr.slice(-3000)}`,
  ].join('\n');
}

function saveFixture(cli: string, name: string, run: CliRun, work: string, server: ModelServer): void {
  if (!SAVE_FIXTURES) return;
  mkdirSync(join(FIXTURES, cli), { recursive: true });
  // The tools the CLI offered the model on its first turn, one name a line (per permission mode).
  const first = server.requests.find((r) => r.tools.length > 0);
  if (first && name !== 'model-error' && name !== 'resumed')
    writeFileSync(join(FIXTURES, cli, `${name}.tools.txt`), `${first.tools.map((t) => t.name).join('\n')}\n`);
  // Temporary paths become stable placeholders; everything else is as the CLI printed it.
  const text = run.stdout.split(join(work, 'repo')).join('/tmp/baton-agent/repo').split(work).join('/tmp/baton-agent');
  writeFileSync(join(FIXTURES, cli, `${name}.jsonl`), text.endsWith('\n') ? text : `${text}\n`);
}

describe('real agent CLIs against a scripted model server', function () {
  this.timeout(240_000);
  let server: ModelServer;

  before(async () => {
    server = await startModelServer();
  });
  after(async () => {
    await server?.close();
  });

  for (const cli of AGENT_CLI_RECIPES) {
    describe(cli.name, () => {
      let work = '';
      let repo = '';
      let home = '';

      before(function () {
        this.timeout(600_000);
        try {
          ensureAgentCli(cli.name);
        } catch (error) {
          console.log(`      skipped: ${cli.name} could not be installed here: ${(error as Error).message}`);
          this.skip();
        }
      });
      beforeEach(() => {
        work = makeTempDir(`baton-agent-${cli.name}-`);
        repo = join(work, 'repo');
        home = join(work, 'home');
        mkdirSync(repo);
        mkdirSync(join(home, 'tmp'), { recursive: true });
        initRepo(repo, { 'README.md': '# scratch repo\n' });
      });
      afterEach(() => {
        rmSync(work, { recursive: true, force: true });
      });

      const content = `Hello from the scripted model, through ${cli.name}'s own write tool.\n`;

      // This test and the read-only one make the parser fixtures (BATON_SAVE_AGENT_FIXTURES=1); in `npm test` the same
      // behaviour of each CLI is proven through Baton (realClisThroughBaton.test.ts: its work and usage, read-only).
      fixtureRun(
        'writes a file with its own tool, runs a shell command and ends with the scripted message',
        async () => {
          server.setScript({
            steps: [
              (request) => ({ toolCalls: [cli.writeFile(request, repo, FILE, content)], usage: USAGE[0] }),
              (request) => ({ toolCalls: [cli.runShell(request, SHELL_COMMAND)], usage: USAGE[1] }),
              { text: RESULT_TEXT, usage: USAGE[2] },
            ],
            side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
          });
          const run = await runLaunch(
            cli.launch({ home, cwd: repo, serverUrl: server.url, prompt: PROMPT, mode: 'write' }),
            repo,
          );
          const why = describeRun(run, server);
          saveFixture(cli.name, 'write-and-shell', run, work, server);

          assert.deepEqual(server.errors, [], why);
          assert.equal(run.timedOut, false, why);
          assert.equal(run.code, 0, why);
          // The stream: JSON lines only, and they parse.
          assert.ok(run.events.length > 0, why);
          assert.deepEqual(run.otherLines, [], why);

          const main = server.mainRequests();
          assert.equal(main.length, 3, why);
          assert.ok(
            main[0]!.userTexts.some((t) => t.includes(PROMPT)),
            `the prompt reached the model\n${why}`,
          );
          // (a) the file, written by the CLI's own tool
          assert.equal(readFileSync(join(repo, FILE), 'utf8'), content, why);
          // (b) the shell command ran: its output went back to the model
          assert.ok(
            main[2]!.toolResults.some((r) => r.output.includes(SHELL_MARKER)),
            `shell output in the tool result\n${JSON.stringify(main[2]!.toolResults)}\n${why}`,
          );
          // (c) the final message
          assert.ok(finalText(cli.name, run.events).includes('```baton-result'), why);
          assert.ok(cli.sessionId(run.events), `a session id in the stream\n${why}`);

          // Usage as the CLI reports it, against what the server served.
          const served = sumUsage(server.requests);
          const servedMain = sumUsage(main);
          const reported = reportedUsage(cli.name, run.events);
          console.log(
            `      ${cli.name}: ${run.durationMs} ms, ${server.requests.length} requests, reported ${JSON.stringify(reported)}, served main ${JSON.stringify(servedMain)}, all ${JSON.stringify(served)}`,
          );
          assert.ok(
            [servedMain.input, served.input].includes(reported.input ?? -1),
            `input tokens ${reported.input} vs served ${servedMain.input}/${served.input}\n${why}`,
          );
          // Cost: Claude Code prices the model name from its own table; opencode from the model's `cost` config.
          if (cli.name === 'claude' || cli.name === 'opencode') assert.ok((reported.costUsd ?? 0) > 0, why);
          assert.ok(
            [servedMain.output, served.output].includes(reported.output ?? -1),
            `output tokens ${reported.output} vs served ${servedMain.output}/${served.output}\n${why}`,
          );
        },
      );

      fixtureRun('refuses the write in its read-only mode, by itself', async () => {
        server.setScript({
          steps: [
            (request) => ({ toolCalls: [cli.writeFile(request, repo, FILE, content)], usage: USAGE[0] }),
            // Then a command that would write a file (called even where the mode offers no shell).
            (request) => ({ toolCalls: [cli.runShell(request, `echo sneaky > ${SHELL_FILE}`)], usage: USAGE[1] }),
            { text: 'I could not write the file.', usage: USAGE[2] },
          ],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        const run = await runLaunch(
          cli.launch({ home, cwd: repo, serverUrl: server.url, prompt: PROMPT, mode: 'readOnly' }),
          repo,
        );
        const why = describeRun(run, server);
        saveFixture(cli.name, 'read-only', run, work, server);

        assert.equal(run.timedOut, false, why);
        assert.ok(run.events.length > 0, why);
        assert.deepEqual(run.otherLines, [], why);
        assert.equal(existsSync(join(repo, FILE)), false, `the file must not exist\n${why}`);
        assert.equal(existsSync(join(repo, SHELL_FILE)), false, `nor the one the shell command would write\n${why}`);
        assert.equal(git(repo, 'status', '--porcelain'), '', `the work tree is unchanged\n${why}`);
        const main = server.mainRequests();
        assert.ok(main.length >= 2, why);
        console.log(
          `      ${cli.name} read-only: exit ${run.code}; results: ${main
            .slice(1)
            .map((r) => JSON.stringify(r.toolResults.at(-1)?.output ?? '(none)').slice(0, 160))
            .join(' | ')}`,
        );
        assert.ok(main[1]!.toolResults.length > 0, `the refusal went back to the model as a tool result\n${why}`);
      });

      it('reports a model error in its stream', async () => {
        server.setScript({
          steps: [{ error: { status: 400, message: 'Scripted failure: this request is refused.' } }],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        const run = await runLaunch(
          cli.launch({ home, cwd: repo, serverUrl: server.url, prompt: PROMPT, mode: 'write' }),
          repo,
          60_000,
        );
        const why = describeRun(run, server);
        saveFixture(cli.name, 'model-error', run, work, server);
        assert.equal(run.timedOut, false, why);
        assert.deepEqual(run.otherLines, [], why);
        const mentioned = run.stdout.includes('Scripted failure') || run.stderr.includes('Scripted failure');
        console.log(
          `      ${cli.name} model error: exit ${run.code}, message in stdout ${run.stdout.includes('Scripted failure')}, in stderr ${run.stderr.includes('Scripted failure')}, ${run.events.length} events`,
        );
        assert.ok(mentioned, `the error message is reported\n${why}`);
      });

      it('resumes its session: the second run carries the first conversation', async () => {
        server.setScript({
          steps: [
            { text: 'First answer: noted.', usage: USAGE[0] },
            { text: 'Second answer: still here.', usage: USAGE[1] },
          ],
          side: () => ({ text: 'Scripted side answer', usage: { input: 7, output: 1 } }),
        });
        const first = await runLaunch(
          cli.launch({
            home,
            cwd: repo,
            serverUrl: server.url,
            prompt: 'Remember the word BATON-FIRST.',
            mode: 'write',
          }),
          repo,
        );
        const session = cli.sessionId(first.events);
        assert.ok(session, describeRun(first, server));
        const second = await runLaunch(
          cli.launch({
            home,
            cwd: repo,
            serverUrl: server.url,
            prompt: 'What was the word?',
            mode: 'write',
            resume: session,
          }),
          repo,
        );
        const why = describeRun(second, server);
        saveFixture(cli.name, 'resumed', second, work, server);
        assert.deepEqual(server.errors, [], why);
        assert.equal(second.code, 0, why);
        const last = server.mainRequests().at(-1)!;
        assert.equal(last.turn, 1, `the resumed request carries the first answer\n${why}`);
        assert.ok(
          last.userTexts.some((t) => t.includes('BATON-FIRST')),
          `and the first prompt\n${why}`,
        );
        assert.ok(
          last.userTexts.some((t) => t.includes('What was the word?')),
          why,
        );
        assert.equal(cli.sessionId(second.events), session, `the same session id\n${why}`);
        assert.ok(finalText(cli.name, second.events).includes('Second answer'), why);
      });
    });
  }
});

function sumUsage(requests: RecordedRequest[]): Usage {
  return requests.reduce(
    (sum, r) => ({
      input: sum.input + (r.reply?.usage?.input ?? 0),
      output: sum.output + (r.reply?.usage?.output ?? 0),
    }),
    { input: 0, output: 0 },
  );
}
