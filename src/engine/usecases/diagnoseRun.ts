import type { AttemptWorktree, RunIsolation } from '../domain/isolation';
import { suggestNextStep, type NextStep } from '../domain/nextStep';
import type { StopReportEntry } from '../domain/stops';
import { folderSize } from '../effects/folderSize';
import { isProcessAlive } from '../effects/processes/processes';
import { recordedProcessAlive } from './workerProcesses';
import { runPaths, worktreesRoot } from '../effects/workspaceLayout';
import { readCoordinatorLease } from '../queries/coordinatorLease';
import { listReceipts, readOverview, type ReceiptView, type RunOverview } from '../queries/runView';
import { listAttemptWorktrees, readRunIsolation } from '../queries/worktrees';
import { inspectWorktrees, type WorktreeFinding } from './cleanupWorktrees';
import type { EngineContext } from './context';
import { isLeaseLive } from './coordinatorLiveness';
import { describeRunConfig, type RunConfigView } from './runConfig';

export interface Diagnosis extends RunOverview {
  now: number;
  coordinator?: {
    holder: string;
    epoch: number;
    expiresAt: number;
    released: boolean;
    alive: boolean | null;
    live: boolean;
  };
  workers: Array<{
    runtimeId: string;
    delegationId: string;
    worker?: string;
    pid?: number;
    alive: boolean | null;
    logPath?: string;
  }>;
  receipts: ReceiptView[];
  stops: Array<{
    id: string;
    delegationId?: string;
    mode: string;
    status: string;
    requestedBy: string;
    requestedAt: number;
    report: StopReportEntry[];
  }>;
  /** Bytes under .baton/runs/<run> (logs, prompts, artifacts). */
  diskBytes: number;
  /** Isolation of the run (docs/isolation.md): mode, target branch, base. */
  isolation?: RunIsolation;
  /** Its worktrees, what they use on disk, and what looking at them found. */
  worktrees: Array<AttemptWorktree & { bytes: number }>;
  worktreeBytes: number;
  worktreeFindings: WorktreeFinding[];
  /** The worker definitions the run runs with beside `.baton/config.json` now (docs/architecture.md, "Trust model"). */
  config: RunConfigView;
  /** The command that most likely helps next, and why. */
  next: NextStep;
}

/**
 * Everything about a run in one place — the store's view, then the machine's: whether its
 * coordinator and workers live, what its files and worktrees use on disk — with the command
 * that most likely helps next.
 */
export async function diagnoseRun(ctx: EngineContext, runId?: string): Promise<Diagnosis> {
  const now = ctx.clock.now();
  const facts = await ctx.store.read(async (r) => {
    const view = await readOverview(r, runId, now);
    const id = view.run.id;
    return {
      view,
      lease: await readCoordinatorLease(r, id),
      stops: await r.all<{
        id: string;
        delegation_id: string | null;
        mode: string;
        status: string;
        requested_by: string;
        requested_at: number;
        report_json: string;
      }>(
        `SELECT id, delegation_id, mode, status, requested_by, requested_at, report_json FROM stop_requests
         WHERE run_id = ? ORDER BY ordinal`,
        [id],
      ),
      receipts: await listReceipts(r, id),
      processes: await r.all<{
        id: string;
        delegation_id: string;
        pid: number | null;
        pid_start: string | null;
        host: string | null;
        worker: string | null;
        log_path: string | null;
      }>(
        `SELECT id, delegation_id, pid, pid_start, host, worker, log_path FROM runtimes WHERE run_id = ? ORDER BY claimed_at`,
        [id],
      ),
      isolation: await readRunIsolation(r, id),
      worktrees: await listAttemptWorktrees(r, id),
    };
  });
  const { view, lease } = facts;
  const diagnosed = view.run.id;
  const coordinator = lease
    ? {
        holder: lease.holder,
        epoch: lease.epoch,
        expiresAt: lease.expiresAt,
        released: lease.releasedAt !== undefined,
        alive: isProcessAlive(lease.identity) ?? null,
        live: isLeaseLive(lease, now),
      }
    : undefined;
  const workers = facts.processes.map((p) => ({
    runtimeId: p.id,
    delegationId: p.delegation_id,
    worker: p.worker ?? undefined,
    pid: p.pid ?? undefined,
    alive: recordedProcessAlive({ pid: p.pid, pidStart: p.pid_start, host: p.host }) ?? null,
    logPath: p.log_path ?? undefined,
  }));
  const worktreeFindings = await inspectWorktrees(ctx.store, ctx.workspace, diagnosed).catch((err: unknown) => [
    {
      path: worktreesRoot(ctx.workspace, diagnosed),
      finding: `could not inspect the worktrees: ${(err as Error).message}`,
    },
  ]);
  return {
    ...view,
    now,
    ...(coordinator ? { coordinator } : {}),
    workers,
    receipts: facts.receipts,
    stops: facts.stops.map((s) => ({
      id: s.id,
      delegationId: s.delegation_id ?? undefined,
      mode: s.mode,
      status: s.status,
      requestedBy: s.requested_by,
      requestedAt: s.requested_at,
      report: JSON.parse(s.report_json) as StopReportEntry[],
    })),
    diskBytes: folderSize(runPaths(ctx.workspace, diagnosed).root),
    ...(facts.isolation ? { isolation: facts.isolation } : {}),
    worktrees: facts.worktrees.map((w) => ({ ...w, bytes: w.removedAt === undefined ? folderSize(w.path) : 0 })),
    worktreeBytes: folderSize(worktreesRoot(ctx.workspace, diagnosed)),
    worktreeFindings,
    config: await describeRunConfig(ctx, diagnosed),
    next: suggestNextStep(view, coordinator?.live ?? false, workers),
  };
}
