import type { StoreTx } from '../../store/port';

/**
 * Marks an attempt as a follow-up (docs/agents.md, "Follow-up messages"): it carries a person's message no attempt
 * carried before. The views and `baton queue` tell it from a failure retry by this mark.
 */
export async function markFollowUp(
  tx: StoreTx,
  input: { runId: string; delegationId: string },
  now: number,
): Promise<void> {
  await tx.run(`UPDATE delegations SET follow_up = 1, updated_at = ? WHERE run_id = ? AND id = ?`, [
    now,
    input.runId,
    input.delegationId,
  ]);
}
