// A question an attempt's agent asks a person (`baton_ask`, `baton ask`; docs/agents.md): what a
// question may say, whether an answer is taken, and how long the wait for answers pushes the
// attempt's task timeout. Pure: each is tested with plain values.
import { BatonError } from './errors';
import type { Gate } from './types';

export const QUESTION_LIMITS = {
  /** Characters of the question itself. */
  text: 2000,
  /** Choices offered, when the agent offers any. */
  choices: 10,
  /** Characters of one choice. */
  choice: 100,
  /** Characters of a free answer. */
  answer: 2000,
} as const;

/** A question as its gate holds it (`details`). */
export interface Question {
  text: string;
  /** The only answers taken, when given (≤ 10, each ≤ 100 characters, distinct). */
  choices?: string[];
}

/**
 * The question as asked, trimmed, or `question.invalid` naming the field: the CLI's `baton ask`
 * and the engine check the same limits the MCP tool's schema states, since a worker may reach
 * the engine without the schema.
 */
export function validQuestion(text: string, choices: readonly string[] = []): Question {
  const bad = (field: string, why: string): BatonError =>
    new BatonError('question.invalid', `${field}: ${why}`, [], { field });
  const asked = text.trim();
  if (asked.length === 0) throw bad('question', 'a question has some text');
  if (asked.length > QUESTION_LIMITS.text)
    throw bad('question', `a question is at most ${QUESTION_LIMITS.text} characters (this one has ${asked.length})`);
  if (choices.length > QUESTION_LIMITS.choices)
    throw bad('choices', `at most ${QUESTION_LIMITS.choices} choices (${choices.length} given)`);
  const offered = choices.map((c) => c.trim());
  offered.forEach((choice, i) => {
    if (choice.length === 0) throw bad(`choices[${i}]`, 'a choice has some text');
    if (choice.length > QUESTION_LIMITS.choice)
      throw bad(`choices[${i}]`, `a choice is at most ${QUESTION_LIMITS.choice} characters`);
    if (/[\n\r]/.test(choice)) throw bad(`choices[${i}]`, 'a choice is one line');
    if (offered.indexOf(choice) !== i) throw bad(`choices[${i}]`, `"${choice}" is offered twice`);
  });
  return offered.length > 0 ? { text: asked, choices: offered } : { text: asked };
}

/** The question a question gate carries (its details), or undefined for any other gate. */
export function questionOf(gate: Pick<Gate, 'kind' | 'details'>): Question | undefined {
  if (gate.kind !== 'question') return undefined;
  const text = typeof gate.details.question === 'string' ? gate.details.question : '';
  const choices = Array.isArray(gate.details.choices)
    ? gate.details.choices.filter((c): c is string => typeof c === 'string')
    : [];
  return choices.length > 0 ? { text, choices } : { text };
}

/** What a question gate says in lists (`baton gates`, the Gates view): who asks, what, and the choices. */
export function questionGateReason(delegationId: string, question: Question): string {
  const choices = question.choices ? ` Choices: ${question.choices.join(' | ')}.` : '';
  return `${delegationId} asks: ${question.text}${choices} Answer with baton answer <gate> "…".`;
}

/**
 * Whether a person's answer is taken (`baton answer`, the editor): only on an open question gate
 * — the first answer wins, a second one (or one from a stale view) is refused naming the first —
 * and, when the question offers choices, only one of them (matched exactly after trimming).
 * Returns the answer as it is recorded.
 */
export function acceptAnswer(
  gate: Pick<Gate, 'id' | 'kind' | 'status' | 'details' | 'decidedBy' | 'decidedAt' | 'note'>,
  answer: string,
): string {
  const question = questionOf(gate);
  if (!question)
    throw new BatonError(
      'gate.not-question',
      `Gate ${gate.id} is a ${gate.kind} gate, not a question: decide it with baton approve ${gate.id} or baton reject ${gate.id}.`,
    );
  if (gate.status !== 'open') {
    const when = gate.decidedAt ? ` at ${new Date(gate.decidedAt).toISOString()}` : '';
    throw new BatonError(
      'gate.already-decided',
      gate.status === 'answered'
        ? `Gate ${gate.id} was already answered by ${gate.decidedBy ?? 'someone'}${when}: "${gate.note ?? ''}". The first answer stands.`
        : `Gate ${gate.id} is closed (${gate.note ?? gate.status}); nobody waits for an answer any more.`,
    );
  }
  const given = answer.trim();
  if (given.length === 0)
    throw new BatonError('question.invalid', 'answer: an answer has some text', [], { field: 'answer' });
  if (given.length > QUESTION_LIMITS.answer)
    throw new BatonError('question.invalid', `answer: an answer is at most ${QUESTION_LIMITS.answer} characters`, [], {
      field: 'answer',
    });
  if (question.choices && !question.choices.includes(given))
    throw new BatonError(
      'question.not-a-choice',
      `Gate ${gate.id} takes one of its choices: ${question.choices.map((c) => `"${c}"`).join(', ')}; "${given}" is not one of them.`,
    );
  return given;
}

/** A question gate's open time: from its opening to its answer or closing (or still open). */
export interface QuestionWindow {
  openedAt: number;
  decidedAt?: number;
}

/** What the task timeout of an attempt says at `now` (attemptSupervisor). */
export type TimeoutCheck = { due: true; waitedMs: number } | { due: false; recheckInMs: number; waitedMs: number };

/** While a question is open the deadline moves with the clock: looked at again no more often than this. */
export const QUESTION_RECHECK_MS = 1000;

/**
 * The task timeout, not counting the time the attempt's questions waited for a person: the
 * deadline is its start plus the timeout plus every question's open time (overlapping questions
 * counted once; one still open counts up to `now`). Due at or after that deadline; else when to
 * look again — at the deadline, or, while a question is open (the deadline then moves on with
 * the clock), after at least QUESTION_RECHECK_MS.
 */
export function checkTaskTimeout(input: {
  startedAt: number;
  timeoutMs: number;
  questions: readonly QuestionWindow[];
  now: number;
}): TimeoutCheck {
  const { startedAt, timeoutMs, now } = input;
  const spans = input.questions
    .map((q) => ({ from: Math.max(q.openedAt, startedAt), to: Math.min(q.decidedAt ?? now, now) }))
    .filter((s) => s.to > s.from)
    .sort((a, b) => a.from - b.from);
  let waitedMs = 0;
  let reach = -Infinity;
  for (const span of spans) {
    const from = Math.max(span.from, reach);
    if (span.to > from) waitedMs += span.to - from;
    reach = Math.max(reach, span.to);
  }
  const remaining = startedAt + timeoutMs + waitedMs - now;
  if (remaining <= 0) return { due: true, waitedMs };
  const asking = input.questions.some((q) => q.decidedAt === undefined);
  return { due: false, recheckInMs: asking ? Math.max(remaining, QUESTION_RECHECK_MS) : remaining, waitedMs };
}
