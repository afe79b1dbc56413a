import assert from 'node:assert/strict';
import fc from 'fast-check';
import { hasErrors } from '../../../src/engine/domain/issue';
import type { ParsedPlan } from '../../../src/engine/domain/types';
import { parsePlan, TASK_ID_PATTERN } from '../../../src/engine/domain/plan/parsePlan';
import { assertRangeInBounds, mutatedText, textAt } from './textMutations';

const PLAN_CODES = new Set([
  'plan.empty',
  'plan.yaml-syntax',
  'plan.not-a-mapping',
  'plan.missing-id',
  'plan.invalid-id',
  'plan.duplicate-id',
  'plan.unknown-dependency',
  'plan.dependency-cycle',
  'plan.invalid-field',
  'plan.unknown-field',
  'plan.unclosed-block',
]);

const VALID_PLAN = [
  '# Notes',
  '',
  '```baton-task',
  'id: T1',
  'title: Store',
  'agent: coder',
  'files: [src/notes/**]',
  '```',
  'Write the store.',
  '',
  '```baton-task',
  'id: T2',
  'depends: T1',
  'risk: [database]',
  'verify:',
  '  - [node, -e, "process.exit(0)"]',
  '  - node --test',
  '```',
  'Wire it up.',
  '',
  '~~~baton-task',
  'id: T3',
  'depends: [T1, T2]',
  'agent: reviewer',
  '~~~',
  'Review.',
  '',
].join('\n');

/** The invariants every parse must keep, whatever the input. */
function assertWellFormed(text: string, plan: ParsedPlan): void {
  for (const i of plan.issues) {
    assert.ok(PLAN_CODES.has(i.code), `unknown code ${i.code}`);
    assert.ok(i.severity === 'error' || i.severity === 'warning');
    assert.equal(typeof i.message, 'string');
    assertRangeInBounds(text, i.range, i.code);
    if (i.code === 'plan.unknown-dependency' && i.range) {
      // The range covers the dependency as written (quotes aside, unless escapes change it).
      const written = textAt(text, i.range).replace(/^(["'])([\s\S]*)\1$/, '$2');
      // eslint-disable-next-line no-control-regex
      if (!/[\\\x00-\x1f]/.test(written + i.message))
        assert.ok(i.message.includes(`"${written}"`), `${i.message} does not name ${JSON.stringify(written)}`);
    }
  }
  const ids = new Set<string>();
  for (const t of plan.tasks) {
    assert.match(t.id, TASK_ID_PATTERN);
    assert.match(t.agent, TASK_ID_PATTERN);
    assert.ok(!ids.has(t.id), `duplicate task ${t.id} returned`);
    ids.add(t.id);
    assertRangeInBounds(text, t.range, `task ${t.id}`);
    assert.match(
      textAt(text, t.range),
      /^(`{3,}|~{3,})[ \t\v\f]*baton-task[\s\S]*(`{3,}|~{3,})$/,
      `task ${t.id}: the range is not the fenced block`,
    );
    assert.ok(t.verify.every((argv) => argv.length > 0 && argv.every((a) => typeof a === 'string')));
    assert.ok([...t.depends, ...t.risk, ...t.files].every((s) => typeof s === 'string' && s.length > 0));
  }
  if (hasErrors(plan.issues)) return;
  // No errors: a runnable model — at least one task, known dependencies, no cycle.
  assert.ok(plan.tasks.length > 0, 'no errors but no tasks');
  for (const t of plan.tasks)
    for (const d of t.depends) assert.ok(ids.has(d), `no errors but ${t.id} depends on unknown ${d}`);
  const done = new Set<string>();
  let progress = true;
  while (progress) {
    progress = false;
    for (const t of plan.tasks) {
      if (!done.has(t.id) && t.depends.every((d) => done.has(d))) {
        done.add(t.id);
        progress = true;
      }
    }
  }
  assert.equal(done.size, plan.tasks.length, 'no errors but the dependencies have a cycle');
}

function check(text: string): void {
  let plan: ParsedPlan | undefined;
  assert.doesNotThrow(() => {
    plan = parsePlan(text);
  });
  assertWellFormed(text, plan as ParsedPlan);
}

describe('parsePlan (properties)', () => {
  it('the valid seed plan parses without issues', () => {
    const plan = parsePlan(VALID_PLAN);
    assert.deepEqual(plan.issues, []);
    assert.equal(plan.tasks.length, 3);
  });

  it('never throws on random strings and keeps every range inside the text', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), check), { numRuns: 200 });
  });

  it('never throws on random text made of markdown and YAML pieces', () => {
    const piece = fc.constantFrom(
      '```baton-task\n',
      '```\n',
      '~~~baton-task\n',
      '~~~\n',
      'id: T1\n',
      'id: T2\n',
      'depends: T1\n',
      'depends: [T2, T1]\n',
      'verify: [[a]]\n',
      'x\n',
      '\n',
      '- a\n',
      ': :\n',
      '  ',
      '"',
      '[',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { maxLength: 30 }).map((p) => p.join('')),
        check,
      ),
      { numRuns: 300 },
    );
  });

  it('never throws on random edits of a valid plan, and returns either issues in range or a valid model', () => {
    fc.assert(fc.property(mutatedText(VALID_PLAN), check), { numRuns: 400 });
  });
});
