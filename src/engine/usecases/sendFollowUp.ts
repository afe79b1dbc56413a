import { BatonError } from '../domain/errors';
import {
  decideFollowUp,
  followUpMessageProblem,
  SEND_BACK_GATES,
  type SendBackGate,
  type FollowUp,
  type FollowUpAction,
} from '../domain/followUp';
import type { StopReportEntry } from '../domain/stops';
import { reviewMessage, reviewMessageProblem, reviewProblem, type ReviewComment } from '../domain/review';
import type { DelegationStatus, RunStatus, TaskStatus } from '../domain/types';
import { isManualWorker } from '../domain/workerLaunch';
import { endAttemptForFollowUp, sendBackHeldAttempt } from '../operations/delegations/endAttemptForFollowUp';
import { recordFollowUp } from '../operations/followUps/followUps';
import { recordReview } from '../operations/followUps/recordReview';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { reopenFinishedTask } from '../operations/tasks/setTaskStatus';
import { attemptWorker } from '../queries/agentUsage';
import { readCoordinatorLease } from '../queries/coordinatorLease';
import { readRunSettings, readRunStatus } from '../queries/runs';
import type { StoreTx } from '../store/port';
import { endRecordedWorker } from './applyStop';
import type { EngineContext } from './context';
import { isCoordinatorResponsive } from './coordinatorLiveness';

export interface FollowUpOutcome {
  followUp: FollowUp;
  /** What the message did to its task (domain/followUp.ts). */
  action: Exclude<FollowUpAction['kind'], 'refuse'>;
  /** The run's status after it: a finished run that was reopened is `running` again. */
  runStatus: RunStatus;
  /**
   * For `interrupt`: who ends the running attempt's processes — its live coordinator (it sees the attempt decided and
   * ends it, gracefully first), or this process when no coordinator is alive (with the report of that end).
   */
  interrupted?: { delegationId: string; endedBy: 'coordinator' | 'this process'; report?: StopReportEntry };
  /** For `send-back`: the passed attempt that waited for review, and its review gate (rejected by the message). */
  sentBack?: { delegationId: string; gateId: string; gateKind: SendBackGate };
  /** Whether a live coordinator drives the run (it takes the message on); else `baton resume` does. */
  driven: boolean;
}

interface FollowUpInput {
  runId: string;
  taskId: string;
  message: string;
  by: string;
  /** The review comments this message is made of (sendReview): recorded with it, in its transaction. */
  review?: { reviewed?: string; comments: readonly ReviewComment[] };
}

/**
 * A person's follow-up message to a task (`baton message`, docs/agents.md "Follow-up messages"): decided, recorded
 * and carried out in one transaction — a running attempt ended (CANCELLED, not counted against maxAttempts), a
 * finished task reopened (its run back to running), or the message left for the task's next attempt. The attempt that
 * takes it starts its prompt with it and continues the last attempt's session where its preset can (claimAttempt).
 * Bad input and refusals throw before anything is written.
 */
export async function sendFollowUp(ctx: EngineContext, input: FollowUpInput): Promise<FollowUpOutcome> {
  const problem = followUpMessageProblem(input.message);
  if (problem) throw new BatonError('follow-up.invalid', problem);
  const recorded = await ctx.store.transact((tx) => recordAndAct(tx, ctx, input));
  const lease = await ctx.store.read((r) => readCoordinatorLease(r, input.runId));
  const outcome = { ...recorded, driven: isCoordinatorResponsive(lease, ctx.clock.now()) };
  const delegationId = outcome.followUp.interruptedDelegationId;
  if (!delegationId) return outcome;
  if (outcome.driven) return { ...outcome, interrupted: { delegationId, endedBy: 'coordinator' } };
  // No coordinator watches the attempt (it died, or was stopped): its worker is ended from here, as a stop's would be.
  const report = await endRecordedWorker(ctx, input.runId, delegationId, ctx.config.stopGraceSeconds * 1000);
  return { ...outcome, interrupted: { delegationId, endedBy: 'this process', report } };
}

async function recordAndAct(
  tx: StoreTx,
  ctx: EngineContext,
  input: FollowUpInput,
): Promise<Omit<FollowUpOutcome, 'interrupted' | 'driven'>> {
  const { runId, taskId, by } = input;
  const now = ctx.clock.now();
  const runStatus = await readRunStatus(tx, runId);
  const task = await tx.get<{ status: TaskStatus; worker: string | null }>(
    `SELECT status, worker FROM tasks WHERE run_id = ? AND id = ?`,
    [runId, taskId],
  );
  if (!task) throw new BatonError('task.unknown', `Task ${taskId} is not in run ${runId}.`);
  const last = await tx.get<{ id: string; status: DelegationStatus }>(
    `SELECT id, status FROM delegations WHERE run_id = ? AND task_id = ? ORDER BY attempt DESC LIMIT 1`,
    [runId, taskId],
  );
  // The worker the task last ran on (a resume's --worker included), else the one the plan names, else the default.
  const settings = await readRunSettings(tx, runId);
  const definitions = settings.workers ?? ctx.config;
  const workerId =
    (last ? await attemptWorker(tx, runId, last.id) : undefined) ??
    task.worker ??
    settings.workers?.defaultWorker ??
    ctx.config.defaultWorker;
  const open = last && ['PENDING', 'RUNNING', 'BLOCKED'].includes(last.status) ? last : undefined;
  const heldAt = open
    ? await tx.get<{ id: string; kind: SendBackGate }>(
        `SELECT id, kind FROM gates WHERE run_id = ? AND delegation_id = ? AND kind IN (${SEND_BACK_GATES.map(() => '?').join(', ')}) AND status = 'open' LIMIT 1`,
        [runId, open.id, ...SEND_BACK_GATES],
      )
    : undefined;
  const action = decideFollowUp({
    runId,
    runStatus,
    taskId,
    taskStatus: task.status,
    manual: isManualWorker(definitions, workerId),
    ...(open ? { open } : {}),
    ...(open && heldAt ? { heldAt: { gateId: heldAt.id, delegationId: open.id, kind: heldAt.kind } } : {}),
  });
  if (action.kind === 'refuse') throw new BatonError(action.code, action.message);
  const followUp = await recordFollowUp(
    tx,
    {
      runId,
      taskId,
      message: input.message,
      by,
      action: action.kind,
      ...(action.kind === 'interrupt' ? { interruptedDelegationId: action.delegationId } : {}),
      ...(action.kind === 'send-back'
        ? { sentBack: { delegationId: action.delegationId, gateId: action.gateId, gateKind: action.gateKind } }
        : {}),
    },
    now,
  );
  if (input.review)
    await recordReview(tx, { runId, taskId, followUpId: followUp.id, by, action: action.kind, ...input.review }, now);
  if (action.kind === 'interrupt')
    await endAttemptForFollowUp(tx, { runId, delegationId: action.delegationId, by }, now);
  if (action.kind === 'reopen')
    await reopenFinishedTask(tx, runId, taskId, `a follow-up from ${by} (${followUp.id}) runs it again`, now);
  const sentBack =
    action.kind === 'send-back'
      ? { delegationId: action.delegationId, gateId: action.gateId, gateKind: action.gateKind }
      : undefined;
  if (sentBack) await sendBackHeldAttempt(tx, { runId, ...sentBack, by, followUpId: followUp.id }, now);
  return {
    followUp,
    action: action.kind,
    runStatus: await refreshRunStatus(tx, runId, now),
    ...(sentBack ? { sentBack } : {}),
  };
}

/**
 * A person's review comments on a task's changes (docs/extension.md, "Review comments"), sent to its agent as ONE
 * follow-up message — the same operation as any message (sendFollowUp), written by `reviewMessage` — and kept with it
 * in the store (`review:sent`, every comment in full). `reviewed`: the attempt whose changes were commented on.
 */
export async function sendReview(
  ctx: EngineContext,
  input: { runId: string; taskId: string; reviewed?: string; comments: readonly ReviewComment[]; by: string },
): Promise<FollowUpOutcome> {
  const problem = reviewProblem(input.comments);
  if (problem) throw new BatonError('follow-up.invalid', problem);
  const message = reviewMessage(input.comments, input.reviewed);
  const tooLong = reviewMessageProblem(message);
  if (tooLong) throw new BatonError('follow-up.invalid', tooLong);
  const { runId, taskId, by, reviewed, comments } = input;
  return sendFollowUp(ctx, { runId, taskId, message, by, review: { ...(reviewed ? { reviewed } : {}), comments } });
}
