import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { ingestArtifact } from '../ingest/ingestArtifact';
import type { IdSource } from '../model/clock';
import { getDelegation, refreshRunStatus, settleUnsuccessfulAttempt, transitionDelegation } from '../queue/taskFlow';
import { isProcessAlive, terminateWorker, type ProcessIdentity } from '../runtime/processes';
import type { StoreTx } from '../store/port';
import { runPaths } from './runPaths';
import type { VerifyContext } from './verifyAttempt';

export interface ReconcileEntry {
  taskId: string;
  delegationId?: string;
  /** What the evidence says the task is. */
  classification: string;
  /** What reconcile changed, if it could prove a gap. */
  repair?: string;
}

export interface ReconcileReport {
  runId: string;
  entries: ReconcileEntry[];
}

export interface ReconcileContext extends VerifyContext {
  ids: IdSource;
  leaseMs: number;
  stopGraceMs?: number;
}

export interface LiveWorker {
  delegationId: string;
  taskId: string;
  runtimeId: string;
  identity: ProcessIdentity;
  logPath: string;
  artifactPath: string;
}

export interface ReconcileOptions {
  /** A coordinator taking over adopts live workers; without it they are ended. */
  adopt?: (worker: LiveWorker) => void;
  /** Classify only, change nothing (another coordinator is driving the run). */
  reportOnly?: boolean;
}

interface Running {
  delegation_id: string;
  task_id: string;
  runtime_id: string | null;
  pid: number | null;
  pid_start: string | null;
  host: string | null;
  log_path: string | null;
  holder: string | null;
  lease_expires_at: number | null;
}

/**
 * Classifies every task of a run from the evidence — the store, live processes (pid and
 * start time), artifacts and logs on disk — and repairs only gaps it can prove: a result
 * on disk that was never ingested is ingested; a RUNNING attempt whose process is gone
 * becomes STALE (and the retry policy applies); a worker that outlived its coordinator is
 * adopted by the next one, or ended. Running it twice changes nothing the second time.
 */
export async function reconcileRun(ctx: ReconcileContext, runId: string, options: ReconcileOptions = {}): Promise<ReconcileReport> {
  const { tasks, running } = await ctx.store.read(async (r) => ({
    tasks: await r.all<{ id: string; status: string; status_reason: string | null }>(`SELECT id, status, status_reason FROM tasks WHERE run_id = ? ORDER BY ordinal`, [runId]),
    running: await r.all<Running>(
      `SELECT d.id AS delegation_id, d.task_id, rt.id AS runtime_id, rt.pid, rt.pid_start, rt.host, rt.log_path, rt.holder, rt.lease_expires_at
       FROM delegations d LEFT JOIN runtimes rt ON rt.run_id = d.run_id AND rt.delegation_id = d.id
       WHERE d.run_id = ? AND d.status = 'RUNNING' ORDER BY d.created_at`,
      [runId],
    ),
  }));
  const entries: ReconcileEntry[] = [];
  const handled = new Set<string>();
  const paths = runPaths(ctx.workspace, runId);
  for (const attempt of running) {
    handled.add(attempt.task_id);
    const base = { taskId: attempt.task_id, delegationId: attempt.delegation_id };
    const identity: ProcessIdentity | undefined = attempt.pid !== null && attempt.host ? { pid: attempt.pid, startTime: attempt.pid_start, host: attempt.host } : undefined;
    const alive = identity ? isProcessAlive(identity) : false;
    const logPath = attempt.log_path ?? paths.log(attempt.delegation_id);
    const artifactPath = paths.artifact(attempt.delegation_id);
    if (alive === undefined) {
      entries.push({ ...base, classification: `running on another host (${identity!.host}, pid ${identity!.pid}); cannot be checked from here` });
      continue;
    }
    if (alive) {
      if (options.reportOnly) entries.push({ ...base, classification: `running (pid ${identity!.pid})` });
      else if (options.adopt) {
        options.adopt({ delegationId: attempt.delegation_id, taskId: attempt.task_id, runtimeId: attempt.runtime_id!, identity: identity!, logPath, artifactPath });
        entries.push({ ...base, classification: `running (pid ${identity!.pid}) after its coordinator went away`, repair: 'adopted: lease renewed by this coordinator' });
      } else {
        const report = await terminateWorker(identity!, { marker: `BATON_RUNTIME_ID=${attempt.runtime_id}`, graceMs: ctx.stopGraceMs ?? 5000, clock: ctx.clock });
        await markStale(ctx, runId, attempt.delegation_id, `its coordinator went away; reconcile ended the worker${report.confirmed ? '' : ' (termination NOT confirmed)'}`);
        entries.push({ ...base, classification: `running (pid ${identity!.pid}) with no coordinator`, repair: `ended ${report.processes.length} process(es)${report.confirmed ? '' : ', NOT confirmed'}; marked STALE` });
      }
      continue;
    }
    if (!identity && attempt.holder?.includes('manual') && (attempt.lease_expires_at ?? 0) > ctx.clock.now()) {
      entries.push({ ...base, classification: 'waiting for a person (manual hand-off)' });
      continue;
    }
    const result = resultOnDisk(artifactPath, logPath);
    if (options.reportOnly) {
      entries.push({ ...base, classification: result ? 'process gone; a result is on disk, not yet ingested' : 'process gone; no result' });
      continue;
    }
    if (result) {
      const delegation = await ctx.store.read((r) => getDelegation(r, runId, attempt.delegation_id));
      const outcome = await ingestArtifact(ctx, delegation!, result);
      entries.push({
        ...base,
        classification: 'process gone; a result is on disk, not yet ingested',
        repair: `ingested ${outcome.record.id} (${outcome.record.accepted ? outcome.record.resultStatus : 'rejected'}); delegation ${outcome.delegation.status}`,
      });
      continue;
    }
    await markStale(ctx, runId, attempt.delegation_id, identity ? 'its process is gone and left no result' : 'it was claimed but its process never started');
    entries.push({ ...base, classification: identity ? `process gone (pid ${identity.pid}); no result` : 'claimed, never started', repair: 'marked STALE; the retry policy applies' });
  }
  for (const task of tasks) {
    if (handled.has(task.id)) continue;
    entries.push({ taskId: task.id, classification: task.status === 'verifying' ? 'verifying: the coordinator finishes it (passed commands are not run again)' : task.status });
  }
  return { runId, entries };
}

function resultOnDisk(artifactPath: string, logPath: string): string | undefined {
  if (existsSync(artifactPath)) return artifactPath;
  if (!existsSync(logPath)) return undefined;
  if (!/^\s{0,3}(`{3,}|~{3,})\s*(baton-result|sdd-result)\b/m.test(readFileSync(logPath, 'utf8'))) return undefined;
  copyFileSync(logPath, artifactPath);
  return artifactPath;
}

async function markStale(ctx: ReconcileContext, runId: string, delegationId: string, reason: string): Promise<void> {
  await ctx.store.transact(async (tx: StoreTx) => {
    await ctx.guard?.(tx);
    const delegation = await getDelegation(tx, runId, delegationId);
    if (!delegation || delegation.status !== 'RUNNING') return;
    const now = ctx.clock.now();
    await transitionDelegation(tx, delegation, 'STALE', { reason }, now);
    await settleUnsuccessfulAttempt(tx, runId, delegation.taskId, `${delegationId} ${reason}`, now);
    await refreshRunStatus(tx, runId, now);
  });
}
