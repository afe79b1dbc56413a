import { takeCoordinatorLease } from '../usecases/coordinatorLiveness';
import { markWorktreeRemoved, recordWorktree } from '../operations/worktrees/worktrees';
import { recordRuntimeLaunch, recordRuntimeProcess } from '../operations/runtimes/createRuntime';
import { renewRuntimeLease } from '../operations/runtimes/renewRuntimeLease';
import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { BatonConfig } from '../domain/config';
import { openGate, waitsAtGateReason } from '../operations/gates/openGate';
import { ingestArtifact, workspacePath } from '../usecases/ingestArtifact';
import { resultOnDisk } from '../usecases/resultOnDisk';
import type { Clock, IdSource } from '../domain/clock';
import { BatonError } from '../domain/errors';
import type { RunStatus } from '../domain/types';
import { claimDelegation } from '../operations/delegations/claimDelegation';
import { enqueueDelegation } from '../operations/delegations/enqueueDelegation';
import { getDelegation } from '../queries/delegations';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { setTaskStatus } from '../operations/tasks/setTaskStatus';
import { settleUnsuccessfulAttempt } from '../operations/tasks/settleUnsuccessfulAttempt';
import { transitionDelegation } from '../operations/delegations/transitionDelegation';
import { expireStaleRuntimes } from '../operations/runtimes/expireStaleRuntimes';
import {
  findProcessesOfWorkers,
  isProcessAlive,
  selfIdentity,
  terminateWorker,
  workerMarker,
  type TerminationReport,
} from '../effects/processes/processes';
import { type ProcessIdentity } from '../domain/process';
import type { StorePort, StoreTx } from '../store/port';
import { TASK_COLUMNS, toTask, type TaskRow } from '../store/rows';
import type { Disposable } from '../domain/emitter';
import { buildPrompt } from '../domain/prompt';
import { spawnWorker, type WorkerExit } from '../effects/processes/spawnWorker';
import { resolveWorker, workerLaunch } from '../domain/workerLaunch';
import {
  assertCoordinatorEpoch,
  releaseCoordinatorLease,
  renewCoordinatorLease,
} from '../operations/coordinatorLease/coordinatorLease';
import { readCoordinatorLease, type CoordinatorLease } from '../queries/coordinatorLease';
import { reconcileRun, type LiveWorker, type ReconcileContext, type ReconcileReport } from '../usecases/reconcileRun';
import { runPaths } from '../effects/workspaceLayout';
import { cancelStoppedAttempt, markStopApplied, requestStop } from '../operations/stops/stopRequests';
import { endRecordedWorker } from '../usecases/applyStop';
import { pendingStops } from '../queries/stops';
import { type StopReportEntry, type StopRequest } from '../domain/stops';
import { verifyAttempt, type VerifyContext } from '../usecases/verifyAttempt';
import { firstOverlap } from '../domain/fileOverlap';
import { createWorktree, removeWorktree, targetHead } from '../effects/git/worktrees';
import { planIsolation } from '../usecases/planIsolation';
import { readRunIsolation } from '../queries/worktrees';
import { recordRunIsolation } from '../operations/runs/recordRunIsolation';
import { workspaceInWorktree, worktreeLocation } from '../effects/workspaceLayout';
import { type RunIsolation } from '../domain/isolation';

export interface CoordinatorDeps {
  store: StorePort;
  clock: Clock;
  ids: IdSource;
  workspace: string;
  config: BatonConfig;
  /** The `baton` CLI entry (a .js file), given to workers as BATON_CLI so they can heartbeat. */
  cliPath?: string;
  /** Fires when anything changed in the store, from this process or another (journal follow). */
  onStoreChange: (listener: () => void) => Disposable;
  log?: (line: string) => void;
}

export interface CoordinatorOptions {
  runId: string;
  maxConcurrency?: number;
  /** Run every task with this worker instead of the task's or the default one. */
  worker?: string;
  /** Dispatch only these tasks (the rest of the run waits). */
  tasks?: string[];
  /** Length of the coordinator lease; renewed at a third of it. */
  leaseMs?: number;
}

export type CoordinatorOutcome =
  | { kind: 'finished'; status: RunStatus }
  | { kind: 'paused'; status: RunStatus; openGates: number; stopped: boolean }
  | { kind: 'idle'; status: RunStatus; reason: string }
  | { kind: 'lease-lost'; detail: string }
  | { kind: 'shut-down' };

/** One attempt this coordinator drives: a worker process (or a person, for the manual worker). */
interface Attempt {
  delegationId: string;
  taskId: string;
  runtimeId: string;
  artifactPath: string;
  logPath: string;
  identity?: ProcessIdentity;
  manual: boolean;
  /** Lease length, and until when (monotonic) the last renewal holds it: a wall-clock jump does not end it early. */
  leaseMs: number;
  leaseUntilMono: number;
  /**
   * Set once someone (stop, timeout, lost lease) ends it: its exit is then not a result, and the ender records the
   * outcome.
   */
  ending?: 'stopped' | 'timeout' | 'stale';
  /**
   * Its worker exited and this coordinator is taking its result (ingest, verify, integrate): not someone else's
   * decision.
   */
  settling?: boolean;
  timers: Map<'renew' | 'timeout' | 'poll', () => void>;
  done: Promise<void>;
}

type RenewalOutcome = 'renewed' | 'lost' | 'retry';

const DEFAULT_COORDINATOR_LEASE_MS = 30_000;
/** After a renewal failed for a passing reason (the store was busy), try again this soon. */
const RENEWAL_RETRY_MS = 1000;
/**
 * Exited workers are looked over for processes they left behind together, at most this often (reading /proc costs ~1
 * ms).
 */
const LEFTOVER_SWEEP_MS = 250;

/**
 * The coordinators alive in this process, by workspace and run. The store lease cannot tell
 * two coordinators of one process apart (same pid and start time), so a second `take` in the
 * same process is refused here while the first one still holds the run.
 */
const activeHere = new Map<string, Coordinator>();

/**
 * Drives one run (DESIGN §4): holds the run's coordinator lease, dispatches ready tasks to
 * worker processes up to maxConcurrency, renews their leases while they live, ends them on
 * timeout or stop (and proves they are gone), ingests and verifies their results, and
 * returns when the run ends or waits on a person. Every write it makes carries its lease
 * epoch and is refused if another coordinator has taken over; the first refusal makes it
 * step down: it stops renewing and timing, and leaves its workers to its successor.
 */
export class Coordinator {
  private epoch = 0;
  /** Attempts this coordinator drives; one stays here until its outcome is recorded in the store. */
  private readonly attempts = new Map<string, Attempt>();
  private readonly holder: string;
  private readonly identity = selfIdentity();
  private wakeUp: (() => void) | undefined;
  private pendingWake = false;
  private leaseLost: string | undefined;
  private shuttingDown = false;
  private released = false;
  private cancelLeaseTimer: (() => void) | undefined;
  private wakeTimer: { at: number; cancel: () => void } | undefined;
  private subscription: Disposable | undefined;
  private readonly maxConcurrency: number;
  private readonly leaseMs: number;
  private readonly registryKey: string;
  /** The pass running now: shutdown waits for it, so that a worker it is starting is ended too. */
  private tickInProgress: Promise<unknown> = Promise.resolve();
  /** The stop that shutdown recorded; a worker that starts while shutting down is ended under it. */
  private shutdownStop: StopRequest | undefined;
  /** Settles once this coordinator's attempt to take the lease has an answer. */
  private acquiring: Promise<void> = Promise.resolve();
  /** Verifying tasks this coordinator is finishing with no attempt of its own behind them (see tick). */
  private readonly finishing = new Map<string, Promise<void>>();
  /** Verifying tasks with no attempt left to verify: not tried again by this coordinator. */
  private readonly cannotFinish = new Set<string>();
  private readonly retryTimers = new Set<() => void>();
  /** Workers that exited, for the next leftover sweep (see endLeftovers). */
  private readonly exitedWorkers: Attempt[] = [];
  private cancelSweepTimer: (() => void) | undefined;
  private sweeping: Promise<void> = Promise.resolve();

  private constructor(
    private readonly deps: CoordinatorDeps,
    readonly options: CoordinatorOptions,
  ) {
    this.holder = `${this.identity.host}:${this.identity.pid}`;
    this.maxConcurrency = options.maxConcurrency ?? deps.config.maxConcurrency;
    this.leaseMs = options.leaseMs ?? DEFAULT_COORDINATOR_LEASE_MS;
    this.registryKey = `${resolve(deps.workspace)}\0${options.runId}`;
  }

  /**
   * Takes the run's coordinator lease, or reports who holds it (the caller then observes).
   * A new holder first reconciles the run: it adopts or ends the workers of its predecessor.
   */
  static async take(
    deps: CoordinatorDeps,
    options: CoordinatorOptions,
  ): Promise<{ coordinator: Coordinator; reconcile: ReconcileReport } | { heldBy: CoordinatorLease; why: string }> {
    const coordinator = new Coordinator(deps, options);
    const sibling = activeHere.get(coordinator.registryKey);
    if (sibling) {
      await sibling.acquiring;
      if (activeHere.get(coordinator.registryKey) === sibling && sibling.holdsLease()) {
        const lease = await deps.store.read((r) => readCoordinatorLease(r, options.runId));
        if (lease && lease.releasedAt === undefined && lease.epoch === sibling.epoch) {
          return {
            heldBy: lease,
            why: `this process (${coordinator.holder}) already coordinates run ${options.runId}`,
          };
        }
      }
      sibling.unregister(); // it no longer holds the run
      return Coordinator.take(deps, options);
    }
    // Reserved before the first await: a second take in this process meets it.
    activeHere.set(coordinator.registryKey, coordinator);
    let acquired!: () => void;
    coordinator.acquiring = new Promise((resolveAcquiring) => (acquired = resolveAcquiring));
    try {
      const outcome = await takeCoordinatorLease(deps.store, deps.clock, {
        runId: options.runId,
        holder: coordinator.holder,
        identity: coordinator.identity,
        leaseMs: coordinator.leaseMs,
      });
      if (!outcome.acquired) {
        coordinator.unregister();
        return { heldBy: outcome.heldBy, why: outcome.why };
      }
      coordinator.epoch = outcome.epoch;
    } catch (err) {
      coordinator.unregister();
      throw err;
    } finally {
      acquired();
    }
    coordinator.scheduleLeaseRenewal(Math.floor(coordinator.leaseMs / 3));
    try {
      const reconcile = await reconcileRun(coordinator.reconcileContext(), options.runId, {
        adopt: { runId: options.runId, epoch: coordinator.epoch, take: (a) => coordinator.adopt(a) },
      });
      return { coordinator, reconcile };
    } catch (err) {
      // Could not take over cleanly: give the run back; workers it adopted are left for the next coordinator.
      coordinator.abandonAttempts();
      await coordinator.release();
      throw err;
    }
  }

  get leaseEpoch(): number {
    return this.epoch;
  }

  /** Runs until the run finishes, pauses on a person, or this coordinator loses its lease or shuts down. */
  async run(): Promise<CoordinatorOutcome> {
    this.subscription = this.deps.onStoreChange(() => this.wake());
    try {
      for (;;) {
        if (this.shuttingDown) return { kind: 'shut-down' };
        if (this.leaseLost) return { kind: 'lease-lost', detail: this.leaseLost };
        const pass = this.tick();
        this.tickInProgress = pass.catch(() => undefined);
        const outcome = await pass;
        if (outcome) return outcome;
        await this.nextWake();
      }
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) {
        this.stepDown(err.message);
        return { kind: 'lease-lost', detail: this.leaseLost ?? err.message };
      }
      throw err;
    } finally {
      this.subscription?.dispose();
      await this.flushLeftoverSweep();
      if (!this.leaseLost && !this.shuttingDown) await this.release();
    }
  }

  /**
   * Ends every worker this coordinator drives (the extension deactivating, Ctrl-C on
   * `baton start`): they are stopped like an immediate stop, recorded, and the lease released.
   * A coordinator that already lost its lease leaves them to its successor.
   */
  async shutdown(by = 'coordinator shutdown'): Promise<StopReportEntry[]> {
    if (this.shuttingDown) return [];
    this.shuttingDown = true;
    this.wake();
    let report: StopReportEntry[] = [];
    if (!this.leaseLost && !this.released) {
      const request = await this.guarded(
        async (tx) =>
          (await requestStop(tx, { runId: this.options.runId, mode: 'immediate', by }, this.deps.clock.now())).request,
      ).catch(() => undefined);
      this.shutdownStop = request;
      if (request) report = await this.applyStop(request).catch(() => []);
      // A pass that was starting a worker meanwhile ends it itself (see startAttempt); wait for it before letting go.
      await this.tickInProgress;
    }
    await this.flushLeftoverSweep();
    await this.release();
    return report;
  }

  // ── the loop ────────────────────────────────────────────────────────────

  private wake(): void {
    this.pendingWake = true;
    this.wakeUp?.();
  }

  private nextWake(): Promise<void> {
    if (this.pendingWake) {
      this.pendingWake = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      this.wakeUp = () => {
        this.wakeUp = undefined;
        this.pendingWake = false;
        resolve();
      };
    });
  }

  /** One timer for the next moment the store's state changes by itself (a backoff ends, a lease runs out). */
  private wakeAt(at: number | undefined): void {
    if (this.wakeTimer && this.wakeTimer.at === at) return;
    this.wakeTimer?.cancel();
    this.wakeTimer = undefined;
    if (at === undefined || this.leaseLost || this.released) return;
    // At most an hour ahead (a timer cannot wait longer than ~24 days; waking early only re-plans).
    const cancel = this.deps.clock.setTimer(Math.min(Math.max(0, at - this.deps.clock.now()), 3_600_000), () => {
      if (this.wakeTimer?.cancel === cancel) this.wakeTimer = undefined;
      this.wake();
    });
    this.wakeTimer = { at, cancel };
  }

  private selected(taskId: string): boolean {
    return !this.options.tasks || this.options.tasks.includes(taskId);
  }

  /** One pass: apply stops, expire stale leases, dispatch, and decide whether the run is done for now. */
  private async tick(): Promise<CoordinatorOutcome | undefined> {
    const runId = this.options.runId;
    for (const request of await this.deps.store.read((r) => pendingStops(r, runId))) await this.applyStop(request);

    await this.guarded(async (tx) => {
      const now = this.deps.clock.now();
      const mono = this.deps.clock.monotonic();
      // A lease this coordinator renews on time (monotonic) is not expired by a wall-clock jump: restate it first.
      // (Only when needed: any write statement is a journaled commit, and a commit wakes this loop again.)
      for (const attempt of this.attempts.values()) {
        if (attempt.manual || attempt.ending || mono >= attempt.leaseUntilMono) continue;
        const lapsed = await tx.get(
          `SELECT 1 AS x FROM runtimes WHERE id = ? AND ended_at IS NULL AND lease_expires_at <= ?`,
          [attempt.runtimeId, now],
        );
        if (lapsed) {
          const authority = { holder: 'coordinator' as const, runId, epoch: this.epoch, withinLease: true };
          await renewRuntimeLease(tx, { runtimeId: attempt.runtimeId, authority, beat: false }, now);
        }
      }
      return expireStaleRuntimes(tx, now);
    });
    await this.endAttemptsDecidedElsewhere();

    const now = this.deps.clock.now();
    const state = await this.deps.store.read(async (r) => ({
      run: await r.get<{ status: string; stop_mode: string | null }>(
        `SELECT status, stop_mode FROM runs WHERE id = ?`,
        [runId],
      ),
      // Only as many ready tasks as could start now, plus the next one waiting on a retry
      // backoff: a pass reads a handful of rows however large the run is.
      ready: (
        await r.all<{ id: string; not_before: number | null }>(
          `SELECT id, not_before FROM tasks WHERE run_id = ? AND status = 'ready' AND (not_before IS NULL OR not_before <= ?)${this.taskFilterSql()} ORDER BY ordinal LIMIT ?`,
          [runId, now, ...(this.options.tasks ?? []), this.maxConcurrency + this.attempts.size],
        )
      ).concat(
        await r.all<{ id: string; not_before: number | null }>(
          `SELECT id, not_before FROM tasks WHERE run_id = ? AND status = 'ready' AND not_before > ?${this.taskFilterSql()} ORDER BY not_before LIMIT 1`,
          [runId, now, ...(this.options.tasks ?? [])],
        ),
      ),
      verifying: await r.all<{ id: string }>(`SELECT id FROM tasks WHERE run_id = ? AND status = 'verifying'`, [runId]),
      // Worktrees of attempts discarded at a gate, still on disk (almost always none).
      discarded: await r.all<{ delegation_id: string; path: string; branch: string }>(
        `SELECT delegation_id, path, branch FROM worktrees WHERE run_id = ? AND status = 'discarded' AND removed_at IS NULL`,
        [runId],
      ),
      openGates:
        (await r.get<{ n: number }>(`SELECT COUNT(*) AS n FROM gates WHERE run_id = ? AND status = 'open'`, [runId]))
          ?.n ?? 0,
      // Attempts with a live lease: ours, and those held by an external worker (`baton claim`).
      leased: await r.all<{ id: string; task_id: string; lease_expires_at: number }>(
        `SELECT d.id, d.task_id, rt.lease_expires_at FROM delegations d JOIN runtimes rt ON rt.run_id = d.run_id AND rt.id = d.runtime_id
         WHERE d.run_id = ? AND d.status = 'RUNNING' AND rt.ended_at IS NULL`,
        [runId],
      ),
    }));
    if (!state.run) throw new BatonError('run.unknown', `There is no run ${runId}.`);
    if (state.discarded.length > 0) await this.removeDiscardedWorktrees(state.discarded);

    let wakeAt: number | undefined;
    let waitingForBackoff = false;
    if (!state.run.stop_mode && state.run.status !== 'superseded') {
      for (const task of state.ready) {
        if (this.shuttingDown || this.leaseLost) break;
        if (this.busySlots() >= this.maxConcurrency) break;
        if (this.attemptOfTask(task.id)) continue;
        if (task.not_before !== null && task.not_before > now) {
          waitingForBackoff = true;
          wakeAt = Math.min(wakeAt ?? Infinity, task.not_before);
          continue;
        }
        const row = await this.deps.store.read((r) =>
          r.get<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE run_id = ? AND id = ? AND status = 'ready'`, [
            runId,
            task.id,
          ]),
        );
        if (row) await this.startAttempt(toTask(row));
      }
    }
    // An attempt held elsewhere ends by its result (a store change wakes us) or when its lease runs out.
    const heldElsewhere = state.leased.filter((d) => !this.attempts.has(d.id) && this.selected(d.task_id));
    for (const d of heldElsewhere) wakeAt = Math.min(wakeAt ?? Infinity, d.lease_expires_at);
    this.wakeAt(wakeAt);

    // Verifying with no attempt of ours behind it — left by a predecessor that stopped mid-way, or
    // sent back to integrate after a conflict gate: finish it alongside the running attempts.
    for (const task of state.verifying) {
      if (!this.attemptOfTask(task.id) && !this.finishing.has(task.id) && !this.cannotFinish.has(task.id))
        this.finishInBackground(task.id);
    }
    if (this.attempts.size > 0 || this.finishing.size > 0) return undefined;
    if (waitingForBackoff || heldElsewhere.length > 0) return undefined;
    const status = await this.deps.store.read(
      async (r) =>
        (await r.get<{ status: string }>(`SELECT status FROM runs WHERE id = ?`, [runId]))!.status as RunStatus,
    );
    if (status === 'completed' || status === 'failed' || status === 'blocked' || status === 'superseded')
      return { kind: 'finished', status };
    if (status === 'paused' || status === 'stopping')
      return { kind: 'paused', status, openGates: state.openGates, stopped: Boolean(state.run.stop_mode) };
    const dispatchable = state.ready.length;
    if (dispatchable === 0)
      return {
        kind: 'idle',
        status,
        reason: this.options.tasks ? 'the selected tasks are done or waiting' : 'nothing is ready to run',
      };
    return undefined;
  }

  /** `--task`: dispatch only these (bound as parameters after the run id). */
  private taskFilterSql(): string {
    return this.options.tasks?.length ? ` AND id IN (${this.options.tasks.map(() => '?').join(', ')})` : '';
  }

  private busySlots(): number {
    let busy = 0;
    for (const attempt of this.attempts.values()) if (!attempt.manual) busy++;
    return busy;
  }

  private attemptOfTask(taskId: string): Attempt | undefined {
    for (const attempt of this.attempts.values()) if (attempt.taskId === taskId) return attempt;
    return undefined;
  }

  /** Is this attempt still one this coordinator drives (not ended, forgotten, or abandoned)? */
  private owns(attempt: Attempt): boolean {
    return this.attempts.get(attempt.delegationId) === attempt;
  }

  /** The attempt's outcome is recorded (or someone else's business): stop tracking it. */
  private forget(attempt: Attempt): void {
    for (const cancel of attempt.timers.values()) cancel();
    attempt.timers.clear();
    if (this.owns(attempt)) this.attempts.delete(attempt.delegationId);
    this.wake();
  }

  // ── attempts ────────────────────────────────────────────────────────────

  /**
   * A task whose `files:` overlap those of a task in flight waits for it (docs/isolation.md,
   * "Overlap"): it is not dispatched, and its reason says on what it waits.
   */
  private async heldBackByOverlap(task: ReturnType<typeof toTask>): Promise<boolean> {
    if (task.files.length === 0) return false;
    const inFlight = await this.deps.store.read((r) =>
      r.all<{ id: string; files_json: string }>(
        `SELECT id, files_json FROM tasks WHERE run_id = ? AND status IN ('running', 'verifying') AND files_json <> '[]' AND id <> ?`,
        [this.options.runId, task.id],
      ),
    );
    for (const other of inFlight) {
      const pair = firstOverlap(task.files, JSON.parse(other.files_json) as string[]);
      if (!pair) continue;
      const reason = `waits for ${other.id}: its files overlap (${pair[0]} / ${pair[1]})`;
      if (task.statusReason !== reason) {
        await this.guarded((tx) =>
          setTaskStatus(tx, this.options.runId, task.id, 'ready', reason, this.deps.clock.now()),
        );
      }
      return true;
    }
    return false;
  }

  /** How the task runs: in the shared tree, in a worktree of its own, or not yet (an isolation gate opened). */
  private async isolationFor(task: ReturnType<typeof toTask>): Promise<RunIsolation | 'none' | 'gated'> {
    if (task.isolation !== 'none') {
      // One isolation question per run: while it is open, the other tasks that need the answer wait at it too.
      const open = await this.deps.store.read((r) =>
        r.get<{ id: string }>(
          `SELECT id FROM gates WHERE run_id = ? AND kind = 'isolation' AND status = 'open' LIMIT 1`,
          [this.options.runId],
        ),
      );
      if (open && !(await this.deps.store.read((r) => readRunIsolation(r, this.options.runId)))) {
        await this.guarded(async (tx) => {
          await setTaskStatus(
            tx,
            this.options.runId,
            task.id,
            'gated',
            waitsAtGateReason(open.id, 'isolation'),
            this.deps.clock.now(),
          );
          await refreshRunStatus(tx, this.options.runId, this.deps.clock.now());
        });
        return 'gated';
      }
    }
    const plan = await planIsolation(
      (work) => this.deps.store.read(work),
      this.deps.workspace,
      task,
      this.maxConcurrency,
    );
    if (plan.mode === 'none') return 'none';
    if (plan.mode === 'decided') {
      await this.guarded((tx) => recordRunIsolation(tx, plan.run, this.deps.clock.now()));
      this.log(`isolation: none (${plan.run.note ?? ''})`);
      return 'none';
    }
    if (plan.mode === 'gate') {
      await this.guarded(async (tx) => {
        const now = this.deps.clock.now();
        await openGate(
          tx,
          {
            runId: this.options.runId,
            kind: 'isolation',
            taskId: task.id,
            reason: `${task.id} should run in a git worktree of its own, but ${plan.reason.charAt(0).toLowerCase()}${plan.reason.slice(1)} Approve to run this run's tasks in the shared working tree instead, reject to cancel ${task.id}.`,
            details: { problem: plan.problem },
          },
          now,
        );
        await refreshRunStatus(tx, this.options.runId, now);
      });
      return 'gated';
    }
    return plan.run;
  }

  private async startAttempt(task: ReturnType<typeof toTask>): Promise<void> {
    const runId = this.options.runId;
    const workerId = this.options.worker ?? task.worker ?? this.deps.config.defaultWorker;
    const worker = resolveWorker(this.deps.config, workerId);
    const manual = worker.type === 'manual';
    if (await this.heldBackByOverlap(task)) return;
    const isolation = manual ? 'none' : await this.isolationFor(task);
    if (isolation === 'gated') return;
    let baseCommit: string | undefined;
    if (isolation !== 'none') {
      try {
        baseCommit = await targetHead(isolation as { repoRoot: string; targetBranch: string });
      } catch (err) {
        this.log(
          `${task.id}: not started: cannot read the target branch ${isolation.targetBranch}: ${(err as Error).message}`,
        );
        this.wakeAt(this.deps.clock.now() + 5000);
        return;
      }
    }
    // A person gets a long lease; a process's lease is renewed while it lives.
    const leaseMs = manual
      ? Math.max(this.deps.config.leaseSeconds * 1000, 7 * 86_400_000)
      : this.deps.config.leaseSeconds * 1000;
    const now = this.deps.clock.now();
    const claimedMono = this.deps.clock.monotonic();
    const paths = runPaths(this.deps.workspace, runId);
    let claim;
    try {
      claim = await this.guarded(async (tx) => {
        const queued = await enqueueDelegation(tx, { runId, taskId: task.id }, now);
        const claimed = await claimDelegation(
          tx,
          { runId, delegationId: queued.id, leaseMs, holder: manual ? 'a person (manual)' : this.holder },
          { now, ids: this.deps.ids },
        );
        let cwd = this.deps.workspace;
        let worktree: { path: string; branch: string; repoRoot: string } | undefined;
        if (isolation !== 'none') {
          if (!(await readRunIsolation(tx, runId))) await recordRunIsolation(tx, isolation, now);
          const location = worktreeLocation(this.deps.workspace, runId, task.id, claimed.delegation.attempt);
          // Recorded before it exists: a crash in between leaves a row that reconcile and cleanup know about.
          await recordWorktree(
            tx,
            {
              runId,
              delegationId: claimed.delegation.id,
              taskId: task.id,
              ...location,
              baseCommit: baseCommit!,
              strategy: isolation.strategy,
            },
            now,
          );
          worktree = { ...location, repoRoot: isolation.repoRoot! };
          cwd = workspaceInWorktree(location.path, isolation.repoRoot!, this.deps.workspace);
        }
        // Recorded with the claim, so a successor can tell a worker of ours from an external claim.
        await recordRuntimeLaunch(tx, claimed.runtimeId, {
          worker: workerId,
          logPath: paths.log(claimed.delegation.id),
          cwd,
        });
        await refreshRunStatus(tx, runId, now);
        return { ...claimed, cwd, worktree };
      });
    } catch (err) {
      // Someone else claimed or gated the task since we read it: the next pass sees the new state.
      if (BatonError.is(err) && !BatonError.is(err, 'coordinator.superseded')) {
        this.log(`${task.id}: not started: ${(err as BatonError).message}`);
        return;
      }
      throw err;
    }
    const artifactPath = paths.artifact(claim.delegation.id);
    const logPath = paths.log(claim.delegation.id);
    const promptPath = paths.prompt(claim.delegation.id);
    let prompt: string;
    try {
      const dependencies = await this.deps.store.read((r) =>
        r.all<{ id: string; title: string }>(
          `SELECT t.id, t.title FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.depends_on WHERE dep.run_id = ? AND dep.task_id = ?`,
          [runId, task.id],
        ),
      );
      // An isolated worker works elsewhere: it gets the artifact's absolute path.
      const shownArtifact = claim.worktree ? artifactPath : workspacePath(this.deps.workspace, artifactPath);
      prompt = buildPrompt({
        task,
        delegationId: claim.delegation.id,
        agent: claim.delegation.agent,
        artifactPath: shownArtifact,
        dependencies,
      });
      mkdirSync(dirname(promptPath), { recursive: true });
      mkdirSync(dirname(artifactPath), { recursive: true });
      // On the thread pool: creating a file costs ~1 ms on some disks, time this thread spends on other workers
      // meanwhile.
      await writeFile(promptPath, prompt);
      if (claim.worktree) {
        await createWorktree(claim.worktree.repoRoot, claim.worktree, baseCommit!);
        this.log(
          `${claim.delegation.id}: worktree ${workspacePath(this.deps.workspace, claim.worktree.path)} on ${claim.worktree.branch}`,
        );
      }
    } catch (err) {
      // The attempt is claimed: it must end in the store, not stay RUNNING with nothing behind it.
      await this.failAttempt(claim.delegation.id, `could not prepare the attempt: ${(err as Error).message}`);
      return;
    }

    const attempt: Attempt = {
      delegationId: claim.delegation.id,
      taskId: task.id,
      runtimeId: claim.runtimeId,
      artifactPath,
      logPath,
      manual,
      leaseMs,
      leaseUntilMono: claimedMono + leaseMs,
      timers: new Map(),
      done: Promise.resolve(),
    };
    if (manual) {
      await this.guarded((tx) =>
        openGate(
          tx,
          {
            runId,
            kind: 'manual_handoff',
            taskId: task.id,
            delegationId: claim.delegation.id,
            reason: `Task ${task.id} is for a person. Do the work, then ingest the result for ${claim.delegation.id} (baton ingest --delegation ${claim.delegation.id} --artifact <file>). Approve to hand it out again, reject to fail it.`,
            details: { manual: true, promptPath, artifactPath },
          },
          this.deps.clock.now(),
        ).then(() => refreshRunStatus(tx, runId, this.deps.clock.now())),
      );
      this.attempts.set(attempt.delegationId, attempt);
      return;
    }

    let spawned;
    try {
      spawned = await spawnWorker(
        workerLaunch(workerId, worker, {
          prompt,
          promptFile: promptPath,
          artifactPath,
          taskId: task.id,
          workspace: claim.cwd,
        }),
        {
          cwd: claim.cwd,
          logPath,
          env: {
            BATON_RUN_ID: runId,
            BATON_DELEGATION_ID: claim.delegation.id,
            BATON_RUNTIME_ID: claim.runtimeId,
            BATON_RUNTIME_TOKEN: claim.token,
            BATON_ARTIFACT_PATH: artifactPath,
            BATON_WORKSPACE: this.deps.workspace,
            ...(claim.worktree ? { BATON_WORKTREE: claim.worktree.path } : {}),
            ...(this.deps.cliPath ? { BATON_CLI: this.deps.cliPath } : {}),
          },
        },
      );
    } catch (err) {
      const reason = BatonError.is(err) ? err.message : `could not start the worker: ${(err as Error).message}`;
      this.log(`${claim.delegation.id}: ${reason}`);
      await this.failAttempt(claim.delegation.id, reason);
      return;
    }
    attempt.identity = spawned.identity;
    this.watchAttempt(attempt, spawned.exited, this.deps.config.taskTimeoutSeconds * 1000);
    await this.guarded((tx) => recordRuntimeProcess(tx, claim.runtimeId, spawned.identity));
    this.log(`${claim.delegation.id}: started ${workerId} (pid ${spawned.identity.pid})`);
    if (this.shuttingDown && this.shutdownStop) {
      // Shutdown's stop was applied while this worker was starting: it ends like the others.
      const stop = this.shutdownStop;
      const termination = await this.endAttempt(attempt, 'stopped');
      const entry: StopReportEntry = {
        delegationId: attempt.delegationId,
        processes: termination?.processes.map((p) => p.pid) ?? [],
        confirmed: termination ? termination.confirmed : true,
        survivors: termination?.survivors.map((p) => p.pid) ?? [],
      };
      try {
        await this.guarded((tx) =>
          cancelStoppedAttempt(
            tx,
            { runId, delegationId: attempt.delegationId, request: stop, entry },
            this.deps.clock.now(),
          ),
        );
      } finally {
        this.forget(attempt);
      }
    }
  }

  /** Lease renewals at a third of the lease, the task timeout, and what happens when the worker exits. */
  private watchAttempt(attempt: Attempt, exited: Promise<WorkerExit>, timeoutMs: number): void {
    this.attempts.set(attempt.delegationId, attempt);
    const renewEvery = Math.max(1000, Math.floor((this.deps.config.leaseSeconds * 1000) / 3));
    const renew = (delay: number): void => {
      attempt.timers.set(
        'renew',
        this.deps.clock.setTimer(delay, () => {
          if (!this.owns(attempt) || attempt.ending || this.leaseLost) return;
          void this.renewAttemptLease(attempt).then((outcome) => {
            if (outcome === 'renewed') renew(renewEvery);
            else if (outcome === 'retry') renew(Math.min(renewEvery, RENEWAL_RETRY_MS));
          });
        }),
      );
    };
    renew(renewEvery);
    attempt.timers.set(
      'timeout',
      this.deps.clock.setTimer(Math.max(0, timeoutMs), () => {
        if (this.owns(attempt) && !attempt.ending && !this.leaseLost) void this.timeOut(attempt);
      }),
    );
    attempt.done = exited
      .then((exit) => this.onWorkerExit(attempt, exit))
      .catch((err) => this.log(`${attempt.delegationId}: ${(err as Error).message}`));
  }

  /**
   * Renews the lease of a worker this coordinator drives (counted as a heartbeat). Whether the
   * lease still holds is judged on the monotonic clock from the last renewal — a wall-clock
   * jump does not end it — and, failing that, on the stored expiry: only a lease that both
   * say ran out is lost (made STALE; the retry policy applies).
   */
  private async renewAttemptLease(attempt: Attempt): Promise<RenewalOutcome> {
    try {
      // Judged when the transaction runs, not when the timer fired: the process may have been paused in between.
      let renewedAtMono = 0;
      const outcome = await this.guarded((tx) => {
        renewedAtMono = this.deps.clock.monotonic();
        const authority = {
          holder: 'coordinator' as const,
          runId: this.options.runId,
          epoch: this.epoch,
          withinLease: renewedAtMono < attempt.leaseUntilMono,
        };
        return renewRuntimeLease(tx, { runtimeId: attempt.runtimeId, authority }, this.deps.clock.now());
      });
      if (outcome.renewed) {
        attempt.leaseUntilMono = renewedAtMono + attempt.leaseMs;
        return 'renewed';
      }
      // The lease ran out before we renewed it (this process was paused): the attempt is STALE now.
      this.log(`${attempt.delegationId}: ${outcome.error.message}`);
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) return 'lost';
      if (!BatonError.is(err, 'runtime.not-live')) {
        this.log(`${attempt.delegationId}: lease not renewed, trying again: ${(err as Error).message}`);
        return 'retry';
      }
      // Decided elsewhere (ingested by hand, stopped): the next pass ends it.
      this.wake();
      return 'lost';
    }
    if (this.owns(attempt) && !attempt.ending) {
      await this.endAttempt(attempt, 'stale');
      this.forget(attempt);
    }
    return 'lost';
  }

  private async timeOut(attempt: Attempt): Promise<void> {
    try {
      const report = await this.endAttempt(attempt, 'timeout');
      const seconds = this.deps.config.taskTimeoutSeconds;
      await this.failAttempt(
        attempt.delegationId,
        `timed out after ${seconds} s${report && !report.confirmed ? '; termination NOT confirmed' : ''}`,
      );
    } catch (err) {
      if (!BatonError.is(err, 'coordinator.superseded')) this.log(`${attempt.delegationId}: ${(err as Error).message}`);
    } finally {
      this.forget(attempt);
    }
  }

  /** A worker process ended by itself: take its result (artifact file, else its output) or fail the attempt. */
  private async onWorkerExit(attempt: Attempt, exit: WorkerExit): Promise<void> {
    attempt.timers.get('renew')?.();
    attempt.timers.get('timeout')?.();
    // Ended by a stop, a timeout or a lost lease: whoever ended it records the outcome.
    if (attempt.ending || !this.owns(attempt) || this.leaseLost || this.shuttingDown) return;
    attempt.settling = true;
    try {
      const delegation = await this.deps.store.read((r) => getDelegation(r, this.options.runId, attempt.delegationId));
      if (!delegation || delegation.status !== 'RUNNING') return; // decided elsewhere meanwhile
      const artifact = resultOnDisk(attempt.artifactPath, attempt.logPath);
      if (!artifact) {
        const how = exit.signal
          ? `was killed by ${exit.signal}`
          : exit.exitCode === null
            ? 'ended'
            : `exited with code ${exit.exitCode}`;
        await this.failAttempt(attempt.delegationId, `the worker ${how} without a result`);
        return;
      }
      const outcome = await ingestArtifact(this.verifyContext(), delegation, artifact);
      this.log(
        `${attempt.delegationId}: ${outcome.record.accepted ? `result ${outcome.record.resultStatus}` : 'result rejected'}; ${outcome.delegation.status}`,
      );
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) return;
      this.log(`${attempt.delegationId}: ${(err as Error).message}`);
      // Its result could not be taken (unreadable, vanished): the attempt fails rather than waiting for its lease.
      await this.failAttempt(attempt.delegationId, `its result could not be taken: ${(err as Error).message}`).catch(
        () => undefined,
      );
    } finally {
      this.forget(attempt);
      this.endLeftovers(attempt);
    }
  }

  /**
   * A worker that exited may have left processes behind (a detached or setsid child):
   * they carry its marker, and they go with it. Looking means reading /proc, so exited
   * workers are swept together, at most every LEFTOVER_SWEEP_MS, and once more before the
   * coordinator returns or shuts down (see flushLeftoverSweep).
   */
  private endLeftovers(attempt: Attempt): void {
    if (!attempt.identity) return;
    this.exitedWorkers.push(attempt);
    this.cancelSweepTimer ??= this.deps.clock.setTimer(LEFTOVER_SWEEP_MS, () => {
      this.cancelSweepTimer = undefined;
      void this.sweepLeftovers();
    });
  }

  private sweepLeftovers(): Promise<void> {
    this.sweeping = this.sweeping.then(async () => {
      const batch = this.exitedWorkers.splice(0);
      if (batch.length === 0) return;
      const found = findProcessesOfWorkers(batch.map((a) => ({ root: a.identity, marker: workerMarker(a.runtimeId) })));
      for (const [i, attempt] of batch.entries()) {
        if (found[i]!.length === 0 || !attempt.identity) continue;
        const report = await terminateWorker(attempt.identity, {
          marker: workerMarker(attempt.runtimeId),
          graceMs: this.deps.config.stopGraceSeconds * 1000,
          clock: this.deps.clock,
        }).catch(() => undefined);
        if (report && report.processes.length > 0) {
          this.log(
            `${attempt.delegationId}: ended ${report.processes.length} process(es) the worker left behind${report.confirmed ? '' : ', NOT confirmed'}`,
          );
        }
      }
    });
    return this.sweeping;
  }

  /** Sweeps now for whatever exited workers left behind: nothing of theirs outlives the coordinator's return. */
  private async flushLeftoverSweep(): Promise<void> {
    this.cancelSweepTimer?.();
    this.cancelSweepTimer = undefined;
    await this.sweepLeftovers().catch(() => undefined);
  }

  private async failAttempt(delegationId: string, reason: string): Promise<void> {
    await this.guarded(async (tx) => {
      const delegation = await getDelegation(tx, this.options.runId, delegationId);
      if (!delegation || delegation.status !== 'RUNNING') return;
      const now = this.deps.clock.now();
      await transitionDelegation(tx, delegation, 'FAILED', { reason }, now);
      await settleUnsuccessfulAttempt(tx, this.options.runId, delegation.taskId, `${delegationId} ${reason}`, now);
      await refreshRunStatus(tx, this.options.runId, now);
    });
  }

  /**
   * Ends an attempt's processes (TERM, grace, KILL, proof). It stays tracked — its slot busy,
   * the run not idle — until the caller has recorded the outcome and forgets it.
   */
  private async endAttempt(
    attempt: Attempt,
    why: NonNullable<Attempt['ending']>,
  ): Promise<TerminationReport | undefined> {
    if (attempt.ending) return undefined;
    attempt.ending = why;
    for (const cancel of attempt.timers.values()) cancel();
    attempt.timers.clear();
    if (!attempt.identity) return undefined;
    const report = await terminateWorker(attempt.identity, {
      marker: workerMarker(attempt.runtimeId),
      graceMs: this.deps.config.stopGraceSeconds * 1000,
      clock: this.deps.clock,
    });
    this.log(
      `${attempt.delegationId}: ${why}; ${report.processes.length} process(es) ended${report.confirmed ? '' : `, ${report.survivors.length} NOT confirmed`}`,
    );
    return report;
  }

  /** An attempt that someone else settled (ingested by hand, marked STALE, cancelled) has no business running. */
  private async endAttemptsDecidedElsewhere(): Promise<void> {
    if (this.attempts.size === 0) return;
    const ids = [...this.attempts.keys()];
    const statuses = await this.deps.store.read((r) =>
      r.all<{ id: string; status: string }>(
        `SELECT id, status FROM delegations WHERE run_id = ? AND id IN (${ids.map(() => '?').join(', ')}) AND status <> 'RUNNING'`,
        [this.options.runId, ...ids],
      ),
    );
    const settled = new Map(statuses.map((s) => [s.id, s.status]));
    for (const attempt of [...this.attempts.values()]) {
      if (!settled.has(attempt.delegationId) || attempt.settling) continue;
      if (!attempt.manual) await this.endAttempt(attempt, 'stale');
      this.forget(attempt);
    }
  }

  /**
   * Finishes a verifying task's verification (passed receipts are reused) and integration, without holding up the loop.
   */
  private finishInBackground(taskId: string): void {
    const done = this.finishVerification(taskId)
      .then((outcome) => {
        if (outcome === 'nothing') {
          this.cannotFinish.add(taskId);
          this.log(`${taskId} is verifying but has no attempt to verify; baton reconcile or replan can settle it`);
        } else if (outcome === 'retry') {
          // The target branch kept moving under the integration: try again shortly.
          const cancel = this.deps.clock.setTimer(2000, () => {
            this.retryTimers.delete(cancel);
            this.wake();
          });
          this.retryTimers.add(cancel);
        }
      })
      .catch((err: unknown) => {
        if (!BatonError.is(err, 'coordinator.superseded')) this.log(`${taskId}: ${(err as Error).message}`);
      })
      .finally(() => {
        this.finishing.delete(taskId);
        this.wake();
      });
    this.finishing.set(taskId, done);
  }

  private async finishVerification(taskId: string): Promise<'done' | 'retry' | 'nothing'> {
    const delegation = await this.deps.store.read((r) =>
      r.get<{ id: string }>(
        `SELECT id FROM delegations WHERE run_id = ? AND task_id = ? AND status IN ('RUNNING', 'BLOCKED') ORDER BY attempt DESC LIMIT 1`,
        [this.options.runId, taskId],
      ),
    );
    if (!delegation) return 'nothing';
    const outcome = await verifyAttempt(this.verifyContext(), this.options.runId, delegation.id);
    if (outcome.integration?.kind === 'not-now') return 'retry';
    return 'done';
  }

  /** Worktrees of attempts discarded at a gate go once their decision is made (docs/isolation.md, "Cleanup"). */
  private async removeDiscardedWorktrees(
    discarded: ReadonlyArray<{ delegation_id: string; path: string; branch: string }>,
  ): Promise<void> {
    const runId = this.options.runId;
    const run = await this.deps.store.read((r) => readRunIsolation(r, runId));
    if (!run?.repoRoot) return;
    for (const worktree of discarded) {
      await removeWorktree(run.repoRoot, worktree);
      await this.guarded((tx) =>
        markWorktreeRemoved(tx, { runId, delegationId: worktree.delegation_id }, this.deps.clock.now()),
      );
      this.log(`${worktree.delegation_id}: discarded; its worktree and branch are removed`);
    }
  }

  /**
   * Takes over a live worker of a predecessor (reconcile renewed its lease already): renew it
   * like its own (its token left with the predecessor; this coordinator's epoch is the
   * authority), keep its task timeout from its start, watch for its end, then take its result.
   */
  private adopt(found: LiveWorker): void {
    const attempt: Attempt = {
      delegationId: found.delegationId,
      taskId: found.taskId,
      runtimeId: found.runtimeId,
      artifactPath: found.artifactPath,
      logPath: found.logPath,
      identity: found.identity,
      manual: false,
      leaseMs: found.leaseMs,
      leaseUntilMono: this.deps.clock.monotonic() + found.leaseMs,
      timers: new Map(),
      done: Promise.resolve(),
    };
    const exited = new Promise<WorkerExit>((resolveExit) => {
      const poll = (): void => {
        attempt.timers.set(
          'poll',
          this.deps.clock.setTimer(250, () => {
            if (isProcessAlive(found.identity) === false) resolveExit({ exitCode: null, signal: null });
            else poll();
          }),
        );
      };
      poll();
    });
    const elapsed = found.startedAt !== undefined ? this.deps.clock.now() - found.startedAt : 0;
    this.watchAttempt(attempt, exited, this.deps.config.taskTimeoutSeconds * 1000 - elapsed);
  }

  // ── stops ───────────────────────────────────────────────────────────────

  /** Applies a stop request: graceful lets in-flight work finish; immediate ends it now. */
  private async applyStop(request: StopRequest): Promise<StopReportEntry[]> {
    const runId = this.options.runId;
    const targets = [...this.attempts.values()].filter(
      (a) => !request.delegationId || a.delegationId === request.delegationId,
    );
    let report: StopReportEntry[];
    if (request.mode === 'immediate' || request.delegationId) {
      // Every worker gets its grace period at the same time, not one after another.
      const driven = await Promise.all(
        targets.map(async (attempt): Promise<StopReportEntry> => {
          const termination = await this.endAttempt(attempt, 'stopped');
          return {
            delegationId: attempt.delegationId,
            processes: termination?.processes.map((p) => p.pid) ?? [],
            confirmed: termination ? termination.confirmed : true,
            survivors: termination?.survivors.map((p) => p.pid) ?? [],
            ...(attempt.manual ? { note: 'manual hand-off withdrawn' } : {}),
          };
        }),
      );
      // Attempts this coordinator does not drive (claimed by an external worker, or waiting
      // at a gate) are stopped from what their runtime recorded.
      const others = await this.deps.store.read((r) =>
        r.all<{ id: string }>(
          `SELECT id FROM delegations WHERE run_id = ? AND status IN ('RUNNING', 'PENDING'${request.delegationId ? ", 'BLOCKED'" : ''})${request.delegationId ? ' AND id = ?' : ''}`,
          request.delegationId ? [runId, request.delegationId] : [runId],
        ),
      );
      const external = await Promise.all(
        others
          .filter((d) => !targets.some((a) => a.delegationId === d.id))
          .map((d) => endRecordedWorker(this.deps, runId, d.id, this.deps.config.stopGraceSeconds * 1000)),
      );
      report = [...driven, ...external];
      try {
        await this.guarded(async (tx) => {
          for (const entry of report)
            await cancelStoppedAttempt(
              tx,
              { runId, delegationId: entry.delegationId, request, entry },
              this.deps.clock.now(),
            );
          await markStopApplied(tx, request, report, this.deps.clock.now());
        });
      } finally {
        for (const attempt of targets) this.forget(attempt);
      }
    } else {
      report = targets.map((attempt) => ({
        delegationId: attempt.delegationId,
        processes: attempt.identity ? [attempt.identity.pid] : [],
        confirmed: false,
        survivors: [],
        note: 'left to finish (graceful)',
      }));
      await this.guarded((tx) => markStopApplied(tx, request, report, this.deps.clock.now()));
    }
    this.log(`stop ${request.id} (${request.mode}) applied to ${report.length} attempt(s)`);
    return report;
  }

  // ── the lease ───────────────────────────────────────────────────────────

  private scheduleLeaseRenewal(delay: number): void {
    this.cancelLeaseTimer = this.deps.clock.setTimer(delay, () => {
      if (this.leaseLost || this.released) return;
      this.deps.store
        .transact((tx) =>
          renewCoordinatorLease(
            tx,
            { runId: this.options.runId, epoch: this.epoch, leaseMs: this.leaseMs },
            this.deps.clock.now(),
          ),
        )
        .then(
          () => this.scheduleLeaseRenewal(Math.floor(this.leaseMs / 3)),
          (err: unknown) => {
            if (BatonError.is(err, 'coordinator.superseded')) this.stepDown(err.message);
            else {
              // A passing failure (the store was busy): the lease has two more thirds to go.
              this.log(`coordinator lease not renewed, trying again: ${(err as Error).message}`);
              this.scheduleLeaseRenewal(Math.min(RENEWAL_RETRY_MS, Math.floor(this.leaseMs / 10)));
            }
          },
        );
    });
  }

  /**
   * Another coordinator holds the run now. Stop everything this one would do on its own —
   * renewals, timeouts, backoff timers — and leave the workers alone: the successor adopts them.
   */
  private stepDown(detail: string): void {
    if (this.leaseLost) return;
    this.leaseLost = detail;
    this.log(`stepping down: ${detail}`);
    this.cancelLeaseTimer?.();
    this.wakeAt(undefined);
    this.abandonAttempts();
    this.unregister();
    this.wake();
  }

  private abandonAttempts(): void {
    for (const attempt of this.attempts.values()) {
      for (const cancel of attempt.timers.values()) cancel();
      attempt.timers.clear();
    }
    this.attempts.clear();
  }

  private holdsLease(): boolean {
    return this.epoch > 0 && !this.leaseLost && !this.released;
  }

  private unregister(): void {
    if (activeHere.get(this.registryKey) === this) activeHere.delete(this.registryKey);
  }

  private async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.cancelLeaseTimer?.();
    this.wakeAt(undefined);
    for (const attempt of this.attempts.values()) for (const cancel of attempt.timers.values()) cancel();
    for (const cancel of this.retryTimers) cancel();
    this.unregister();
    if (this.leaseLost) return;
    await this.deps.store
      .transact((tx) =>
        releaseCoordinatorLease(tx, { runId: this.options.runId, epoch: this.epoch }, this.deps.clock.now()),
      )
      .catch(() => undefined);
  }

  /** Checks this coordinator's epoch inside a transaction; a refusal makes it step down. */
  private async assertEpoch(tx: Pick<StoreTx, 'get'>): Promise<void> {
    try {
      await assertCoordinatorEpoch(tx, this.options.runId, this.epoch);
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) this.stepDown(err.message);
      throw err;
    }
  }

  /** Every coordinator write: refused in the same transaction when this coordinator's epoch is no longer current. */
  private guarded<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    if (this.leaseLost) return Promise.reject(new BatonError('coordinator.superseded', this.leaseLost));
    return this.deps.store.transact(async (tx) => {
      await this.assertEpoch(tx);
      return work(tx);
    });
  }

  private verifyContext(): VerifyContext {
    return {
      store: this.deps.store,
      clock: this.deps.clock,
      workspace: this.deps.workspace,
      timeoutMs: this.deps.config.verifyTimeoutSeconds * 1000,
      guard: (tx) => this.assertEpoch(tx),
      log: (line) => this.log(line),
    };
  }

  private reconcileContext(): ReconcileContext {
    return {
      ...this.verifyContext(),
      ids: this.deps.ids,
      leaseMs: this.deps.config.leaseSeconds * 1000,
      stopGraceMs: this.deps.config.stopGraceSeconds * 1000,
    };
  }

  private log(line: string): void {
    this.deps.log?.(line);
  }
}
