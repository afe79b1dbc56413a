import { resolve } from 'node:path';
import { BatonError, formatIssue } from '../../engine/index';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { paint, status } from '../render';

/**
 * Hands a result artifact in for a delegation. Exit 4 when the result is rejected; exit 3 for a
 * running attempt without its runtime token (--token, or $BATON_RUNTIME_TOKEN), or after its lease ran out.
 */
export async function ingest(
  ctx: CommandContext,
  options: { delegation: string; artifact: string; run?: string; token?: string },
): Promise<number> {
  requireStore(ctx, () => new BatonError('delegation.unknown', `There is no delegation ${options.delegation}.`));
  const token = options.token ?? process.env.BATON_RUNTIME_TOKEN;
  return withEngine(ctx, async (engine) => {
    const outcome = await engine.ingest({
      delegationId: options.delegation,
      artifactPath: resolve(options.artifact),
      ...(options.run ? { runId: options.run } : {}),
      // A worker Baton started has its token in its environment; a person's hand-off needs none.
      ...(token ? { token } : {}),
    });
    const { record, delegation } = outcome;
    const exitCode = record.accepted ? 0 : 4;
    if (ctx.output.json) {
      printJson(ctx, {
        record,
        duplicate: outcome.duplicate,
        delegation: { id: delegation.id, status: delegation.status, taskId: delegation.taskId },
      });
      return exitCode;
    }
    const o = ctx.output;
    for (const i of record.issues)
      o.out(paint(o, i.severity === 'error' ? 'red' : 'yellow', formatIssue(i, record.artifactPath)));
    const again = outcome.duplicate ? ' (already ingested: same content, same findings; nothing changed)' : '';
    o.out(
      record.accepted
        ? `${paint(o, 'green', '✓')} ${record.id}: accepted ${record.resultStatus} for ${delegation.id}; delegation ${status(o, delegation.status)}${again}.`
        : `${paint(o, 'red', '✗')} ${record.id}: rejected for ${delegation.id}; delegation ${status(o, delegation.status)}, waiting at an ingestion_failed gate${again}.`,
    );
    return exitCode;
  });
}
