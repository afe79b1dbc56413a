import { printJson, withEngine, type CommandContext } from '../context';
import { attemptOfThisWorker } from './attemptOfThisWorker';

/**
 * `baton ask "question" [--choice a]…`: what `baton_ask` is to an agent, for a plain process
 * worker — opens a question gate for its own attempt (the BATON_* environment), waits for a
 * person's answer and prints it on stdout. Refused like `baton check-result`; a question closed
 * without an answer (its attempt ended) is `question.closed`, exit 3. Interrupted, it withdraws
 * the question.
 */
export async function ask(ctx: CommandContext, question: string, options: { choice?: string[] }): Promise<number> {
  const credential = attemptOfThisWorker(ctx);
  const interrupted = new AbortController();
  const giveUp = (): void => interrupted.abort();
  process.once('SIGINT', giveUp);
  process.once('SIGTERM', giveUp);
  try {
    return await withEngine(ctx, async (engine) => {
      const answered = await engine.askAndWait(
        credential,
        { question, ...(options.choice ? { choices: options.choice } : {}) },
        {
          signal: interrupted.signal,
          onOpened: (gate) => {
            if (!ctx.output.json)
              ctx.output.err(`baton: asked at ${gate.id}; waiting for an answer (baton answer ${gate.id} "…")`);
          },
        },
      );
      if (ctx.output.json) printJson(ctx, { answer: answered });
      else ctx.output.out(answered.answer);
      return 0;
    });
  } finally {
    process.removeListener('SIGINT', giveUp);
    process.removeListener('SIGTERM', giveUp);
  }
}
