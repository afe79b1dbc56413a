import assert from 'node:assert/strict';
import { BatonError } from '../../../../src/engine/domain/errors';
import {
  acceptAnswer,
  checkTaskTimeout,
  QUESTION_LIMITS,
  QUESTION_RECHECK_MS,
  validQuestion,
} from '../../../../src/engine/domain/question';
import type { Gate } from '../../../../src/engine/domain/types';

const question = (over: Partial<Gate> = {}): Gate => ({
  id: 'G-4',
  runId: 'R-1',
  taskId: 'T1',
  delegationId: 'D-T1-coder-001',
  kind: 'question',
  status: 'open',
  reason: 'D-T1-coder-001 asks: Which database?',
  details: { question: 'Which database?', choices: ['postgres', 'sqlite'] },
  openedAt: 10,
  ...over,
});

const refusedWith = (code: string, message?: RegExp) => (err: unknown) =>
  BatonError.is(err) && err.code === code && (!message || message.test(err.message));

describe('question: what an agent may ask, and which answer is taken', () => {
  it('a question is trimmed text within its limits, with at most ten distinct one-line choices', () => {
    assert.deepEqual(validQuestion('  Which database?  ', [' postgres ', 'sqlite']), {
      text: 'Which database?',
      choices: ['postgres', 'sqlite'],
    });
    assert.deepEqual(validQuestion('Go on?'), { text: 'Go on?' });
    assert.throws(() => validQuestion('   '), refusedWith('question.invalid', /^question: /));
    assert.throws(
      () => validQuestion('x'.repeat(QUESTION_LIMITS.text + 1)),
      refusedWith('question.invalid', /^question: /),
    );
    const eleven = Array.from({ length: 11 }, (_, i) => `c${i}`);
    assert.throws(() => validQuestion('q', eleven), refusedWith('question.invalid', /^choices: at most 10/));
    assert.throws(() => validQuestion('q', ['a', ' ']), refusedWith('question.invalid', /^choices\[1\]: /));
    assert.throws(() => validQuestion('q', ['a', 'a']), refusedWith('question.invalid', /offered twice/));
    assert.throws(() => validQuestion('q', ['a\nb']), refusedWith('question.invalid', /one line/));
    assert.throws(() => validQuestion('q', ['x'.repeat(101)]), refusedWith('question.invalid', /at most 100/));
  });

  it('an open question takes one of its choices (trimmed), and nothing else', () => {
    assert.equal(acceptAnswer(question(), ' sqlite '), 'sqlite');
    assert.throws(
      () => acceptAnswer(question(), 'mysql'),
      refusedWith('question.not-a-choice', /"postgres", "sqlite"; "mysql" is not one of them/),
    );
    assert.throws(() => acceptAnswer(question(), '  '), refusedWith('question.invalid', /^answer: /));
    assert.equal(acceptAnswer(question({ details: { question: 'Why?' } }), 'because'), 'because');
  });

  it('the first answer wins: a second one (or one from a stale view) is refused naming the first', () => {
    const answered = question({ status: 'answered', decidedBy: 'ann', decidedAt: 20, note: 'postgres' });
    assert.throws(
      () => acceptAnswer(answered, 'postgres'),
      refusedWith('gate.already-decided', /already answered by ann at .*: "postgres"\. The first answer stands/),
    );
    const closed = question({ status: 'rejected', decidedBy: 'baton', note: 'closed: D-T1-coder-001 ended (stopped)' });
    assert.throws(() => acceptAnswer(closed, 'sqlite'), refusedWith('gate.already-decided', /nobody waits/));
  });

  it('a gate that is not a question takes no answer: approve or reject it', () => {
    assert.throws(
      () => acceptAnswer(question({ kind: 'risk_approval', details: {} }), 'yes'),
      refusedWith('gate.not-question', /baton approve G-4 or baton reject G-4/),
    );
  });
});

describe('checkTaskTimeout: the task timeout does not count the time questions waited', () => {
  const base = { startedAt: 1_000, timeoutMs: 10_000 };

  it('without questions it is due at start + timeout, and says when to look otherwise', () => {
    assert.deepEqual(checkTaskTimeout({ ...base, questions: [], now: 11_000 }), { due: true, waitedMs: 0 });
    assert.deepEqual(checkTaskTimeout({ ...base, questions: [], now: 8_000 }), {
      due: false,
      recheckInMs: 3_000,
      waitedMs: 0,
    });
  });

  it('an answered question moves the deadline by its open time', () => {
    const questions = [{ openedAt: 3_000, decidedAt: 7_000 }];
    assert.deepEqual(checkTaskTimeout({ ...base, questions, now: 11_000 }), {
      due: false,
      recheckInMs: 4_000,
      waitedMs: 4_000,
    });
    assert.deepEqual(checkTaskTimeout({ ...base, questions, now: 15_000 }), { due: true, waitedMs: 4_000 });
  });

  it('an open question keeps the deadline moving: never due while it waits, looked at again no sooner than a second', () => {
    const questions = [{ openedAt: 10_500 }];
    const at = (now: number) => checkTaskTimeout({ ...base, questions, now });
    assert.deepEqual(at(11_000), { due: false, recheckInMs: QUESTION_RECHECK_MS, waitedMs: 500 });
    assert.deepEqual(at(500_000), { due: false, recheckInMs: QUESTION_RECHECK_MS, waitedMs: 489_500 });
    const early = checkTaskTimeout({ ...base, questions: [{ openedAt: 2_000 }], now: 11_000 });
    assert.deepEqual(early, { due: false, recheckInMs: 9_000, waitedMs: 9_000 });
  });

  it('overlapping questions count once, and time before the attempt started not at all', () => {
    const questions = [
      { openedAt: 500, decidedAt: 2_000 },
      { openedAt: 3_000, decidedAt: 6_000 },
      { openedAt: 5_000, decidedAt: 8_000 },
    ];
    assert.deepEqual(checkTaskTimeout({ ...base, questions, now: 17_000 }), { due: true, waitedMs: 6_000 });
    assert.equal(checkTaskTimeout({ ...base, questions, now: 16_999 }).due, false);
  });
});
