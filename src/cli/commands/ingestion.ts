import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { BatonError, type IngestionArtifact } from '../../engine/index';
import { printJson, READING, requireStore, withEngine, type CommandContext } from '../context';

/**
 * Prints an ingestion's artifact as the store keeps it, whichever machine ingested it: its content
 * exactly (so `> result.md` gives the bytes back), or with --json the record and the content.
 * An ingestion kept without content (before migration 9) is read from its path when that file is
 * still here with the same digest; otherwise it is refused (exit 2).
 */
export async function showIngestion(
  ctx: CommandContext,
  ingestionId: string,
  options: { run?: string },
): Promise<void> {
  requireStore(ctx, () => new BatonError('ingestion.unknown', `There is no ingestion ${ingestionId}.`));
  await withEngine(
    ctx,
    async (engine) => {
      const found = await engine.ingestionArtifact(ingestionId, options.run);
      const artifact = found.artifact ?? fromThisMachine(ctx.workspace, found);
      if (ctx.output.json) {
        printJson(ctx, { record: found.record, artifact: artifact ?? null });
        return;
      }
      if (!artifact)
        throw new BatonError(
          'ingestion.unknown',
          `Ingestion ${found.record.id} has no content in the store (it was recorded before Baton kept artifacts, or refused as too large or not text), and ${found.record.artifactPath} is not on this machine with digest ${found.record.digest}.`,
        );
      process.stdout.write(artifact.content);
    },
    READING,
  );
}

/** The file the record names, when it is on this machine and still holds the bytes that were ingested. */
function fromThisMachine(workspace: string, found: IngestionArtifact): IngestionArtifact['artifact'] {
  const { artifactPath, digest } = found.record;
  try {
    const bytes = readFileSync(isAbsolute(artifactPath) ? artifactPath : join(workspace, artifactPath));
    if (`sha256:${createHash('sha256').update(bytes).digest('hex')}` !== digest) return undefined;
    return { digest, bytes: bytes.byteLength, content: bytes.toString('utf8') };
  } catch {
    return undefined;
  }
}
