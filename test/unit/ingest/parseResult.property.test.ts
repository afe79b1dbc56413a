import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hasErrors } from '../../../src/engine/domain/issue';
import { RESULT_STATUSES } from '../../../src/engine/domain/types';
import { parseResultArtifact } from '../../../src/engine/domain/result/parseResult';
import type { ExpectedIdentity, ParsedResultArtifact } from '../../../src/engine/domain/result/parseResult';
import { assertRangeInBounds, mutatedText, textAt } from '../plan/textMutations';

const RESULT_CODES = new Set([
  'result.no-block',
  'result.multiple-blocks',
  'result.yaml-syntax',
  'result.missing-field',
  'result.unknown-contract',
  'result.contract-mismatch',
  'result.invalid-status',
  'result.invalid-field',
  'result.unknown-field',
  'result.unclosed-block',
  'result.task-mismatch',
  'result.agent-mismatch',
]);

const VALID_BATON = [
  '# Result for T1',
  '',
  'Implemented the notes store; tests pass.',
  '',
  '```baton-result',
  'contract: baton-result-v1',
  'task: T1',
  'agent: coder',
  'status: PASS',
  'summary: |',
  '  Added the store.',
  'artifacts:',
  '  - src/notes/store.ts',
  '  - "docs/notes.md"',
  '```',
  '',
].join('\n');

const VALID_SDD = [
  '```sdd-result',
  'contract: sdd-result-v1',
  'version: 1',
  'agent: coder',
  'task: T1',
  'status: FAIL',
  'artifacts: []',
  '```',
  '',
].join('\n');

function assertWellFormed(text: string, parsed: ParsedResultArtifact, expected: ExpectedIdentity | undefined): void {
  for (const i of parsed.issues) {
    assert.ok(RESULT_CODES.has(i.code), `unknown code ${i.code}`);
    assert.ok(i.severity === 'error' || i.severity === 'warning');
    assertRangeInBounds(text, i.range, i.code);
  }
  const { result } = parsed;
  if (!result) {
    // No model without an error that says why.
    assert.ok(hasErrors(parsed.issues), `no result but no error: ${JSON.stringify(parsed.issues)}`);
    return;
  }
  const contractErrors = parsed.issues.filter(
    (i) => i.severity === 'error' && i.code !== 'result.task-mismatch' && i.code !== 'result.agent-mismatch',
  );
  assert.deepEqual(contractErrors, [], 'a result came back together with contract errors');
  assert.ok(result.contract === 'baton-result-v1' || result.contract === 'sdd-result-v1');
  assert.ok((RESULT_STATUSES as readonly string[]).includes(result.status));
  assert.ok(result.task.length > 0 && result.agent.length > 0);
  assert.equal(result.artifactRanges.length, result.artifacts.length);
  assert.ok(result.artifacts.every((a) => typeof a === 'string' && a.length > 0));
  assertRangeInBounds(text, result.blockRange, 'blockRange');
  for (const [field, range] of Object.entries(result.fieldRanges)) assertRangeInBounds(text, range, field);
  result.artifactRanges.forEach((range, i) => assertRangeInBounds(text, range, `artifact ${i}`));
  // Ranges cover what they name: the status value as written, the whole block from fence to fence.
  const status = textAt(text, result.fieldRanges.status ?? result.blockRange);
  if (!status.includes('\\')) assert.equal(status.replace(/^(["'])([\s\S]*)\1$/, '$2'), result.status);
  assert.match(textAt(text, result.blockRange), /^(`{3,}|~{3,})[ \t\v\f]*(baton|sdd)-result[\s\S]*(`{3,}|~{3,})$/);
  if (expected) {
    const mismatches = parsed.issues.filter(
      (i) => i.code === 'result.task-mismatch' || i.code === 'result.agent-mismatch',
    ).length;
    assert.equal(mismatches, Number(result.task !== expected.taskId) + Number(result.agent !== expected.agent));
  }
}

function check(text: string, expected?: ExpectedIdentity): void {
  let parsed: ParsedResultArtifact | undefined;
  assert.doesNotThrow(() => {
    parsed = parseResultArtifact(text, expected);
  });
  assertWellFormed(text, parsed as ParsedResultArtifact, expected);
}

const expectedIdentity = fc.option(
  fc.record({ taskId: fc.constantFrom('T1', 'T2'), agent: fc.constantFrom('coder', 'reviewer') }),
  { nil: undefined },
);

describe('parseResultArtifact (properties)', () => {
  it('the valid seed artifacts parse without issues', () => {
    for (const text of [VALID_BATON, VALID_SDD]) {
      const parsed = parseResultArtifact(text, { taskId: 'T1', agent: 'coder' });
      assert.deepEqual(parsed.issues, []);
      assert.ok(parsed.result);
    }
  });

  it('never throws on random strings and keeps every range inside the text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), expectedIdentity, (text, expected) =>
        check(text, expected),
      ),
      { numRuns: 200 },
    );
  });

  it('never throws on random text made of result-block pieces', () => {
    const piece = fc.constantFrom(
      '```baton-result\n',
      '```sdd-result\n',
      '```\n',
      'contract: baton-result-v1\n',
      'contract: sdd-result-v1\n',
      'task: T1\n',
      'agent: coder\n',
      'status: PASS\n',
      'status: DONE\n',
      'summary: s\n',
      'version: 1\n',
      'artifacts:\n',
      '  - a.txt\n',
      'artifacts: []\n',
      '\n',
      ': [\n',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 25 }).map((p) => p.join('')),
        expectedIdentity,
        (text, expected) => check(text, expected),
      ),
      { numRuns: 300 },
    );
  });

  it('never throws on random edits of a valid artifact, and returns either issues in range or a valid result', () => {
    fc.assert(
      fc.property(fc.oneof(mutatedText(VALID_BATON), mutatedText(VALID_SDD)), expectedIdentity, (text, expected) =>
        check(text, expected),
      ),
      { numRuns: 400 },
    );
  });
});
