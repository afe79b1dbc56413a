import type { EventOf, EventType } from './domain/events';
import { existsSync, readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_CONFIG, parseConfig, type BatonConfig } from './domain/config';
import { decideGate, type DecideGateOutcome, type GateDecision } from './operations/gates/decideGate';
import { ingestArtifact, workspacePath, type IngestOutcome } from './usecases/ingestArtifact';
import type { EngineContext } from './usecases/context';
import { Coordinator, type CoordinatorOptions } from './executor/coordinator';
import { isLeaseLive } from './usecases/coordinatorLiveness';
import { readCoordinatorLease } from './queries/coordinatorLease';
import { reconcileRun, type ReconcileReport } from './usecases/reconcileRun';
import { liftStops, requestStop } from './operations/stops/stopRequests';
import { applyStopHere } from './usecases/applyStop';
import { readStop } from './queries/stops';
import { type StopMode } from './domain/types';
import { type StopReportEntry, type StopRequest } from './domain/stops';
import { replanRun, type ReplanOutcome } from './operations/runs/replanRun';
import { listAttemptWorktrees, readRunIsolation } from './queries/worktrees';
import { worktreesRoot } from './effects/workspaceLayout';
import { type AttemptWorktree, type RunIsolation } from './domain/isolation';
import { findGit, gitMissing } from './effects/git/git';
import {
  cleanupWorktrees,
  inspectWorktrees,
  type CleanupReport,
  type WorktreeFinding,
} from './usecases/cleanupWorktrees';
import { runPaths } from './effects/workspaceLayout';
import { folderSize } from './effects/folderSize';
import { isProcessAlive } from './effects/processes/processes';
import { resolveWorker } from './domain/workerLaunch';
import { sleep, systemClock, systemIds, type Clock, type IdSource } from './domain/clock';
import { BatonError } from './domain/errors';
import { hasErrors, type Issue } from './domain/issue';
import type {
  Delegation,
  DelegationStatus,
  Gate,
  GateStatus,
  IngestionRecord,
  ParsedPlan,
  Run,
  RunEvent,
  Task,
  WorkerRuntime,
} from './domain/types';
import { parsePlan } from './domain/plan/parsePlan';
import type { Claim } from './operations/delegations/claimDelegation';
import { claimTask } from './operations/delegations/claimTask';
import { runSettingsFrom, type OperationContext, type RunSettings } from './domain/runSettings';
import { readRunSettings } from './queries/runs';
import { createRun, planDigest } from './operations/runs/createRun';
import { expireStaleRuntimes, type ExpiredRuntime } from './operations/runtimes/expireStaleRuntimes';
import { renewRuntimeLease } from './operations/runtimes/renewRuntimeLease';
import { FileStore, storeExists, type FileStoreOptions } from './store/fileStore';
import type { StoreReader } from './store/port';
import {
  DELEGATION_COLUMNS,
  GATE_COLUMNS,
  INGESTION_COLUMNS,
  toIngestion,
  type IngestionRow,
  RUN_COLUMNS,
  RUNTIME_SELECT,
  TASK_COLUMNS,
  toDelegation,
  toEvent,
  toGate,
  toRun,
  toRuntime,
  toTask,
  type DelegationRow,
  type EventRow,
  type GateRow,
  type RunRow,
  type RuntimeRow,
  type TaskRow,
} from './store/rows';
import { Emitter, type Disposable } from './domain/emitter';

export const BATON_DIR = '.baton';

export function storeDirOf(workspace: string): string {
  return join(workspace, BATON_DIR, 'store');
}

export function configPathOf(workspace: string): string {
  return join(workspace, BATON_DIR, 'config.json');
}

/**
 * What the engine announces. Log events come from the run's event log (with `seq`);
 * heartbeats are announced from the runtimes' state (they are not logged: a heartbeat
 * is a renewal, not a transition).
 */
export type EngineEvent<K extends EventType = EventType> = EventOf<K> & {
  runId: string;
  at: number;
  /** The run's sequence number; absent for heartbeats. */
  seq?: number;
  /** Global order across runs; absent for heartbeats. */
  id?: number;
};

export interface EngineOptions {
  workspace: string;
  clock?: Clock;
  ids?: IdSource;
  /** Follow other processes' commits live (the extension, `events --follow`). */
  follow?: boolean;
  store?: FileStoreOptions;
  /** The `baton` CLI script, handed to workers as BATON_CLI. */
  cliPath?: string;
}

export interface LoadedPlan {
  /** Workspace-relative (POSIX separators) when inside the workspace, else absolute. */
  path: string;
  text: string;
  parsed: ParsedPlan;
}

export interface RunOverview {
  run: Run;
  tasks: Task[];
  delegations: Delegation[];
  runtimes: WorkerRuntime[];
  gates: Gate[];
}

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
  receipts: Array<{
    delegationId: string;
    command: string[];
    exitCode: number | null;
    timedOut: boolean;
    durationMs: number;
    logPath: string;
  }>;
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
  /**
   * Isolation of the run (docs/isolation.md): mode, target branch, base; its worktrees, what they use on disk, and
   * findings.
   */
  isolation?: RunIsolation;
  worktrees: Array<AttemptWorktree & { bytes: number }>;
  worktreeBytes: number;
  worktreeFindings: WorktreeFinding[];
  /** The command that most likely helps next, and why. */
  next: { command: string; why: string };
}

export interface ClaimOutcome extends Claim {
  runId: string;
  runCreated: boolean;
}

/**
 * The engine's public face: every adapter (CLI, extension) goes through it. Each command
 * is one store transaction built from the operations under queue/, runtime/, gates/ and
 * ingest/; file reading and validation happen before the transaction.
 */
export class Engine {
  private readonly emitter = new Emitter<EngineEvent>();
  readonly onEvent = this.emitter.event;
  private lastEventId = 0;
  private readonly beats = new Map<string, number>();
  private announcing: Promise<void> = Promise.resolve();
  private announceQueued = false;
  private readonly subscription: Disposable;

  private constructor(
    readonly workspace: string,
    readonly config: BatonConfig,
    readonly configIssues: readonly Issue[],
    private readonly store: FileStore,
    private readonly clock: Clock,
    private readonly ids: IdSource,
    private readonly cliPath?: string,
  ) {
    this.subscription = store.watch(() => {
      // One announcement waiting is enough: it reads everything since the last one.
      if (this.announceQueued) return;
      this.announceQueued = true;
      this.announcing = this.announcing
        .then(() => {
          this.announceQueued = false;
          return this.announce();
        })
        .catch(() => undefined);
    });
  }

  /** Opens (creating if needed) the store of a workspace. An invalid config is refused with its issues. */
  static async open(options: EngineOptions): Promise<Engine> {
    const workspace = resolve(options.workspace);
    const { config, issues } = loadConfig(workspace);
    if (hasErrors(issues)) {
      throw new BatonError(
        'config.invalid',
        `${configPathOf(workspace)} is invalid.`,
        issues.map((i) => ({ ...i, file: configPathOf(workspace) })),
      );
    }
    const clock = options.clock ?? systemClock;
    const store = await FileStore.open(storeDirOf(workspace), {
      clock,
      ...options.store,
      follow: options.follow ?? false,
    });
    const engine = new Engine(
      workspace,
      config,
      issues,
      store,
      clock,
      options.ids ?? systemIds(clock),
      options.cliPath,
    );
    await engine.primeAnnouncements();
    return engine;
  }

  static hasStore(workspace: string): boolean {
    return storeExists(storeDirOf(resolve(workspace)));
  }

  get recoveryNotices(): readonly string[] {
    return this.store.recovery.notices;
  }

  async close(): Promise<void> {
    this.subscription.dispose();
    await this.announcing;
    this.emitter.dispose();
    await this.store.close();
  }

  /** Catches up with other processes now and announces what they did. */
  async refresh(): Promise<void> {
    await this.store.refresh();
    await this.announcing;
  }

  // ── plans and runs ──────────────────────────────────────────────────────

  loadPlan(planPath: string): LoadedPlan {
    return readPlan(this.workspace, planPath);
  }

  /** Starts a new run from a plan file; a plan with errors is refused with its issues. */
  async startRun(planPath: string): Promise<Run> {
    const plan = this.validPlan(planPath);
    return this.store.transact((tx) =>
      createRun(
        tx,
        { planPath: plan.path, planText: plan.text, tasks: plan.parsed.tasks, settings: runSettingsFrom(this.config) },
        this.operationContext(),
      ),
    );
  }

  /**
   * An external worker takes a task. Without `runId`, the plan's active run is used — or
   * started, in the same transaction, so two claimers never start two runs. A plan that
   * changed since its active run started is refused (replan instead).
   */
  async claimTask(input: {
    planPath?: string;
    runId?: string;
    taskId: string;
    agent?: string;
    leaseSeconds?: number;
    holder?: string;
  }): Promise<ClaimOutcome> {
    if (!input.planPath && !input.runId)
      throw new BatonError('claim.no-run', 'Name the plan (--plan) or the run (--run) to claim from.');
    const plan = input.planPath ? this.validPlan(input.planPath) : undefined;
    const leaseMs = (input.leaseSeconds ?? this.config.leaseSeconds) * 1000;
    return this.store.transact(async (tx) => {
      const ctx = this.operationContext();
      let runId = input.runId;
      let runCreated = false;
      if (runId) {
        const run = await tx.get<{ plan_path: string; status: string }>(
          `SELECT plan_path, status FROM runs WHERE id = ?`,
          [runId],
        );
        if (!run) throw new BatonError('run.unknown', `There is no run ${runId}.`);
        if (plan && run.plan_path !== plan.path)
          throw new BatonError('run.plan-mismatch', `Run ${runId} runs ${run.plan_path}, not ${plan.path}.`);
      } else {
        const active = await activeRunOf(tx, plan!.path);
        if (active && active.plan_digest !== planDigest(plan!.text)) {
          throw new BatonError(
            'run.plan-changed',
            `${plan!.path} changed since run ${active.id} started from it; finish that run or replan it.`,
          );
        }
        if (active) runId = active.id;
        else {
          runId = (
            await createRun(
              tx,
              {
                planPath: plan!.path,
                planText: plan!.text,
                tasks: plan!.parsed.tasks,
                settings: runSettingsFrom(this.config),
              },
              ctx,
            )
          ).id;
          runCreated = true;
        }
      }
      await expireStaleRuntimes(tx, ctx.now);
      const claim = await claimTask(
        tx,
        {
          runId,
          taskId: input.taskId,
          leaseMs,
          holder: input.holder ?? `${hostname()}`,
          ...(input.agent ? { agent: input.agent } : {}),
        },
        ctx,
      );
      return { ...claim, runId, runCreated };
    });
  }

  async heartbeat(input: { runtimeId: string; token: string; progress?: string }): Promise<WorkerRuntime> {
    const outcome = await this.store.transact((tx) =>
      renewRuntimeLease(
        tx,
        {
          runtimeId: input.runtimeId,
          authority: { holder: 'worker', token: input.token },
          ...(input.progress !== undefined ? { progress: input.progress } : {}),
        },
        this.clock.now(),
      ),
    );
    if (!outcome.renewed) throw outcome.error;
    return outcome.runtime;
  }

  /** Marks every lease that ran out as STALE and applies the retry policy. */
  async expireStaleRuntimes(): Promise<ExpiredRuntime[]> {
    return this.store.transact((tx) => expireStaleRuntimes(tx, this.clock.now()));
  }

  /**
   * Validates a result artifact against the contract and its delegation, then records it.
   * A missing file is bad input (nothing written); an invalid artifact is a rejected
   * ingestion (recorded, the delegation BLOCKED behind a gate).
   */
  async ingest(input: { delegationId: string; runId?: string; artifactPath: string }): Promise<IngestOutcome> {
    const delegation = await this.findDelegation(input.delegationId, input.runId);
    return ingestArtifact(this.engineContext(), delegation, resolve(this.workspace, input.artifactPath));
  }

  /** What the use cases work with (a coordinator gives them a fenced one of its own). */
  private engineContext(): EngineContext {
    return {
      store: this.store,
      clock: this.clock,
      ids: this.ids,
      workspace: this.workspace,
      config: this.config,
      log: () => undefined,
      ...(this.cliPath ? { cliPath: this.cliPath } : {}),
    };
  }

  async decideGate(input: {
    gateId: string;
    decision: GateDecision;
    note?: string;
    by?: string;
    accept?: boolean;
  }): Promise<DecideGateOutcome> {
    return this.store.transact((tx) =>
      decideGate(
        tx,
        {
          gateId: input.gateId,
          decision: input.decision,
          by: input.by ?? defaultDecider(),
          ...(input.note ? { note: input.note } : {}),
          ...(input.accept ? { accept: true } : {}),
        },
        this.clock.now(),
      ),
    );
  }

  // ── execution ───────────────────────────────────────────────────────────

  /**
   * Becomes the coordinator of a run (reconciling what a predecessor left), or reports who
   * is. The caller runs `coordinator.run()` and, on exit, `shutdown()` if it was interrupted.
   */
  async coordinate(
    options: CoordinatorOptions & { log?: (line: string) => void },
  ): Promise<Awaited<ReturnType<typeof Coordinator.take>>> {
    await this.refuseUnknownWorkers(options.runId, options.worker);
    const { log, ...coordinatorOptions } = options;
    return Coordinator.take(
      {
        ...this.engineContext(),
        ...(log ? { log } : {}),
        onStoreChange: (listener) => this.store.watch(listener),
      },
      coordinatorOptions,
    );
  }

  /** The active run of a plan (same plan text), or a new one; `fresh` always starts a new one. */
  async runForPlan(
    planPath: string,
    options: { fresh?: boolean; settings?: Partial<Pick<RunSettings, 'isolation' | 'integration'>> } = {},
  ): Promise<{ run: Run; created: boolean }> {
    const plan = this.validPlan(planPath);
    const settings = { ...runSettingsFrom(this.config), ...options.settings };
    // A run that must isolate its tasks cannot start without git (exit 7); `auto` falls back to the shared tree.
    if (settings.isolation === 'worktree' && !(await findGit())) throw gitMissing();
    const { runId, created } = await this.store.transact(async (tx) => {
      const active = options.fresh ? undefined : await activeRunOf(tx, plan.path);
      if (active && active.plan_digest !== planDigest(plan.text)) {
        throw new BatonError(
          'run.plan-changed',
          `${plan.path} changed since run ${active.id} started from it; resume that run, replan it, or start fresh with --new.`,
        );
      }
      if (active) return { runId: active.id, created: false };
      const run = await createRun(
        tx,
        { planPath: plan.path, planText: plan.text, tasks: plan.parsed.tasks, settings },
        this.operationContext(),
      );
      return { runId: run.id, created: true };
    });
    return { run: await this.getRun(runId), created };
  }

  /**
   * Maps a run onto a new plan (docs/cli.md, replan): refused while the old run has a live
   * coordinator or work in flight; completed tasks carry over; the old run is superseded.
   */
  async replan(input: {
    runId: string;
    planPath: string;
    mapping?: Record<string, string | null>;
  }): Promise<ReplanOutcome> {
    const plan = this.validPlan(input.planPath);
    const lease = await this.store.read((r) => readCoordinatorLease(r, input.runId));
    if (isLeaseLive(lease, this.clock.now())) {
      throw new BatonError(
        'replan.coordinator-alive',
        `Run ${input.runId} is driven by ${lease!.holder}; stop it first (baton stop --run ${input.runId}).`,
      );
    }
    return this.store.transact((tx) =>
      replanRun(
        tx,
        {
          oldRunId: input.runId,
          planPath: plan.path,
          planText: plan.text,
          tasks: plan.parsed.tasks,
          settings: runSettingsFrom(this.config),
          mapping: input.mapping ?? {},
        },
        this.operationContext(),
      ),
    );
  }

  /** Everything about a run in one place, with the command that most likely helps next. */
  async diagnose(runId?: string): Promise<Diagnosis> {
    const view = await this.overview(runId);
    const diagnosedRun = view.run.id;
    const now = this.clock.now();
    const extra = await this.store.read(async (r) => ({
      lease: await readCoordinatorLease(r, diagnosedRun),
      stops: await r.all<{
        id: string;
        delegation_id: string | null;
        mode: string;
        status: string;
        requested_by: string;
        requested_at: number;
        report_json: string;
      }>(
        `SELECT id, delegation_id, mode, status, requested_by, requested_at, report_json FROM stop_requests WHERE run_id = ? ORDER BY ordinal`,
        [diagnosedRun],
      ),
      receipts: await r.all<{
        delegation_id: string;
        command_json: string;
        exit_code: number | null;
        timed_out: number;
        duration_ms: number;
        log_path: string;
      }>(
        `SELECT delegation_id, command_json, exit_code, timed_out, duration_ms, log_path FROM verification_receipts WHERE run_id = ? ORDER BY id`,
        [diagnosedRun],
      ),
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
        [diagnosedRun],
      ),
    }));
    const coordinator = extra.lease
      ? {
          holder: extra.lease.holder,
          epoch: extra.lease.epoch,
          expiresAt: extra.lease.expiresAt,
          released: extra.lease.releasedAt !== undefined,
          alive: isProcessAlive(extra.lease.identity) ?? null,
          live: isLeaseLive(extra.lease, now),
        }
      : undefined;
    const workers = extra.processes.map((p) => ({
      runtimeId: p.id,
      delegationId: p.delegation_id,
      worker: p.worker ?? undefined,
      pid: p.pid ?? undefined,
      alive:
        p.pid !== null && p.host
          ? (isProcessAlive({ pid: p.pid, startTime: p.pid_start, host: p.host }) ?? null)
          : false,
      logPath: p.log_path ?? undefined,
    }));
    const diskBytes = folderSize(runPaths(this.workspace, diagnosedRun).root);
    const isolation = await this.store.read((r) => readRunIsolation(r, diagnosedRun));
    const worktrees = (await this.store.read((r) => listAttemptWorktrees(r, diagnosedRun))).map((w) => ({
      ...w,
      bytes: w.removedAt === undefined ? folderSize(w.path) : 0,
    }));
    const worktreeFindings = await inspectWorktrees(this.store, this.workspace, diagnosedRun).catch((err: unknown) => [
      {
        path: worktreesRoot(this.workspace, diagnosedRun),
        finding: `could not inspect the worktrees: ${(err as Error).message}`,
      },
    ]);
    return {
      ...view,
      now,
      ...(coordinator ? { coordinator } : {}),
      workers,
      receipts: extra.receipts.map((r) => ({
        delegationId: r.delegation_id,
        command: JSON.parse(r.command_json) as string[],
        exitCode: r.exit_code,
        timedOut: r.timed_out === 1,
        durationMs: r.duration_ms,
        logPath: r.log_path,
      })),
      stops: extra.stops.map((s) => ({
        id: s.id,
        delegationId: s.delegation_id ?? undefined,
        mode: s.mode,
        status: s.status,
        requestedBy: s.requested_by,
        requestedAt: s.requested_at,
        report: JSON.parse(s.report_json) as StopReportEntry[],
      })),
      diskBytes,
      ...(isolation ? { isolation } : {}),
      worktrees,
      worktreeBytes: folderSize(worktreesRoot(this.workspace, diagnosedRun)),
      worktreeFindings,
      next: suggestNext(view, coordinator?.live ?? false, workers),
    };
  }

  /** Lets a stopped run dispatch again (the coordinator's job resumes with `coordinate`). */
  async liftStops(runId: string): Promise<void> {
    await this.store.transact((tx) => liftStops(tx, runId, this.clock.now()));
  }

  /**
   * Records a stop. A live coordinator of the run applies it (it watches the store); with
   * none, this process applies it: it ends the workers recorded on this host and cancels
   * their attempts. Either way the returned request, once applied, reports per attempt
   * whether the end of its processes was confirmed.
   */
  async requestStop(input: {
    runId: string;
    delegationId?: string;
    mode: StopMode;
    by?: string;
    waitMs?: number;
  }): Promise<{ request: StopRequest; repeated: boolean; appliedBy: 'coordinator' | 'this process' | 'pending' }> {
    const by = input.by ?? defaultDecider();
    const { request, repeated } = await this.store.transact((tx) =>
      requestStop(
        tx,
        {
          runId: input.runId,
          mode: input.mode,
          by,
          ...(input.delegationId ? { delegationId: input.delegationId } : {}),
        },
        this.clock.now(),
      ),
    );
    if (request.status === 'applied') return { request, repeated, appliedBy: 'coordinator' };
    const lease = await this.store.read((r) => readCoordinatorLease(r, input.runId));
    if (isLeaseLive(lease, this.clock.now())) {
      // The coordinator notices the request through the journal; wait a little for its report.
      const deadline = this.clock.monotonic() + (input.waitMs ?? (this.config.stopGraceSeconds + 10) * 1000);
      while (this.clock.monotonic() < deadline) {
        const current = await this.store.read((r) => readStop(r, request.id));
        if (current?.status === 'applied') return { request: current, repeated, appliedBy: 'coordinator' };
        await sleep(this.clock, 50);
      }
      return { request, repeated, appliedBy: 'pending' };
    }
    const applied = await applyStopHere(this.engineContext(), request, this.config.stopGraceSeconds * 1000);
    return { request: applied, repeated, appliedBy: 'this process' };
  }

  /**
   * Classifies every task of a run from the evidence and repairs what it can prove. While
   * another process coordinates the run, it only reports.
   */
  async reconcile(runId: string): Promise<ReconcileReport & { reportOnly: boolean; coordinator?: string }> {
    const lease = await this.store.read((r) => readCoordinatorLease(r, runId));
    const reportOnly = isLeaseLive(lease, this.clock.now());
    const report = await reconcileRun(this.engineContext(), runId, { reportOnly });
    return { ...report, reportOnly, ...(reportOnly && lease ? { coordinator: lease.holder } : {}) };
  }

  /** Removes the worktrees and branches of the run's attempts that are over (docs/isolation.md, "Cleanup"). */
  async cleanupWorktrees(runId?: string): Promise<CleanupReport & { runId: string }> {
    const run = await this.getRun(runId);
    return { runId: run.id, ...(await cleanupWorktrees(this.store, this.clock, this.workspace, run.id)) };
  }

  /** Every task's worker (or the override) must be defined before a coordinator dispatches anything. */
  private async refuseUnknownWorkers(runId: string, override?: string): Promise<void> {
    const tasks = await this.store.read((r) =>
      r.all<{ id: string; worker: string | null }>(`SELECT id, worker FROM tasks WHERE run_id = ?`, [runId]),
    );
    const unknown = new Set<string>();
    for (const task of tasks) {
      const id = override ?? task.worker ?? this.config.defaultWorker;
      try {
        resolveWorker(this.config, id);
      } catch {
        unknown.add(id);
      }
    }
    if (unknown.size > 0) {
      resolveWorker(this.config, [...unknown][0]!); // throws the readable error
    }
  }

  // ── queries ─────────────────────────────────────────────────────────────

  async listRuns(): Promise<Run[]> {
    return this.store.read(async (r) =>
      (await r.all<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY ordinal DESC`)).map(toRun),
    );
  }

  /** The run with this id, or the most recent run when no id is given. */
  async getRun(runId?: string): Promise<Run> {
    const row = await this.store.read((r) =>
      runId
        ? r.get<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`, [runId])
        : r.get<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY ordinal DESC LIMIT 1`),
    );
    if (!row)
      throw new BatonError(
        'run.unknown',
        runId ? `There is no run ${runId}.` : 'There is no run yet; claim a task or start a plan first.',
      );
    return toRun(row);
  }

  async overview(runId?: string): Promise<RunOverview> {
    const run = await this.getRun(runId);
    const now = this.clock.now();
    return this.store.read(async (r) => ({
      run,
      tasks: (
        await r.all<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE run_id = ? ORDER BY ordinal`, [run.id])
      ).map(toTask),
      delegations: (
        await r.all<DelegationRow>(
          `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? ORDER BY created_at, id`,
          [run.id],
        )
      ).map(toDelegation),
      runtimes: (await r.all<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.run_id = ? ORDER BY r.claimed_at`, [run.id])).map(
        (row) => toRuntime(row, now),
      ),
      gates: (
        await r.all<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE run_id = ? ORDER BY ordinal`, [run.id])
      ).map(toGate),
    }));
  }

  async listDelegations(runId?: string, status?: DelegationStatus): Promise<{ run: Run; delegations: Delegation[] }> {
    const run = await this.getRun(runId);
    const rows = await this.store.read((r) =>
      status
        ? r.all<DelegationRow>(
            `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND status = ? ORDER BY created_at, id`,
            [run.id, status],
          )
        : r.all<DelegationRow>(
            `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? ORDER BY created_at, id`,
            [run.id],
          ),
    );
    return { run, delegations: rows.map(toDelegation) };
  }

  async listGates(filter: { runId?: string; status?: GateStatus } = {}): Promise<Gate[]> {
    const where: string[] = [];
    const params: string[] = [];
    if (filter.runId) {
      where.push('run_id = ?');
      params.push(filter.runId);
    }
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    const sql = `SELECT ${GATE_COLUMNS} FROM gates ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ordinal`;
    return (await this.store.read((r) => r.all<GateRow>(sql, params))).map(toGate);
  }

  /** A run's ingestion records, oldest first. */
  /** How the run isolates its tasks (once decided at its first dispatch), its live worktrees and the disk they use. */
  async isolationSummary(runId?: string): Promise<{
    runId: string;
    setting: string;
    isolation?: RunIsolation;
    liveWorktrees: number;
    worktreeBytes: number;
  }> {
    const run = await this.getRun(runId);
    const { settings, isolation, live } = await this.store.read(async (r) => ({
      settings: await readRunSettings(r, run.id),
      isolation: await readRunIsolation(r, run.id),
      live:
        (
          await r.get<{ n: number }>(`SELECT COUNT(*) AS n FROM worktrees WHERE run_id = ? AND removed_at IS NULL`, [
            run.id,
          ])
        )?.n ?? 0,
    }));
    return {
      runId: run.id,
      setting: settings.isolation ?? 'none',
      ...(isolation ? { isolation } : {}),
      liveWorktrees: live,
      worktreeBytes: folderSize(worktreesRoot(this.workspace, run.id)),
    };
  }

  /** The run's isolated attempts: worktree, branch, what became of their work. */
  async listWorktrees(runId?: string): Promise<AttemptWorktree[]> {
    const run = await this.getRun(runId);
    return this.store.read((r) => listAttemptWorktrees(r, run.id));
  }

  /**
   * One task's attempts with their verification receipts, worker log paths and ingestions,
   * in one read (the dashboard's task details; `diagnose` is the whole run, processes and disk).
   */
  async taskRecord(
    runId: string,
    taskId: string,
  ): Promise<{
    delegations: Delegation[];
    receipts: Diagnosis['receipts'];
    logPaths: Map<string, string>;
    ingestions: IngestionRecord[];
  }> {
    return this.store.read(async (r) => {
      const delegations = (
        await r.all<DelegationRow>(
          `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND task_id = ? ORDER BY created_at, id`,
          [runId, taskId],
        )
      ).map(toDelegation);
      const receipts = await r.all<{
        delegation_id: string;
        command_json: string;
        exit_code: number | null;
        timed_out: number;
        duration_ms: number;
        log_path: string;
      }>(
        `SELECT delegation_id, command_json, exit_code, timed_out, duration_ms, log_path FROM verification_receipts WHERE run_id = ? AND task_id = ? ORDER BY id`,
        [runId, taskId],
      );
      const ids = delegations.map((d) => d.id);
      const inIds = ids.map(() => '?').join(', ');
      const logs = ids.length
        ? await r.all<{ delegation_id: string; log_path: string }>(
            `SELECT delegation_id, log_path FROM runtimes WHERE run_id = ? AND log_path IS NOT NULL AND delegation_id IN (${inIds})`,
            [runId, ...ids],
          )
        : [];
      const ingestions = ids.length
        ? (
            await r.all<IngestionRow>(
              `SELECT ${INGESTION_COLUMNS} FROM ingestions WHERE run_id = ? AND delegation_id IN (${inIds}) ORDER BY created_at, id`,
              [runId, ...ids],
            )
          ).map(toIngestion)
        : [];
      return {
        delegations,
        receipts: receipts.map((x) => ({
          delegationId: x.delegation_id,
          command: JSON.parse(x.command_json) as string[],
          exitCode: x.exit_code,
          timedOut: x.timed_out === 1,
          durationMs: x.duration_ms,
          logPath: x.log_path,
        })),
        logPaths: new Map(logs.map((l) => [l.delegation_id, l.log_path])),
        ingestions,
      };
    });
  }

  async listIngestions(runId: string): Promise<IngestionRecord[]> {
    return (
      await this.store.read((r) =>
        r.all<IngestionRow>(`SELECT ${INGESTION_COLUMNS} FROM ingestions WHERE run_id = ? ORDER BY created_at, id`, [
          runId,
        ]),
      )
    ).map(toIngestion);
  }

  async listEvents(runId: string, afterSeq = 0, limit = 10_000): Promise<Array<RunEvent & { id: number }>> {
    const rows = await this.store.read((r) =>
      r.all<EventRow>(
        `SELECT id, run_id, seq, type, at, data_json FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
        [runId, afterSeq, limit],
      ),
    );
    return rows.map((row) => ({ ...toEvent(row), id: row.id }));
  }

  now(): number {
    return this.clock.now();
  }

  // ── internals ───────────────────────────────────────────────────────────

  private operationContext(): OperationContext {
    return { now: this.clock.now(), ids: this.ids };
  }

  private validPlan(planPath: string): LoadedPlan {
    return requireValidPlan(readPlan(this.workspace, planPath));
  }

  /** A delegation id names one attempt; without a run, the most recent run that has it. */
  private async findDelegation(delegationId: string, runId?: string): Promise<Delegation> {
    const row = await this.store.read((r) =>
      runId
        ? r.get<DelegationRow>(`SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND id = ?`, [
            runId,
            delegationId,
          ])
        : r.get<DelegationRow>(
            `SELECT ${DELEGATION_COLUMNS.split(', ')
              .map((c) => `d.${c}`)
              .join(
                ', ',
              )} FROM delegations d JOIN runs ON runs.id = d.run_id WHERE d.id = ? ORDER BY runs.ordinal DESC LIMIT 1`,
            [delegationId],
          ),
    );
    if (!row)
      throw new BatonError(
        'delegation.unknown',
        `There is no delegation ${delegationId}${runId ? ` in run ${runId}` : ''}.`,
      );
    return toDelegation(row);
  }

  private displayPath(absolute: string): string {
    return workspacePath(this.workspace, absolute);
  }

  private async primeAnnouncements(): Promise<void> {
    await this.store.read(async (r) => {
      this.lastEventId = (await r.get<{ id: number | null }>(`SELECT MAX(id) AS id FROM events`))?.id ?? 0;
      for (const row of await liveRuntimes(r)) this.beats.set(row.id, row.heartbeat_count);
    });
  }

  /** Announces what changed since the last announcement: new log events, then heartbeats. */
  private async announce(): Promise<void> {
    // Kept up to date even with no listener, so that one who subscribes later hears the very next beat.
    const now = this.clock.now();
    const { events, runtimes } = await this.store.read(async (r) => ({
      events: await r.all<EventRow>(
        `SELECT id, run_id, seq, type, at, data_json FROM events WHERE id > ? ORDER BY id`,
        [this.lastEventId],
      ),
      runtimes: await liveRuntimes(r),
    }));
    for (const row of events) {
      this.lastEventId = row.id;
      this.emitter.fire({ ...toEvent(row), id: row.id });
    }
    const live = new Set<string>();
    for (const row of runtimes) {
      live.add(row.id);
      if (this.beats.get(row.id) === row.heartbeat_count) continue;
      const first = !this.beats.has(row.id);
      this.beats.set(row.id, row.heartbeat_count);
      if (first && row.heartbeat_count === 0) continue;
      const runtime = toRuntime(row, now);
      this.emitter.fire({
        runId: row.run_id,
        type: 'runtime:heartbeat',
        at: runtime.lastHeartbeatAt ?? now,
        data: {
          runtimeId: runtime.id,
          delegationId: runtime.delegationId,
          heartbeatCount: runtime.heartbeatCount,
          leaseExpiresAt: runtime.leaseExpiresAt,
          ...(runtime.progress !== undefined ? { progress: runtime.progress } : {}),
        },
      });
    }
    for (const id of this.beats.keys()) if (!live.has(id)) this.beats.delete(id);
  }
}

/** Reads and parses a plan file (relative paths are resolved against the workspace). */
export function readPlan(workspace: string, planPath: string): LoadedPlan {
  const absolute = resolve(workspace, planPath);
  let text: string;
  try {
    text = readFileSync(absolute, 'utf8');
  } catch (err) {
    throw new BatonError(
      'plan.unreadable',
      `Cannot read the plan ${planPath}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
    );
  }
  return { path: workspacePath(workspace, absolute), text, parsed: parsePlan(text) };
}

/** A plan with errors cannot start a run: refused with its issues. */
export function requireValidPlan(plan: LoadedPlan): LoadedPlan {
  if (!hasErrors(plan.parsed.issues)) return plan;
  const errors = plan.parsed.issues.filter((i) => i.severity === 'error');
  throw new BatonError(
    'plan.invalid',
    `${plan.path} has ${errors.length} error${errors.length === 1 ? '' : 's'}; run 'baton validate ${plan.path}'.`,
    plan.parsed.issues.map((i) => ({ ...i, file: plan.path })),
  );
}

function liveRuntimes(r: StoreReader): Promise<RuntimeRow[]> {
  return r.all<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.ended_at IS NULL AND d.status = 'RUNNING'`);
}

async function activeRunOf(r: StoreReader, planPath: string): Promise<{ id: string; plan_digest: string } | undefined> {
  return r.get<{ id: string; plan_digest: string }>(
    `SELECT id, plan_digest FROM runs WHERE plan_path = ? AND status NOT IN ('completed', 'failed', 'superseded') ORDER BY ordinal DESC LIMIT 1`,
    [planPath],
  );
}

export function loadConfig(workspace: string): { config: BatonConfig; issues: Issue[] } {
  const path = configPathOf(workspace);
  if (!existsSync(path)) return { config: DEFAULT_CONFIG, issues: [] };
  return parseConfig(readFileSync(path, 'utf8'));
}

function defaultDecider(): string {
  try {
    return process.env.BATON_USER || userInfo().username;
  } catch {
    return 'someone';
  }
}

function suggestNext(view: RunOverview, coordinated: boolean, workers: Diagnosis['workers']): Diagnosis['next'] {
  const id = view.run.id;
  const open = view.gates.filter((g) => g.status === 'open');
  if (view.run.status === 'completed') return { command: '', why: 'The run is complete.' };
  if (view.run.status === 'superseded')
    return { command: 'baton status', why: 'This run was replanned; the newest run continues it.' };
  if (coordinated)
    return { command: `baton events --run ${id} --follow`, why: 'A coordinator is driving this run; follow it.' };
  const orphaned = view.delegations.filter(
    (d) => d.status === 'RUNNING' && !workers.some((w) => w.delegationId === d.id && w.alive),
  );
  if (orphaned.length > 0)
    return {
      command: `baton reconcile --run ${id}`,
      why: `${orphaned.map((d) => d.id).join(', ')} ${orphaned.length === 1 ? 'is' : 'are'} RUNNING with no live worker.`,
    };
  if (open.length > 0)
    return {
      command: `baton approve ${open[0]!.id}   (or baton reject ${open[0]!.id} --note …)`,
      why: `${open.length} gate${open.length === 1 ? '' : 's'} wait${open.length === 1 ? 's' : ''} for a decision: ${open[0]!.reason}`,
    };
  if (view.run.status === 'failed' || view.run.status === 'blocked')
    return {
      command: `baton replan --run ${id} --plan <fixed plan>`,
      why: 'Tasks failed and their dependents are blocked.',
    };
  return { command: `baton resume --run ${id}`, why: 'Nothing drives this run; resume continues it.' };
}
