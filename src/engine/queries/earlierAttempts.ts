import type { Issue } from '../domain/issue';
import { EARLIER_ATTEMPTS_SHOWN, EARLIER_ISSUES_SHOWN, type EarlierAttempt } from '../domain/prompt';
import type { DelegationStatus } from '../domain/types';
import type { StoreReader } from '../store/port';

type Reader = Pick<StoreReader, 'all'>;

interface AttemptRow {
  id: string;
  attempt: number;
  status: string;
  reason: string | null;
}

interface IngestionRow {
  id: string;
  delegation_id: string;
  artifact_path: string;
  accepted: number;
  issues_json: string;
  created_at: number;
}

interface ReceiptRow {
  delegation_id: string;
  command_json: string;
  exit_code: number | null;
  timed_out: number;
  log_path: string;
}

/**
 * What went wrong in a task's latest attempts before `beforeAttempt` (all of them when absent), oldest first, at most
 * EARLIER_ATTEMPTS_SHOWN: how each ended (its delegation's status and reason, its runtime's end reason), its latest
 * result's errors when that result was rejected, and its last failed verify command with the log that holds its
 * output. The output itself is a file: the use case reads it, outside any transaction.
 */
export async function readEarlierAttempts(
  r: Reader,
  scope: { runId: string; taskId: string; beforeAttempt?: number },
): Promise<EarlierAttempt[]> {
  const { runId, taskId, beforeAttempt } = scope;
  const before = beforeAttempt !== undefined ? ' AND attempt < ?' : '';
  const attempts = (
    await r.all<AttemptRow>(
      `SELECT id, attempt, status, reason FROM delegations WHERE run_id = ? AND task_id = ?${before}
       ORDER BY attempt DESC LIMIT ${EARLIER_ATTEMPTS_SHOWN}`,
      beforeAttempt !== undefined ? [runId, taskId, beforeAttempt] : [runId, taskId],
    )
  ).reverse();
  if (attempts.length === 0) return [];
  const ids = attempts.map((a) => a.id);
  const inIds = ids.map(() => '?').join(', ');
  const [runtimes, ingestions, receipts] = await Promise.all([
    r.all<{ delegation_id: string; end_reason: string | null }>(
      `SELECT delegation_id, end_reason FROM runtimes WHERE run_id = ? AND delegation_id IN (${inIds}) ORDER BY claimed_at`,
      [runId, ...ids],
    ),
    r.all<IngestionRow>(
      `SELECT id, delegation_id, artifact_path, accepted, issues_json, created_at FROM ingestions
       WHERE run_id = ? AND delegation_id IN (${inIds})`,
      [runId, ...ids],
    ),
    r.all<ReceiptRow>(
      `SELECT delegation_id, command_json, exit_code, timed_out, log_path FROM verification_receipts
       WHERE run_id = ? AND delegation_id IN (${inIds}) AND (exit_code IS NULL OR exit_code <> 0) ORDER BY id`,
      [runId, ...ids],
    ),
  ]);
  // The later row wins in each map: the last runtime claimed, the last failed receipt, the latest ingestion.
  const leaseEnds = new Map(runtimes.map((row) => [row.delegation_id, row.end_reason]));
  const failedReceipts = new Map(receipts.map((row) => [row.delegation_id, row]));
  const latestIngestions = new Map(
    ingestions.sort(byIngestionOrder).map((row) => [row.delegation_id, row] as [string, IngestionRow]),
  );
  return attempts.map((a) => {
    const leaseEndReason = leaseEnds.get(a.id);
    const ingestion = latestIngestions.get(a.id);
    const receipt = failedReceipts.get(a.id);
    return {
      attempt: Number(a.attempt),
      delegationId: a.id,
      status: a.status as DelegationStatus,
      ...(a.reason ? { reason: a.reason } : {}),
      ...(leaseEndReason ? { leaseEndReason } : {}),
      ...(ingestion && Number(ingestion.accepted) === 0 ? { rejectedResult: rejectedResultOf(ingestion) } : {}),
      ...(receipt
        ? {
            failedVerification: {
              command: JSON.parse(receipt.command_json) as string[],
              exitCode: receipt.exit_code === null ? null : Number(receipt.exit_code),
              timedOut: Number(receipt.timed_out) === 1,
              logPath: receipt.log_path,
            },
          }
        : {}),
    };
  });
}

/** Ingestion ids are I-<counter> without padding: at the same instant a longer id is a later one (recordIngestion). */
function byIngestionOrder(a: IngestionRow, b: IngestionRow): number {
  return Number(a.created_at) - Number(b.created_at) || a.id.length - b.id.length || a.id.localeCompare(b.id);
}

function rejectedResultOf(row: IngestionRow): NonNullable<EarlierAttempt['rejectedResult']> {
  const errors = (JSON.parse(row.issues_json) as Issue[]).filter((i) => i.severity === 'error');
  return {
    artifactPath: row.artifact_path,
    issues: errors.slice(0, EARLIER_ISSUES_SHOWN),
    omitted: Math.max(0, errors.length - EARLIER_ISSUES_SHOWN),
  };
}
