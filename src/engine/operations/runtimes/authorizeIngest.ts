import { notItsWorker } from '../../domain/attemptCredential';
import { BatonError } from '../../domain/errors';
import type { Presenter } from '../../domain/process';
import type { StoreTx } from '../../store/port';
import { RUNTIME_SELECT, toRuntime, type RuntimeRow } from '../../store/rows';
import { expireStaleRuntimes } from './expireStaleRuntimes';
import { hashToken } from './renewRuntimeLease';

export interface IngestCredential {
  runId: string;
  delegationId: string;
  /** The runtime token the hand-in came with (`baton ingest --token`, or $BATON_RUNTIME_TOKEN). */
  token?: string;
  /**
   * The process handing it in (effects/processes, `presentingProcess`). Undefined: not looked at yet — it matters only
   * for a worker Baton started, and when the attempt has one the answer is PRESENTER_NEEDED.
   */
  presenter?: Presenter;
}

/** The attempt's worker is one Baton started and the presenting process was not looked at: look, then ask again. */
export const PRESENTER_NEEDED = 'presenter-needed';

/**
 * Who may hand in a result from outside the coordinator (docs/workers.md, "Who may hand in a
 * result"). A RUNNING attempt under a live lease belongs to its worker: only the holder of its
 * runtime token may complete it — the same authority a heartbeat needs — and, for a worker Baton
 * started, only from that worker's own processes (a token can be read from another process's
 * environment; domain/process.ts, `runsUnderWorker`). A result for an
 * attempt whose lease ran out is refused like a late heartbeat, and the expiry is made
 * official here (the caller commits this transaction, then throws). No token is asked for an
 * attempt that no worker holds: a person's hand-off whose `manual_handoff` gate is open, a
 * BLOCKED attempt waiting for a corrected result (the editor's re-ingest), and a finished one
 * (refused later as terminal). The coordinator's own ingestion of its workers' results does
 * not come through here: its authority is its epoch.
 *
 * Returns the refusal, PRESENTER_NEEDED (see IngestCredential), or undefined when the hand-in may go on.
 */
export async function authorizeIngest(
  tx: StoreTx,
  input: IngestCredential,
  now: number,
): Promise<BatonError | typeof PRESENTER_NEEDED | undefined> {
  const { runId, delegationId, token, presenter } = input;
  // The worker's runtime, only while it holds the attempt: the attempt RUNNING, its newest runtime not ended, and no
  // person's hand-off open for it. One statement; none found: nobody holds it, and no token is asked.
  const row = await tx.get<RuntimeRow>(
    `${RUNTIME_SELECT} WHERE r.run_id = ? AND r.delegation_id = ? AND r.ended_at IS NULL AND d.status = 'RUNNING'
       AND NOT EXISTS (SELECT 1 FROM gates g WHERE g.run_id = r.run_id AND g.delegation_id = r.delegation_id
         AND g.kind = 'manual_handoff' AND g.status = 'open')
     ORDER BY r.claimed_at DESC LIMIT 1`,
    [runId, delegationId],
  );
  if (!row) return undefined;
  const runtime = toRuntime(row, now);
  if (runtime.status === 'stale') {
    await expireStaleRuntimes(tx, now, { onlyRuntimeId: runtime.id });
    return new BatonError(
      'runtime.lease-expired',
      `The lease of runtime ${runtime.id} expired at ${new Date(runtime.leaseExpiresAt).toISOString()}; ${delegationId} is now STALE and its result is refused. Claim the task again for a new attempt.`,
    );
  }
  if (token === undefined || token === '') {
    return new BatonError(
      'ingest.token-required',
      `${delegationId} is running under the live lease of runtime ${row.id}: only its worker can hand in its result. Give --token (or set BATON_RUNTIME_TOKEN; a worker Baton started has it in its environment).`,
    );
  }
  if (row.token_hash !== hashToken(token)) {
    return new BatonError(
      'runtime.wrong-token',
      `The token does not match runtime ${row.id}; only the holder of the lease of ${delegationId} can hand in its result.`,
    );
  }
  // Checked last, after all that may write (the expiry above): asking again repeats a transaction that wrote nothing.
  if (!presenter) return runtime.pid === undefined ? undefined : PRESENTER_NEEDED;
  return notItsWorker(runtime, presenter);
}
