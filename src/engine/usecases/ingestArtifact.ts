import type { EngineContext } from './context';
import { createHash } from 'node:crypto';
import { closeSync, constants, createReadStream, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { verifyAttempt, type VerificationOutcome } from './verifyAttempt';
import { BatonError } from '../domain/errors';
import { issue, type Issue, type Range } from '../domain/issue';
import { isAgentKind } from '../domain/agents/agentActivity';
import { claimIssues, readWorkTrail } from '../domain/agents/workTrail';
import { settingsAndAttemptTrail, type AttemptTrail } from '../queries/agentUsage';
import { readBatonFileTail, type FileTail } from '../effects/files/safeRead';
import { presentingProcess } from '../effects/processes/processes';
import type { Delegation } from '../domain/types';
import { getDelegation, getDelegationAndTaskStatus } from '../queries/delegations';
import { checkArtifactPaths, ownResultNames } from './artifactPaths';
import { parseResultArtifact } from '../domain/result/parseResult';
import { authorizeIngest, PRESENTER_NEEDED } from '../operations/runtimes/authorizeIngest';
import type { Presenter } from '../domain/process';
import { recordIngestion, type IngestionOutcome } from '../operations/ingestions/recordIngestion';
import { runFolderOf, runPaths } from '../effects/workspaceLayout';
import { DEFAULT_CONFIG } from '../domain/config';
import { contentDigest, textOf } from '../domain/content';
import { workspacePath } from '../domain/workspacePath';
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
  /** What the caller read already (judgingFactsOf); read here otherwise. */
  known?: JudgingFacts,
): Promise<IngestOutcome> {
  const facts = known ?? (await ctx.store.read((r) => judgingFactsOf(r, ctx, delegation)));
  const { source, artifactPath } = readArtifactFile(ctx.workspace, delegation, absolutePath, facts.limit);
  return ingestArtifactContent(ctx, delegation, source, artifactPath, handedIn, facts);
}

/** An artifact's bytes, or only its size and place when it is over the run's limit (too large to read). */
export type ArtifactSource = { bytes: Uint8Array } | { oversized: { size: number; path: string } };

/**
 * Reads a result artifact file for a delegation, as ingestion and its dry run (checkDraftResult)
 * both take it: a file in another run's folder is refused (`ingest.artifact-of-other-run`), also
 * through a link; anything but a readable regular file is `ingest.artifact-unreadable`; a file
 * over `limit` is not read. Returns its content and its workspace-relative label.
 */
export function readArtifactFile(
  workspace: string,
  delegation: Delegation,
  absolutePath: string,
  limit: number,
): { source: ArtifactSource; artifactPath: string } {
  refuseOtherRunsArtifact(workspace, delegation, absolutePath);
  const fd = openRegularFile(absolutePath);
  try {
    refuseOtherRunsArtifact(realpathOr(workspace), delegation, realpathOr(absolutePath));
    const artifactPath = workspacePath(workspace, absolutePath);
    const size = fstatSync(fd).size;
    // Too large to read: only its digest is taken (streamed), for the coordinator's rejected record.
    if (size > limit) return { source: { oversized: { size, path: absolutePath } }, artifactPath };
    // From the descriptor that was checked, and no more than its size then: a worker still running may have swapped
    // the name for a FIFO since, or may still be growing the file.
    const bytes = Buffer.alloc(size);
    let read = 0;
    for (let n = 1; n > 0 && read < size; read += n) n = readSync(fd, bytes, read, size - read, read);
    return { source: { bytes: bytes.subarray(0, read) }, artifactPath };
  } catch (err) {
    if (BatonError.is(err)) throw err;
    throw unreadable(absolutePath, err);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens an artifact for reading without ever blocking (`O_NONBLOCK`: a FIFO opens at once). A FIFO, a folder, a device
 * or a socket is refused by what the descriptor is, not by a look at the name before the open, which a worker still
 * running could swap in between. The caller closes it.
 */
function openRegularFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EISDIR')
      throw new BatonError('ingest.artifact-unreadable', `Cannot read the artifact ${path}: it is a folder.`);
    throw unreadable(path, err);
  }
  const stat = fstatSync(fd);
  if (stat.isFile()) return fd;
  closeSync(fd);
  throw new BatonError(
    'ingest.artifact-unreadable',
    `Cannot read the artifact ${path}: it is ${stat.isDirectory() ? 'a folder' : 'not a regular file'}.`,
  );
}

function unreadable(path: string, err: unknown): BatonError {
  return new BatonError(
    'ingest.artifact-unreadable',
    `Cannot read the artifact ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
  );
}

/** What an artifact says and what is wrong with it (judgeArtifact): nothing of it is written yet. */
export interface ArtifactJudgement {
  /** Undefined only for an artifact too large to read: its digest is streamed from the file when it is recorded. */
  digest?: string;
  size: number;
  issues: Issue[];
  /** The text, when it is within the limit and UTF-8. */
  content?: string;
  resultStatus?: Delegation['resultStatus'];
  summary?: string;
  /** Why it cannot be taken at all when handed in (too large, not text): the issue that says so is in `issues`. */
  unfit?: 'ingest.artifact-too-large' | 'ingest.artifact-not-text';
}

/**
 * The one check of a result (DESIGN §8: one check, its callers ingestion and the dry run of
 * `baton_check_result`): its size against the run's limit, that it is UTF-8 text, the contract,
 * the task and agent against the delegation, and the listed paths against the folder its worker
 * worked in. It reads the store and the disk and writes nothing.
 */
export async function judgeArtifact(
  ctx: EngineContext,
  delegation: Delegation,
  source: ArtifactSource,
  { limit, attempt }: JudgingFacts,
): Promise<ArtifactJudgement> {
  const size = 'bytes' in source ? source.bytes.byteLength : source.oversized.size;
  if (size > limit || !('bytes' in source)) {
    const message = `The artifact is ${size} bytes; this run's limit is ${limit} bytes (maxArtifactBytes${limit === MAX_ARTIFACT_BYTES ? ', 1 MiB' : ''}).`;
    const recommendation = 'Keep the result artifact short: a summary and paths to the files that hold the work.';
    return {
      ...('bytes' in source ? { digest: contentDigest(source.bytes) } : {}),
      size,
      issues: [issue('result.artifact-too-large', '', message, recommendation)],
      unfit: 'ingest.artifact-too-large',
    };
  }
  const digest = contentDigest(source.bytes);
  const content = textOf(source.bytes);
  if (content === undefined) {
    const message = 'The artifact is not UTF-8 text (invalid UTF-8, or a NUL byte): a result is a markdown file.';
    const recommendation = 'Hand in the markdown result artifact, saved as UTF-8.';
    return {
      digest,
      size,
      issues: [issue('result.artifact-not-text', '', message, recommendation)],
      unfit: 'ingest.artifact-not-text',
    };
  }
  const parsed = parseResultArtifact(content, { taskId: delegation.taskId, agent: delegation.agent });
  const issues = parsed.issues;
  if (!parsed.result) return { digest, size, issues, content };
  // Paths in the result are the worker's: relative to the folder it worked in (its worktree, when isolated), on the
  // machine that ingests it — a resident worker ingests on its own machine, whose workspace holds its work.
  // An sdd-result's artifacts/… are the run's files, as the seed reads them (docs/result-contract.md).
  if (parsed.result.artifacts.length > 0)
    issues.push(
      ...checkArtifactPaths(attempt?.cwd ?? ctx.workspace, parsed.result, {
        workspace: ctx.workspace,
        runId: delegation.runId,
        ownNames: ownResultNames(delegation),
      }),
    );
  if (parsed.result.status === 'PASS' && attempt)
    issues.push(...claimsAgainstStream(ctx, delegation, attempt, parsed.result.fieldRanges.status));
  return { digest, size, issues, content, resultStatus: parsed.result.status, summary: parsed.result.summary };
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
  source: ArtifactSource,
  /** Where the content stood on the ingesting machine (workspace-relative, absolute or STDIN_ARTIFACT): a label. */
  artifactPath: string,
  handedIn?: HandedIn,
  /** What the caller read already (judgingFactsOf); read here otherwise. */
  known?: JudgingFacts,
): Promise<IngestOutcome> {
  const facts = known ?? (await ctx.store.read((r) => judgingFactsOf(r, ctx, delegation)));
  const judged = await judgeArtifact(ctx, delegation, source, facts);
  if (handedIn && judged.unfit) {
    const [why] = judged.issues;
    throw new BatonError(judged.unfit, `${artifactPath}: ${why!.message} Nothing was recorded. ${why!.recommendation}`);
  }
  const { issues, content, resultStatus, summary, size } = judged;
  // Too large to read: its digest is streamed from the file, for the coordinator's rejected record.
  const digest = judged.digest ?? ('oversized' in source ? await digestFile(source.oversized.path) : '');
  // The delegation as it stands after the ingestion, and whether its task waits for verification, come from the same
  // transaction. The presenting process (/proc, a read per parent) matters only when the attempt's worker is one Baton
  // started (runsUnderWorker): the first transaction asks for it when it finds one, having written nothing, and runs
  // again with it. It touches only the delegation's run (docs/team.md, "Concurrency").
  const record = (presenter?: Presenter) =>
    ctx.store.transact(
      async (tx) => {
        if (handedIn) {
          const refusal = await authorizeIngest(
            tx,
            { runId: delegation.runId, delegationId: delegation.id, ...handedIn, ...(presenter ? { presenter } : {}) },
            ctx.clock.now(),
          );
          if (refusal === PRESENTER_NEEDED) return { presenterNeeded: true as const };
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
        const state = (await getDelegationAndTaskStatus(tx, delegation.runId, delegation.id))!;
        return { outcome: recorded, after: state.delegation, verifying: state.taskStatus === 'verifying' };
      },
      { runId: delegation.runId },
    );
  const first = await record();
  const committed = 'presenterNeeded' in first ? await record(presentingProcess()) : first;
  if ('presenterNeeded' in committed) throw new Error('the presenting process was asked for twice');
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

/** How much of an attempt's log the claims are read from: its end, where the last edits and tests are. */
const TRAIL_LOG_BYTES = 4 * 1024 * 1024;

/**
 * A PASS from an agent preset against the stream its CLI wrote (docs/agents.md, "Claims against the stream"): warnings
 * when it edited after its last test-like command, or left a failed edit or test unretried. A log that cannot be read
 * (another machine's, a link planted in .baton/) gives none: the claims are a hint, never a reason to refuse.
 */
function claimsAgainstStream(
  ctx: EngineContext,
  delegation: Delegation,
  attempt: AttemptTrail,
  statusRange: Range | undefined,
): Issue[] {
  if (!attempt.logPath || !isAgentKind(attempt.kind)) return [];
  let tail: FileTail | undefined;
  try {
    tail = readBatonFileTail(ctx.workspace, resolve(ctx.workspace, attempt.logPath), TRAIL_LOG_BYTES);
  } catch (err) {
    ctx.log(`${delegation.id}: its stream was not read for the result's claims: ${(err as Error).message}`);
    return [];
  }
  if (!tail) return [];
  const lines = tail.text.split('\n');
  const artifactName = basename(runPaths(ctx.workspace, delegation.runId).artifact(delegation.id));
  const trail = readWorkTrail(attempt.kind, tail.cut ? lines.slice(1) : lines, {
    ...(attempt.cwd ? { cwd: attempt.cwd } : {}),
    isArtifact: (target) => target.includes('.baton/') || basename(target) === artifactName,
  });
  return claimIssues(trail, statusRange);
}

/**
 * What judging a delegation's result reads from the store, in one read: its run's frozen artifact limit (a run started
 * before it was frozen takes this machine's config), and where its latest attempt worked and logged.
 */
export interface JudgingFacts {
  limit: number;
  attempt: AttemptTrail | undefined;
}

export async function judgingFactsOf(
  r: StoreReader,
  ctx: Pick<EngineContext, 'config'>,
  delegation: Pick<Delegation, 'runId' | 'id'>,
): Promise<JudgingFacts> {
  const { settings, attempt } = await settingsAndAttemptTrail(r, delegation.runId, delegation.id);
  return { limit: settings.maxArtifactBytes ?? ctx.config.maxArtifactBytes, attempt };
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
    let fd: number;
    try {
      fd = openRegularFile(path);
    } catch (err) {
      reject(err as Error);
      return;
    }
    createReadStream('', { fd })
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolvePromise(`sha256:${hash.digest('hex')}`));
  });
}
