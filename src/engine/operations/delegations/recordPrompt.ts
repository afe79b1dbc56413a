import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

/**
 * The prompt an attempt got, kept as evidence (prompt provenance): the file holds its text;
 * the store holds its sha256, its length in bytes and whether it was cut to fit.
 */
export async function recordPrompt(
  tx: StoreTx,
  attempt: { runId: string; delegationId: string; taskId: string },
  prompt: { sha256: string; bytes: number; truncated: boolean },
  now: number,
): Promise<void> {
  await tx.run(
    `UPDATE delegations SET prompt_sha256 = ?, prompt_bytes = ?, prompt_truncated = ? WHERE run_id = ? AND id = ?`,
    [prompt.sha256, prompt.bytes, prompt.truncated ? 1 : 0, attempt.runId, attempt.delegationId],
  );
  await appendEvent(tx, attempt.runId, 'delegation:prompt', now, {
    delegationId: attempt.delegationId,
    taskId: attempt.taskId,
    ...prompt,
  });
}
