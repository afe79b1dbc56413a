import { BatonError, type AttemptCredential } from '../../engine/index';
import { attemptBindingFrom } from '../../mcp/attemptBinding';
import { requireStore, type CommandContext } from '../context';

/**
 * The attempt a worker's command acts for (`baton mcp`, `baton check-result`): from the BATON_*
 * environment Baton gave the worker, in a workspace that has a store — else the one-line refusal.
 */
export function attemptOfThisWorker(ctx: CommandContext): AttemptCredential {
  const credential = attemptBindingFrom(process.env);
  requireStore(
    ctx,
    () =>
      new BatonError(
        'runtime.unknown',
        `There is no runtime ${credential.runtimeId}: there are no Baton runs in ${ctx.workspace}.`,
      ),
  );
  return credential;
}
