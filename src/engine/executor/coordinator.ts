import { resolve } from 'node:path';
import { BatonError } from '../domain/errors';
import { counted } from '../domain/plural';
import { foreignLeaseGraceMs } from '../domain/process';
import { isSharedStore } from '../domain/config';
import type { Disposable } from '../domain/emitter';
import type { HandOver } from '../domain/events';
import type { StopReportEntry, StopRequest } from '../domain/stops';
import { removeWorktree } from '../effects/git/worktrees';
import { writeLeaseDeadline } from '../effects/processes/leaseWatchdog';
import { runPaths } from '../effects/workspaceLayout';
import { leaseHostHere, selfIdentity } from '../effects/processes/processes';
import { expireStaleRuntimes } from '../operations/runtimes/expireStaleRuntimes';
import { retireLapsedPlaces } from '../operations/coordinatorLease/runDrivers';
import { releaseUnlaunchedAttempt } from '../operations/delegations/releaseUnlaunchedAttempt';
import type { LeaseHost } from '../domain/process';
import { pendingHandIns } from '../queries/handIns';
import { settleHandedIn } from '../usecases/handIn';
import { requestStop } from '../operations/stops/stopRequests';
import { markWorktreeRemoved } from '../operations/worktrees/worktrees';
import { readCoordinatorLease, type CoordinatorLease } from '../queries/coordinatorLease';
import { latestOpenAttempt } from '../queries/delegations';
import { openGateCount, readDispatchSnapshot, type DiscardedWorktree } from '../queries/dispatchSnapshot';
import { readLaunchSnapshot } from '../queries/launchSnapshot';
import { readRunStatus } from '../queries/runs';
import { isBeingCancelled, pendingStops } from '../queries/stops';
import { readRunIsolation } from '../queries/worktrees';
import type { EngineContext } from '../usecases/context';
import { reconcileRun, type ReconcileReport } from '../usecases/reconcileRun';
import { configFileStamp, noticeConfigChange } from '../usecases/runConfig';
import { verifyAttempt } from '../usecases/verifyAttempt';
import { AttemptLauncher } from './attemptLauncher';
import { AttemptSupervisor } from './attemptSupervisor';
import { planDispatch, passOutcome, type CoordinatorOutcome } from './dispatchPass';
import { LeaseKeeper } from './leaseKeeper';
import { LeftoverSweeper } from './leftoverSweeper';
import { WorkerLeaseKeeper } from './workerLeaseKeeper';
import { isStoreOutage, outageWait } from './storeOutage';
import { applyStopAsCoordinator } from './stopApplier';

export type { CoordinatorOutcome } from './dispatchPass';

export interface CoordinatorDeps extends Omit<EngineContext, 'fence'> {
  /** Fires when anything changed in the store, from this process or another (journal follow). */
  onStoreChange: (listener: () => void) => Disposable;
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
  /**
   * Join the run beside the coordinator that holds its lease, instead of taking the lease (docs/team.md, "Every
   * machine works"): claim and drive attempts of its own with a place of its own in the run. The lease holder keeps
   * what is the run's: stops, the verifications left without an attempt, the run's reconcile. Returns
   * `holder-gone` when the lease holder's lease ran out and its time passed: the caller takes the run over.
   */
  join?: boolean;
}

/**
 * The coordinators alive in this process, by workspace and run. The store lease cannot tell
 * two coordinators of one process apart (same pid and start time), so a second `take` in the
 * same process is refused here while the first one still holds the run.
 */
const activeHere = new Map<string, Coordinator>();

/**
 * Drives one run (DESIGN §4) by composing its parts: the LeaseKeeper holds the run (and
 * fences every write and side effect with its epoch), a pure dispatch pass decides what may
 * start, the AttemptLauncher starts it, the AttemptSupervisor watches it to its end, and the
 * LeftoverSweeper ends what exited workers left behind. The coordinator itself owns the
 * loop: it wakes on store changes and timers, applies stops, finishes verifications left
 * without an attempt, and returns when the run ends or waits on a person — or steps down,
 * leaving its workers to its successor, the moment another coordinator holds the run.
 */
export class Coordinator {
  private readonly ctx: EngineContext;
  private readonly lease: LeaseKeeper;
  private readonly supervisor: AttemptSupervisor;
  private readonly leases: WorkerLeaseKeeper;
  private readonly launcher: AttemptLauncher;
  private readonly sweeper: LeftoverSweeper;
  private readonly maxConcurrency: number;
  private readonly registryKey: string;
  private wakeUp: (() => void) | undefined;
  private pendingWake = false;
  private wakeTimer: { at: number; cancel: () => void } | undefined;
  private shuttingDown = false;
  /** Set by handOver: the run is being left to a successor with its workers running (the loop returns its outcome). */
  private handingOver: Promise<{ workers: number }> | undefined;
  /** The stop that shutdown recorded; a worker that starts while shutting down is ended under it. */
  private shutdownStop: StopRequest | undefined;
  /** The pass running now: shutdown waits for it, so that a worker it is starting is ended too. */
  private tickInProgress: Promise<unknown> = Promise.resolve();
  /** Settles once this coordinator's attempt to take the lease has an answer. */
  private acquiring: Promise<void> = Promise.resolve();
  /** Verifying tasks it finishes with no attempt of its own behind them, and those it found nothing to finish for. */
  private readonly finishing = new Map<string, Promise<void>>();
  private readonly cannotFinish = new Set<string>();
  /** Verifying tasks waiting to be looked at again (an earlier verify command may still run): in flight meanwhile. */
  private readonly retryTimers = new Map<string, () => void>();
  /** Passes in a row that found the store out of reach (0: it answers). */
  private outageTries = 0;
  /** The config file's stamp at this coordinator's last look (undefined: not looked yet). */
  private configStamp: string | undefined;

  private constructor(
    private readonly deps: CoordinatorDeps,
    readonly options: CoordinatorOptions,
  ) {
    const identity = selfIdentity();
    const holder = `${identity.host}:${identity.pid}`;
    const leaseMs = options.leaseMs ?? deps.config.coordinatorLeaseSeconds * 1000;
    this.maxConcurrency = options.maxConcurrency ?? deps.config.maxConcurrency;
    this.registryKey = `${resolve(deps.workspace)}\0${options.runId}`;
    // On a shared store a successor may be on another machine: it takes over after the lease and the watchdogs' time.
    const foreignGraceMs = isSharedStore(deps.config)
      ? foreignLeaseGraceMs(deps.config.stopGraceSeconds * 1000)
      : undefined;
    this.lease = new LeaseKeeper(
      deps,
      {
        runId: options.runId,
        holder,
        identity,
        leaseMs,
        ...(foreignGraceMs !== undefined ? { foreignGraceMs } : {}),
        ...(options.join ? { join: true } : {}),
      },
      () => this.onLeaseLost(),
      foreignGraceMs !== undefined ? (until) => this.recordLeaseDeadline(until) : undefined,
    );
    const { onStoreChange: _onStoreChange, ...context } = deps;
    this.ctx = { ...context, store: this.lease.store, fence: this.lease.fence };
    this.sweeper = new LeftoverSweeper(this.ctx);
    this.leases = new WorkerLeaseKeeper(this.ctx, {
      runId: options.runId,
      epoch: () => this.lease.epoch,
      lost: () => this.lease.lost !== undefined,
      leaseLost: (attempt, why) => this.supervisor.leaseLost(attempt, why),
    });
    this.supervisor = new AttemptSupervisor(
      this.ctx,
      {
        runId: options.runId,
        epoch: () => this.lease.epoch,
        halted: () => this.shuttingDown || this.lease.lost !== undefined,
        lost: () => this.lease.lost !== undefined,
        wake: () => this.wake(),
        exited: (worker) => this.sweeper.add(worker),
      },
      this.leases,
    );
    this.launcher = new AttemptLauncher(this.ctx, this.supervisor, {
      runId: options.runId,
      holder,
      maxConcurrency: this.maxConcurrency,
      ...(options.worker ? { worker: options.worker } : {}),
      halted: () => this.shuttingDown || this.lease.lost !== undefined,
      wakeAt: (at) => this.wakeAt(at),
      shutdownStop: () => (this.shuttingDown ? this.shutdownStop : undefined),
    });
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
      if (activeHere.get(coordinator.registryKey) === sibling && sibling.lease.holds()) {
        const why = `this process (${sibling.lease.lease.holder}) already coordinates run ${options.runId}`;
        const heldBy = await sibling.currentLease();
        if (heldBy) return { heldBy, why };
      }
      sibling.unregister(); // it no longer holds the run
      return Coordinator.take(deps, options);
    }
    // Reserved before the first await: a second take in this process meets it.
    activeHere.set(coordinator.registryKey, coordinator);
    let acquired!: () => void;
    coordinator.acquiring = new Promise((resolveAcquiring) => (acquired = resolveAcquiring));
    try {
      const outcome = await coordinator.lease.acquire();
      if (!outcome.acquired) {
        coordinator.unregister();
        return { heldBy: outcome.heldBy, why: outcome.why };
      }
    } catch (err) {
      coordinator.unregister();
      throw err;
    } finally {
      acquired();
    }
    // A coordinator that joins the run drives only what it claims: the run's reconcile is its lease holder's.
    if (options.join) return { coordinator, reconcile: { runId: options.runId, entries: [] } };
    try {
      // A stop asked for while no coordinator could apply it (its holder stopped or dead) is applied first, to the
      // workers the store records: otherwise reconcile would burn those attempts as STALE and the stop report none.
      for (const request of await coordinator.ctx.store.read((r) => pendingStops(r, options.runId)))
        if (request.mode === 'immediate' || request.delegationId)
          await applyStopAsCoordinator(coordinator.ctx, coordinator.supervisor, options.runId, request);
      const reconcile = await reconcileRun(coordinator.ctx, options.runId, {
        adopt: { runId: options.runId, epoch: coordinator.lease.epoch, take: (w) => coordinator.supervisor.adopt(w) },
      });
      return { coordinator, reconcile };
    } catch (err) {
      // Could not take over cleanly: give the run back; workers it adopted are left for the next coordinator.
      coordinator.supervisor.abandon();
      await coordinator.release();
      throw err;
    }
  }

  get leaseEpoch(): number {
    return this.lease.epoch;
  }

  /** Runs until the run finishes, pauses on a person, or this coordinator loses its lease or shuts down. */
  async run(): Promise<CoordinatorOutcome> {
    const subscription = this.deps.onStoreChange(() => this.wake());
    try {
      for (;;) {
        if (this.shuttingDown)
          return this.handingOver ? { kind: 'handed-over', ...(await this.handingOver) } : { kind: 'shut-down' };
        if (this.lease.lost) return { kind: 'lease-lost', detail: this.lease.lost };
        const pass = this.tick();
        // Only for shutdown to wait on; the pass's own failure is handled by the await below.
        this.tickInProgress = pass.catch(() => undefined);
        let outcome: CoordinatorOutcome | undefined;
        try {
          outcome = await pass;
        } catch (err) {
          if (!isStoreOutage(err) || this.shuttingDown) throw err;
          // The server went away (a restart, an outage): the workers run on, the lease keeper keeps trying, and the
          // pass runs again once the store answers. Fencing keeps it safe however long that takes.
          await this.waitOutOutage(err as Error);
          continue;
        }
        if (this.outageTries > 0) this.ctx.log('the store answers again; the run goes on');
        this.outageTries = 0;
        // The lease holder of the run it joined is gone: its attempts are handed over to the caller, which takes over.
        if (outcome?.kind === 'holder-gone') return { ...outcome, ...(await this.letGo({})) };
        if (outcome) return outcome;
        await this.nextWake();
      }
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) {
        this.lease.stepDown(err.message);
        return { kind: 'lease-lost', detail: this.lease.lost ?? err.message };
      }
      throw err;
    } finally {
      subscription.dispose();
      await this.sweeper.flush();
      if (!this.lease.lost && !this.shuttingDown) await this.release();
    }
  }

  /**
   * Ends every worker this coordinator drives (the extension deactivating, Ctrl-C on
   * `baton start`): they are stopped like an immediate stop, recorded, and the lease released.
   * A coordinator that already lost its lease leaves them to its successor. `graceMs` shortens
   * the time each worker gets between SIGTERM and SIGKILL (an editor window closing has a few
   * seconds in all).
   */
  async shutdown(by = 'coordinator shutdown', options: { graceMs?: number } = {}): Promise<StopReportEntry[]> {
    if (this.shuttingDown) return [];
    this.shuttingDown = true;
    this.wake();
    let report: StopReportEntry[] = [];
    if (this.lease.holds() && this.options.join) {
      // A coordinator that joined the run leaves it: its workers end and their tasks go back to the run — also one the
      // pass running now was starting.
      const graceMs = options.graceMs ?? this.ctx.config.stopGraceSeconds * 1000;
      report = await this.leaveAttempts(by, graceMs);
      await this.tickInProgress;
      report.push(...(await this.leaveAttempts(by, graceMs)));
    } else if (this.lease.holds()) {
      const runId = this.options.runId;
      try {
        const stop = await this.ctx.store.transact((tx) =>
          requestStop(tx, { runId, mode: 'immediate', by }, this.ctx.clock.now()),
        );
        this.shutdownStop = stop.request;
        report = await applyStopAsCoordinator(this.ctx, this.supervisor, runId, stop.request, {
          keepHandOffs: true,
          ...(options.graceMs !== undefined ? { graceMs: options.graceMs } : {}),
        });
      } catch (err) {
        // Whatever was not stopped is left to the next coordinator, which reconciles it.
        this.ctx.log(`shutdown: the workers were not all stopped: ${(err as Error).message}`);
      }
      // A pass that was starting a worker meanwhile ends it itself (see AttemptLauncher); wait for it before letting
      // go.
      await this.tickInProgress;
    }
    await this.sweeper.flush();
    await this.release();
    return report;
  }

  /**
   * Lets go of the run without stopping its workers (an editor window closing with
   * `baton.onWindowClose: keepRunning`, or a reload): the loop and every timer stop, each
   * worker keeps its lease for as long as its task may run, and the lease is released at once,
   * marked as handed over — so the next window takes the run over without waiting for the lease
   * to run out, and its reconcile adopts the workers (pid and start time unchanged). With
   * `stop: 'graceful'` a graceful stop is recorded first: nothing new starts, and the successor
   * lets the running attempts finish. A worker that exits meanwhile is not taken as a result
   * here; the successor ingests what it left on disk.
   */
  handOver(options: { by?: string; stop?: 'graceful' } = {}): Promise<{ workers: number }> {
    if (this.handingOver) return this.handingOver;
    if (this.shuttingDown) return Promise.resolve({ workers: 0 });
    this.shuttingDown = true;
    // Set before the loop wakes: it returns the hand-over's outcome once that is done.
    this.handingOver = this.letGo(options);
    this.wake();
    this.wakeAt(undefined);
    return this.handingOver;
  }

  private async letGo(options: { by?: string; stop?: 'graceful' }): Promise<{ workers: number }> {
    if (!this.lease.holds()) {
      this.supervisor.abandon();
      await this.release();
      return { workers: 0 };
    }
    const runId = this.options.runId;
    if (options.stop) {
      const stop = { runId, mode: options.stop, by: options.by ?? 'coordinator hand-over' };
      await this.ctx.store
        .transact((tx) => requestStop(tx, stop, this.ctx.clock.now()))
        .catch((err: unknown) => this.ctx.log(`hand-over: the stop was not recorded: ${(err as Error).message}`));
    }
    // A pass that is starting a worker finishes first (no new one starts: the coordinator is halted), so that worker
    // is handed over with the others.
    await this.tickInProgress;
    const workers = await this.supervisor.handOver();
    await this.release({ workers, ...(this.options.tasks ? { tasks: [...this.options.tasks] } : {}) });
    this.ctx.log(`handed run ${runId} over with ${counted(workers, 'worker')} still running`);
    return { workers };
  }

  // ── the loop ────────────────────────────────────────────────────────────

  /** One pass: apply stops, expire stale leases, dispatch, and decide whether the run is done for now. */
  private async tick(): Promise<CoordinatorOutcome | undefined> {
    const runId = this.options.runId;
    // Before anything reads the run: a claim an outage cut off before its worker ran is released, not left to expire.
    await this.launcher.releaseUnlaunched();
    // Stops are the lease holder's to apply; one that joined ends its workers once their attempts are decided.
    if (!this.options.join)
      for (const request of await this.ctx.store.read((r) => pendingStops(r, runId))) {
        await applyStopAsCoordinator(this.ctx, this.supervisor, runId, request);
      }
    const host = leaseHostHere(this.ctx.config.stopGraceSeconds);
    const shared = isSharedStore(this.ctx.config);
    const { handedIn, holderGone } = await this.ctx.store.transact(async (tx) => {
      const now = this.ctx.clock.now();
      await this.leases.restate(tx, now);
      // Its own run's leases only: its writes are scoped to the run (docs/team.md, "Concurrency").
      await expireStaleRuntimes(tx, now, { runId, host, spare: this.supervisor.doneWithinLease() });
      // A coordinator that joined the run and stopped renewing its place is retired after the takeover rule's time.
      if (shared) await retireLapsedPlaces(tx, runId, now, host.foreignGraceMs);
      return {
        // Work that ended on another host while no coordinator watched there, handed in by its lease watchdog.
        handedIn: shared ? await pendingHandIns(tx, runId, host.name, this.lease.lease.holder) : [],
        holderGone: this.options.join ? leaseHolderGone(await readCoordinatorLease(tx, runId), now, host) : false,
      };
    });
    if (holderGone) return { kind: 'holder-gone' };
    for (const handIn of handedIn) {
      this.ctx.log(
        await settleHandedIn(this.ctx, handIn).catch(
          (err: unknown) =>
            `${handIn.delegationId}: what its watchdog handed in was not settled: ${(err as Error).message}`,
        ),
      );
    }
    await this.supervisor.endDecidedElsewhere();
    // Before anything is dispatched: a config a worker (or a person) changed is told, and a change of a worker the run
    // uses waits at a gate. What starts below runs the run's frozen definitions either way.
    await this.lookAtConfig();

    const now = this.ctx.clock.now();
    const holder = this.lease.lease.holder;
    const readyLimit = this.maxConcurrency + this.supervisor.size;
    const tasks = this.options.tasks;
    const view = {
      maxConcurrency: this.maxConcurrency,
      busySlots: this.supervisor.busySlots(),
      tasksInFlight: this.supervisor.tasksInFlight(),
      ownDelegations: this.supervisor.ownDelegations(),
      finishing: new Set([...this.finishing.keys(), ...this.retryTimers.keys()]),
      cannotFinish: this.cannotFinish,
      ...(tasks ? { selected: tasks } : {}),
      halted: this.shuttingDown || this.lease.lost !== undefined,
    };
    // One read for the pass: what may start, and what decides how each candidate starts (domain/launch.ts).
    const { snapshot, plan, launch } = await this.ctx.store.read(async (r) => {
      const dispatch = await readDispatchSnapshot(r, { runId, now, readyLimit, holder, ...(tasks ? { tasks } : {}) });
      const decided = planDispatch(dispatch, view);
      const taskIds = decided.candidates;
      const facts = taskIds.length > 0 ? await readLaunchSnapshot(r, { runId, now, taskIds, holder }) : undefined;
      return { snapshot: dispatch, plan: decided, launch: facts };
    });
    if (snapshot.discarded.length > 0) await this.removeDiscardedWorktrees(snapshot.discarded);
    if (launch) await this.launcher.launch(plan.candidates, launch);
    this.wakeAt(plan.wakeAt);
    // Verifying with no attempt of ours behind it — left by a predecessor that stopped mid-way, or
    // sent back to integrate after a conflict gate: finish it alongside the running attempts.
    if (!this.options.join) for (const taskId of plan.finish) this.finishInBackground(taskId);

    // A person's hand-off (manual worker) is not waited for: it may take days, and the run waits at its gate.
    const inFlight = this.supervisor.busySlots() + this.finishing.size + this.retryTimers.size;
    // An attempt or a verification that ended while this pass read and launched changed what the pass saw (its task
    // done may have made others ready): look again first.
    const ownNow = this.supervisor.ownDelegations();
    const finishedMeanwhile =
      [...view.finishing].some((taskId) => !this.finishing.has(taskId) && !this.retryTimers.has(taskId)) ||
      [...view.ownDelegations].some((delegationId) => !ownNow.has(delegationId));
    if (inFlight > 0 || finishedMeanwhile || plan.waitingForBackoff || plan.heldElsewhere > 0) return undefined;
    // Read after this pass's launches: one may have opened a gate (isolation, a hand-off) since the snapshot.
    const { runStatus, openGates, cancelling } = await this.ctx.store.read(async (r) => ({
      runStatus: await readRunStatus(r, runId),
      openGates: await openGateCount(r, runId),
      cancelling: await isBeingCancelled(r, runId),
    }));
    // Its own hand-offs counted now: one may have been handed out in this very pass.
    const handOffs = plan.handOffs + this.supervisor.size - this.supervisor.busySlots();
    const outcome = passOutcome({
      inFlight,
      plan: { ...plan, handOffs },
      runStatus,
      openGates,
      stopped: Boolean(snapshot.run.stopMode),
      cancelling,
      readyCount: snapshot.ready.length,
      ...(this.options.tasks ? { selected: this.options.tasks } : {}),
    });
    // A coordinator that joined a run that goes on waits for what its lease holder finishes to make work ready.
    if (this.options.join && outcome?.kind === 'idle' && outcome.status === 'running') return undefined;
    return outcome;
  }

  /** Looks at `.baton/config.json` when it changed since the last look (docs/architecture.md, "Trust model"). */
  private async lookAtConfig(): Promise<void> {
    const stamp = configFileStamp(this.ctx.workspace);
    if (stamp === this.configStamp) return;
    const runId = this.options.runId;
    const notice = await noticeConfigChange(this.ctx, runId, {
      ...(this.options.worker ? { override: this.options.worker } : {}),
      noticedBy: 'coordinator',
      gate: true,
    });
    this.configStamp = stamp;
    if (notice.frozeLegacy)
      this.ctx.log(`run ${runId} started before Baton froze worker definitions: froze them from .baton/config.json`);
    if (notice.gate?.action === 'opened' || notice.gate?.action === 'updated')
      this.ctx.log(
        `${notice.gate.id}: .baton/config.json changed a worker this run uses; nothing new starts until it is decided`,
      );
    else if (notice.told) this.ctx.log('.baton/config.json changed; the run keeps its frozen settings');
  }

  /** A pass failed because the store is out of reach: wait a little (longer each time), or until woken. */
  private async waitOutOutage(err: Error): Promise<void> {
    this.outageTries++;
    if (this.outageTries === 1) this.ctx.log(`the store is out of reach; waiting for it: ${err.message}`);
    const cancel = this.ctx.clock.setTimer(outageWait(this.outageTries), () => this.wake());
    try {
      await this.nextWake();
    } finally {
      cancel();
    }
  }

  private wake(): void {
    this.pendingWake = true;
    this.wakeUp?.();
  }

  private nextWake(): Promise<void> {
    if (this.pendingWake) {
      this.pendingWake = false;
      return Promise.resolve();
    }
    return new Promise((resolveWake) => {
      this.wakeUp = () => {
        this.wakeUp = undefined;
        this.pendingWake = false;
        resolveWake();
      };
    });
  }

  /** One timer for the next moment the store's state changes by itself (a backoff ends, a lease runs out). */
  private wakeAt(at: number | undefined): void {
    if (this.wakeTimer && this.wakeTimer.at === at) return;
    this.wakeTimer?.cancel();
    this.wakeTimer = undefined;
    if (at === undefined || !this.lease.holds()) return;
    // At most an hour ahead (a timer cannot wait longer than ~24 days; waking early only re-plans).
    const delay = Math.min(Math.max(0, at - this.ctx.clock.now()), 3_600_000);
    const cancel = this.ctx.clock.setTimer(delay, () => {
      if (this.wakeTimer?.cancel === cancel) this.wakeTimer = undefined;
      this.wake();
    });
    this.wakeTimer = { at, cancel };
  }

  // ── a coordinator that joined the run ─────────────────────────────────

  /**
   * Ends the workers of a coordinator that joined the run and leaves (Ctrl-C on its `baton resume`): their attempts are
   * released, not counted, and their tasks go back to the run for its other coordinators — the run itself goes on.
   */
  private async leaveAttempts(by: string, graceMs: number): Promise<StopReportEntry[]> {
    const runId = this.options.runId;
    const leaving = this.supervisor.all().filter((attempt) => !attempt.manual);
    const report = await Promise.all(
      leaving.map(async (attempt): Promise<StopReportEntry> => {
        const termination = await this.supervisor.end(attempt, 'stopped', graceMs);
        return {
          delegationId: attempt.delegationId,
          processes: termination?.processes.map((p) => p.pid) ?? [],
          confirmed: termination ? termination.confirmed : true,
          survivors: termination?.survivors.map((p) => p.pid) ?? [],
        };
      }),
    );
    try {
      const reason = `released: its coordinator ${this.lease.lease.holder} left the run (${by}); not counted`;
      await this.ctx.store.transact(async (tx) => {
        for (const attempt of leaving)
          await releaseUnlaunchedAttempt(
            tx,
            { runId, delegationId: attempt.delegationId, reason },
            this.ctx.clock.now(),
          );
      });
    } finally {
      for (const attempt of leaving) this.supervisor.forget(attempt);
    }
    if (report.length > 0) this.ctx.log(`left run ${runId}: ${counted(report.length, 'attempt')} released`);
    return report;
  }

  // ── verifications left without an attempt, discarded worktrees ─────────

  /**
   * Finishes a verifying task's verification (passed receipts are reused) and integration, without holding up the loop.
   */
  private finishInBackground(taskId: string): void {
    const done = this.finishVerification(taskId)
      .then((outcome) => {
        if (outcome === 'nothing') {
          this.cannotFinish.add(taskId);
          this.ctx.log(`${taskId} is verifying but has no attempt to verify; baton reconcile or replan can settle it`);
        } else if (outcome === 'retry') {
          // The target branch kept moving under the integration, or an earlier verify command may still run.
          const cancel = this.ctx.clock.setTimer(2000, () => {
            this.retryTimers.delete(taskId);
            this.wake();
          });
          this.retryTimers.set(taskId, cancel);
        }
      })
      .catch((err: unknown) => {
        if (!BatonError.is(err, 'coordinator.superseded')) this.ctx.log(`${taskId}: ${(err as Error).message}`);
      })
      .finally(() => {
        this.finishing.delete(taskId);
        this.wake();
      });
    this.finishing.set(taskId, done);
  }

  private async finishVerification(taskId: string): Promise<'done' | 'retry' | 'nothing'> {
    const runId = this.options.runId;
    const delegationId = await this.ctx.store.read((r) => latestOpenAttempt(r, runId, taskId));
    if (!delegationId) return 'nothing';
    const outcome = await verifyAttempt(this.ctx, runId, delegationId);
    // An earlier verify command may still run (on another host, until its watchdog ended it), or its work waits for
    // a batch to form (integrationBatch): look again shortly.
    const again = outcome.notYet || outcome.integration?.kind === 'not-now' || outcome.integration?.kind === 'queued';
    return again ? 'retry' : 'done';
  }

  /** Worktrees of attempts discarded at a gate go once their decision is made (docs/isolation.md, "Cleanup"). */
  private async removeDiscardedWorktrees(discarded: readonly DiscardedWorktree[]): Promise<void> {
    const runId = this.options.runId;
    const run = await this.ctx.store.read((r) => readRunIsolation(r, runId));
    if (!run?.repoRoot) return;
    for (const worktree of discarded) {
      await this.ctx.fence?.assertHeld();
      await removeWorktree(run.repoRoot, worktree);
      const key = { runId, delegationId: worktree.delegationId };
      await this.ctx.store.transact((tx) => markWorktreeRemoved(tx, key, this.ctx.clock.now()));
      this.ctx.log(`${worktree.delegationId}: discarded; its worktree and branch are removed`);
    }
  }

  // ── the lease ───────────────────────────────────────────────────────────

  /**
   * Another coordinator holds the run now. Stop everything this one would do on its own —
   * renewals, timeouts, backoff timers — and leave the workers alone: the successor adopts them.
   */
  private onLeaseLost(): void {
    this.ctx.log(`stepping down: ${this.lease.lost ?? ''}`);
    this.wakeAt(undefined);
    this.supervisor.abandon();
    this.unregister();
    this.wake();
  }

  private async currentLease(): Promise<CoordinatorLease | undefined> {
    const lease = await this.deps.store.read((r) => readCoordinatorLease(r, this.options.runId));
    return lease && lease.releasedAt === undefined && lease.epoch === this.lease.epoch ? lease : undefined;
  }

  /**
   * On a shared store: until when this coordinator holds the run, for the watchdogs of its verify commands
   * (verifyAttempt.ts). Says whether it was written: a failed renewal's write leaves the older deadline (a verify
   * command is ended early, never late); a failed "now" keeps the lease from being released (LeaseKeeper).
   */
  private recordLeaseDeadline(until: number): boolean {
    try {
      const { workspace } = this.deps;
      const local = this.ctx.clock.toLocal?.(until) ?? until; // the watchdog compares it with this machine's clock
      writeLeaseDeadline(workspace, runPaths(workspace, this.options.runId).coordinatorLeaseDeadline, local);
      return true;
    } catch (err) {
      this.deps.log(
        `the verify commands' lease watchdogs were not told of the coordinator lease: ${(err as Error).message}`,
      );
      return false;
    }
  }

  private unregister(): void {
    if (activeHere.get(this.registryKey) === this) activeHere.delete(this.registryKey);
  }

  private async release(handedOver?: HandOver): Promise<void> {
    this.wakeTimer?.cancel();
    this.wakeTimer = undefined;
    this.supervisor.cancelTimers();
    for (const cancel of this.retryTimers.values()) cancel();
    this.unregister();
    await this.lease.release(handedOver);
  }
}

/**
 * Whether the lease holder of a run that a coordinator joined is gone: its lease ran out, and the takeover rule's time
 * after it passed (a holder on another host: its workers' watchdogs have ended them by then; domain/process.ts).
 * A lease let go is not: its holder ended the run's part it drives, or handed it to a successor that takes it up.
 */
function leaseHolderGone(lease: CoordinatorLease | undefined, now: number, host: LeaseHost): boolean {
  if (!lease || lease.releasedAt !== undefined) return false;
  const grace = lease.identity.host === host.name ? 0 : host.foreignGraceMs;
  return lease.expiresAt + grace <= now;
}
