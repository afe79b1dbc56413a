import { resolve } from 'node:path';
import { formatIssue } from '../../engine/index';
import { printJson, withEngine, type CommandContext } from '../context';
import { attemptOfThisWorker } from './attemptOfThisWorker';
import { paint } from '../render';

/**
 * `baton check-result`: what `baton_check_result` is to an agent, for a plain process worker —
 * a dry run of ingestion on its draft for its own attempt (the BATON_* environment), writing
 * nothing. Exit 0 when ingestion would accept it, 4 when it would reject it.
 */
export async function checkResult(ctx: CommandContext, options: { artifact?: string }): Promise<number> {
  const credential = attemptOfThisWorker(ctx);
  // Relative to the current folder, as every path on the command line is (docs/cli.md).
  const draft = options.artifact === undefined ? undefined : resolve(options.artifact);
  return withEngine(ctx, async (engine) => {
    const check = await engine.checkDraftResult(credential, draft);
    if (ctx.output.json) {
      printJson(ctx, { check: { ...check, recorded: false } });
      return check.acceptable ? 0 : 4;
    }
    const o = ctx.output;
    for (const i of check.issues)
      o.out(paint(o, i.severity === 'error' ? 'red' : 'yellow', formatIssue(i, check.path)));
    o.out(
      check.acceptable
        ? `${paint(o, 'green', '✓')} ${check.path}: ingestion would accept this ${check.resultStatus} result for ${credential.delegationId} (nothing was recorded).`
        : `${paint(o, 'red', '✗')} ${check.path}: ingestion would reject this result for ${credential.delegationId} (nothing was recorded).`,
    );
    return check.acceptable ? 0 : 4;
  });
}
