// Resolving an integration_conflict gate (docs/isolation.md, "Resolving a conflict"): the two ways the editor's
// *Resolve Conflict…* offers — the target merged into the task's worktree for a person (the merge editor), or the
// conflict sent to the task's agent as a follow-up message.
import { existsSync } from 'node:fs';
import { conflictFollowUpMessage, resolutionMove, type UnfinishedResolution } from '../domain/conflictResolution';
import { BatonError } from '../domain/errors';
import type { FollowUp } from '../domain/followUp';
import { followUpReason } from '../domain/followUp';
import type { Gate, RunStatus } from '../domain/types';
import { Git } from '../effects/git/git';
import { readUnfinishedResolution } from '../effects/git/worktrees';
import { transitionDelegation } from '../operations/delegations/transitionDelegation';
import { appendEvent } from '../operations/events/appendEvent';
import { recordFollowUp } from '../operations/followUps/followUps';
import { closeGate } from '../operations/gates/closeGate';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { setTaskNotBefore, setTaskStatus } from '../operations/tasks/setTaskStatus';
import { getDelegation } from '../queries/delegations';
import { readRunStatus } from '../queries/runs';
import { listGates } from '../queries/runView';
import { getAttemptWorktree, readRunIsolation } from '../queries/worktrees';
import type { AttemptWorktree } from '../domain/isolation';
import type { StoreReader } from '../store/port';
import type { EngineContext } from './context';
import { commitIdentity } from './integrationSteps';

/** What *Open in Merge Editor* has to work with: the worktree, and the files in conflict in it now. */
export interface ConflictInWorktree {
  gateId: string;
  runId: string;
  taskId: string;
  delegationId: string;
  /** The task's worktree (its top folder); `files` are relative to it. */
  worktree: string;
  branch: string;
  targetBranch: string;
  /** How the target came in: merged into the task's branch, or the branch rebased onto it (domain `resolutionMove`). */
  move: 'merge' | 'rebase';
  /**
   * `conflicted`: the target came in now and these files carry its conflicts (unmerged index entries); `unfinished`: a
   * resolution was under way already (this is asked again) and these files are still in conflict; `clean`: the target
   * came in without a conflict (it was committed) — approving the gate integrates.
   */
  state: 'conflicted' | 'unfinished' | 'clean';
  files: string[];
}

/**
 * *Open in Merge Editor*, the engine's part: brings the run's target branch into the task's worktree — merged into
 * its branch, or its branch rebased onto it (by the run's strategy) — and leaves git stopped at the conflicts, so the
 * files carry the conflict markers and the index their three versions, which is what a merge editor needs. Asked
 * again while that is under way, it changes nothing and says which files are still in conflict. The gate stays open:
 * approving it after the person resolved and committed integrates again (an unfinished merge reopens the gate,
 * integrateAttempt); nothing here touches the target branch or the main working tree.
 */
export async function mergeTargetIntoWorktree(ctx: EngineContext, gateId: string): Promise<ConflictInWorktree> {
  const { gate, worktree, targetBranch } = await ctx.store.read((r) => conflictAt(r, gateId));
  const git = new Git(worktree.path);
  const base = {
    gateId,
    runId: gate.runId,
    taskId: worktree.taskId,
    delegationId: worktree.delegationId,
    worktree: worktree.path,
    branch: worktree.branch,
    targetBranch,
    move: resolutionMove(worktree.strategy),
  };
  const under = await readUnfinishedResolution(git);
  if (under) return { ...base, state: 'unfinished', files: [...under.unmerged] };
  const dirty = await git.dirtyPaths();
  if (dirty.length > 0)
    throw new BatonError(
      'worktree.unmergeable',
      `${worktree.path} has uncommitted changes (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? ', …' : ''}); commit them there first, or approve ${gateId} if they resolve the conflict.`,
    );
  const identity = await commitIdentity(git);
  const target = `refs/heads/${targetBranch}`;
  const moved =
    base.move === 'merge'
      ? await git.attempt([
          ...identity,
          'merge',
          '--no-ff',
          '--no-edit',
          '-m',
          `Merge ${targetBranch} into ${worktree.branch} (resolving ${gateId})`,
          target,
        ])
      : await git.attempt([...identity, 'rebase', '--no-autosquash', target]);
  const files = moved.exitCode === 0 ? [] : await git.unmergedPaths();
  if (moved.exitCode !== 0 && files.length === 0) {
    // Not a conflict (a file in the way, a hook-less git that refused): put the worktree back as it was.
    await git.attempt([base.move, '--abort']);
    throw new BatonError(
      'worktree.unmergeable',
      `git could not ${base.move === 'merge' ? `merge ${targetBranch} into` : `rebase onto ${targetBranch}`} ${worktree.path}: ${(moved.stderr || moved.stdout).trim().split('\n')[0]}`,
    );
  }
  const state = files.length > 0 ? 'conflicted' : 'clean';
  await ctx.store.transact((tx) =>
    appendEvent(tx, gate.runId, 'integration:resolving', ctx.clock.now(), {
      gateId,
      delegationId: worktree.delegationId,
      taskId: worktree.taskId,
      move: base.move,
      targetBranch,
      files,
    }),
  );
  ctx.log(
    `${worktree.delegationId}: ${targetBranch} brought into its worktree by ${base.move} to resolve ${gateId}: ${files.length > 0 ? `conflicts in ${files.join(', ')}` : 'no conflict'}`,
  );
  return { ...base, state, files };
}

export interface ConflictSentToAgent {
  followUp: FollowUp;
  /** The attempt that was held at the gate: ended (CANCELLED, not counted against maxAttempts). */
  endedDelegationId: string;
  runStatus: RunStatus;
  message: string;
}

/**
 * *Send to Agent*: the conflict goes back to the task's agent as a follow-up message (docs/agents.md, "Follow-up
 * messages"), in one transaction — the gate closes (rejected: this attempt's work is not integrated as it is, with a
 * note naming the message), the attempt held there ends CANCELLED with a follow-up's reason (not a failure retry),
 * its task goes back to `ready`, and the message waits for the next attempt. That attempt starts, like every attempt,
 * from the target as it is now, continues the agent's session, and is told to merge its earlier branch — kept, with
 * its worktree, until `baton cleanup` — and settle the files; its result is judged and integrated like any other.
 */
export async function sendConflictToAgent(
  ctx: EngineContext,
  input: { gateId: string; by: string },
): Promise<ConflictSentToAgent> {
  return ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    const { gate, worktree, targetBranch } = await conflictAt(tx, input.gateId);
    const runStatus = await readRunStatus(tx, gate.runId);
    if (runStatus === 'superseded' || runStatus === 'cancelled')
      throw new BatonError('follow-up.run-ended', `Run ${gate.runId} is ${runStatus}; it takes no messages.`);
    const delegation = await getDelegation(tx, gate.runId, worktree.delegationId);
    if (delegation?.status !== 'BLOCKED')
      throw new BatonError(
        'gate.already-decided',
        `${worktree.delegationId} no longer waits at ${gate.id} (it is ${delegation?.status ?? 'gone'}).`,
      );
    const message = conflictFollowUpMessage({
      taskId: worktree.taskId,
      targetBranch,
      branch: worktree.branch,
      files: gateFiles(gate, worktree),
    });
    const followUp = await recordFollowUp(
      tx,
      { runId: gate.runId, taskId: worktree.taskId, message, by: input.by, action: 'queue' },
      now,
    );
    await closeGate(
      tx,
      gate,
      {
        decision: 'rejected',
        by: input.by,
        note: `sent to the agent as ${followUp.id}: its next attempt merges ${worktree.branch} and resolves the conflict`,
      },
      now,
    );
    await transitionDelegation(tx, delegation, 'CANCELLED', { reason: followUpReason(input.by) }, now);
    await setTaskStatus(
      tx,
      gate.runId,
      worktree.taskId,
      'ready',
      `the conflict at ${gate.id} was sent to the agent (${followUp.id}); the next attempt resolves it`,
      now,
    );
    await setTaskNotBefore(tx, gate.runId, worktree.taskId, null);
    return {
      followUp,
      endedDelegationId: delegation.id,
      runStatus: await refreshRunStatus(tx, gate.runId, now),
      message,
    };
  });
}

/** The open integration_conflict gate with this id, its attempt's worktree (on disk) and the run's target branch. */
async function conflictAt(
  r: StoreReader,
  gateId: string,
): Promise<{ gate: Gate; worktree: AttemptWorktree; targetBranch: string }> {
  const gate = (await listGates(r)).find((g) => g.id === gateId);
  if (!gate) throw new BatonError('gate.unknown', `There is no gate ${gateId}.`);
  if (gate.kind !== 'integration_conflict' || !gate.delegationId)
    throw new BatonError('gate.not-conflict', `${gateId} is a ${gate.kind} gate, not an integration conflict.`);
  if (gate.status !== 'open')
    throw new BatonError(
      'gate.already-decided',
      `${gateId} was already ${gate.status} by ${gate.decidedBy ?? 'someone'}.`,
    );
  const worktree = await getAttemptWorktree(r, gate.runId, gate.delegationId);
  const run = await readRunIsolation(r, gate.runId);
  if (!worktree || !run?.targetBranch)
    throw new BatonError('delegation.not-isolated', `${gate.delegationId} has no worktree.`);
  if (worktree.removedAt !== undefined || !existsSync(worktree.path))
    throw new BatonError(
      'worktree.gone',
      `The worktree of ${gate.delegationId} (${worktree.path}) was removed; its work cannot be resolved there. Reject ${gateId} and run the task again.`,
    );
  return { gate, worktree, targetBranch: run.targetBranch };
}

/** The files the gate named (its details), else those recorded with the worktree. */
function gateFiles(gate: Gate, worktree: AttemptWorktree): string[] {
  const files = gate.details.files;
  return Array.isArray(files) && files.every((f): f is string => typeof f === 'string')
    ? files
    : worktree.conflictFiles;
}

export type { UnfinishedResolution };
