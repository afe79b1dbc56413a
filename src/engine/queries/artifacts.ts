import { BatonError } from '../domain/errors';
import type { IngestionRecord } from '../domain/types';
import type { StoreReader } from '../store/port';
import { INGESTION_COLUMNS, toIngestion, type IngestionRow } from '../store/rows';

/** A result artifact as the store keeps it (migration 9): its content, whichever machine ingested it. */
export interface StoredArtifact {
  digest: string;
  bytes: number;
  content: string;
}

/** An ingestion with the artifact it recorded; `artifact` is absent for an ingestion kept without content. */
export interface IngestionArtifact {
  record: IngestionRecord;
  artifact?: StoredArtifact;
}

export async function readArtifact(r: Pick<StoreReader, 'get'>, digest: string): Promise<StoredArtifact | undefined> {
  return r.get<StoredArtifact>(`SELECT digest, bytes, content FROM artifacts WHERE digest = ?`, [digest]);
}

/**
 * One ingestion and its artifact's content. Ingestion ids are unique in a store (I-<counter>),
 * so the run is only a check. No content: an ingestion from before migration 9, or a result
 * refused as too large or not text by the coordinator (its bytes were never kept).
 */
export async function readIngestionArtifact(
  r: Pick<StoreReader, 'get'>,
  ingestionId: string,
  runId?: string,
): Promise<IngestionArtifact> {
  const row = await r.get<IngestionRow>(
    `SELECT ${INGESTION_COLUMNS} FROM ingestions WHERE id = ?${runId ? ' AND run_id = ?' : ''}`,
    runId ? [ingestionId, runId] : [ingestionId],
  );
  if (!row)
    throw new BatonError(
      'ingestion.unknown',
      `There is no ingestion ${ingestionId}${runId ? ` in run ${runId}` : ''}. \`baton status --json\` lists a run's ingestions.`,
    );
  const record = toIngestion(row);
  const artifact = await readArtifact(r, record.digest);
  return { record, ...(artifact ? { artifact } : {}) };
}

/** An ingestion as `status --json` lists it: the record, its kept content's size, the standing result's content. */
export type IngestionView = IngestionRecord & {
  /** Size of the content kept in the store; absent when none was kept. */
  artifactBytes?: number;
  /** The content, for each delegation's newest ingestion (older ones: `baton ingestion show <id>`). */
  artifactContent?: string;
};

/**
 * A run's ingestions, oldest first, each delegation's newest with its artifact's content: what a
 * machine that did not ingest it shows of the result (the path was another machine's).
 */
export async function listIngestionViews(r: Pick<StoreReader, 'all'>, runId: string): Promise<IngestionView[]> {
  const rows = await r.all<IngestionRow & { artifact_bytes: number | null }>(
    `SELECT ${INGESTION_COLUMNS.split(', ')
      .map((c) => `i.${c}`)
      .join(', ')}, a.bytes AS artifact_bytes
     FROM ingestions i LEFT JOIN artifacts a ON a.digest = i.digest WHERE i.run_id = ? ORDER BY i.created_at, i.id`,
    [runId],
  );
  const newest = new Map<string, number>();
  rows.forEach((row, index) => newest.set(row.delegation_id, index));
  const views: IngestionView[] = [];
  for (const [index, row] of rows.entries()) {
    const record = toIngestion(row);
    const stands = newest.get(row.delegation_id) === index && row.artifact_bytes !== null;
    const content = stands ? await readArtifactContent(r, record.digest) : undefined;
    views.push({
      ...record,
      ...(row.artifact_bytes !== null ? { artifactBytes: row.artifact_bytes } : {}),
      ...(content !== undefined ? { artifactContent: content } : {}),
    });
  }
  return views;
}

async function readArtifactContent(r: Pick<StoreReader, 'all'>, digest: string): Promise<string | undefined> {
  return (await r.all<{ content: string }>(`SELECT content FROM artifacts WHERE digest = ?`, [digest]))[0]?.content;
}
