import type { HandIn } from '../../domain/handIn';
import type { StoreTx } from '../../store/port';

/**
 * Records a hand-in — only by the holder of the attempt's watchdog key (compared inside the statement), only while the
 * runtime is live, and only once per runtime: the capability is scoped to one attempt and used up by its first use.
 * Says whether it was recorded.
 */
export async function recordHandIn(tx: StoreTx, handIn: HandIn, watchdogKey: string, now: number): Promise<boolean> {
  const recorded = await tx.run(
    `INSERT INTO hand_ins (runtime_id, run_id, delegation_id, host, exit_code, signal, ended_at, artifact, log_tail, handed_at)
     SELECT id, run_id, delegation_id, ?, ?, ?, ?, ?, ?, ?
     FROM runtimes WHERE id = ? AND run_id = ? AND delegation_id = ? AND watchdog_key = ? AND ended_at IS NULL
     ON CONFLICT (runtime_id) DO NOTHING`,
    [
      handIn.host,
      handIn.exitCode,
      handIn.signal,
      handIn.endedAt,
      handIn.artifact ?? null,
      handIn.logTail ?? null,
      now,
      handIn.runtimeId,
      handIn.runId,
      handIn.delegationId,
      watchdogKey,
    ],
  );
  return recorded === 1;
}
