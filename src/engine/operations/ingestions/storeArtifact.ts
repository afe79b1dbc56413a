import type { StoreTx } from '../../store/port';

export interface ArtifactContent {
  /** `sha256:<hex>` of the bytes: the key, so the same bytes are stored once whoever ingests them. */
  digest: string;
  /** The size of the bytes as handed in (the text's UTF-8 length). */
  bytes: number;
  /** The bytes as UTF-8 text (checked before the transaction: valid UTF-8, no NUL, within the run's limit). */
  content: string;
}

/**
 * Keeps a result artifact's content in the store, by digest (migration 9). The same bytes are
 * already there when a result is ingested again — a retry, a re-ingest, another run — so
 * nothing is written twice; a digest names its content, so the row is never changed.
 */
export async function storeArtifact(tx: StoreTx, artifact: ArtifactContent, now: number): Promise<void> {
  await tx.run(
    `INSERT INTO artifacts (digest, bytes, content, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING`,
    [artifact.digest, artifact.bytes, artifact.content, now],
  );
}
