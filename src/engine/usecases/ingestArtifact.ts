import type { EngineContext } from './context';
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
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

export const MAX_ARTIFACT_BYTES = 1024 * 1024;

export interface IngestOutcome extends IngestionOutcome {
  /** The delegation after the ingestion (and verification). */
  delegation: Delegation;
  verification?: VerificationOutcome;
}

/**
 * Accepts (or rejects) a result artifact for a delegation: read it (at most 1 MiB), hash
 * it, check it against the contract, the delegation and the workspace — all before the
 * transaction — then record it in one transaction, and verify a PASS when the task has
 * verify commands. A missing file is bad input, and a file in another run's folder is
 * refused (`ingest.artifact-of-other-run`): nothing is written.
 */
export async function ingestArtifact(
  ctx: EngineContext,
  delegation: Delegation,
  absolutePath: string,
  /** Handed in from outside the coordinator (`baton ingest`, the editor): checked by authorizeIngest. */
  handedIn?: { token?: string },
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
  let digest: string;
  let issues: Issue[];
  let resultStatus: Delegation['resultStatus'];
  let summary: string | undefined;
  if (size > MAX_ARTIFACT_BYTES) {
    digest = await digestFile(absolutePath);
    issues = [
      issue(
        'result.artifact-too-large',
        '',
        `The artifact is ${size} bytes; the limit is ${MAX_ARTIFACT_BYTES} bytes (1 MiB).`,
        'Keep the result artifact short: a summary and paths to the files that hold the work.',
      ),
    ];
  } else {
    const bytes = readFileSync(absolutePath);
    digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    const parsed = parseResultArtifact(bytes.toString('utf8'), { taskId: delegation.taskId, agent: delegation.agent });
    issues = parsed.issues;
    if (parsed.result) {
      if (parsed.result.artifacts.length > 0) {
        // Paths in the result are the worker's: relative to the folder it worked in (its worktree, when isolated).
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
        artifactPath: workspacePath(ctx.workspace, absolutePath),
        digest,
        issues,
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

/** Workspace-relative with POSIX separators when inside the workspace, else absolute. */
export function workspacePath(workspace: string, absolute: string): string {
  const rel = relative(workspace, absolute);
  if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/');
  return absolute;
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
