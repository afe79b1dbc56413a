import { existsSync } from 'node:fs';
import { basename, isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { STDIN_ARTIFACT, type Engine, type IngestionRecord } from '../engine/index';

/** Read-only documents of result artifacts as the store keeps them (docs/team-artifacts.md). */
export const STORED_ARTIFACT_SCHEME = 'baton-artifact';

/** `baton-artifact:/<run>/<ingestion>/<file name>`: the name only makes the tab readable (and markdown). */
export function storedArtifactUri(record: Pick<IngestionRecord, 'runId' | 'id' | 'artifactPath'>): vscode.Uri {
  const name = record.artifactPath === STDIN_ARTIFACT ? 'result.md' : basename(record.artifactPath) || 'result.md';
  return vscode.Uri.from({
    scheme: STORED_ARTIFACT_SCHEME,
    path: `/${record.runId}/${record.id}/${name.endsWith('.md') ? name : `${name}.md`}`,
  });
}

/**
 * Where an ingestion's artifact is shown on this machine: its file, when the path it was
 * ingested from is here (the person may be correcting it); else the content from the store —
 * a result piped in, or ingested on a team's other machine, whose path means nothing here.
 */
export function artifactDocumentUri(
  workspace: string,
  record: Pick<IngestionRecord, 'runId' | 'id' | 'artifactPath'>,
): vscode.Uri {
  if (record.artifactPath !== STDIN_ARTIFACT) {
    const path = isAbsolute(record.artifactPath) ? record.artifactPath : join(workspace, record.artifactPath);
    if (existsSync(path)) return vscode.Uri.file(path);
  }
  return storedArtifactUri(record);
}

/** Fills `baton-artifact:` documents from the store (Engine.ingestionArtifact). */
export class StoredArtifactProvider implements vscode.TextDocumentContentProvider {
  constructor(private readonly engine: () => Promise<Engine>) {}

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [runId, ingestionId] = uri.path.split('/').filter(Boolean);
    if (!runId || !ingestionId) throw new Error(`Not an artifact of the store: ${uri.toString()}`);
    const found = await (await this.engine()).ingestionArtifact(ingestionId, runId);
    if (!found.artifact)
      throw new Error(
        `${ingestionId} has no content in the store (recorded before Baton kept artifacts, or refused as too large or not text); it was ingested from ${found.record.artifactPath}.`,
      );
    return found.artifact.content;
  }
}
