import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { BatonConfig } from '../config/config';
import { openGate } from '../gates/openGate';
import { ingestArtifact, workspacePath } from '../ingest/ingestArtifact';
import type { Clock, IdSource } from '../model/clock';
import { BatonError } from '../model/errors';
import type { RunStatus } from '../model/types';
import { claimDelegation } from '../queue/claimDelegation';
import { enqueueDelegation } from '../queue/enqueueDelegation';
import { getDelegation, refreshRunStatus, settleUnsuccessfulAttempt, transitionDelegation } from '../queue/taskFlow';
import { expireStaleRuntimes } from '../runtime/expireStaleRuntimes';
import { isProcessAlive, selfIdentity, terminateWorker, type ProcessIdentity, type TerminationReport } from '../runtime/processes';
import { renewRuntimeLease } from '../runtime/renewRuntimeLease';
import type { StorePort, StoreTx } from '../store/port';
import { TASK_COLUMNS, toTask, type TaskRow } from '../store/rows';
import type { Disposable } from '../util/emitter';
import { buildPrompt } from '../workers/prompt';
import { spawnWorker, type WorkerExit } from '../workers/spawnWorker';
import { resolveWorker, workerLaunch } from '../workers/workerLaunch';
import { acquireCoordinatorLease, assertCoordinatorEpoch, releaseCoordinatorLease, renewCoordinatorLease, type CoordinatorLease } from './coordinatorLease';
import { reconcileRun, type ReconcileReport } from './reconcile';
import { runPaths } from './runPaths';
import { cancelStoppedAttempt, markStopApplied, pendingStops, requestStop, type StopReportEntry, type StopRequest } from './stopRequests';
import { verifyAttempt, type VerifyContext } from './verifyAttempt';

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
  token: string;
  artifactPath: string;
  logPath: string;
  identity?: ProcessIdentity;
  manual: boolean;
  /** Set once someone (stop, timeout, lost lease) ends it: its exit is then not a result. */
  ending?: 'stopped' | 'timeout' | 'stale';
  cancelTimers: Array<() => void>;
  done: Promise<void>;
}

const DEFAULT_COORDINATOR_LEASE_MS = 30_000;

/**
 * Drives one run (DESIGN §4): holds the run's coordinator lease, dispatches ready tasks to
 * worker processes up to maxConcurrency, renews their leases while they live, ends them on
 * timeout or stop (and proves they are gone), ingests and verifies their results, and
 * returns when the run ends or waits on a person. Every write it makes carries its lease
 * epoch and is refused if another coordinator has taken over.
 */
export class Coordinator {
  private epoch = 0;
  private readonly attempts = new Map<string, Attempt>();
  private readonly holder: string;
  private readonly identity = selfIdentity();
  private wakeUp: (() => void) | undefined;
  private pendingWake = false;
  private leaseLost: string | undefined;
  private shuttingDown = false;
  private readonly cancelLeaseTimer: Array<() => void> = [];
  private subscription: Disposable | undefined;
  private readonly maxConcurrency: number;
  private readonly leaseMs: number;

  private constructor(
    private readonly deps: CoordinatorDeps,
    readonly options: CoordinatorOptions,
  ) {
    this.holder = `${this.identity.host}:${this.identity.pid}`;
    this.maxConcurrency = options.maxConcurrency ?? deps.config.maxConcurrency;
    this.leaseMs = options.leaseMs ?? DEFAULT_COORDINATOR_LEASE_MS;
  }

  /**
   * Takes the run's coordinator lease, or reports who holds it (the caller then observes).
   * A new holder first reconciles the run: it adopts or ends the workers of its predecessor.
   */
  static async take(deps: CoordinatorDeps, options: CoordinatorOptions): Promise<{ coordinator: Coordinator; reconcile: ReconcileReport } | { heldBy: CoordinatorLease; why: string }> {
    const coordinator = new Coordinator(deps, options);
    const outcome = await deps.store.transact((tx) =>
      acquireCoordinatorLease(tx, { runId: options.runId, holder: coordinator.holder, identity: coordinator.identity, leaseMs: coordinator.leaseMs }, deps.clock.now()),
    );
    if (!outcome.acquired) return { heldBy: outcome.heldBy, why: outcome.why };
    coordinator.epoch = outcome.epoch;
    coordinator.scheduleLeaseRenewal();
    const reconcile = await reconcileRun(coordinator.reconcileContext(), options.runId, { adopt: (a) => coordinator.adopt(a) });
    return { coordinator, reconcile };
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
        const outcome = await this.tick();
        if (outcome) return outcome;
        await this.nextWake();
      }
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) {
        this.leaseLost = err.message;
        return { kind: 'lease-lost', detail: err.message };
      }
      throw err;
    } finally {
      this.subscription?.dispose();
      if (!this.leaseLost && !this.shuttingDown) await this.release();
    }
  }

  /**
   * Ends every worker this coordinator drives (the extension deactivating, Ctrl-C on
   * `baton start`): they are stopped like an immediate stop, recorded, and the lease released.
   */
  async shutdown(by = 'coordinator shutdown'): Promise<StopReportEntry[]> {
    if (this.shuttingDown) return [];
    this.shuttingDown = true;
    this.wake();
    let report: StopReportEntry[] = [];
    if (!this.leaseLost) {
      const request = await this.guarded(async (tx) => (await requestStop(tx, { runId: this.options.runId, mode: 'immediate', by }, this.deps.clock.now())).request).catch(
        () => undefined,
      );
      if (request) report = await this.applyStop(request).catch(() => []);
    } else {
      for (const attempt of this.attempts.values()) await this.endAttempt(attempt, 'stopped');
    }
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

  /** One pass: apply stops, expire stale leases, dispatch, and decide whether the run is done for now. */
  private async tick(): Promise<CoordinatorOutcome | undefined> {
    const now = this.deps.clock.now();
    const runId = this.options.runId;
    for (const request of await this.deps.store.read((r) => pendingStops(r, runId))) await this.applyStop(request);

    await this.guarded((tx) => expireStaleRuntimes(tx, now));
    await this.endAttemptsDecidedElsewhere();

    const state = await this.deps.store.read(async (r) => ({
      run: await r.get<{ status: string; stop_mode: string | null }>(`SELECT status, stop_mode FROM runs WHERE id = ?`, [runId]),
      ready: (await r.all<TaskRow & { not_before: number | null }>(`SELECT ${TASK_COLUMNS}, not_before FROM tasks WHERE run_id = ? AND status = 'ready' ORDER BY ordinal`, [runId])).filter(
        (t) => !this.options.tasks || this.options.tasks.includes(t.id),
      ),
      verifying: await r.all<{ id: string }>(`SELECT id FROM tasks WHERE run_id = ? AND status = 'verifying'`, [runId]),
      openGates: (await r.get<{ n: number }>(`SELECT COUNT(*) AS n FROM gates WHERE run_id = ? AND status = 'open'`, [runId]))?.n ?? 0,
    }));
    if (!state.run) throw new BatonError('invalid-input', 'run.unknown', `There is no run ${runId}.`);

    let waitingForBackoff: number | undefined;
    if (!state.run.stop_mode && state.run.status !== 'superseded') {
      for (const task of state.ready) {
        if (this.busySlots() >= this.maxConcurrency) break;
        if (this.attemptOfTask(task.id)) continue;
        if (task.not_before !== null && task.not_before > now) {
          waitingForBackoff = Math.min(waitingForBackoff ?? Infinity, task.not_before);
          continue;
        }
        await this.startAttempt(toTask(task));
      }
    }
    if (this.attempts.size > 0) return undefined;
    if (state.verifying.length > 0) {
      // Left verifying by a predecessor that stopped mid-way: finish it (passed receipts are reused).
      for (const task of state.verifying) await this.finishVerification(task.id);
      return undefined;
    }
    if (waitingForBackoff !== undefined) {
      this.deps.clock.setTimer(waitingForBackoff - now, () => this.wake());
      return undefined;
    }
    const status = await this.deps.store.read(async (r) => (await r.get<{ status: string }>(`SELECT status FROM runs WHERE id = ?`, [runId]))!.status as RunStatus);
    if (status === 'completed' || status === 'failed' || status === 'blocked' || status === 'superseded') return { kind: 'finished', status };
    if (status === 'paused' || status === 'stopping') return { kind: 'paused', status, openGates: state.openGates, stopped: Boolean(state.run.stop_mode) };
    const dispatchable = state.ready.length;
    if (dispatchable === 0) return { kind: 'idle', status, reason: this.options.tasks ? 'the selected tasks are done or waiting' : 'nothing is ready to run' };
    return undefined;
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

  // ── attempts ────────────────────────────────────────────────────────────

  private async startAttempt(task: ReturnType<typeof toTask>): Promise<void> {
    const runId = this.options.runId;
    const workerId = this.options.worker ?? task.worker ?? this.deps.config.defaultWorker;
    const worker = resolveWorker(this.deps.config, workerId);
    const manual = worker.type === 'manual';
    // A person gets a long lease; a process's lease is renewed while it lives.
    const leaseMs = manual ? Math.max(this.deps.config.leaseSeconds * 1000, 7 * 86_400_000) : this.deps.config.leaseSeconds * 1000;
    const now = this.deps.clock.now();
    const claim = await this.guarded(async (tx) => {
      const queued = await enqueueDelegation(tx, { runId, taskId: task.id }, now);
      const claimed = await claimDelegation(tx, { runId, delegationId: queued.id, leaseMs, holder: manual ? 'a person (manual)' : this.holder }, { now, ids: this.deps.ids });
      await refreshRunStatus(tx, runId, now);
      return claimed;
    });
    const paths = runPaths(this.deps.workspace, runId);
    const artifactPath = paths.artifact(claim.delegation.id);
    const logPath = paths.log(claim.delegation.id);
    const promptPath = paths.prompt(claim.delegation.id);
    const dependencies = await this.deps.store.read((r) =>
      r.all<{ id: string; title: string }>(
        `SELECT t.id, t.title FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.depends_on WHERE dep.run_id = ? AND dep.task_id = ?`,
        [runId, task.id],
      ),
    );
    const prompt = buildPrompt({ task, delegationId: claim.delegation.id, agent: claim.delegation.agent, artifactPath: workspacePath(this.deps.workspace, artifactPath), dependencies });
    mkdirSync(dirname(promptPath), { recursive: true });
    mkdirSync(dirname(artifactPath), { recursive: true });
    writeFileSync(promptPath, prompt);
    await this.guarded((tx) =>
      tx.run(`UPDATE runtimes SET worker = ?, log_path = ?, cwd = ? WHERE id = ?`, [workerId, logPath, this.deps.workspace, claim.runtimeId]).then(() => undefined),
    );

    const attempt: Attempt = {
      delegationId: claim.delegation.id,
      taskId: task.id,
      runtimeId: claim.runtimeId,
      token: claim.token,
      artifactPath,
      logPath,
      manual,
      cancelTimers: [],
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
        workerLaunch(workerId, worker, { prompt, promptFile: promptPath, artifactPath, taskId: task.id, workspace: this.deps.workspace }),
        {
          cwd: this.deps.workspace,
          logPath,
          env: {
            BATON_RUN_ID: runId,
            BATON_DELEGATION_ID: claim.delegation.id,
            BATON_RUNTIME_ID: claim.runtimeId,
            BATON_RUNTIME_TOKEN: claim.token,
            BATON_ARTIFACT_PATH: artifactPath,
            BATON_WORKSPACE: this.deps.workspace,
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
    await this.guarded((tx) =>
      tx
        .run(`UPDATE runtimes SET pid = ?, pid_start = ?, host = ? WHERE id = ?`, [spawned.identity.pid, spawned.identity.startTime, spawned.identity.host, claim.runtimeId])
        .then(() => undefined),
    );
    this.watchAttempt(attempt, spawned.exited);
    this.log(`${claim.delegation.id}: started ${workerId} (pid ${spawned.identity.pid})`);
  }

  /** Renewal at a third of the lease, the task timeout, and what happens when the worker exits. */
  private watchAttempt(attempt: Attempt, exited: Promise<WorkerExit>): void {
    this.attempts.set(attempt.delegationId, attempt);
    const renewEvery = Math.max(1000, Math.floor((this.deps.config.leaseSeconds * 1000) / 3));
    const renew = (): void => {
      const cancel = this.deps.clock.setTimer(renewEvery, () => {
        if (!this.attempts.has(attempt.delegationId) || attempt.ending) return;
        void this.renewAttemptLease(attempt).then((ok) => {
          if (ok) renew();
        });
      });
      attempt.cancelTimers.push(cancel);
    };
    renew();
    attempt.cancelTimers.push(
      this.deps.clock.setTimer(this.deps.config.taskTimeoutSeconds * 1000, () => {
        if (this.attempts.has(attempt.delegationId) && !attempt.ending) void this.timeOut(attempt);
      }),
    );
    attempt.done = exited.then((exit) => this.onWorkerExit(attempt, exit)).catch((err) => this.log(`${attempt.delegationId}: ${(err as Error).message}`));
  }

  private async renewAttemptLease(attempt: Attempt): Promise<boolean> {
    try {
      const outcome = await this.guarded((tx) => renewRuntimeLease(tx, { runtimeId: attempt.runtimeId, token: attempt.token }, this.deps.clock.now()));
      if (outcome.renewed) return true;
      // The lease ran out before we renewed it (this process was paused, the clock jumped): the attempt is STALE now.
      this.log(`${attempt.delegationId}: ${outcome.error.message}`);
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) return false;
      this.log(`${attempt.delegationId}: lease not renewed: ${(err as Error).message}`);
    }
    await this.endAttempt(attempt, 'stale');
    this.wake();
    return false;
  }

  private async timeOut(attempt: Attempt): Promise<void> {
    const report = await this.endAttempt(attempt, 'timeout');
    const seconds = this.deps.config.taskTimeoutSeconds;
    await this.failAttempt(attempt.delegationId, `timed out after ${seconds} s${report && !report.confirmed ? '; termination NOT confirmed' : ''}`);
    this.wake();
  }

  /** A worker process ended by itself: take its result (artifact file, else its output) or fail the attempt. */
  private async onWorkerExit(attempt: Attempt, exit: WorkerExit): Promise<void> {
    for (const cancel of attempt.cancelTimers.splice(0)) cancel();
    if (attempt.ending || this.shuttingDown) {
      this.attempts.delete(attempt.delegationId);
      this.wake();
      return;
    }
    try {
      const delegation = await this.deps.store.read((r) => getDelegation(r, this.options.runId, attempt.delegationId));
      if (!delegation || delegation.status !== 'RUNNING') return; // decided elsewhere meanwhile
      const artifact = this.locateResult(attempt);
      if (!artifact) {
        const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
        await this.failAttempt(attempt.delegationId, `the worker ${how} without a result`);
        return;
      }
      const outcome = await ingestArtifact(this.verifyContext(), delegation, artifact);
      this.log(`${attempt.delegationId}: ${outcome.record.accepted ? `result ${outcome.record.resultStatus}` : 'result rejected'}; ${outcome.delegation.status}`);
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) this.leaseLost = err.message;
      else this.log(`${attempt.delegationId}: ${(err as Error).message}`);
    } finally {
      this.attempts.delete(attempt.delegationId);
      this.wake();
    }
  }

  /**
   * The artifact file if the worker wrote one; otherwise its captured output, when that
   * holds a result block (an agent CLI prints its answer instead of writing a file).
   */
  private locateResult(attempt: Attempt): string | undefined {
    if (existsSync(attempt.artifactPath)) return attempt.artifactPath;
    if (!existsSync(attempt.logPath)) return undefined;
    const output = readFileSync(attempt.logPath, 'utf8');
    if (!/^\s{0,3}(`{3,}|~{3,})\s*(baton-result|sdd-result)\b/m.test(output)) return undefined;
    copyFileSync(attempt.logPath, attempt.artifactPath);
    return attempt.artifactPath;
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

  /** Ends an attempt's processes (TERM, grace, KILL, proof) and forgets it. */
  private async endAttempt(attempt: Attempt, why: NonNullable<Attempt['ending']>): Promise<TerminationReport | undefined> {
    if (attempt.ending) return undefined;
    attempt.ending = why;
    for (const cancel of attempt.cancelTimers.splice(0)) cancel();
    let report: TerminationReport | undefined;
    if (attempt.identity) {
      report = await terminateWorker(attempt.identity, {
        marker: `BATON_RUNTIME_ID=${attempt.runtimeId}`,
        graceMs: this.deps.config.stopGraceSeconds * 1000,
        clock: this.deps.clock,
      });
      this.log(`${attempt.delegationId}: ${why}; ${report.processes.length} process(es) ended${report.confirmed ? '' : `, ${report.survivors.length} NOT confirmed`}`);
    }
    this.attempts.delete(attempt.delegationId);
    return report;
  }

  /** An attempt that someone else settled (ingested by hand, marked STALE, cancelled) has no business running. */
  private async endAttemptsDecidedElsewhere(): Promise<void> {
    if (this.attempts.size === 0) return;
    const statuses = await this.deps.store.read((r) =>
      r.all<{ id: string; status: string }>(`SELECT id, status FROM delegations WHERE run_id = ? AND status NOT IN ('RUNNING')`, [this.options.runId]),
    );
    const settled = new Map(statuses.map((s) => [s.id, s.status]));
    for (const attempt of [...this.attempts.values()]) {
      const status = settled.get(attempt.delegationId);
      if (!status) continue;
      if (attempt.manual) this.attempts.delete(attempt.delegationId);
      else await this.endAttempt(attempt, 'stale');
    }
  }

  private async finishVerification(taskId: string): Promise<void> {
    const delegation = await this.deps.store.read((r) =>
      r.get<{ id: string }>(`SELECT id FROM delegations WHERE run_id = ? AND task_id = ? AND status IN ('RUNNING', 'BLOCKED') ORDER BY attempt DESC LIMIT 1`, [this.options.runId, taskId]),
    );
    if (!delegation) return;
    await verifyAttempt(this.verifyContext(), this.options.runId, delegation.id);
  }

  /** Takes over a live worker of a predecessor: renew its lease, wait for it to end, then take its result. */
  private adopt(found: { delegationId: string; taskId: string; runtimeId: string; identity: ProcessIdentity; logPath: string; artifactPath: string; token?: string }): void {
    const attempt: Attempt = {
      delegationId: found.delegationId,
      taskId: found.taskId,
      runtimeId: found.runtimeId,
      token: found.token ?? '',
      artifactPath: found.artifactPath,
      logPath: found.logPath,
      identity: found.identity,
      manual: false,
      cancelTimers: [],
      done: Promise.resolve(),
    };
    const exited = new Promise<WorkerExit>((resolve) => {
      const poll = (): void => {
        const cancel = this.deps.clock.setTimer(250, () => {
          if (isProcessAlive(found.identity) === false) resolve({ exitCode: null, signal: null });
          else poll();
        });
        attempt.cancelTimers.push(cancel);
      };
      poll();
    });
    this.attempts.set(attempt.delegationId, attempt);
    attempt.done = exited.then((exit) => this.onWorkerExit(attempt, exit));
    // Its token is gone with the predecessor: renew by epoch instead (see reconcile).
    const renewEvery = Math.max(1000, Math.floor((this.deps.config.leaseSeconds * 1000) / 3));
    const renew = (): void => {
      attempt.cancelTimers.push(
        this.deps.clock.setTimer(renewEvery, () => {
          if (!this.attempts.has(attempt.delegationId) || attempt.ending) return;
          void this.guarded((tx) =>
            tx.run(`UPDATE runtimes SET lease_expires_at = ? WHERE id = ? AND ended_at IS NULL`, [this.deps.clock.now() + this.deps.config.leaseSeconds * 1000, attempt.runtimeId]),
          ).then(renew, () => undefined);
        }),
      );
    };
    renew();
  }

  // ── stops ───────────────────────────────────────────────────────────────

  /** Applies a stop request: graceful lets in-flight work finish; immediate ends it now. */
  private async applyStop(request: StopRequest): Promise<StopReportEntry[]> {
    const targets = [...this.attempts.values()].filter((a) => !request.delegationId || a.delegationId === request.delegationId);
    const report: StopReportEntry[] = [];
    if (request.mode === 'immediate' || request.delegationId) {
      for (const attempt of targets) {
        const termination = await this.endAttempt(attempt, 'stopped');
        const entry: StopReportEntry = {
          delegationId: attempt.delegationId,
          processes: termination?.processes.map((p) => p.pid) ?? [],
          confirmed: termination ? termination.confirmed : true,
          survivors: termination?.survivors.map((p) => p.pid) ?? [],
          ...(attempt.manual ? { note: 'manual hand-off withdrawn' } : {}),
        };
        report.push(entry);
        await this.guarded((tx) => cancelStoppedAttempt(tx, { runId: this.options.runId, delegationId: attempt.delegationId, request, entry }, this.deps.clock.now()));
      }
    } else {
      for (const attempt of targets) report.push({ delegationId: attempt.delegationId, processes: attempt.identity ? [attempt.identity.pid] : [], confirmed: false, survivors: [], note: 'left to finish (graceful)' });
    }
    await this.guarded((tx) => markStopApplied(tx, request, report, this.deps.clock.now()));
    this.log(`stop ${request.id} (${request.mode}) applied to ${report.length} attempt(s)`);
    return report;
  }

  // ── the lease ───────────────────────────────────────────────────────────

  private scheduleLeaseRenewal(): void {
    const cancel = this.deps.clock.setTimer(Math.floor(this.leaseMs / 3), () => {
      if (this.leaseLost || this.shuttingDown) return;
      this.deps.store
        .transact((tx) => renewCoordinatorLease(tx, { runId: this.options.runId, epoch: this.epoch, leaseMs: this.leaseMs }, this.deps.clock.now()))
        .then(
          () => this.scheduleLeaseRenewal(),
          (err: unknown) => {
            this.leaseLost = (err as Error).message;
            this.wake();
          },
        );
    });
    this.cancelLeaseTimer.push(cancel);
  }

  private async release(): Promise<void> {
    for (const cancel of this.cancelLeaseTimer.splice(0)) cancel();
    for (const attempt of this.attempts.values()) for (const cancel of attempt.cancelTimers.splice(0)) cancel();
    if (this.leaseLost) return;
    await this.deps.store.transact((tx) => releaseCoordinatorLease(tx, { runId: this.options.runId, epoch: this.epoch }, this.deps.clock.now())).catch(() => undefined);
  }

  /** Every coordinator write: refused in the same transaction when this coordinator's epoch is no longer current. */
  private guarded<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.deps.store.transact(async (tx) => {
      await assertCoordinatorEpoch(tx, this.options.runId, this.epoch);
      return work(tx);
    });
  }

  private verifyContext(): VerifyContext {
    return {
      store: this.deps.store,
      clock: this.deps.clock,
      workspace: this.deps.workspace,
      timeoutMs: this.deps.config.verifyTimeoutSeconds * 1000,
      guard: (tx) => assertCoordinatorEpoch(tx, this.options.runId, this.epoch),
    };
  }

  private reconcileContext() {
    return { ...this.verifyContext(), ids: this.deps.ids, leaseMs: this.deps.config.leaseSeconds * 1000 };
  }

  private log(line: string): void {
    this.deps.log?.(line);
  }
}
