import { BatonError } from '../../domain/errors';
import type { ProcessIdentity } from '../../domain/process';
import type { StoreTx } from '../../store/port';

/**
 * A verify command a coordinator just started (held at its gate) becomes the attempt's
 * verification, if the attempt is still verifying: its task `verifying`, the delegation
 * RUNNING — or BLOCKED, when a person approved an integration gate and its merged tree is
 * verified again (docs/isolation.md, "The merge queue"). The coordinator lets the command run
 * only after this commits — through its fenced store, so only while it holds its epoch — and
 * a successor, or a stop, finds the process here (pid, start time, marker) to end it before
 * anything else verifies the attempt.
 * Refused with `verify.not-current` when the attempt was decided meanwhile.
 */
export async function recordVerifyProcess(
  tx: StoreTx,
  input: {
    id: string;
    runId: string;
    delegationId: string;
    command: readonly string[];
    marker: string;
    identity: ProcessIdentity;
    /** A lease watchdog guards it: it ends once the coordinator that started it lost the run. */
    watched: boolean;
  },
  now: number,
): Promise<void> {
  const current = await tx.get(
    `SELECT 1 AS x FROM delegations d JOIN tasks t ON t.run_id = d.run_id AND t.id = d.task_id
     WHERE d.run_id = ? AND d.id = ? AND d.status IN ('RUNNING', 'BLOCKED') AND t.status = 'verifying'`,
    [input.runId, input.delegationId],
  );
  if (!current) {
    throw new BatonError(
      'verify.not-current',
      `${input.delegationId} is no longer verifying (stopped, decided, or taken over); its verify command never ran.`,
    );
  }
  await tx.run(
    `INSERT INTO verify_processes (id, run_id, delegation_id, command_json, marker, pid, pid_start, host, started_at, watched)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      input.id,
      input.runId,
      input.delegationId,
      JSON.stringify(input.command),
      input.marker,
      input.identity.pid,
      input.identity.startTime,
      input.identity.host,
      now,
      input.watched ? 1 : null,
    ],
  );
}

/** The verify process is over (it exited, or someone ended it and proved it gone); once. */
export async function endVerifyProcess(tx: StoreTx, input: { id: string; reason: string }, now: number): Promise<void> {
  await tx.run(`UPDATE verify_processes SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL`, [
    now,
    input.reason,
    input.id,
  ]);
}
