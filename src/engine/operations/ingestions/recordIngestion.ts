import { readPassFacts } from '../../queries/tasks';
import { appendEvent } from '../events/appendEvent';
import { BatonError } from '../../domain/errors';
import { hasErrors, issue, type Issue } from '../../domain/issue';
import { isTerminalDelegation } from '../../domain/transitions';
import type { Delegation, IngestionRecord, ResultStatus, TaskStatus } from '../../domain/types';
import { closeOpenGates } from '../gates/closeGate';
import { openGateOnce } from '../gates/openGate';
import { recordDelegationResult } from '../delegations/recordDelegationResult';
import { endRuntimesOf } from '../runtimes/endRuntime';
import { getDelegation } from '../../queries/delegations';
import { nextCounter } from '../counters/nextCounter';
import { promoteDependents } from '../tasks/dependents';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskStatus } from '../tasks/setTaskStatus';
import { settleUnsuccessfulAttempt } from '../tasks/settleUnsuccessfulAttempt';
import { transitionDelegation, type DelegationChange } from '../delegations/transitionDelegation';
import type { StoreTx } from '../../store/port';
import { INGESTION_COLUMNS, toIngestion, type IngestionRow } from '../../store/rows';
import { storeArtifact, type ArtifactContent } from './storeArtifact';

export interface RecordIngestionInput {
  runId: string;
  delegationId: string;
  artifactPath: string;
  digest: string;
  /** Set when the artifact validated; absent when it did not. */
  resultStatus?: ResultStatus;
  summary?: string;
  issues: Issue[];
  /** The artifact's content, kept by digest (absent for a result the coordinator rejected as too large or not text). */
  content?: ArtifactContent;
}

export interface IngestionOutcome {
  record: IngestionRecord;
  /** True when this same result (content and findings) was ingested for this delegation before: nothing was written. */
  duplicate: boolean;
}

/**
 * Applies one validated (or rejected) result to its delegation. Idempotent by result: the same
 * artifact digest for the same delegation, with the same findings (the issues its checks
 * against the contract and the workspace found), returns the record it made before and
 * changes nothing. The same bytes with different findings — the person created the file the
 * result lists — are a new result, recorded and applied as such.
 * A rejected result never completes anything: the delegation is BLOCKED behind an
 * ingestion_failed gate until a corrected artifact is ingested or the gate is decided.
 */
export async function recordIngestion(
  tx: StoreTx,
  input: RecordIngestionInput,
  now: number,
): Promise<IngestionOutcome> {
  // The newest record of these bytes: an older one with the same findings is history, not this result.
  // Ids are I-<counter> without padding: a longer id is a later one, and among equal lengths the text orders them.
  const existing = await tx.get<IngestionRow>(
    `SELECT ${INGESTION_COLUMNS} FROM ingestions WHERE run_id = ? AND delegation_id = ? AND digest = ?
     ORDER BY created_at DESC, LENGTH(id) DESC, id DESC LIMIT 1`,
    [input.runId, input.delegationId, input.digest],
  );
  if (existing) {
    const before = toIngestion(existing);
    if (findingsKey(before.issues) === findingsKey(input.issues)) return { record: before, duplicate: true };
  }

  const delegation = await getDelegation(tx, input.runId, input.delegationId);
  if (!delegation)
    throw new BatonError('delegation.unknown', `There is no delegation ${input.delegationId} in run ${input.runId}.`);
  if (isTerminalDelegation(delegation.status) || delegation.status === 'PENDING') {
    const code = delegation.status === 'PENDING' ? 'ingest.delegation-not-started' : 'ingest.delegation-terminal';
    const refusal = issue(
      code,
      'delegation',
      `Delegation ${delegation.id} is ${delegation.status}; a result can only be ingested for a RUNNING or BLOCKED delegation.`,
      delegation.status === 'PENDING'
        ? 'Claim the task first.'
        : 'A finished attempt is never reopened; claim the task for a new attempt.',
    );
    throw new BatonError(code, refusal.message, [refusal]);
  }

  const accepted = !hasErrors(input.issues) && input.resultStatus !== undefined;
  // Kept with the record, so a machine where the artifact's path means nothing reads it from the store.
  if (input.content) await storeArtifact(tx, input.content, now);
  const ordinal = await nextCounter(tx, 'ingestion');
  const record: IngestionRecord = {
    id: `I-${ordinal}`,
    runId: input.runId,
    delegationId: delegation.id,
    artifactPath: input.artifactPath,
    digest: input.digest,
    accepted,
    ...(accepted ? { resultStatus: input.resultStatus! } : {}),
    issues: input.issues,
    createdAt: now,
  };
  await tx.run(
    `INSERT INTO ingestions (id, run_id, delegation_id, artifact_path, digest, accepted, result_status, issues_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      record.id,
      record.runId,
      record.delegationId,
      record.artifactPath,
      record.digest,
      accepted ? 1 : 0,
      record.resultStatus ?? null,
      JSON.stringify(record.issues),
      now,
    ],
  );
  await appendEvent(tx, input.runId, 'ingestion:recorded', now, {
    ingestionId: record.id,
    delegationId: delegation.id,
    taskId: delegation.taskId,
    accepted,
    ...(record.resultStatus ? { resultStatus: record.resultStatus } : {}),
    issues: input.issues.filter((i) => i.severity === 'error').length,
  });

  if (!accepted) await blockOnRejectedResult(tx, delegation, record, now);
  else await applyAcceptedResult(tx, delegation, record, input.summary, now);
  await refreshRunStatus(tx, input.runId, now);
  return { record, duplicate: false };
}

async function applyAcceptedResult(
  tx: StoreTx,
  delegation: Delegation,
  record: IngestionRecord,
  summary: string | undefined,
  now: number,
): Promise<void> {
  const status = record.resultStatus!;
  const change = { resultStatus: status, artifactPath: record.artifactPath, gatesClosed: true };
  // A valid result resolves whatever gate this attempt was waiting at (its questions too).
  await closeOpenGates(
    tx,
    { runId: delegation.runId, taskId: delegation.taskId, delegationId: delegation.id },
    { decision: 'approved', note: `resolved: a valid ${status} result was ingested` },
    now,
  );
  if (status === 'BLOCKED') {
    if (delegation.status === 'RUNNING')
      await transitionDelegation(tx, delegation, 'BLOCKED', { ...change, reason: 'the worker reported BLOCKED' }, now);
    await openGateOnce(
      tx,
      delegation,
      'manual_handoff',
      `The worker reported BLOCKED on ${delegation.taskId}${summary ? `: ${summary}` : ''}. Approve to retry the task, reject to fail it.`,
      {
        ingestionId: record.id,
      },
      now,
    );
    return;
  }
  if (status === 'PASS') {
    const { verify, isolated, settings, task } = await readPassFacts(
      tx,
      delegation.runId,
      delegation.taskId,
      delegation.id,
    );
    // `review: required`: a passed attempt waits for a person (verifyAttempt opens its review gate) even with nothing
    // to verify or integrate.
    if (verify.length > 0 || isolated || settings.review === 'required') {
      // The worker is done; its claim on the work ends. The attempt completes once verification
      // passes and, for an isolated attempt, once its work is integrated (docs/isolation.md).
      await recordDelegationResult(tx, delegation, { resultStatus: status, artifactPath: record.artifactPath }, now);
      await endRuntimesOf(tx, delegation, 'result ingested', now);
      await setTaskStatus(
        tx,
        delegation.runId,
        delegation.taskId,
        'verifying',
        `${delegation.id} passed; ${isolated ? 'verifying and integrating' : 'verifying'}`,
        now,
        task,
      );
      return;
    }
    await completeAttempt(tx, delegation, { ...change, reason: 'result PASS' }, now, task);
  } else {
    // What the worker said of its failure is what a person reads first (views, status, diagnose): a plain command's
    // summary says its exit code and last output line.
    const said = summary ? `: ${clip(summary, FAIL_SUMMARY_CHARS)}` : '';
    await transitionDelegation(tx, delegation, 'FAILED', { ...change, reason: `result FAIL${said}` }, now);
    await settleUnsuccessfulAttempt(
      tx,
      delegation.runId,
      delegation.taskId,
      `${delegation.id} reported FAIL${said}`,
      now,
    );
  }
}

/** At most this much of a FAIL result's summary goes into the attempt's and the task's reason. */
const FAIL_SUMMARY_CHARS = 300;

const clip = (text: string, max: number): string => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

async function blockOnRejectedResult(
  tx: StoreTx,
  delegation: Delegation,
  record: IngestionRecord,
  now: number,
): Promise<void> {
  const errors = record.issues.filter((i) => i.severity === 'error');
  if (delegation.status === 'RUNNING') {
    await transitionDelegation(
      tx,
      delegation,
      'BLOCKED',
      { reason: rejectionReason(errors), artifactPath: record.artifactPath },
      now,
    );
  }
  await openGateOnce(
    tx,
    delegation,
    'ingestion_failed',
    `The result for ${delegation.id} was rejected (${errors.length} issue${errors.length === 1 ? '' : 's'}: ${errors[0]?.message ?? 'invalid'}). Ingest a corrected artifact, approve to retry the task, or reject to fail it.`,
    { ingestionId: record.id, artifactPath: record.artifactPath, issues: errors },
    now,
  );
}

/** The attempt succeeded: the delegation completes, the task completes, its dependents may start. */
export async function completeAttempt(
  tx: StoreTx,
  delegation: Delegation,
  change: DelegationChange,
  now: number,
  /** The task's status and reason as this transaction read them; read again otherwise. */
  task?: { status: TaskStatus; reason: string | null },
): Promise<void> {
  await transitionDelegation(tx, delegation, 'COMPLETED', change, now);
  await setTaskStatus(
    tx,
    delegation.runId,
    delegation.taskId,
    'completed',
    `${delegation.id} ${change.reason ?? 'completed'}`,
    now,
    task,
  );
  await promoteDependents(tx, delegation.runId, delegation.taskId, now);
}

/** Why a result was rejected, in words a person reads in the Runs view (no record ids). */
function rejectionReason(errors: readonly Issue[]): string {
  const first = (errors[0]?.message ?? 'it is not a valid result').replace(/\.$/, '');
  return `result rejected: ${first}${errors.length > 1 ? ` (and ${errors.length - 1} more problem${errors.length > 2 ? 's' : ''})` : ''}`;
}

/** What the checks found, compared as a whole: codes, fields, places and messages, in order. */
function findingsKey(issues: readonly Issue[]): string {
  return JSON.stringify(
    issues.map((i) => [i.severity, i.code, i.field, i.range?.start.line, i.range?.start.column, i.message]),
  );
}
