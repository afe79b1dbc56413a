import { resolve } from 'node:path';
import { BatonError, formatIssue, MAX_ARTIFACT_BYTES_CEILING, STDIN_ARTIFACT } from '../../engine/index';
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
  // `-`: the artifact's content from stdin, e.g. a resident worker on another machine piping its result in.
  const artifact =
    options.artifact === '-'
      ? { artifactContent: await readStdin(MAX_ARTIFACT_BYTES_CEILING) }
      : { artifactPath: resolve(options.artifact) };
  return withEngine(ctx, async (engine) => {
    const outcome = await engine.ingest({
      delegationId: options.delegation,
      ...artifact,
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

/**
 * All of stdin, kept up to `ceiling` bytes (no run takes more: config's maxArtifactBytes is at
 * most that); beyond it the rest is only counted, and the artifact is refused here with its size.
 */
async function readStdin(ceiling: number): Promise<Buffer> {
  const kept: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    if (size + chunk.length <= ceiling) kept.push(chunk);
    size += chunk.length;
  }
  if (size > ceiling)
    throw new BatonError(
      'ingest.artifact-too-large',
      `${STDIN_ARTIFACT}: The artifact is ${size} bytes; no run takes more than ${ceiling} bytes (maxArtifactBytes). Nothing was recorded. Keep the result artifact short: a summary and paths to the files that hold the work.`,
    );
  return Buffer.concat(kept, size);
}
