import assert from 'node:assert/strict';
import { exitCodeResultText, lastOutputLine } from '../../../../../src/engine/domain/result/exitCodeResult';
import { parseResultArtifact } from '../../../../../src/engine/domain/result/parseResult';

const attempt = { taskId: 'T1', agent: 'coder' };

describe('exitCodeResultText: the result Baton writes for a plain command worker', () => {
  it('exit 0 is PASS with the changed files as artifacts, a result the contract accepts', () => {
    const text = exitCodeResultText(attempt, 'make', { exitCode: 0, signal: null }, { paths: ['out/a.txt', 'b c.md'] });
    assert.equal(
      text,
      [
        'make exited with code 0.',
        '',
        '```baton-result',
        'contract: baton-result-v1',
        'task: T1',
        'agent: coder',
        'status: PASS',
        'summary: "make exited with code 0"',
        'artifacts:\n  - "out/a.txt"\n  - "b c.md"',
        '```',
        '',
      ].join('\n'),
    );
    const parsed = parseResultArtifact(text);
    assert.deepEqual(parsed.issues, []);
    assert.deepEqual(parsed.result?.artifacts, ['out/a.txt', 'b c.md']);
  });

  it('anything else is FAIL with no artifacts; a signal and a note are told in the summary', () => {
    const killed = exitCodeResultText(attempt, 'make', { exitCode: null, signal: 'SIGKILL' }, { paths: [] });
    assert.match(killed, /^make was killed by SIGKILL\.\n/);
    assert.match(killed, /status: FAIL\nsummary: "make was killed by SIGKILL"\nartifacts: \[\]/);
    const noted = exitCodeResultText(attempt, 'make', { exitCode: 0, signal: null }, { paths: [], note: 'not known' });
    assert.match(noted, /summary: "make exited with code 0; not known"/);
  });

  it('a failure carries the last line the command printed; a pass does not', () => {
    const exit1 = { exitCode: 1, signal: null };
    const failed = exitCodeResultText(attempt, 'make', exit1, { paths: [] }, 'Error: no rule to make target');
    assert.match(failed, /summary: "make exited with code 1: Error: no rule to make target"/);
    assert.deepEqual(parseResultArtifact(failed).issues, []);
    const passed = exitCodeResultText(attempt, 'make', { exitCode: 0, signal: null }, { paths: [] }, 'done');
    assert.match(passed, /summary: "make exited with code 0"/);
  });
});

describe('lastOutputLine: what a failed command said last', () => {
  it('is the last line with something on it, without colours or control characters', () => {
    assert.equal(lastOutputLine('building\n\u001b[31mError: boom\u001b[0m\n\n  \n'), 'Error: boom');
    assert.equal(lastOutputLine('10%\r50%\r100%\r\n'), '100%');
    assert.equal(lastOutputLine('a\u0007\u0000b\r\n'), 'ab');
  });

  it('is cut at 200 characters, and nothing when nothing was printed', () => {
    assert.equal(lastOutputLine(`${'x'.repeat(500)}\n`), `${'x'.repeat(199)}…`);
    assert.equal(lastOutputLine('\n \n'), undefined);
    assert.equal(lastOutputLine(''), undefined);
  });
});
