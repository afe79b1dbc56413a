import type { ErrorCode } from './errors';
import type { EarlierAttempt } from './prompt';
import type { DelegationStatus, RunStatus, TaskStatus } from './types';

/**
 * Follow-up messages (docs/agents.md, "Follow-up messages"): a person's message to a task's agent, sent with
 * `baton message <task> "…"`. None of the four agent CLIs is started with an input stream Baton could write to in the
 * middle of a run, so a message always reaches the agent as the first words of an attempt's prompt — an attempt that
 * continues the session of the task's last one where its preset can (domain/parking.ts `continuesSession`).
 */

/** The most a message may hold: a message is a few sentences, not a plan. */
export const MAX_FOLLOW_UP_BYTES = 16 * 1024;

/** What a follow-up does to its task, decided from the task as it stands (decideFollowUp). */
export type FollowUpAction =
  /** Its attempt is running: ended gracefully (CANCELLED, not counted against maxAttempts); the next one carries it. */
  | { kind: 'interrupt'; delegationId: string }
  /** Its task finished (completed or failed): reopened for a follow-up attempt, not counted as a failure retry. */
  | { kind: 'reopen' }
  /** Its task waits to start (ready, pending, gated): its next attempt carries it. */
  | { kind: 'queue' }
  /**
   * Its passed attempt is held before integration at a gate a message answers (SEND_BACK_GATES): at a review gate
   * (`review: required`) the person requests changes; at an integration_failed gate (its work fails merged with the
   * target) the failure goes back to the agent. The gate is rejected with the message, the held attempt ended
   * (CANCELLED, not counted against maxAttempts), and the next attempt starts from the held attempt's work and carries
   * the message.
   */
  | { kind: 'send-back'; delegationId: string; gateId: string; gateKind: SendBackGate }
  | { kind: 'refuse'; code: Extract<ErrorCode, `follow-up.${string}`>; message: string };

export interface FollowUpTarget {
  runId: string;
  runStatus: RunStatus;
  taskId: string;
  taskStatus: TaskStatus;
  /** The task's worker is a person (`manual`): there is no agent to read a message. */
  manual: boolean;
  /** The task's latest attempt that is not over (PENDING, RUNNING or BLOCKED), if any. */
  open?: { id: string; status: DelegationStatus };
  /** The open gate of SEND_BACK_GATES that attempt waits at, if any. */
  heldAt?: { gateId: string; delegationId: string; kind: SendBackGate };
}

/**
 * The gates at which a passed attempt's committed work is held before integration and a message sends it back to the
 * agent: the next attempt starts from that work (claimAttempt, `carriedHeldWork`).
 */
export const SEND_BACK_GATES = ['review', 'integration_failed'] as const;
export type SendBackGate = (typeof SEND_BACK_GATES)[number];

/** The task states a message is taken in (`decideFollowUp`): the editor offers Send Message… on these. */
export const FOLLOW_UP_TASK_STATUSES: readonly TaskStatus[] = [
  'running',
  'gated',
  'completed',
  'failed',
  'ready',
  'pending',
];

/**
 * What a message to a task does. A running attempt is ended and continued; a finished task gets a follow-up attempt
 * (its run, if it had ended, goes back to running); a task that has not started yet takes the message with its next
 * attempt. Refused: a person's task, a task whose result is being verified or integrated (its outcome is moments
 * away: send the message once it is judged), a task that cannot run again, a run that was replaced or cancelled.
 */
export function decideFollowUp(t: FollowUpTarget): FollowUpAction {
  if (t.runStatus === 'superseded' || t.runStatus === 'cancelled')
    return refuse(
      'follow-up.run-ended',
      `Run ${t.runId} is ${t.runStatus}; ${t.runStatus === 'superseded' ? 'send the message to the task in the run that replaced it' : 'a cancelled run takes no messages'}.`,
    );
  if (t.manual)
    return refuse(
      'follow-up.manual-worker',
      `Task ${t.taskId} is done by a person (worker type manual); there is no agent to send a message to.`,
    );
  switch (t.taskStatus) {
    case 'running':
    case 'gated':
      // A message to a passed attempt held before integration sends its work back: changes requested at its review,
      // or its failure on the merged tree for the agent to fix.
      if (t.heldAt && t.open?.status === 'BLOCKED' && t.open.id === t.heldAt.delegationId)
        return { kind: 'send-back', delegationId: t.open.id, gateId: t.heldAt.gateId, gateKind: t.heldAt.kind };
      // A task may wait at a gate while its attempt runs on (an agent's question): that attempt takes the message.
      return t.open?.status === 'RUNNING' ? { kind: 'interrupt', delegationId: t.open.id } : { kind: 'queue' };
    case 'completed':
    case 'failed':
      return { kind: 'reopen' };
    case 'ready':
    case 'pending':
      return { kind: 'queue' };
    case 'verifying':
      return refuse(
        'follow-up.task-verifying',
        `Task ${t.taskId}'s result is being verified and integrated; send the message once it is judged.`,
      );
    case 'blocked':
    case 'cancelled':
    case 'skipped':
      return refuse(
        'follow-up.task-ended',
        `Task ${t.taskId} is ${t.taskStatus}; it does not run again in run ${t.runId}.`,
      );
  }
}

function refuse(code: Extract<ErrorCode, `follow-up.${string}`>, message: string): FollowUpAction {
  return { kind: 'refuse', code, message };
}

/** Why a message is not one Baton takes (empty, or over MAX_FOLLOW_UP_BYTES), or undefined. */
export function followUpMessageProblem(message: string): string | undefined {
  if (message.trim() === '') return 'The message is empty; say what the agent should do.';
  const bytes = Buffer.byteLength(message);
  if (bytes > MAX_FOLLOW_UP_BYTES)
    return `The message is ${bytes} bytes; a follow-up holds at most ${MAX_FOLLOW_UP_BYTES} (put longer text in a file in the workspace and name it).`;
  return undefined;
}

/** A running attempt ended for a follow-up: its reason starts with this (how it is told from a stop or a failure). */
export const FOLLOW_UP_REASON_PREFIX = 'follow-up: ';

export function followUpReason(by: string): string {
  return `${FOLLOW_UP_REASON_PREFIX}${by} sent a message; the next attempt continues with it`;
}

export function isFollowUpReason(reason: string | undefined): boolean {
  return reason?.startsWith(FOLLOW_UP_REASON_PREFIX) ?? false;
}

/** A follow-up message as the store keeps it (table follow_ups, migration 12). */
export interface FollowUp {
  /** M-<n>. */
  id: string;
  runId: string;
  taskId: string;
  message: string;
  /** Who sent it: `--by`, else $BATON_USER, else the OS user (as a gate's decidedBy). */
  by: string;
  sentAt: number;
  /** The running attempt it ended, if it ended one. */
  interruptedDelegationId?: string;
  /** The attempt that carried it to the agent; absent until one is claimed. */
  delegationId?: string;
}

/** One message as the prompt carries it. */
export interface FollowUpMessage {
  id: string;
  by: string;
  message: string;
}

/**
 * The earlier attempts a follow-up's prompt tells about in "What went wrong before": only those after the task's last
 * passed attempt (what passed did not go wrong), and not an attempt a follow-up ended (it was not wrong, a person
 * spoke). A retry's prompt is unchanged: its earlier attempts are all unsuccessful.
 */
export function wentWrongSinceLastPass(attempts: readonly EarlierAttempt[]): EarlierAttempt[] {
  let from = 0;
  attempts.forEach((a, i) => {
    if (a.status === 'COMPLETED') from = i + 1;
  });
  return attempts.slice(from).filter((a) => !(a.status === 'CANCELLED' && isFollowUpReason(a.reason)));
}
