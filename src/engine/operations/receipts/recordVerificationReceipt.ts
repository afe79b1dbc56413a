import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

export interface VerificationReceipt {
  runId: string;
  delegationId: string;
  taskId: string;
  /** The accepted result it verified: a command that passed for this attempt and digest is not run again. */
  artifactDigest: string;
  /** The merged tree it ran on before integration (git tree id); absent: the attempt's own folder. */
  treeDigest?: string;
  command: string[];
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  outputDigest: string;
  logPath: string;
  startedAt: number;
}

/** What one verify command did, kept for resume (a passed command is not run again) and for `diagnose`. */
export async function recordVerificationReceipt(tx: StoreTx, receipt: VerificationReceipt, now: number): Promise<void> {
  await tx.run(
    `INSERT INTO verification_receipts (run_id, delegation_id, task_id, artifact_digest, command_json, exit_code, timed_out,
       duration_ms, output_digest, log_path, started_at, tree_digest)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      receipt.runId,
      receipt.delegationId,
      receipt.taskId,
      receipt.artifactDigest,
      JSON.stringify(receipt.command),
      receipt.exitCode,
      receipt.timedOut ? 1 : 0,
      receipt.durationMs,
      receipt.outputDigest,
      receipt.logPath,
      receipt.startedAt,
      receipt.treeDigest ?? null,
    ],
  );
  await appendEvent(tx, receipt.runId, 'verification:receipt', now, {
    delegationId: receipt.delegationId,
    taskId: receipt.taskId,
    command: receipt.command,
    exitCode: receipt.exitCode,
    timedOut: receipt.timedOut,
    durationMs: receipt.durationMs,
    ...(receipt.treeDigest ? { treeDigest: receipt.treeDigest } : {}),
  });
}
