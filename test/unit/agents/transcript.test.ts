import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { renderTranscript, TranscriptRenderer } from '../../../src/engine/domain/agents/transcript';

const FIXTURES = resolve(__dirname, '../../fixtures/agents');
const lines = (cli: string, name: string): string[] =>
  readFileSync(resolve(FIXTURES, cli, `${name}.jsonl`), 'utf8').split('\n');

describe('agent transcripts: a real stream rendered for a person', () => {
  it('Claude Code: session, turns, each tool call with its target, the final message in full, usage; no JSON left', () => {
    const text = renderTranscript('claude-code', lines('claude', 'write-and-shell'));
    assert.match(text, /^── claude-code session [0-9a-f-]{36}/);
    assert.match(text, /▸ turn 1\n {2}→ Write notes\/hello\.txt/);
    assert.match(text, /→ Bash: printf 'baton-shell-%s\\n' ok/);
    assert.match(text, /^ {2}```baton-result$/m, 'the result block reads as it was written');
    assert.match(text, /■ finished · 3906 tokens in, 126 out, \$0\.0181\n$/);
    assert.doesNotMatch(text, /"type":/);
  });

  it('Codex: targets inside the worker folder shown relative to it, tokens from its per-turn usage', () => {
    const text = renderTranscript('codex', lines('codex', 'write-and-shell'), '/tmp/baton-agent/repo');
    assert.match(text, /→ apply_patch notes\/hello\.txt/);
    assert.match(text, /■ finished · 3906 tokens in, 126 out\n$/);
  });

  it('a refused tool call says so, and lines that are not events are kept as printed', () => {
    const refused = renderTranscript('gemini', lines('gemini', 'read-only'));
    assert.match(refused, /✗ \S+ refused or failed/);
    const mixed = renderTranscript('claude-code', [
      'Warning: something on stderr',
      ...lines('claude', 'write-and-shell'),
    ]);
    assert.match(mixed, /^│ Warning: something on stderr$/m);
  });

  it('renders a log fed in arbitrary chunks (Show Output follows a running agent) exactly as the whole log', () => {
    for (const [cli, kind] of [
      ['claude', 'claude-code'],
      ['codex', 'codex'],
      ['gemini', 'gemini'],
      ['opencode', 'opencode'],
    ] as const) {
      const raw = readFileSync(resolve(FIXTURES, cli, 'write-and-shell.jsonl'), 'utf8');
      const renderer = new TranscriptRenderer(kind);
      let shown = '';
      for (let at = 0; at < raw.length; at += 37) shown += renderer.write(raw.slice(at, at + 37));
      shown += renderer.end();
      assert.equal(shown, renderTranscript(kind, raw.split('\n')), kind);
      assert.match(shown, /■ finished/);
    }
  });
});
