import type { EngineContext } from './context';
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, realpathSync, statSync } from 'node:fs';
import { verifyAttempt, type VerificationOutcome } from './verifyAttempt';
import { BatonError } from '../domain/errors';
import { issue, type Issue } from '../domain/issue';
import type { Delegation } from '../domain/types';
import { getDelegation } from '../queries/delegations';
import { checkArtifactPaths } from './artifactPaths';
import { parseResultArtifact } from '../domain/result/parseResult';
import { authorizeIngest } from '../operations/runtimes/authorizeIngest';
import { recordIngestion, type IngestionOutcome } from '../operations/ingestions/recordIngestion';
import { runFolderOf } from '../effects/workspaceLayout';
import { DEFAULT_CONFIG } from '../domain/config';
import { contentDigest, textOf } from '../domain/content';
import { workspacePath } from '../domain/workspacePath';
import { readRunSettings } from '../queries/runs';
import type { StoreReader } from '../store/port';

/** The default of the config's maxArtifactBytes; a run holds results to the limit frozen into it. */
export const MAX_ARTIFACT_BYTES = DEFAULT_CONFIG.maxArtifactBytes;

/** Where a result stood on the ingesting machine: a workspace-relative path, an absolute one, or `<stdin>`. */
export const STDIN_ARTIFACT = '<stdin>';

export interface IngestOutcome extends IngestionOutcome {
  /** The delegation after the ingestion (and verification). */
  delegation: Delegation;
  verification?: VerificationOutcome;
}

/** Handed in from outside the coordinator (`baton ingest`, the editor): checked by authorizeIngest. */
export interface HandedIn {
  token?: string;
}

/**
 * Accepts (or rejects) a result artifact file for a delegation: the file's content is ingested
 * as if handed in as content (ingestArtifactContent), its path kept as where it stood. A
 * missing file is bad input, and a file in another run's folder is refused
 * (`ingest.artifact-of-other-run`): nothing is written.
 */
export async function ingestArtifact(
  ctx: EngineContext,
  delegation: Delegation,
  absolutePath: string,
  handedIn?: HandedIn,
  /** The run's artifact limit when the caller read it already (artifactLimitOf); read here otherwise. */
  knownLimit?: number,
): Promise<IngestOutcome> {
  refuseOtherRunsArtifact(ctx.workspace, delegation, absolutePath);
  let size: number;
  try {
    const stat = statSync(absolutePath);
    size = stat.size;
    if (!stat.isFile()) {
      // A folder, a FIFO, a device or a socket: never opened (reading a FIFO would block).
      throw new BatonError(
        'ingest.artifact-unreadable',
        `Cannot read the artifact ${absolutePath}: it is ${stat.isDirectory() ? 'a folder' : 'not a regular file'}.`,
      );
    }
  } catch (err) {
    if (BatonError.is(err)) throw err;
    throw new BatonError(
      'ingest.artifact-unreadable',
      `Cannot read the artifact ${absolutePath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  refuseOtherRunsArtifact(realpathOr(ctx.workspace), delegation, realpathOr(absolutePath));
  const artifactPath = workspacePath(ctx.workspace, absolutePath);
  const limit = knownLimit ?? (await ctx.store.read((r) => artifactLimitOf(r, ctx, delegation.runId)));
  // Too large to read: only its digest is taken (streamed), for the coordinator's rejected record.
  if (size > limit)
    return ingestArtifactContent(
      ctx,
      delegation,
      { oversized: { size, path: absolutePath } },
      artifactPath,
      handedIn,
      limit,
    );
  let bytes: Buffer;
  try {
    bytes = readFileSync(absolutePath);
  } catch (err) {
    throw new BatonError(
      'ingest.artifact-unreadable',
      `Cannot read the artifact ${absolutePath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  return ingestArtifactContent(ctx, delegation, { bytes }, artifactPath, handedIn, limit);
}

/**
 * Accepts (or rejects) a result artifact handed in as content — from stdin, from a file read
 * on this machine, or again from the store — for a delegation: check its size against the
 * run's limit and that it is UTF-8 text, hash it, check it against the contract, the
 * delegation and the workspace (the ingesting machine's: where the worker worked) — all
 * before the transaction — then keep its content (by digest) and record it in one
 * transaction, and verify a PASS when the task has verify commands.
 *
 * Handed in (`baton ingest`, the editor), an artifact over the limit or not text is refused
 * (`ingest.artifact-too-large`, `ingest.artifact-not-text`, exit 2) and nothing is written:
 * the person or worker who handed it in is there to fix it. From the coordinator (a worker's
 * result file after its process ended) it is recorded as a rejected result without its content,
 * so the attempt waits at an ingestion_failed gate instead of for its lease (docs/team-artifacts.md).
 */
export async function ingestArtifactContent(
  ctx: EngineContext,
  delegation: Delegation,
  source: { bytes: Uint8Array } | { oversized: { size: number; path: string } },
  /** Where the content stood on the ingesting machine (workspace-relative, absolute or STDIN_ARTIFACT): a label. */
  artifactPath: string,
  handedIn?: HandedIn,
  /** The run's artifact limit when the caller read it already (artifactLimitOf); read here otherwise. */
  knownLimit?: number,
): Promise<IngestOutcome> {
  const limit = knownLimit ?? (await ctx.store.read((r) => artifactLimitOf(r, ctx, delegation.runId)));
  const size = 'bytes' in source ? source.bytes.byteLength : source.oversized.size;
  let digest: string;
  let issues: Issue[];
  let resultStatus: Delegation['resultStatus'];
  let summary: string | undefined;
  let content: string | undefined;
  if (size > limit || !('bytes' in source)) {
    const message = `The artifact is ${size} bytes; this run's limit is ${limit} bytes (maxArtifactBytes${limit === MAX_ARTIFACT_BYTES ? ', 1 MiB' : ''}).`;
    const recommendation = 'Keep the result artifact short: a summary and paths to the files that hold the work.';
    if (handedIn)
      throw new BatonError(
        'ingest.artifact-too-large',
        `${artifactPath}: ${message} Nothing was recorded. ${recommendation}`,
      );
    digest = 'bytes' in source ? contentDigest(source.bytes) : await digestFile(source.oversized.path);
    issues = [issue('result.artifact-too-large', '', message, recommendation)];
  } else {
    digest = contentDigest(source.bytes);
    content = textOf(source.bytes);
    if (content === undefined) {
      const message = 'The artifact is not UTF-8 text (invalid UTF-8, or a NUL byte): a result is a markdown file.';
      const recommendation = 'Hand in the markdown result artifact, saved as UTF-8.';
      if (handedIn)
        throw new BatonError(
          'ingest.artifact-not-text',
          `${artifactPath}: ${message} Nothing was recorded. ${recommendation}`,
        );
      issues = [issue('result.artifact-not-text', '', message, recommendation)];
    } else {
      const parsed = parseResultArtifact(content, { taskId: delegation.taskId, agent: delegation.agent });
      issues = parsed.issues;
      if (parsed.result) {
        if (parsed.result.artifacts.length > 0) {
          // Paths in the result are the worker's: relative to the folder it worked in (its worktree, when isolated), on
          // the machine that ingests it — a resident worker ingests on its own machine, whose workspace holds its work.
          const runtime = await ctx.store.read((r) =>
            r.get<{ cwd: string | null }>(
              `SELECT cwd FROM runtimes WHERE run_id = ? AND delegation_id = ? ORDER BY claimed_at DESC LIMIT 1`,
              [delegation.runId, delegation.id],
            ),
          );
          issues.push(...checkArtifactPaths(runtime?.cwd ?? ctx.workspace, parsed.result));
        }
        resultStatus = parsed.result.status;
        summary = parsed.result.summary;
      }
    }
  }
  // The delegation as it stands after the ingestion, and whether its task waits for verification, come from the same
  // transaction.
  const committed = await ctx.store.transact(async (tx) => {
    if (handedIn) {
      const refusal = await authorizeIngest(
        tx,
        { runId: delegation.runId, delegationId: delegation.id, ...handedIn },
        ctx.clock.now(),
      );
      // Returned, not thrown: an expiry it made official commits (as a late heartbeat's does).
      if (refusal) return { refusal };
    }
    const recorded = await recordIngestion(
      tx,
      {
        runId: delegation.runId,
        delegationId: delegation.id,
        artifactPath,
        digest,
        issues,
        ...(content !== undefined ? { content: { digest, bytes: size, content } } : {}),
        ...(resultStatus ? { resultStatus } : {}),
        ...(summary ? { summary } : {}),
      },
      ctx.clock.now(),
    );
    const row = await getDelegation(tx, delegation.runId, delegation.id);
    const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
      delegation.runId,
      delegation.taskId,
    ]);
    return { outcome: recorded, after: row!, verifying: task?.status === 'verifying' };
  });
  if ('refusal' in committed) throw committed.refusal;
  const { outcome, after, verifying } = committed;
  // Only a task waiting in `verifying` has commands to run (or work to integrate); verifyAttempt reads its facts
  // afresh.
  const verification =
    outcome.record.accepted && verifying ? await verifyAttempt(ctx, delegation.runId, delegation.id) : undefined;
  const final = verification ? await ctx.store.read((r) => getDelegation(r, delegation.runId, delegation.id)) : after;
  return {
    ...outcome,
    delegation: final!,
    ...(verification && (verification.ran > 0 || verification.reused > 0) ? { verification } : {}),
  };
}

/** The run's frozen limit; a run started before it was frozen takes this machine's config. */
export async function artifactLimitOf(
  r: Pick<StoreReader, 'get'>,
  ctx: Pick<EngineContext, 'config'>,
  runId: string,
): Promise<number> {
  const settings = await readRunSettings(r, runId);
  return settings.maxArtifactBytes ?? ctx.config.maxArtifactBytes;
}

/**
 * Delegation ids repeat across the runs of one plan (D-T2-coder-001 in each), so a result in
 * `.baton/runs/<run>/` is evidence of that run only: handed in for a delegation of another run
 * it would complete the wrong attempt with an old result.
 */
function refuseOtherRunsArtifact(workspace: string, delegation: Delegation, path: string): void {
  const owner = runFolderOf(workspace, path);
  if (!owner || owner.runId === delegation.runId) return;
  throw new BatonError(
    'ingest.artifact-of-other-run',
    `${workspacePath(workspace, path)} belongs to run ${owner.runId}, not to run ${delegation.runId}: it is not ingested for ${delegation.id} of ${delegation.runId}. Delegation ids repeat across runs; to hand it in to its own run, name that run (--run ${owner.runId}).`,
  );
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // checked lexically already; statSync reports what is wrong with it
  }
}

function digestFile(path: string): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolvePromise(`sha256:${hash.digest('hex')}`));
  });
}
