// The four agent CLIs' real streams (captured with the real binaries against the scripted
// model server; test/fixtures/agents/README.md) read into one vocabulary.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  agentStreamParser,
  applyAgentEvent,
  emptyActivity,
  progressOf,
  readAgentStream,
  type AgentKind,
} from '../../../src/engine/domain/agents/agentActivity';
import type { AgentEvent } from '../../../src/engine/domain/agents/agentEvents';

const FIXTURES = join(__dirname, '../../fixtures/agents');
const FOLDER: Record<AgentKind, string> = {
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
  opencode: 'opencode',
};
const lines = (kind: AgentKind, name: string): string[] =>
  readFileSync(join(FIXTURES, FOLDER[kind], `${name}.jsonl`), 'utf8').split('\n');

/** The folder the CLIs worked in when their streams were captured. */
const CWD = '/tmp/baton-agent/repo';

function events(kind: AgentKind, name: string): AgentEvent[] {
  const parser = agentStreamParser(kind, { cwd: CWD });
  return [...lines(kind, name).flatMap((l) => parser.feed(l)), ...parser.end()];
}

/** The tool calls a stream started, as a person reads them. */
function started(kind: AgentKind, name: string): string[] {
  return events(kind, name).flatMap((e) =>
    e.kind === 'tool' && e.phase === 'started' ? [`${e.tool} ${e.target ?? ''}`.trim()] : [],
  );
}

describe('agent streams: the real CLIs, read into one vocabulary', () => {
  describe('a run that writes a file, runs a command and reports (write-and-shell)', () => {
    const expectedTools: Record<AgentKind, string[]> = {
      'claude-code': ['Write notes/hello.txt', "Bash printf 'baton-shell-%s\\n' ok"],
      codex: ['apply_patch notes/hello.txt', "shell printf 'baton-shell-%s\\n' ok"],
      gemini: ['write_file notes/hello.txt', "run_shell_command printf 'baton-shell-%s\\n' ok"],
      opencode: ['write notes/hello.txt', "bash printf 'baton-shell-%s\\n' ok"],
    };
    for (const kind of ['claude-code', 'codex', 'gemini', 'opencode'] as const) {
      it(`${kind}: session, the two tool calls with their targets, usage 3906/126, the result block in the final message`, () => {
        const activity = readAgentStream(kind, lines(kind, 'write-and-shell'));
        assert.ok(activity.sessionId && activity.sessionId.length > 8, 'a session id to continue later');
        assert.deepEqual(started(kind, 'write-and-shell'), expectedTools[kind]);
        assert.equal(activity.toolCalls, 2);
        assert.equal(activity.failedToolCalls, 0);
        assert.equal(activity.turns, 3, 'three requests to the model: the write, the command, the answer');
        assert.deepEqual(
          [activity.inputTokens, activity.outputTokens],
          [3906, 126],
          'the script served 1201/31 + 1302/42 + 1403/53',
        );
        assert.equal(activity.ended?.ok, true);
        assert.match(
          activity.ended?.finalText ?? '',
          /```baton-result\ncontract: baton-result-v1\ntask: T1\n[\s\S]*status: PASS/,
        );
      });
    }

    it('cost where the CLI prices its calls: Claude Code per run, opencode per call (summed); none for Codex and Gemini CLI', () => {
      assert.equal(readAgentStream('claude-code', lines('claude-code', 'write-and-shell')).costUsd, 0.018144);
      assert.ok(
        Math.abs((readAgentStream('opencode', lines('opencode', 'write-and-shell')).costUsd ?? 0) - 0.013608) < 1e-9,
      );
      assert.equal(readAgentStream('codex', lines('codex', 'write-and-shell')).costUsd, undefined);
      assert.equal(readAgentStream('gemini', lines('gemini', 'write-and-shell')).costUsd, undefined);
    });
  });

  describe('read-only mode: the CLI refuses the write by itself', () => {
    for (const kind of ['claude-code', 'gemini', 'opencode'] as const) {
      it(`${kind}: both attempted calls are reported refused, and the run still ends`, () => {
        const activity = readAgentStream(kind, lines(kind, 'read-only'));
        assert.equal(activity.failedToolCalls, 2);
        assert.equal(activity.ended?.ok, true);
        assert.equal(activity.ended?.finalText, 'I could not write the file.');
      });
    }

    it('codex: a refusal reported only on stderr (its log holds both) is a refused call', () => {
      const stderr =
        '2026-12-01T17:05:06.221739Z ERROR codex_core::tools::router: error=patch rejected: writing is blocked by read-only sandbox; rejected by user approval settings';
      const activity = readAgentStream('codex', [...lines('codex', 'read-only'), stderr]);
      assert.equal(activity.toolCalls, 1);
      assert.equal(activity.failedToolCalls, 1);
      assert.match(activity.current ?? '', /^apply_patch — refused or failed: patch rejected: writing is blocked/);
    });

    it('codex: the refusal never reaches its stream (only the model sees it): no tool call is reported', () => {
      const activity = readAgentStream('codex', lines('codex', 'read-only'));
      assert.equal(activity.toolCalls, 0);
      assert.equal(activity.ended?.finalText, 'I could not write the file.');
    });
  });

  describe('a model error', () => {
    for (const kind of ['claude-code', 'codex', 'gemini', 'opencode'] as const) {
      it(`${kind}: a fatal error naming the model's refusal; the run does not end well`, () => {
        const activity = readAgentStream(kind, lines(kind, 'model-error'));
        assert.match(activity.errors.join('\n'), /Scripted failure|400/);
        assert.notEqual(activity.ended?.ok, true);
      });
    }
  });

  it('opencode has answered at its last model call (step_finish, reason stop), before its process exits: later tokens never stop it', () => {
    const parser = agentStreamParser('opencode');
    let activity = emptyActivity();
    for (const line of lines('opencode', 'write-and-shell'))
      for (const e of parser.feed(line)) activity = applyAgentEvent(activity, e);
    // Not yet `end()` (the process has not exited): the answer is already known, with all its tokens.
    assert.equal(activity.ended?.ok, true);
    assert.match(activity.ended?.finalText ?? '', /^Done: I wrote notes\/hello\.txt/);
    assert.deepEqual(parser.end(), [], 'its end is not said twice');
  });

  describe('a resumed session counts only its own run', () => {
    it('Codex reports usage cumulative per thread: the earlier run is subtracted', () => {
      const parser = agentStreamParser('codex', { priorTotals: { inputTokens: 1201, outputTokens: 31 } });
      let activity = emptyActivity();
      for (const line of lines('codex', 'resumed'))
        for (const e of parser.feed(line)) activity = applyAgentEvent(activity, e);
      assert.deepEqual([activity.inputTokens, activity.outputTokens], [1302, 42]);
    });

    for (const kind of ['claude-code', 'gemini', 'opencode'] as const) {
      it(`${kind}: the second run's figures are its own`, () => {
        const activity = readAgentStream(kind, lines(kind, 'resumed'));
        assert.deepEqual([activity.inputTokens, activity.outputTokens], [1302, 42]);
        assert.equal(activity.ended?.finalText, 'Second answer: still here.');
      });
    }
  });

  it('progress text says what the agent does now and how far it got', () => {
    let activity = emptyActivity();
    activity = applyAgentEvent(activity, { kind: 'turn' });
    activity = applyAgentEvent(activity, { kind: 'tool', phase: 'started', tool: 'Edit', target: 'src/notes.js' });
    assert.equal(progressOf(activity), 'Edit src/notes.js · 1 turn, 1 tool call');
    activity = applyAgentEvent(activity, { kind: 'tool', phase: 'started', tool: 'Bash', target: 'npm test' });
    assert.equal(progressOf(activity), 'Bash: npm test · 1 turn, 2 tool calls');
  });

  it("a call of Baton's own tools is counted but is not what the agent does (its note says that)", () => {
    let activity = applyAgentEvent(emptyActivity(), { kind: 'tool', phase: 'started', tool: 'Edit', target: 'a.js' });
    for (const tool of ['mcp__baton__baton_progress', 'baton_baton_check_result', 'baton__baton_ask'])
      activity = applyAgentEvent(activity, { kind: 'tool', phase: 'started', tool });
    assert.equal(progressOf(activity), 'Edit a.js · 0 turns, 4 tool calls');
    activity = applyAgentEvent(activity, { kind: 'tool', phase: 'started', tool: 'my_baton_progress_tool' });
    assert.equal(activity.current, 'my_baton_progress_tool');
  });

  it('skips lines that are not JSON objects (a banner, a cut line) and goes on', () => {
    const parser = agentStreamParser('gemini');
    assert.deepEqual(parser.feed('Warning: 256-color support not detected'), []);
    assert.deepEqual(parser.feed('{"type":"init","session_id":"abc'), []);
    assert.deepEqual(parser.feed('{"type":"init","session_id":"s-1","model":"m"}'), [
      { kind: 'session', sessionId: 's-1', model: 'm' },
    ]);
  });
});
