// Claims against the stream (docs/agents.md): what a PASS is told about the work its stream shows.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { AGENT_KINDS, type AgentKind } from '../../../src/engine/domain/agents/agentActivity';
import type { AgentEvent } from '../../../src/engine/domain/agents/agentEvents';
import {
  EMPTY_TRAIL,
  claimIssues,
  foldWorkTrail,
  isTestCommand,
  readWorkTrail,
} from '../../../src/engine/domain/agents/workTrail';

const notArtifact = (target: string): boolean => target.endsWith('D-T1-coder-001.md');

let nextCall = 0;
/** A finished tool call: its start and its end, as a parser gives them. */
function call(tool: string, target: string, ok = true, detail?: string): AgentEvent[] {
  const callId = `c${++nextCall}`;
  return [
    { kind: 'tool', phase: 'started', tool, target, callId },
    { kind: 'tool', phase: 'finished', tool, callId, ok, ...(detail ? { detail } : {}) },
  ];
}

function codesOf(...calls: AgentEvent[][]): string[] {
  const trail = calls.flat().reduce((t, e) => foldWorkTrail(t, e, notArtifact), EMPTY_TRAIL);
  return claimIssues(trail).map((i) => `${i.severity} ${i.code}`);
}

describe('claims against the stream: the trail of edits and tests behind a PASS', () => {
  it('an edit after the last test-like command is a warning; tests run after the last edit are not', () => {
    assert.deepEqual(codesOf(call('Edit', 'src/a.ts'), call('Bash', 'npm test'), call('Edit', 'src/b.ts')), [
      'warning result.edit-after-tests',
    ]);
    assert.deepEqual(codesOf(call('Edit', 'src/a.ts'), call('Bash', 'npm test')), []);
    // No test-like command at all: nothing is claimed about tests.
    assert.deepEqual(codesOf(call('Edit', 'src/a.ts'), call('Bash', 'ls src')), []);
  });

  it('writing the result artifact (or anything under .baton/) is not an edit after the tests', () => {
    assert.deepEqual(
      codesOf(call('Bash', 'npx mocha'), call('Write', '/w/.baton/runs/r/artifacts/D-T1-coder-001.md')),
      [],
    );
  });

  it('a failed test-like command is settled by any later successful one; a failed edit by the same edit done again', () => {
    assert.deepEqual(codesOf(call('Bash', 'npm test', false, 'exit 1'), call('Bash', 'npx mocha test/a.test.ts')), []);
    assert.deepEqual(codesOf(call('Edit', 'src/a.ts', false, 'old_string not found'), call('Edit', 'src/a.ts')), []);
    const left = codesOf(call('Bash', 'npm test', false, 'exit 1'), call('Edit', 'src/b.ts'), call('Bash', 'ls'));
    assert.deepEqual(left, ['warning result.edit-after-tests', 'warning result.failure-not-retried']);
    // Another file's successful edit does not settle a failed one.
    assert.deepEqual(codesOf(call('Edit', 'src/a.ts', false), call('Edit', 'src/b.ts')), [
      'warning result.failure-not-retried',
    ]);
    // A failed read or search is exploring, not a claim.
    assert.deepEqual(codesOf(call('Read', 'src/missing.ts', false), call('Bash', 'grep -r foo', false)), []);
  });

  it('the warning names the failed step and why, on the status line when its range is known', () => {
    const trail = call('Bash', 'npm test', false, 'exit 1\nmore').reduce(
      (t, e) => foldWorkTrail(t, e, notArtifact),
      EMPTY_TRAIL,
    );
    const range = { start: { line: 6, column: 1 }, end: { line: 6, column: 13 } };
    const [warning] = claimIssues(trail, range);
    assert.equal(warning!.message, 'PASS, but Bash: npm test failed (exit 1) and nothing did it again with success.');
    assert.deepEqual(warning!.range, range);
  });

  it('knows the usual test, type-check and lint entry points', () => {
    for (const command of [
      'npm test',
      'npm run test -- --grep x',
      'pnpm typecheck',
      'npx vitest run',
      'cd pkg && go test ./...',
      'cargo test',
      'python -m pytest -q',
      'make check',
      'npx tsc --noEmit',
    ])
      assert.ok(isTestCommand(command), command);
    for (const command of ['ls', 'cat test.txt', 'git status', "printf 'baton-shell-%s\\n' ok", 'npm install'])
      assert.ok(!isTestCommand(command), command);
  });

  // The four CLIs' real streams (test/fixtures/agents): in read-only mode the CLI refused the write, which nothing
  // retried — Codex's stream does not show refused calls at all, and opencode's names the tool without its target;
  // the write-and-shell run ran no test and claims nothing.
  const FOLDER: Record<AgentKind, string> = {
    'claude-code': 'claude',
    codex: 'codex',
    gemini: 'gemini',
    opencode: 'opencode',
  };
  const REFUSED: Record<AgentKind, RegExp | undefined> = {
    'claude-code': /^PASS, but Write notes\/hello\.txt failed/,
    codex: undefined,
    gemini: /^PASS, but write_file notes\/hello\.txt failed/,
    opencode: /^PASS, but write failed \(Model tried to call unavailable tool 'write'/,
  };
  for (const kind of AGENT_KINDS)
    it(`${kind}: its real streams — a refused write left unretried is seen; an ordinary run claims nothing`, () => {
      const read = (name: string) =>
        readWorkTrail(
          kind,
          readFileSync(join(__dirname, '../../fixtures/agents', FOLDER[kind], `${name}.jsonl`), 'utf8').split('\n'),
          { cwd: '/tmp/baton-agent/repo', isArtifact: notArtifact },
        );
      const refused = claimIssues(read('read-only'));
      const expected = REFUSED[kind];
      if (expected) {
        assert.equal(refused.length, 1, JSON.stringify(refused));
        assert.equal(refused[0]!.code, 'result.failure-not-retried');
        assert.match(refused[0]!.message, expected);
      } else assert.deepEqual(refused, []);
      assert.deepEqual(claimIssues(read('write-and-shell')), []);
    });
});
