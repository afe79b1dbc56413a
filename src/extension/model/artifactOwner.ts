import { isAbsolute, join, relative, sep } from 'node:path';
import { runFolderOf, type Delegation, type IngestionRecord, type Run, type RunOverview } from '../../engine/index';

/** What the resolution reads: the run-state cache (newest runs first), or anything shaped like it. */
export interface RunsSource {
  readonly workspace: string;
  readonly runs: readonly Run[];
  overview(runId: string): RunOverview | undefined;
  ingestions(runId: string): readonly IngestionRecord[] | undefined;
}

/** A result artifact Baton can take now: for this delegation of this run. */
export interface IngestTarget {
  kind: 'ingest';
  runId: string;
  delegation: Delegation;
  /** A result was ingested for this attempt before. */
  reingest: boolean;
  /** Another run this window shows has a delegation with the same id: name the run wherever the id is shown. */
  ambiguous: boolean;
}

/** A result artifact whose run cannot take it (an earlier run, a superseded one, a finished attempt). */
export interface Refusal {
  kind: 'refuse';
  runId: string;
  delegationId?: string;
  /** A short line (the CodeLens). */
  title: string;
  /** The sentence shown when someone acts on it anyway: says which run it belongs to and why it is not taken. */
  message: string;
}

export type ArtifactResolution = IngestTarget | Refusal;

const isOpen = (d: Delegation): boolean => d.status === 'RUNNING' || d.status === 'BLOCKED';

/**
 * Which delegation of which run a result artifact belongs to (docs/extension.md, "Artifacts
 * belong to their run"). Delegation ids repeat across the runs of one plan, so the run comes
 * first:
 * 1. A file in `.baton/runs/<run>/` belongs to that run — to the delegation it is named after
 *    (`artifacts/<delegation>.md`), else the one an ingestion of that run named it for, else the
 *    latest attempt of the task its block names. Never to another run.
 * 2. A file elsewhere that an ingestion named belongs to that ingestion's attempt while the
 *    attempt still waits for a result.
 * 3. Otherwise it is a hand-in: to the waiting attempt of the task its block names, in the newest
 *    run that has one (runs superseded by a replan take nothing).
 * 4. A file an ingestion named, whose attempt is settled and which nothing else waits for, still
 *    belongs to that attempt's run: it is refused, naming the run.
 * `undefined`: nothing Baton knows waits for this file.
 */
export function resolveArtifact(source: RunsSource, path: string, text: string): ArtifactResolution | undefined {
  const task = /^\s*task:\s*["']?([^\s"']+)/m.exec(text)?.[1];
  const owner = runFolderOf(source.workspace, path);
  if (owner) {
    const view = source.overview(owner.runId);
    if (!view) {
      return {
        kind: 'refuse',
        runId: owner.runId,
        ...(owner.delegationId ? { delegationId: owner.delegationId } : {}),
        title: `Result of run ${owner.runId} (not among the recent runs)`,
        message: `This result belongs to run ${owner.runId}, which is not among the runs this window shows; it is not ingested for any other run. To hand it in to its own run: baton ingest --run ${owner.runId} --delegation ${owner.delegationId ?? '<delegation>'} --artifact ${workspaceRelative(source.workspace, path)}`,
      };
    }
    const rel = workspaceRelative(source.workspace, path);
    const named = owner.delegationId ?? newestRecordFor(source, rel, [owner.runId])?.delegationId;
    const delegation = named
      ? view.delegations.find((d) => d.id === named)
      : [...view.delegations].reverse().find((d) => d.taskId === task);
    if (!delegation) {
      return {
        kind: 'refuse',
        runId: owner.runId,
        ...(named ? { delegationId: named } : {}),
        title: `Result in the folder of run ${owner.runId}: no delegation of that run takes it`,
        message: `This file is in the folder of run ${owner.runId}, which has no delegation ${named ?? `for task ${task ?? '(none named)'}`}; it is not ingested for any other run.`,
      };
    }
    return targetIn(source, view, delegation);
  }
  const rel = workspaceRelative(source.workspace, path);
  const record = newestRecordFor(
    source,
    rel,
    source.runs.map((r) => r.id),
  );
  const recordView = record ? source.overview(record.runId) : undefined;
  const recorded = recordView?.delegations.find((d) => d.id === record?.delegationId);
  if (recordView && recorded && isOpen(recorded) && recordView.run.status !== 'superseded')
    return targetIn(source, recordView, recorded);
  for (const run of source.runs) {
    if (run.status === 'superseded') continue;
    const view = source.overview(run.id);
    const waiting = view && [...view.delegations].reverse().find((d) => d.taskId === task && isOpen(d));
    if (view && waiting) return targetIn(source, view, waiting);
  }
  return recordView && recorded ? targetIn(source, recordView, recorded) : undefined;
}

/**
 * A delegation as the target of a result: taken while its run goes on and it waits for a
 * result; otherwise refused with a sentence that names its run.
 */
export function targetIn(source: RunsSource, view: RunOverview, delegation: Delegation): ArtifactResolution {
  const run = view.run;
  const newer = newerRunWith(source, run, delegation.id);
  const ambiguous = source.runs.some((r) => r.id !== run.id && hasDelegation(source, r.id, delegation.id));
  const elsewhere = ambiguous ? ' It is not ingested for another run: delegation ids repeat across runs.' : '';
  const own = newer ? ` Run ${newer.id} has its own ${delegation.id}, with its own result file.` : '';
  if (run.status === 'superseded') {
    return {
      kind: 'refuse',
      runId: run.id,
      delegationId: delegation.id,
      title: `${delegation.id} · run ${run.id} was superseded: not ingested`,
      message: `This result belongs to ${delegation.id} of run ${run.id}, which was replanned (superseded${run.supersededBy ? ` by run ${run.supersededBy}` : ''}): a superseded run takes no result.${elsewhere}${own}`,
    };
  }
  if (!isOpen(delegation)) {
    return {
      kind: 'refuse',
      runId: run.id,
      delegationId: delegation.id,
      title: `${delegation.id}${newer ? ` · earlier run ${run.id}` : ''}: ${delegation.status}`,
      message: `This result belongs to ${delegation.id} of run ${run.id}, where that attempt is ${delegation.status}: a finished attempt takes no other result.${elsewhere}${own}`,
    };
  }
  return {
    kind: 'ingest',
    runId: run.id,
    delegation,
    reingest: (source.ingestions(run.id) ?? []).some((i) => i.delegationId === delegation.id),
    ambiguous,
  };
}

/** The CodeLens line of a resolution. */
export function lensTitle(resolution: ArtifactResolution): string {
  if (resolution.kind === 'refuse') return resolution.title;
  const verb = resolution.reingest ? '↻ Re-ingest' : '⤓ Ingest';
  return `${verb} for ${resolution.delegation.id}${resolution.ambiguous ? ` (run ${resolution.runId})` : ''}`;
}

function hasDelegation(source: RunsSource, runId: string, delegationId: string): boolean {
  return source.overview(runId)?.delegations.some((d) => d.id === delegationId) ?? false;
}

/** A run newer than `run` (the cache lists the newest first) that has a delegation with this id. */
function newerRunWith(source: RunsSource, run: Run, delegationId: string): Run | undefined {
  for (const r of source.runs) {
    if (r.id === run.id) return undefined;
    if (hasDelegation(source, r.id, delegationId)) return r;
  }
  return undefined;
}

/** The newest ingestion (of these runs, newest run first) that named this file. */
function newestRecordFor(source: RunsSource, rel: string, runIds: readonly string[]): IngestionRecord | undefined {
  for (const runId of runIds) {
    const records = source.ingestions(runId) ?? [];
    for (let i = records.length - 1; i >= 0; i--) {
      const record = records[i]!;
      const named = absoluteIn(source.workspace, record.artifactPath);
      if (record.artifactPath === rel || named === join(source.workspace, rel)) return record;
    }
  }
  return undefined;
}

function workspaceRelative(workspace: string, path: string): string {
  const rel = relative(workspace, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel.split(sep).join('/') : path;
}

function absoluteIn(workspace: string, path: string): string {
  return isAbsolute(path) ? path : join(workspace, path);
}
