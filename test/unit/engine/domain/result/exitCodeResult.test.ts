import assert from 'node:assert/strict';
import { exitCodeResultText } from '../../../../../src/engine/domain/result/exitCodeResult';
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
});
