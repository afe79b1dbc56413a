import { stopVerdict, type StopVerdict } from '../../domain/stopCheck';
import type { Delegation } from '../../domain/types';
import { readRunSettings } from '../../queries/runs';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

/**
 * One round of an attempt's stop hook (docs/agents.md, "The stop hook"): the rounds of the attempt
 * already sent back are counted from its `result:checked` events, the verdict taken against the run's
 * frozen repairRounds (`fallbackRounds` for a run started before it was frozen), and the round recorded
 * — in the caller's transaction, so two checks of one attempt cannot take the same round.
 */
export async function recordResultCheck(
  tx: StoreTx,
  input: { delegation: Delegation; errors: number; fallbackRounds: number },
  now: number,
): Promise<{ verdict: StopVerdict; repairRounds: number }> {
  const { delegation, errors } = input;
  const repairRounds = (await readRunSettings(tx, delegation.runId)).repairRounds ?? input.fallbackRounds;
  const earlier = await tx.all<{ data_json: string }>(
    `SELECT data_json FROM events WHERE run_id = ? AND type = 'result:checked'`,
    [delegation.runId],
  );
  const roundsSentBack = earlier
    .map((row) => JSON.parse(row.data_json) as { delegationId: string; sentBack: boolean })
    .filter((d) => d.delegationId === delegation.id && d.sentBack).length;
  const verdict = stopVerdict({ errors, roundsSentBack, repairRounds });
  await appendEvent(tx, delegation.runId, 'result:checked', now, {
    delegationId: delegation.id,
    taskId: delegation.taskId,
    attempt: delegation.attempt,
    round: verdict.round,
    issues: errors,
    sentBack: verdict.kind === 'repair',
  });
  return { verdict, repairRounds };
}
