import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Issue, Range } from '../../../src/engine/domain/issue';
import { checkArtifactPaths } from '../../../src/engine/usecases/artifactPaths';
import { checkResultIdentity, parseResultArtifact } from '../../../src/engine/domain/result/parseResult';

function r(startLine: number, startColumn: number, endLine: number, endColumn: number): Range {
  return { start: { line: startLine, column: startColumn }, end: { line: endLine, column: endColumn } };
}

function md(...lines: string[]): string {
  return lines.join('\n') + '\n';
}

function codesAndRanges(issues: Issue[]): Array<[string, Range | undefined]> {
  return issues.map((i) => [i.code, i.range]);
}

const VALID = md(
  '# T1 result', //                           1
  '', //                                      2
  'Added the store.', //                      3
  '', //                                      4
  '```baton-result', //                       5
  'contract: baton-result-v1', //             6
  'task: T1', //                              7
  'agent: coder', //                          8
  'status: PASS', //                          9
  'summary: Added src/notes/store.ts.', //    10
  'artifacts:', //                            11
  '  - src/notes/store.ts', //                12
  '  - "docs/notes.md"', //                   13
  '```', //                                   14
);

describe('parseResultArtifact', () => {
  it('reads a valid baton-result block with the ranges of every field and artifact', () => {
    const { result, issues } = parseResultArtifact(VALID);
    assert.deepEqual(issues, []);
    assert.deepEqual(result, {
      contract: 'baton-result-v1',
      task: 'T1',
      agent: 'coder',
      status: 'PASS',
      summary: 'Added src/notes/store.ts.',
      artifacts: ['src/notes/store.ts', 'docs/notes.md'],
      blockRange: r(5, 1, 14, 4),
      fieldRanges: {
        contract: r(6, 11, 6, 26),
        task: r(7, 7, 7, 9),
        agent: r(8, 8, 8, 13),
        status: r(9, 9, 9, 13),
        summary: r(10, 10, 10, 35),
        artifacts: r(12, 3, 13, 20),
      },
      artifactRanges: [r(12, 5, 12, 23), r(13, 5, 13, 20)],
    });
  });

  it('reads a valid sdd-result block: version kept, summary empty', () => {
    const { result, issues } = parseResultArtifact(
      md(
        '~~~sdd-result',
        'contract: sdd-result-v1',
        'version: 1',
        'agent: reviewer',
        'task: T6',
        'status: BLOCKED',
        'artifacts: []',
        '~~~',
      ),
    );
    assert.deepEqual(issues, []);
    assert.equal(result?.contract, 'sdd-result-v1');
    assert.equal(result?.version, 1);
    assert.equal(result?.summary, '');
    assert.equal(result?.status, 'BLOCKED');
    assert.deepEqual(result?.artifacts, []);
    assert.equal(result?.fieldRanges.summary, undefined);
  });

  it('accepts an empty artifacts value and a multi-line summary', () => {
    const { result, issues } = parseResultArtifact(
      md(
        '```baton-result',
        'contract: baton-result-v1',
        'task: T1',
        'agent: coder',
        'status: FAIL',
        'summary: |',
        '  Tests fail:',
        '  two of them.',
        'artifacts:',
        '```',
      ),
    );
    assert.deepEqual(issues, []);
    assert.equal(result?.summary, 'Tests fail:\ntwo of them.');
    assert.deepEqual(result?.artifacts, []);
  });

  describe('issue codes and ranges', () => {
    it('result.no-block: no result block, with a near miss named', () => {
      assert.deepEqual(codesAndRanges(parseResultArtifact('Just prose.\nMore.').issues), [
        ['result.no-block', r(1, 1, 1, 12)],
      ]);
      const nearMiss = parseResultArtifact(md('text', '```result', 'status: PASS', '```'));
      assert.deepEqual(codesAndRanges(nearMiss.issues), [['result.no-block', r(2, 1, 2, 10)]]);
      assert.match(nearMiss.issues[0]?.message ?? '', /line 2.*"result"/);
      assert.equal(nearMiss.result, undefined);
    });

    it('result.multiple-blocks: ranged on the opening fence of the second block; no result', () => {
      const { result, issues } = parseResultArtifact(VALID + md('', '```sdd-result', 'contract: sdd-result-v1', '```'));
      assert.equal(result, undefined);
      assert.deepEqual(codesAndRanges(issues), [['result.multiple-blocks', r(16, 1, 16, 14)]]);
      assert.match(issues[0]?.message ?? '', /line 5.*line 16/);
    });

    it('result.unclosed-block: ranged on the opening fence', () => {
      const { result, issues } = parseResultArtifact(
        md('Done.', '````baton-result', 'contract: baton-result-v1', '```'),
      );
      assert.equal(result, undefined);
      assert.deepEqual(codesAndRanges(issues), [['result.unclosed-block', r(2, 1, 2, 17)]]);
    });

    it('result.yaml-syntax: ranged at the error inside the artifact', () => {
      const { result, issues } = parseResultArtifact(
        md('x', '```baton-result', 'contract: baton-result-v1', 'task: [T1', 'agent: coder', '```'),
      );
      assert.equal(result, undefined);
      // The parser notices the unclosed `[` where the next key starts.
      assert.deepEqual(codesAndRanges(issues), [['result.yaml-syntax', r(5, 1, 5, 2)]]);
    });

    it('result.missing-field: absent fields on the opening fence, an empty value on its key', () => {
      const { result, issues } = parseResultArtifact(
        md('```baton-result', 'contract: baton-result-v1', 'task: T1', 'status:', 'artifacts: []', '```'),
      );
      assert.equal(result, undefined);
      assert.deepEqual(
        issues.map((i) => [i.code, i.field, i.range]),
        [
          ['result.missing-field', 'agent', r(1, 1, 1, 16)],
          ['result.missing-field', 'summary', r(1, 1, 1, 16)],
          ['result.missing-field', 'status', r(4, 1, 4, 7)],
        ],
      );
    });

    it('result.missing-field: sdd-result requires version', () => {
      const { issues } = parseResultArtifact(
        md('```sdd-result', 'contract: sdd-result-v1', 'agent: a', 'task: T1', 'status: PASS', 'artifacts: []', '```'),
      );
      assert.deepEqual(
        issues.map((i) => [i.code, i.field]),
        [['result.missing-field', 'version']],
      );
    });

    it('result.unknown-contract: ranged on the contract value', () => {
      const { result, issues } = parseResultArtifact(VALID.replace('baton-result-v1', 'baton-result-v2'));
      assert.equal(result, undefined);
      assert.deepEqual(codesAndRanges(issues), [['result.unknown-contract', r(6, 11, 6, 26)]]);
    });

    it('result.contract-mismatch: an sdd contract in a baton-result block', () => {
      const { result, issues } = parseResultArtifact(VALID.replace('baton-result-v1', 'sdd-result-v1'));
      assert.equal(result, undefined);
      assert.deepEqual(codesAndRanges(issues), [['result.contract-mismatch', r(6, 11, 6, 24)]]);
      assert.match(issues[0]?.message ?? '', /sdd-result/);
    });

    it('result.invalid-status: ranged on the value; the recommendation lists PASS, FAIL and BLOCKED', () => {
      const { result, issues } = parseResultArtifact(VALID.replace('status: PASS', 'status: DONE'));
      assert.equal(result, undefined);
      assert.deepEqual(codesAndRanges(issues), [['result.invalid-status', r(9, 9, 9, 13)]]);
      assert.match(issues[0]?.recommendation ?? '', /PASS.*FAIL.*BLOCKED/);
    });

    it('result.invalid-status: a lower-case status gets a case hint', () => {
      const { issues } = parseResultArtifact(VALID.replace('status: PASS', 'status: pass'));
      assert.match(issues[0]?.recommendation ?? '', /case-sensitive: write PASS/);
    });

    it('result.invalid-field: wrong types, each ranged on the value or list entry', () => {
      const { result, issues } = parseResultArtifact(
        md(
          '```baton-result',
          'contract: baton-result-v1',
          'task: 7', //                       3
          'agent: [coder]', //                 4
          'status: PASS',
          'summary: {a: 1}', //                6
          'artifacts:',
          '  - ok.txt',
          '  - [nested]', //                   9
          '```',
        ),
      );
      assert.equal(result, undefined);
      assert.deepEqual(
        issues.map((i) => [i.code, i.field, i.range]),
        [
          ['result.invalid-field', 'task', r(3, 7, 3, 8)],
          ['result.invalid-field', 'agent', r(4, 8, 4, 15)],
          ['result.invalid-field', 'summary', r(6, 10, 6, 16)],
          ['result.invalid-field', 'artifacts', r(9, 5, 9, 13)],
        ],
      );
      assert.match(issues[0]?.recommendation ?? '', /task: "7"/);
    });

    it('result.invalid-field: artifacts that are not a list, and a block that is not a mapping', () => {
      const notList = parseResultArtifact(VALID.replace(/artifacts:\n.*\n.*\n/, 'artifacts: src/a.ts\n'));
      assert.deepEqual(codesAndRanges(notList.issues), [['result.invalid-field', r(11, 12, 11, 20)]]);
      const notMap = parseResultArtifact(md('```baton-result', '- PASS', '```'));
      assert.deepEqual(codesAndRanges(notMap.issues), [['result.invalid-field', r(2, 1, 2, 7)]]);
    });

    it('result.unknown-field: a warning on the key; the result is still returned', () => {
      const { result, issues } = parseResultArtifact(VALID.replace('agent: coder\n', 'agent: coder\nnotes: extra\n'));
      assert.ok(result);
      assert.deepEqual(codesAndRanges(issues), [['result.unknown-field', r(9, 1, 9, 6)]]);
      assert.equal(issues[0]?.severity, 'warning');
    });

    it('result.unknown-field: summary in an sdd-result block', () => {
      const { result, issues } = parseResultArtifact(
        md(
          '```sdd-result',
          'contract: sdd-result-v1',
          'version: "1.0"',
          'agent: a',
          'task: T1',
          'status: PASS',
          'summary: hi',
          'artifacts: []',
          '```',
        ),
      );
      assert.equal(result?.version, '1.0');
      assert.deepEqual(codesAndRanges(issues), [['result.unknown-field', r(7, 1, 7, 8)]]);
      assert.match(issues[0]?.message ?? '', /no summary/);
    });

    it('with the expected identity, reports a wrong task even when the status is invalid too', () => {
      const { result, issues } = parseResultArtifact(
        VALID.replace('task: T1', 'task: T9').replace('status: PASS', 'status: DONE'),
        { taskId: 'T1', agent: 'coder' },
      );
      assert.equal(result, undefined);
      assert.deepEqual(codesAndRanges(issues), [
        ['result.task-mismatch', r(7, 7, 7, 9)],
        ['result.invalid-status', r(9, 9, 9, 13)],
      ]);
    });

    it('with the expected identity, a valid block that names another agent keeps its result and gets the mismatch', () => {
      const { result, issues } = parseResultArtifact(VALID, { taskId: 'T1', agent: 'reviewer' });
      assert.ok(result);
      assert.deepEqual(codesAndRanges(issues), [['result.agent-mismatch', r(8, 8, 8, 13)]]);
    });
  });
});

describe('checkResultIdentity', () => {
  const parsed = parseResultArtifact(VALID).result;
  assert.ok(parsed);

  it('returns nothing when task and agent match', () => {
    assert.deepEqual(checkResultIdentity(parsed, { taskId: 'T1', agent: 'coder' }), []);
  });

  it('result.task-mismatch and result.agent-mismatch: ranged on the values, saying expected and found', () => {
    const issues = checkResultIdentity(parsed, { taskId: 'T2', agent: 'reviewer' });
    assert.deepEqual(codesAndRanges(issues), [
      ['result.task-mismatch', r(7, 7, 7, 9)],
      ['result.agent-mismatch', r(8, 8, 8, 13)],
    ]);
    assert.match(issues[0]?.message ?? '', /"T1".*"T2"/);
    assert.match(issues[1]?.message ?? '', /"coder".*"reviewer"/);
  });
});

describe('the demo results (examples/demo/results, workspace examples/demo)', () => {
  const demo = join(__dirname, '../../../examples/demo');

  it('T1.result.md is a valid PASS for T1 by coder whose artifacts exist in the workspace', () => {
    const { result, issues } = parseResultArtifact(readFileSync(join(demo, 'results/T1.result.md'), 'utf8'), {
      taskId: 'T1',
      agent: 'coder',
    });
    assert.deepEqual(issues, []);
    assert.equal(result?.status, 'PASS');
    assert.deepEqual(checkArtifactPaths(demo, result), []);
  });

  it('T2.invalid.result.md, ingested for T2, reports the wrong task and the DONE status at their lines', () => {
    const text = readFileSync(join(demo, 'results/T2.invalid.result.md'), 'utf8');
    const lines = text.split('\n');
    const { result, issues } = parseResultArtifact(text, { taskId: 'T2', agent: 'coder' });
    assert.equal(result, undefined);
    assert.deepEqual(
      issues.map((i) => [i.code, i.range?.start.line]),
      [
        ['result.task-mismatch', lines.indexOf('task: T3') + 1],
        ['result.invalid-status', lines.indexOf('status: DONE') + 1],
      ],
    );
  });
});
