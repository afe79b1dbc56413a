import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { attemptAccessRefusal, type AttemptCredential } from '../domain/attemptCredential';
import { BatonError } from '../domain/errors';
import { hasErrors, type Issue } from '../domain/issue';
import { resultContractFor, type ResultContractBrief } from '../domain/result/resultTemplate';
import { repairFeedback, type StopHookInput, type StopVerdict } from '../domain/stopCheck';
import { usageLimitOf } from '../domain/agents/usageLimit';
import type { Delegation, ResultStatus, WorkerRuntime } from '../domain/types';
import { isInsideFolder, workspacePath } from '../domain/workspacePath';
import { presentingProcess } from '../effects/processes/processes';
import { runPaths } from '../effects/workspaceLayout';
import { hashToken } from '../operations/runtimes/renewRuntimeLease';
import { recordResultCheck } from '../operations/ingestions/recordResultCheck';
import { getDelegation } from '../queries/delegations';
import { dependencyTitles } from '../queries/tasks';
import type { StoreReader } from '../store/port';
import { RUNTIME_SELECT, TASK_COLUMNS, toRuntime, toTask, type RuntimeRow, type TaskRow } from '../store/rows';
import type { EngineContext } from './context';
import {
  judgingFactsOf,
  ingestArtifact,
  judgeArtifact,
  readArtifactFile,
  type ArtifactJudgement,
  type ArtifactSource,
  type IngestOutcome,
} from './ingestArtifact';

/** One attempt as its worker is told it (`baton_task`, docs/agents.md): what the prompt says, as data. */
export interface AttemptBrief {
  runId: string;
  delegationId: string;
  /** 1 for the first attempt of the task, 2 for its first retry, … */
  attempt: number;
  agent: string;
  task: {
    id: string;
    title: string;
    instructions: string;
    /** The globs of the files the task may change (`files:`); empty: the plan names none. */
    files: string[];
    /** The completed tasks it builds on. */
    dependencies: Array<{ id: string; title: string }>;
    /** Each verify command as argv; Baton runs them in the working folder after a PASS. */
    verify: string[][];
  };
  /** Where `.baton/` is. */
  workspace: string;
  /** Where the worker works: the workspace, or the task's worktree when it is isolated. */
  workingFolder: string;
  result: {
    /** Absolute path where the result artifact is expected (BATON_ARTIFACT_PATH). */
    path: string;
    /** The same, workspace-relative. */
    workspacePath: string;
    contract: ResultContractBrief;
  };
  lease: { status: WorkerRuntime['status']; expiresAt: number };
}

/** A dry run of ingestion on a draft (`baton_check_result`): what ingestion would find, nothing written. */
export interface DraftCheck {
  /** The draft, workspace-relative. */
  path: string;
  /** True when ingestion would accept it as it stands (no issue of severity error). */
  acceptable: boolean;
  resultStatus?: ResultStatus;
  issues: Issue[];
}

interface BoundAttempt {
  runtime: WorkerRuntime;
  delegation: Delegation;
  /** The folder its worker works in. */
  cwd: string;
}

/** Reads the attempt a credential is bound to, refused unless it may act for it now (attemptAccessRefusal). */
async function readBoundAttempt(
  r: StoreReader,
  credential: AttemptCredential,
  now: number,
  workspace: string,
): Promise<BoundAttempt> {
  const row = await r.get<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.run_id = ? AND r.id = ?`, [
    credential.runId,
    credential.runtimeId,
  ]);
  const runtime = row ? { ...toRuntime(row, now), tokenHash: row.token_hash } : undefined;
  const refusal = attemptAccessRefusal(runtime, credential, hashToken(credential.token), presentingProcess());
  if (refusal) throw refusal;
  const delegation = await getDelegation(r, credential.runId, credential.delegationId);
  if (!delegation) throw new BatonError('delegation.unknown', `There is no delegation ${credential.delegationId}.`);
  const where = await r.get<{ cwd: string | null }>(`SELECT cwd FROM runtimes WHERE run_id = ? AND id = ?`, [
    credential.runId,
    credential.runtimeId,
  ]);
  const { tokenHash: _hidden, ...shown } = runtime!;
  return { runtime: shown, delegation, cwd: where?.cwd ?? workspace };
}

/** Refuses a credential that may not act for its attempt now; returns the attempt it is bound to. */
export function authenticateAttempt(ctx: EngineContext, credential: AttemptCredential): Promise<BoundAttempt> {
  return ctx.store.read((r) => readBoundAttempt(r, credential, ctx.clock.now(), ctx.workspace));
}

/** The task of the attempt a credential is bound to, from the run's frozen copy of the plan (`baton_task`). */
export async function describeAttempt(ctx: EngineContext, credential: AttemptCredential): Promise<AttemptBrief> {
  return ctx.store.read(async (r) => {
    const { runtime, delegation, cwd } = await readBoundAttempt(r, credential, ctx.clock.now(), ctx.workspace);
    const row = await r.get<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE run_id = ? AND id = ?`, [
      delegation.runId,
      delegation.taskId,
    ]);
    if (!row) throw new BatonError('task.unknown', `Run ${delegation.runId} has no task ${delegation.taskId}.`);
    const task = toTask(row);
    const path = runPaths(ctx.workspace, delegation.runId).artifact(delegation.id);
    return {
      runId: delegation.runId,
      delegationId: delegation.id,
      attempt: delegation.attempt,
      agent: delegation.agent,
      task: {
        id: task.id,
        title: task.title,
        instructions: task.instructions.trim(),
        files: task.files,
        dependencies: await dependencyTitles(r, delegation.runId, task.id),
        verify: task.verify,
      },
      workspace: ctx.workspace,
      workingFolder: cwd,
      result: {
        path,
        workspacePath: workspacePath(ctx.workspace, path),
        contract: resultContractFor(task.id, delegation.agent),
      },
      lease: { status: runtime.status, expiresAt: runtime.leaseExpiresAt },
    };
  });
}

/**
 * A dry run of ingestion on a draft result: the same reading of the file and the same check
 * (judgeArtifact) as `baton ingest`, for the attempt the credential is bound to. Nothing is
 * written: no ingestion record, no event, no expiry made official.
 */
export async function checkDraftResult(
  ctx: EngineContext,
  credential: AttemptCredential,
  draft?: string,
): Promise<DraftCheck> {
  const { delegation, cwd } = await authenticateAttempt(ctx, credential);
  const absolute = draftPathOf(ctx.workspace, cwd, delegation, draft);
  const facts = await ctx.store.read((r) => judgingFactsOf(r, ctx, delegation));
  const { source, artifactPath } = readArtifactFile(ctx.workspace, delegation, absolute, facts.limit);
  return draftCheckOf(artifactPath, await judgeArtifact(ctx, delegation, source, facts));
}

function draftCheckOf(path: string, judged: ArtifactJudgement): DraftCheck {
  const acceptable = !hasErrors(judged.issues);
  return {
    path,
    acceptable,
    ...(judged.resultStatus && acceptable ? { resultStatus: judged.resultStatus } : {}),
    issues: judged.issues,
  };
}

/**
 * What the stop hook found (`baton check-result --stop-hook`): `ended` — the attempt is over (its result
 * handed in, stopped, …) and the hook does nothing; otherwise the check of the result the agent ends
 * with, the round it was, and `feedback` for the agent when it is sent back.
 */
export type StopCheck =
  | { kind: 'ended'; reason: string }
  | { kind: 'checked'; check: DraftCheck; verdict: StopVerdict; repairRounds: number; feedback?: string };

/** How the stop hook names a result the agent gave as its final message rather than as a file. */
export const FINAL_MESSAGE_SOURCE = 'your final message';

/**
 * The stop hook's check (docs/agents.md, "The stop hook"): the result the agent is about to end with —
 * its attempt's artifact file when it wrote one, else its final message, as the coordinator would take
 * it (resultOnDisk) — judged as ingestion judges (judgeArtifact), then, in one transaction that checks
 * the credential again, the round counted against the run's repairRounds and recorded as a
 * `result:checked` event. A terminal attempt is left alone: nothing is checked or recorded.
 */
export async function checkBeforeStop(
  ctx: EngineContext,
  credential: AttemptCredential,
  input: StopHookInput,
): Promise<StopCheck> {
  const bound = await unlessEnded(() => authenticateAttempt(ctx, credential));
  if ('kind' in bound) return bound;
  const { delegation } = bound;
  const artifact = runPaths(ctx.workspace, delegation.runId).artifact(delegation.id);
  // An agent that stops at its usage limit has no result to repair: it ends, and Baton parks the attempt
  // (docs/agents.md, "Usage limits park"); sending it back would only spend the session against the same limit.
  const said = input.lastAssistantMessage;
  if (
    !existsSync(artifact) &&
    said &&
    usageLimitOf('claude-code', { kind: 'end', ok: true, finalText: said }, ctx.clock.now())
  )
    return { kind: 'ended', reason: 'The agent stopped at its usage limit: Baton parks the attempt.' };
  const facts = await ctx.store.read((r) => judgingFactsOf(r, ctx, delegation));
  const read: { source: ArtifactSource; artifactPath: string } = existsSync(artifact)
    ? readArtifactFile(ctx.workspace, delegation, artifact, facts.limit)
    : {
        source: { bytes: new TextEncoder().encode(input.lastAssistantMessage ?? '') },
        artifactPath: FINAL_MESSAGE_SOURCE,
      };
  const judged = await judgeArtifact(ctx, delegation, read.source, facts);
  const errors = judged.issues.filter((i) => i.severity === 'error').length;
  const recorded = await ctx.store.transact(async (tx) => {
    const still = await unlessEnded(() => readBoundAttempt(tx, credential, ctx.clock.now(), ctx.workspace));
    if ('kind' in still) return still;
    const round = await recordResultCheck(
      tx,
      { delegation, errors, fallbackRounds: ctx.config.repairRounds },
      ctx.clock.now(),
    );
    return { kind: 'checked' as const, ...round };
  });
  if (recorded.kind === 'ended') return recorded;
  return {
    ...recorded,
    check: draftCheckOf(read.artifactPath, judged),
    ...(recorded.verdict.kind === 'repair'
      ? {
          feedback: repairFeedback({
            delegationId: delegation.id,
            source: read.artifactPath,
            artifactPath: artifact,
            issues: judged.issues,
            round: recorded.verdict.round,
            repairRounds: recorded.repairRounds,
          }),
        }
      : {}),
  };
}

/** The attempt, or that it has ended (refused as `runtime.not-live`): the stop hook then does nothing. */
async function unlessEnded(
  read: () => Promise<BoundAttempt>,
): Promise<BoundAttempt | Extract<StopCheck, { kind: 'ended' }>> {
  try {
    return await read();
  } catch (err) {
    if (BatonError.is(err, 'runtime.not-live')) return { kind: 'ended', reason: err.message };
    throw err;
  }
}

/**
 * Hands the attempt's result in, as `baton ingest --token` does: by the authority of the runtime
 * token, checked again inside the ingestion's transaction (authorizeIngest), so a lease that ran
 * out meanwhile is refused there and made official.
 */
export async function submitAttemptResult(
  ctx: EngineContext,
  credential: AttemptCredential,
  draft?: string,
): Promise<IngestOutcome> {
  const { delegation, cwd } = await authenticateAttempt(ctx, credential);
  const absolute = draftPathOf(ctx.workspace, cwd, delegation, draft);
  return ingestArtifact(ctx, delegation, absolute, { token: credential.token });
}

/**
 * The draft a worker names: by default its attempt's artifact path; a relative path is taken
 * from the folder it works in (as the paths in its result are). It must lie inside the
 * workspace, also after links are resolved — a worker's tools read nothing else through Baton.
 */
export function draftPathOf(workspace: string, cwd: string, delegation: Delegation, given?: string): string {
  const path =
    given === undefined ? runPaths(workspace, delegation.runId).artifact(delegation.id) : resolve(cwd, given);
  const inside = (candidate: string): boolean => isInsideFolder(realOr(workspace), realOr(candidate));
  if (!isInsideFolder(workspace, path) || !inside(path))
    throw new BatonError(
      'ingest.artifact-outside-workspace',
      `The draft ${given === undefined || isAbsolute(given) ? path : `${given} (${path})`} is outside the workspace ${workspace}, or leads out of it through a link: a result is read only from inside it.`,
    );
  return path;
}

/** The path with links resolved; for a file not there yet, its folder's (the check that follows reports it missing). */
function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return resolve(realpathSync(dirname(path)), path.slice(dirname(path).length + 1));
    } catch {
      return path;
    }
  }
}
