import { createHash } from 'node:crypto';
import { dirname, resolve } from 'node:path';
import { refusalError } from '../domain/admission';
import { BatonError } from '../domain/errors';
import type { StartPlan } from '../domain/launch';
import { wentWrongSinceLastPass } from '../domain/followUp';
import { continuesSession } from '../domain/parking';
import {
  ARGV_PROMPT_MAX_BYTES,
  buildFittedPrompt,
  STDIN_PROMPT_MAX_BYTES,
  VERIFY_TAIL_BYTES,
  verifyOutputTail,
  type EarlierAttempt,
} from '../domain/prompt';
import type { Delegation } from '../domain/types';
import { batonMcpTools } from '../domain/agents/presets';
import { isAgentWorker, MANUAL_HOLDER, promptInArgv, wiresBatonMcp } from '../domain/workerLaunch';
import { readBatonFileTail, type FileTail } from '../effects/files/safeRead';
import { ensureBatonFolder, writeBatonFile } from '../effects/files/safeWrite';
import { createWorktree } from '../effects/git/worktrees';
import { runPaths, workspaceInWorktree, worktreeLocation } from '../effects/workspaceLayout';
import { claimDelegation, type Claim } from '../operations/delegations/claimDelegation';
import { appendEvent } from '../operations/events/appendEvent';
import { endRunningAttempt } from '../operations/delegations/endRunningAttempt';
import { enqueueDelegation } from '../operations/delegations/enqueueDelegation';
import { deliverFollowUps } from '../operations/followUps/followUps';
import { recordPrompt } from '../operations/delegations/recordPrompt';
import { openGate } from '../operations/gates/openGate';
import { recordRunIsolation } from '../operations/runs/recordRunIsolation';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { recordRuntimeLaunch } from '../operations/runtimes/createRuntime';
import { recordWorktree } from '../operations/worktrees/worktrees';
import { readAdmission } from '../queries/admission';
import { lastAgentSession, sessionTotalsBefore } from '../queries/agentUsage';
import { parkedBefore } from '../queries/delegations';
import { readEarlierAttempts } from '../queries/earlierAttempts';
import { messagesSinceLastPass } from '../queries/followUps';
import { readRunSettings } from '../queries/runs';
import { dependencyTitles, readTaskClaimFacts } from '../queries/tasks';
import { carriedHeldWork, readRunIsolation } from '../queries/worktrees';
import type { StoreTx } from '../store/port';
import { isSharedStore } from '../domain/config';
import { newWatchdogKey } from '../effects/processes/leaseWatchdog';
import type { EngineContext } from './context';
import { workspacePath } from '../domain/workspacePath';
import type { StartIsolation } from './planIsolation';

/** An attempt claimed for a decided start, its prompt and (for an isolated one) its worktree on disk. */
export interface ClaimedAttempt {
  delegation: Delegation;
  runtimeId: string;
  /** The runtime's token, handed to the worker once. */
  token: string;
  /** On a shared store: the key its lease watchdog checks deadlines with (effects/processes/leaseWatchdog.ts). */
  watchdogKey?: string;
  /** Where the worker works: the workspace, or its place in the attempt's worktree. */
  cwd: string;
  /** `startCommit`: what its branch starts from — the target's head, or work carried over from a review. */
  worktree?: { path: string; branch: string; repoRoot: string; startCommit: string };
  prompt: string;
  promptPath: string;
  artifactPath: string;
  logPath: string;
  /** The agent session of the task's last attempt, for a retry whose worker continues it. */
  resumeSession?: string;
  /** The tokens the continued session had counted before this attempt (its CLI may report thread totals). */
  sessionTotals?: { inputTokens: number; outputTokens: number };
  /** Until when (monotonic) the claim's lease holds: measured before its transaction, so never late. */
  leaseUntilMono: number;
  /** The run's repairRounds (frozen with it): whether its agent gets the stop hook (installsStopHook). */
  repairRounds: number;
}

/**
 * Claims an attempt of a decided start (domain/launch.ts) in ONE transaction: the admission rule
 * checked again (graphile-worker's eligibility inside the claim: an external worker may have
 * taken a slot or an overlapping task since the pass read its snapshot), the next attempt
 * enqueued and claimed, its worktree and launch recorded, its prompt built and its digest kept
 * (prompt provenance). After the commit the prompt file and the worktree are written; a failure
 * there fails the attempt — it must end in the store, not stay RUNNING with nothing behind it.
 * A person's task then opens its manual_handoff gate. Undefined when it was not claimed (someone
 * else claimed or gated the task meanwhile: the next pass sees it) or failed. A store out of reach during the claim's
 * transaction (`store.unreachable`) is thrown: whether its commit landed is unknown.
 */
export async function claimAttempt(
  ctx: EngineContext,
  input: {
    runId: string;
    plan: StartPlan;
    where: Extract<StartIsolation, { mode: 'shared' | 'worktree' }>;
    holder: string;
    maxConcurrency: number;
  },
): Promise<ClaimedAttempt | undefined> {
  const { runId, plan } = input;
  let claimed: ClaimedAttempt;
  // A retry's prompt shows its earlier attempts' failed verify output: files, read before the transaction.
  const verifyOutputs = await readVerifyOutputs(ctx, runId, plan.task.id);
  const leaseUntilMono = ctx.clock.monotonic() + plan.leaseMs;
  try {
    claimed = { ...(await ctx.store.transact((tx) => recordClaim(tx, ctx, input, verifyOutputs))), leaseUntilMono };
  } catch (err) {
    // A store out of reach may have taken the commit and lost only its answer: the caller finds out once it answers.
    if (!(err instanceof BatonError) || err.code === 'coordinator.superseded' || err.code === 'store.unreachable')
      throw err;
    ctx.log(`${plan.task.id}: not started: ${err.message}`);
    return undefined;
  }
  const { delegation, worktree, artifactPath, promptPath } = claimed;
  try {
    // Never through a link a worker planted under .baton/ (workspace.link-refused fails the attempt).
    ensureBatonFolder(ctx.workspace, dirname(artifactPath));
    writeBatonFile(ctx.workspace, promptPath, claimed.prompt);
    if (worktree && input.where.mode === 'worktree') {
      // git would create the worktree through a link planted at .baton/worktrees/<run>.
      ensureBatonFolder(ctx.workspace, dirname(worktree.path));
      await createWorktree(worktree.repoRoot, worktree, worktree.startCommit);
      ctx.log(`${delegation.id}: worktree ${workspacePath(ctx.workspace, worktree.path)} on ${worktree.branch}`);
    }
  } catch (err) {
    await failAttempt(ctx, runId, delegation.id, `could not prepare the attempt: ${(err as Error).message}`);
    return undefined;
  }
  if (plan.manual) await handOff(ctx, runId, claimed);
  return claimed;
}

/** The task's next attempt, admitted (its limits) and claimed for the coordinator (or a person's hand-off). */
async function admitAndClaim(
  tx: StoreTx,
  ctx: EngineContext,
  input: Parameters<typeof claimAttempt>[1],
  now: number,
): Promise<Claim> {
  const { runId, plan } = input;
  const { task } = plan;
  const facts = await readTaskClaimFacts(tx, runId, task.id);
  if (!facts) throw new BatonError('task.unknown', `Task ${task.id} is not in run ${runId}.`);
  const refusal = await readAdmission(tx, {
    runId,
    taskId: task.id,
    now,
    maxConcurrency: input.maxConcurrency,
    holder: input.holder,
    task: facts.task,
  });
  if (refusal) throw refusalError(refusal);
  const queued = await enqueueDelegation(tx, { runId, taskId: task.id }, now, facts);
  const holder = plan.manual ? MANUAL_HOLDER : input.holder;
  // Enqueueing wrote the delegation and left the task as it was read.
  const known = { delegation: queued, task: { status: facts.task.status, reason: facts.task.statusReason } };
  return claimDelegation(
    tx,
    { runId, delegationId: queued.id, leaseMs: plan.leaseMs, holder, known },
    { now, ids: ctx.ids },
  );
}

async function recordClaim(
  tx: StoreTx,
  ctx: EngineContext,
  input: Parameters<typeof claimAttempt>[1],
  verifyOutputs: ReadonlyMap<string, FileTail>,
): Promise<Omit<ClaimedAttempt, 'leaseUntilMono'>> {
  const { runId, plan, where } = input;
  const { task } = plan;
  const now = ctx.clock.now();
  const claim = await admitAndClaim(tx, ctx, input, now);
  const delegationId = claim.delegation.id;
  let cwd = ctx.workspace;
  let worktree: ClaimedAttempt['worktree'];
  if (where.mode === 'worktree') {
    if (!(await readRunIsolation(tx, runId))) await recordRunIsolation(tx, where.run, now);
    const location = worktreeLocation(ctx.workspace, runId, task.id, claim.delegation.attempt);
    // Changes requested at a review: the attempt goes on from the reviewed work, which the target does not hold yet.
    const carried = await carriedHeldWork(tx, runId, task.id);
    const baseCommit = carried?.baseCommit ?? where.baseCommit;
    await recordWorktree(
      tx,
      { runId, delegationId, taskId: task.id, ...location, baseCommit, strategy: where.run.strategy },
      now,
    );
    if (carried)
      await appendEvent(tx, runId, 'worktree:carried', now, {
        delegationId,
        taskId: task.id,
        fromDelegationId: carried.delegationId,
        commit: carried.sourceHead,
      });
    worktree = { ...location, repoRoot: where.run.repoRoot, startCommit: carried?.sourceHead ?? where.baseCommit };
    cwd = workspaceInWorktree(location.path, where.run.repoRoot, ctx.workspace);
  }
  const paths = runPaths(ctx.workspace, runId);
  const logPath = paths.log(delegationId);
  // A person's hand-off has no process to watch.
  const watchdogKey = isSharedStore(ctx.config) && !plan.manual ? newWatchdogKey() : undefined;
  await recordRuntimeLaunch(tx, claim.runtimeId, {
    worker: plan.workerId,
    logPath,
    cwd,
    ...(watchdogKey ? { watchdogKey } : {}),
  });
  await refreshRunStatus(tx, runId, now);
  const artifactPath = paths.artifact(delegationId);
  // An isolated worker works elsewhere: it gets the artifact's absolute path.
  // Stored paths are absolute or workspace-relative (a result ingested by hand); an isolated worker works elsewhere.
  const shown = (path: string): string => {
    const absolute = resolve(ctx.workspace, path);
    return worktree ? absolute : workspacePath(ctx.workspace, absolute);
  };
  const dependencies = await dependencyTitles(tx, runId, task.id);
  // Earlier attempts that passed, or that a follow-up ended, are not "what went wrong" (domain/followUp.ts).
  const earlierAttempts =
    claim.delegation.attempt > 1
      ? asShown(
          wentWrongSinceLastPass(
            await readEarlierAttempts(tx, { runId, taskId: task.id, beforeAttempt: claim.delegation.attempt }),
          ),
          verifyOutputs,
          shown,
        )
      : [];
  // A person's follow-up messages open the prompt: new ones, and those an unsuccessful attempt since the last pass had.
  const followUps = await messagesSinceLastPass(tx, runId, task.id);
  const fitted = buildFittedPrompt(
    {
      task,
      delegationId,
      agent: claim.delegation.agent,
      artifactPath: shown(artifactPath),
      dependencies,
      earlierAttempts,
      followUps,
      // An agent preset gets `baton mcp` wherever the coordinator has a CLI to start it with (startWorker.ts).
      ...(wiresBatonMcp(plan.worker) && ctx.cliPath ? { batonTools: batonMcpTools(plan.permissions.profile) } : {}),
    },
    promptInArgv(plan.worker) ? ARGV_PROMPT_MAX_BYTES : STDIN_PROMPT_MAX_BYTES,
  );
  // Prompt provenance: the file keeps the exact text, the store its digest and size (docs/workers.md).
  const provenance = {
    sha256: createHash('sha256').update(fitted.text).digest('hex'),
    bytes: Buffer.byteLength(fitted.text),
    truncated: fitted.truncated,
  };
  await recordPrompt(tx, { runId, delegationId, taskId: task.id }, provenance, now);
  // A retry may continue the agent's session of the task's last attempt, when its worker asks for it; the attempt
  // after a parked one always does (docs/agents.md, "Usage limits park"), and so does a follow-up: the attempt that
  // carries a message no attempt carried yet (docs/agents.md, "Follow-up messages").
  const agent = isAgentWorker(plan.worker) ? plan.worker : undefined;
  const parked = await parkedBefore(tx, runId, task.id, claim.delegation.attempt);
  const newMessages = followUps.filter((f) => f.delegationId === undefined);
  const resumeSession =
    agent && continuesSession(agent, claim.delegation.attempt, parked !== undefined || newMessages.length > 0)
      ? await lastAgentSession(tx, runId, task.id, agent.type)
      : undefined;
  await deliverFollowUps(
    tx,
    {
      runId,
      taskId: task.id,
      delegationId,
      pending: newMessages,
      ...(resumeSession ? { sessionId: resumeSession } : {}),
    },
    now,
  );
  if (parked)
    await appendEvent(tx, runId, 'attempt:resumed', now, {
      delegationId,
      taskId: task.id,
      parkedDelegationId: parked,
      ...(resumeSession ? { sessionId: resumeSession } : {}),
    });
  return {
    delegation: claim.delegation,
    runtimeId: claim.runtimeId,
    token: claim.token,
    ...(watchdogKey ? { watchdogKey } : {}),
    cwd,
    ...(worktree ? { worktree } : {}),
    prompt: fitted.text,
    promptPath: paths.prompt(delegationId),
    artifactPath,
    logPath,
    ...(resumeSession
      ? { resumeSession, sessionTotals: await sessionTotalsBefore(tx, runId, task.id, resumeSession) }
      : {}),
    // A run started before repairRounds was frozen takes this machine's config.
    repairRounds: (await readRunSettings(tx, runId)).repairRounds ?? ctx.config.repairRounds,
  };
}

/**
 * The end of each failed verify command's log among the task's latest attempts, by log path. Read before the claim's
 * transaction (no file I/O inside it); a log that cannot be read is left out and the prompt names its path instead.
 */
async function readVerifyOutputs(ctx: EngineContext, runId: string, taskId: string): Promise<Map<string, FileTail>> {
  const outputs = new Map<string, FileTail>();
  const attempts = await ctx.store.read((r) => readEarlierAttempts(r, { runId, taskId }));
  for (const { failedVerification: failed } of attempts) {
    if (!failed) continue;
    try {
      const tail = readBatonFileTail(ctx.workspace, resolve(ctx.workspace, failed.logPath), VERIFY_TAIL_BYTES);
      if (tail) outputs.set(failed.logPath, tail);
    } catch (err) {
      ctx.log(
        `${taskId}: the output of an earlier verify command is left out of the prompt: ${(err as Error).message}`,
      );
    }
  }
  return outputs;
}

/** Earlier attempts as the new attempt's worker sees them: paths where it works from, verify output as read. */
function asShown(
  attempts: EarlierAttempt[],
  outputs: ReadonlyMap<string, FileTail>,
  shown: (path: string) => string,
): EarlierAttempt[] {
  return attempts.map(({ rejectedResult, failedVerification, ...attempt }) => {
    const output = failedVerification && outputs.get(failedVerification.logPath);
    return {
      ...attempt,
      ...(rejectedResult
        ? { rejectedResult: { ...rejectedResult, artifactPath: shown(rejectedResult.artifactPath) } }
        : {}),
      ...(failedVerification
        ? {
            failedVerification: {
              ...failedVerification,
              logPath: shown(failedVerification.logPath),
              ...(output ? { output: verifyOutputTail(output.text, failedVerification.command, output.cut) } : {}),
            },
          }
        : {}),
    };
  });
}

/** A person's task: the manual_handoff gate says what to do (no process; nobody waits for it). */
async function handOff(ctx: EngineContext, runId: string, claimed: ClaimedAttempt): Promise<void> {
  const { delegation, promptPath, artifactPath } = claimed;
  const delegationId = delegation.id;
  await ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    await openGate(
      tx,
      {
        runId,
        kind: 'manual_handoff',
        taskId: delegation.taskId,
        delegationId,
        reason: `Task ${delegation.taskId} is for a person. Do the work, then ingest the result for ${delegationId} (baton ingest --delegation ${delegationId} --artifact <file>). Approve to hand it out again, reject to fail it.`,
        details: { manual: true, promptPath, artifactPath },
      },
      now,
    );
    await refreshRunStatus(tx, runId, now);
  });
}

/** The attempt fails (it could not be prepared or started); the retry policy applies. */
export async function failAttempt(
  ctx: Pick<EngineContext, 'store' | 'clock'>,
  runId: string,
  delegationId: string,
  reason: string,
): Promise<void> {
  await ctx.store.transact((tx) =>
    endRunningAttempt(tx, { runId, delegationId, to: 'FAILED', reason }, ctx.clock.now()),
  );
}
