import { BatonError } from '../../domain/errors';
import type { Gate } from '../../domain/types';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

/**
 * The one place an open gate comes to say something else — a second rejected result
 * (openGateOnce), a config that changed again (noticeRunConfig), an isolation problem checked
 * again (restateIsolationGate): its reason, and its details when given, change; it stays open,
 * only from `open` (compare-and-set); and one `gate:updated` event of one shape is recorded.
 */
export async function updateGate(
  tx: StoreTx,
  gate: Pick<Gate, 'id' | 'runId' | 'kind'>,
  change: { reason: string; details?: Record<string, unknown> },
  now: number,
): Promise<void> {
  const details = change.details === undefined ? null : JSON.stringify(change.details);
  const changed = await tx.run(
    `UPDATE gates SET reason = ?, details_json = COALESCE(?, details_json) WHERE id = ? AND status = 'open'`,
    [change.reason, details, gate.id],
  );
  if (changed !== 1) throw new BatonError('gate.already-decided', `Gate ${gate.id} was decided meanwhile.`);
  await appendEvent(tx, gate.runId, 'gate:updated', now, { gateId: gate.id, kind: gate.kind, reason: change.reason });
}
