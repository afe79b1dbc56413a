import { BatonError } from '../../domain/errors';
import type { ProcessIdentity } from '../../domain/process';
import { appendEvent } from '../events/appendEvent';
import type { StoreTx } from '../../store/port';

export interface NewRuntime {
  id: string;
  runId: string;
  delegationId: string;
  /** Only the token's sha256 is stored; the token is handed out once, to the holder. */
  tokenHash: string;
  /** Store-wide increasing fencing token of this lease. */
  epoch: number;
  leaseMs: number;
  holder?: string;
}

/** The live holder of a claimed delegation, with a lease that runs `leaseMs` from now. */
export async function createRuntime(tx: StoreTx, runtime: NewRuntime, now: number): Promise<void> {
  await tx.run(
    `INSERT INTO runtimes (id, run_id, delegation_id, token_hash, epoch, lease_ms, lease_expires_at, claimed_at, heartbeat_count, holder)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 0, ?)`,
    [
      runtime.id,
      runtime.runId,
      runtime.delegationId,
      runtime.tokenHash,
      runtime.epoch,
      runtime.leaseMs,
      now + runtime.leaseMs,
      now,
      runtime.holder ?? null,
    ],
  );
}

/**
 * What the coordinator records with a claim, so that a successor can tell a worker of its
 * own from an external claim, and where to look for its log and its working folder.
 */
export async function recordRuntimeLaunch(
  tx: StoreTx,
  runtimeId: string,
  launch: { worker: string; logPath: string; cwd: string; watchdogKey?: string },
): Promise<void> {
  await tx.run(`UPDATE runtimes SET worker = ?, log_path = ?, cwd = ?, watchdog_key = ? WHERE id = ?`, [
    launch.worker,
    launch.logPath,
    launch.cwd,
    launch.watchdogKey ?? null,
    runtimeId,
  ]);
}

/**
 * The worker process behind a runtime, once started (or found by its marker): pid, start
 * time and host make an identity that survives pid reuse. `onlyIfUnknown` does not
 * overwrite a process already recorded.
 */
export async function recordRuntimeProcess(
  tx: StoreTx,
  runtimeId: string,
  identity: ProcessIdentity,
  now: number,
  options: { onlyIfUnknown?: boolean } = {},
): Promise<void> {
  // The first record of a process is when Baton's supervisor started to see it (views show "alive for …").
  const changed = await tx.run(
    `UPDATE runtimes SET pid = ?, pid_start = ?, host = ?, pid_namespace = ?, process_started_at = COALESCE(process_started_at, ?)
     WHERE id = ?${options.onlyIfUnknown ? ' AND pid IS NULL' : ''}`,
    [identity.pid, identity.startTime, identity.host, identity.pidNamespace ?? null, now, runtimeId],
  );
  if (changed === 0) return;
  // A transition worth a line in the timeline, and what tells the views the worker's pid.
  const row = await tx.get<{ run_id: string; delegation_id: string }>(
    `SELECT run_id, delegation_id FROM runtimes WHERE id = ?`,
    [runtimeId],
  );
  if (!row) return;
  await appendEvent(tx, row.run_id, 'runtime:started', now, {
    runtimeId,
    delegationId: row.delegation_id,
    pid: identity.pid,
    host: identity.host,
    ...(options.onlyIfUnknown ? { found: true } : {}),
  });
}

/**
 * The worker a coordinator just started (held at its gate) becomes the attempt's, if the
 * attempt is still its to run: the runtime not ended, the delegation still RUNNING. A
 * coordinator lets the worker go only after this commits — through its fenced store, so
 * also only while it holds its epoch. Refused (`runtime.not-live`) when the attempt was
 * decided meanwhile (a stop, a successor that marked it STALE): the worker is then never let go.
 */
export async function recordStartedWorker(
  tx: StoreTx,
  input: { runId: string; delegationId: string; runtimeId: string; identity: ProcessIdentity },
  now: number,
): Promise<void> {
  const live = await tx.get(
    `SELECT 1 AS x FROM runtimes rt JOIN delegations d ON d.run_id = rt.run_id AND d.id = rt.delegation_id
     WHERE rt.id = ? AND rt.run_id = ? AND rt.delegation_id = ? AND rt.ended_at IS NULL AND d.status = 'RUNNING'`,
    [input.runtimeId, input.runId, input.delegationId],
  );
  if (!live) {
    throw new BatonError(
      'runtime.not-live',
      `${input.delegationId} was decided before its worker could start (stopped, or taken over); the worker never ran.`,
    );
  }
  await recordRuntimeProcess(tx, input.runtimeId, input.identity, now);
}
