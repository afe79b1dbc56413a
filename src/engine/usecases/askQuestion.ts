import type { AttemptCredential } from '../domain/attemptCredential';
import { BatonError } from '../domain/errors';
import { validQuestion } from '../domain/question';
import type { Gate, WorkerRuntime } from '../domain/types';
import { answerQuestion, openQuestion, withdrawQuestion } from '../operations/gates/questionGate';
import { findGate } from '../queries/runView';
import { authenticateAttempt } from './attemptAccess';
import type { EngineContext } from './context';

/** The answer a person gave to an attempt's question. */
export interface QuestionAnswer {
  gateId: string;
  answer: string;
  by: string;
  answeredAt: number;
  /** How long the question waited for it. */
  waitedMs: number;
}

export interface AwaitAnswerOptions {
  /** A heartbeat of the attempt with its progress note (Engine.attemptProgress): the wait keeps the attempt alive. */
  beat(progress: string): Promise<WorkerRuntime>;
  /** Told after each heartbeat: how long the question has waited so far (the MCP tool's progress notifications). */
  onWaiting?(waitedMs: number, gateId: string): void | Promise<void>;
  /** The caller gave up (its MCP request was cancelled, its process is told to end): the question is withdrawn. */
  signal?: AbortSignal;
  /** How often the store is looked at for the answer. */
  pollMs?: number;
}

/** How often a waiting question beats for its attempt at most; less often than a third of its lease never. */
const BEAT_EVERY_MS = 10_000;
const POLL_MS = 500;

/**
 * Opens a question gate for the attempt a credential is bound to — refused like every tool of
 * the attempt (attemptAccessRefusal) and for a question outside its limits (`question.invalid`).
 */
export async function askQuestion(
  ctx: EngineContext,
  credential: AttemptCredential,
  input: { question: string; choices?: readonly string[] },
): Promise<Gate> {
  const question = validQuestion(input.question, input.choices);
  await authenticateAttempt(ctx, credential);
  return ctx.store.transact((tx) =>
    openQuestion(tx, { runId: credential.runId, delegationId: credential.delegationId, question }, ctx.clock.now()),
  );
}

/**
 * Waits for a person's answer to the attempt's question, beating for the attempt meanwhile (a
 * heartbeat with "waiting for an answer at G-n" at least every third of its lease), and returns
 * it. The question's end without an answer — its attempt ended (stopped, timed out, its lease
 * lost: the gate was closed with it, transitionDelegation) — is `question.closed`; a heartbeat
 * refused (the lease ran out) or the caller giving up withdraws the question and rethrows.
 */
export async function awaitAnswer(
  ctx: EngineContext,
  credential: AttemptCredential,
  gateId: string,
  options: AwaitAnswerOptions,
): Promise<QuestionAnswer> {
  const { runtime } = await authenticateAttempt(ctx, credential);
  const beatEvery = Math.max(250, Math.min(BEAT_EVERY_MS, Math.floor(runtime.leaseMs / 3)));
  const progress = `waiting for an answer at ${gateId}`;
  const now = (): number => ctx.clock.now();
  let lastBeat = -Infinity;
  try {
    for (;;) {
      const gate = await ctx.store.read((r) => findGate(r, gateId));
      if (!gate || gate.kind !== 'question' || gate.delegationId !== credential.delegationId)
        throw new BatonError('gate.unknown', `${credential.delegationId} asked no question ${gateId}.`);
      if (gate.status === 'answered')
        return {
          gateId,
          answer: gate.note ?? '',
          by: gate.decidedBy ?? 'someone',
          answeredAt: gate.decidedAt ?? ctx.clock.now(),
          waitedMs: (gate.decidedAt ?? ctx.clock.now()) - gate.openedAt,
        };
      if (gate.status !== 'open')
        throw new BatonError(
          'question.closed',
          `${gateId} was closed without an answer (${gate.note ?? gate.status}); nobody will answer it.`,
        );
      if (ctx.clock.monotonic() - lastBeat >= beatEvery) {
        await options.beat(progress);
        lastBeat = ctx.clock.monotonic();
        await options.onWaiting?.(ctx.clock.now() - gate.openedAt, gateId);
      }
      await pause(ctx, options.pollMs ?? POLL_MS, options.signal);
    }
  } catch (err) {
    const why = options.signal?.aborted ? 'the asking call was cancelled' : (err as Error).message;
    await ctx.store
      .transact((tx) =>
        withdrawQuestion(tx, { gateId, delegationId: credential.delegationId, note: `withdrawn: ${why}` }, now()),
      )
      .catch(() => undefined);
    throw err;
  }
}

/** A person answers a question gate (`baton answer`, the editor): the first answer wins (answerQuestion). */
export function answerGate(ctx: EngineContext, input: { gateId: string; answer: string; by: string }): Promise<Gate> {
  return ctx.store.transact((tx) => answerQuestion(tx, input, ctx.clock.now()));
}

function pause(ctx: EngineContext, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(new BatonError('question.closed', 'The asking call was cancelled.'));
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      cancel();
      reject(new BatonError('question.closed', 'The asking call was cancelled.'));
    };
    const cancel = ctx.clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
