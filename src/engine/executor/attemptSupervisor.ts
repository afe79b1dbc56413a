import { existsSync } from 'node:fs';
import { describeCrossing, type BudgetCrossing } from '../domain/agents/budget';
import { sleep } from '../domain/clock';
import { BatonError } from '../domain/errors';
import type { ProcessIdentity } from '../domain/process';
import { isSharedStore } from '../domain/config';
import { startLeaseWatchdog, writeLeaseDeadline } from '../effects/processes/leaseWatchdog';
import { isProcessAlive, terminateWorker, workerMarker, type TerminationReport } from '../effects/processes/processes';
import { runPaths } from '../effects/workspaceLayout';
import type { WorkerExit } from '../effects/processes/spawnSupervised';
import { endAttemptOverBudget } from '../operations/delegations/endAttemptOverBudget';
import { endRunningAttempt } from '../operations/delegations/endRunningAttempt';
import { renewRuntimeLease } from '../operations/runtimes/renewRuntimeLease';
import { getDelegation } from '../queries/delegations';
import { sideEffectPoint } from '../store/faultPoint';
import type { StoreTx } from '../store/port';
import type { EngineContext } from '../usecases/context';
import { ingestArtifact } from '../usecases/ingestArtifact';
import type { LiveWorker } from '../usecases/reconcileRun';
import { resultOnDisk } from '../usecases/resultOnDisk';
import { writeExitCodeResult } from '../usecases/exitCodeResult';
import { recordSharedTreeAfter } from '../usecases/sharedTreeSnapshots';
import { AgentStreamFollower, type AttemptAgent, type StreamFollowerHost } from './agentStreamFollower';
import { HeartbeatRelay } from './heartbeatRelay';
import { isStoreOutage, outageWait } from './storeOutage';

/** One attempt a coordinator drives: a worker process (or a person, for the manual worker). */
export interface Attempt {
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
   * Set once someone (stop, timeout, lost lease) ends it: its exit is then not a result; the ender records the outcome.
   */
  ending?: 'stopped' | 'timeout' | 'stale' | 'budget';
  /**
   * Its worker exited and the supervisor is taking its result (ingest, verify, integrate): not someone else's decision.
   */
  settling?: boolean;
  timers: Map<'renew' | 'timeout' | 'poll' | 'stream' | 'relay', () => void>;
  /** A plain command (`"result": "exit-code"`): Baton writes its result from its exit code and its changes. */
  plainCommand?: { command: string; cwd: string; agent: string };
  /** An agent preset's attempt: its event stream, followed live (docs/workers.md, "Live activity"). */
  stream?: AgentStreamFollower;
  done: Promise<void>;
}

type RenewalOutcome = 'renewed' | 'lost' | 'retry';

/** After a renewal failed for a passing reason (the store was busy), try again this soon. */
const RENEWAL_RETRY_MS = 1000;

/** What the supervisor needs from the coordinator it serves. */
export interface SupervisorHost {
  runId: string;
  /** The coordinator's current epoch: the authority its renewals carry. */
  epoch(): number;
  /** Superseded or shutting down: exits are no longer taken as results. */
  halted(): boolean;
  lost(): boolean;
  wake(): void;
  /** A worker process exited: what it left behind is swept (LeftoverSweeper). */
  exited(attempt: Attempt & { identity: ProcessIdentity }): void;
}

/**
 * Supervises the attempts a coordinator drives (BullMQ's lock manager tracks its jobs the
 * same way): renews each worker's lease at a third of its length while the process lives,
 * ends it on its task timeout, takes its result when it exits (ingest, verify, integrate —
 * or the attempt fails), and ends attempts someone else decided. An attempt stays tracked —
 * its slot busy — until its outcome is recorded.
 */
export class AttemptSupervisor implements StreamFollowerHost {
  private readonly attempts = new Map<string, Attempt>();

  /** On a shared store each worker runs under a lease watchdog (effects/processes/leaseWatchdog.ts). */
  private readonly watchdogs: boolean;

  constructor(
    private readonly ctx: EngineContext,
    private readonly host: SupervisorHost,
  ) {
    this.watchdogs = isSharedStore(ctx.config);
  }

  get runId(): string {
    return this.host.runId;
  }

  epoch(): number {
    return this.host.epoch();
  }

  get size(): number {
    return this.attempts.size;
  }

  all(): Attempt[] {
    return [...this.attempts.values()];
  }

  /** Attempts whose worker process takes a slot (a person's hand-off takes none). */
  busySlots(): number {
    let busy = 0;
    for (const attempt of this.attempts.values()) if (!attempt.manual) busy++;
    return busy;
  }

  tasksInFlight(): Set<string> {
    return new Set([...this.attempts.values()].map((a) => a.taskId));
  }

  ownDelegations(): Set<string> {
    return new Set(this.attempts.keys());
  }

  has(delegationId: string): boolean {
    return this.attempts.has(delegationId);
  }

  /** A person's attempt (manual hand-off): tracked with a long lease, no process. */
  trackManual(attempt: Attempt): void {
    this.attempts.set(attempt.delegationId, attempt);
  }

  /** Is this attempt still one the coordinator drives (not ended, forgotten, or abandoned)? */
  owns(attempt: Attempt): boolean {
    return this.attempts.get(attempt.delegationId) === attempt;
  }

  /** The attempt's outcome is recorded (or someone else's business): stop tracking it. */
  forget(attempt: Attempt): void {
    for (const cancel of attempt.timers.values()) cancel();
    attempt.timers.clear();
    if (this.owns(attempt)) this.attempts.delete(attempt.delegationId);
    this.host.wake();
  }

  /**
   * The coordinator hands the run over with its workers running: each worker it drives keeps
   * its lease for as long as its task may still run (a task timeout from now), so that a
   * successor that comes later than one lease length still adopts it instead of ending it;
   * then, as `abandon`, every timer stops and the workers are left alone. Returns how many it
   * left running. A worker that exited and is being settled is not counted: its result is on
   * disk for the successor's reconcile.
   */
  async handOver(): Promise<number> {
    const kept = [...this.attempts.values()].filter((a) => !a.manual && !a.ending && !a.settling);
    const now = this.ctx.clock.now();
    const authority = {
      holder: 'coordinator' as const,
      runId: this.host.runId,
      epoch: this.host.epoch(),
      withinLease: true,
      until: now + this.ctx.config.taskTimeoutSeconds * 1000,
    };
    try {
      await this.ctx.store.transact(async (tx) => {
        for (const attempt of kept) {
          await renewRuntimeLease(tx, { runtimeId: attempt.runtimeId, authority, beat: false }, now).catch(
            (err: unknown) => {
              // Ended meanwhile (its exit is being recorded): nothing to hold.
              if (!BatonError.is(err, 'runtime.not-live')) throw err;
            },
          );
        }
      });
      for (const attempt of kept) this.recordDeadline(attempt, authority.until);
    } catch (err) {
      // Their leases then run out by themselves; a successor within one lease still adopts them.
      this.ctx.log(`hand-over: the workers' leases were not extended: ${(err as Error).message}`);
    }
    this.abandon();
    return kept.length;
  }

  /** Another coordinator holds the run: stop every timer and leave the workers to it. */
  abandon(): void {
    this.cancelTimers();
    this.attempts.clear();
  }

  cancelTimers(): void {
    for (const attempt of this.attempts.values()) {
      for (const cancel of attempt.timers.values()) cancel();
      attempt.timers.clear();
    }
  }

  /**
   * Lease renewals at a third of the lease, the task timeout, what happens when the worker
   * exits — and for an agent preset its event stream, followed from the start of its log.
   */
  watch(
    attempt: Attempt,
    exited: Promise<WorkerExit>,
    timeoutMs: number,
    agent?: { agent: AttemptAgent; cwd: string },
  ): void {
    this.attempts.set(attempt.delegationId, attempt);
    // On a shared store the worker has no store credential: its `baton heartbeat` reaches the store through us.
    if (this.watchdogs && !attempt.manual)
      new HeartbeatRelay(
        this.ctx,
        attempt,
        runPaths(this.ctx.workspace, this.host.runId).heartbeatRelay(attempt.delegationId),
      ).start();
    if (agent) {
      attempt.stream = new AgentStreamFollower(this.ctx, this, attempt, agent.agent, agent.cwd);
      attempt.stream.start();
    }
    const renewEvery = Math.max(1000, Math.floor((this.ctx.config.leaseSeconds * 1000) / 3));
    const renew = (delay: number): void => {
      attempt.timers.set(
        'renew',
        this.ctx.clock.setTimer(delay, () => {
          if (!this.owns(attempt) || attempt.ending || this.host.lost()) return;
          void this.renewLease(attempt).then((outcome) => {
            if (outcome === 'renewed') renew(renewEvery);
            else if (outcome === 'retry') renew(Math.min(renewEvery, RENEWAL_RETRY_MS));
          });
        }),
      );
    };
    renew(renewEvery);
    attempt.timers.set(
      'timeout',
      this.ctx.clock.setTimer(Math.max(0, timeoutMs), () => {
        if (this.owns(attempt) && !attempt.ending && !this.host.lost()) void this.timeOut(attempt);
      }),
    );
    attempt.done = exited
      .then((exit) => this.onWorkerExit(attempt, exit))
      .catch((err) => this.ctx.log(`${attempt.delegationId}: ${(err as Error).message}`));
  }

  /**
   * Takes over a live worker of a predecessor (reconcile renewed its lease already): renew it
   * like its own, keep its task timeout from its start, watch for its end, then take its result.
   */
  adopt(found: LiveWorker): void {
    const attempt: Attempt = {
      delegationId: found.delegationId,
      taskId: found.taskId,
      runtimeId: found.runtimeId,
      artifactPath: found.artifactPath,
      logPath: found.logPath,
      identity: found.identity,
      manual: false,
      leaseMs: found.leaseMs,
      leaseUntilMono: this.ctx.clock.monotonic() + found.leaseMs,
      timers: new Map(),
      done: Promise.resolve(),
    };
    // Not our child: its end is seen by polling its identity.
    const exited = new Promise<WorkerExit>((resolveExit) => {
      const poll = (): void => {
        attempt.timers.set(
          'poll',
          this.ctx.clock.setTimer(250, () => {
            if (isProcessAlive(found.identity) === false) resolveExit({ exitCode: null, signal: null });
            else poll();
          }),
        );
      };
      poll();
    });
    const elapsed = found.startedAt !== undefined ? this.ctx.clock.now() - found.startedAt : 0;
    // Reconcile renewed its lease just now: its watchdog (a predecessor on this host started it) is told.
    this.recordDeadline(attempt, this.ctx.clock.now() + found.leaseMs);
    this.watch(attempt, exited, this.ctx.config.taskTimeoutSeconds * 1000 - elapsed, found.agent);
  }

  /**
   * On a shared store: starts the worker's lease watchdog, once the store recorded the worker
   * and before it runs (a successor on another machine relies on it: docs/team.md, "Failover").
   * `leaseUntil` is the lease the store holds for it now (wall clock).
   */
  guardWithWatchdog(attempt: Attempt & { identity: ProcessIdentity }, leaseUntil: number): void {
    if (!this.watchdogs) return;
    if (!this.ctx.cliPath) {
      this.ctx.log(
        `${attempt.delegationId}: no lease watchdog (no baton CLI to run it); a successor on another machine may run the task again while it runs`,
      );
      return;
    }
    this.recordDeadline(attempt, leaseUntil);
    startLeaseWatchdog(this.ctx.cliPath, {
      kind: 'worker',
      workspace: this.ctx.workspace,
      marker: workerMarker(attempt.runtimeId),
      delegationId: attempt.delegationId,
      identity: attempt.identity,
      deadlinePath: runPaths(this.ctx.workspace, this.host.runId).leaseDeadline(attempt.delegationId),
      logPath: attempt.logPath,
      graceMs: this.ctx.config.stopGraceSeconds * 1000,
    });
  }

  /**
   * Tells the attempt's watchdog until when the store now holds its lease: only after the store
   * committed it, so the watchdog never lets a worker run past a lease another host could see
   * as expired. A failed write leaves the older deadline: the worker is ended early, never late.
   */
  private recordDeadline(attempt: Attempt, leaseUntil: number): void {
    if (!this.watchdogs || attempt.manual) return;
    try {
      const path = runPaths(this.ctx.workspace, this.host.runId).leaseDeadline(attempt.delegationId);
      writeLeaseDeadline(this.ctx.workspace, path, leaseUntil);
    } catch (err) {
      this.ctx.log(
        `${attempt.delegationId}: its lease watchdog was not told of the renewal: ${(err as Error).message}`,
      );
    }
  }

  /**
   * A lease this coordinator renews on time (monotonic) is not expired by a wall-clock jump:
   * it is restated, inside the caller's transaction, before stale leases are expired. Only
   * when needed: any write is a journaled commit, and a commit wakes the coordinator again.
   */
  async restateLeases(tx: StoreTx, now: number): Promise<void> {
    const mono = this.ctx.clock.monotonic();
    for (const attempt of this.attempts.values()) {
      if (attempt.manual || attempt.ending || mono >= attempt.leaseUntilMono) continue;
      const lapsed = await tx.get(
        `SELECT 1 AS x FROM runtimes WHERE id = ? AND ended_at IS NULL AND lease_expires_at <= ?`,
        [attempt.runtimeId, now],
      );
      if (!lapsed) continue;
      const authority = {
        holder: 'coordinator' as const,
        runId: this.host.runId,
        epoch: this.host.epoch(),
        withinLease: true,
      };
      await renewRuntimeLease(tx, { runtimeId: attempt.runtimeId, authority, beat: false }, now);
    }
  }

  /**
   * Ends an attempt's processes (TERM, grace, KILL, proof), once its coordinator has proved it
   * still holds the run. It stays tracked — its slot busy, the run not idle — until the
   * caller has recorded the outcome and forgets it. Every caller kills on a decision already in
   * the store (a stop request, an attempt decided elsewhere, a lease the store expired, a
   * timeout recorded first): a successor that takes over meanwhile sees that decision and ends
   * the same processes itself, so a kill that lands late never hits a worker someone adopted.
   */
  async end(
    attempt: Attempt,
    why: NonNullable<Attempt['ending']>,
    graceMs = this.ctx.config.stopGraceSeconds * 1000,
  ): Promise<TerminationReport | undefined> {
    if (attempt.ending) return undefined;
    this.markEnding(attempt, why);
    return this.terminate(attempt, graceMs);
  }

  private markEnding(attempt: Attempt, why: NonNullable<Attempt['ending']>): void {
    attempt.ending = why;
    for (const cancel of attempt.timers.values()) cancel();
    attempt.timers.clear();
  }

  private async terminate(
    attempt: Attempt,
    graceMs = this.ctx.config.stopGraceSeconds * 1000,
  ): Promise<TerminationReport | undefined> {
    if (!attempt.identity) return undefined;
    await this.ctx.fence?.assertHeld();
    await sideEffectPoint('kill:after-fence');
    const report = await terminateWorker(attempt.identity, {
      marker: workerMarker(attempt.runtimeId),
      graceMs,
      clock: this.ctx.clock,
    });
    const unconfirmed = report.confirmed ? '' : `, ${report.survivors.length} NOT confirmed`;
    const ended = `${report.processes.length} process${report.processes.length === 1 ? '' : 'es'} ended`;
    this.ctx.log(`${attempt.delegationId}: ${attempt.ending ?? 'ended'}; ${ended}${unconfirmed}`);
    // What the agent did and spent up to its end stays on record.
    await attempt.stream
      ?.finish()
      .catch((err: unknown) => this.ctx.log(`${attempt.delegationId}: usage not recorded: ${(err as Error).message}`));
    await recordSharedTreeAfter(this.ctx, { runId: this.host.runId, delegationId: attempt.delegationId });
    return report;
  }

  /** An attempt that someone else settled (ingested by hand, marked STALE, cancelled) has no business running. */
  async endDecidedElsewhere(): Promise<void> {
    if (this.attempts.size === 0) return;
    const ids = [...this.attempts.keys()];
    const statuses = await this.ctx.store.read((r) =>
      r.all<{ id: string; status: string }>(
        `SELECT id, status FROM delegations WHERE run_id = ? AND id IN (${ids.map(() => '?').join(', ')}) AND status <> 'RUNNING'`,
        [this.host.runId, ...ids],
      ),
    );
    const settled = new Set(statuses.map((s) => s.id));
    for (const attempt of [...this.attempts.values()]) {
      // One that is being ended (a timeout, a stop) is forgotten by whoever ends it, once its processes are gone.
      if (!settled.has(attempt.delegationId) || attempt.settling || attempt.ending) continue;
      if (!attempt.manual) await this.end(attempt, 'stale');
      this.forget(attempt);
    }
  }

  /** The attempt fails (its worker failed, timed out, or could not start); the retry policy applies. */
  async fail(delegationId: string, reason: string): Promise<void> {
    const runId = this.host.runId;
    await this.ctx.store.transact((tx) =>
      endRunningAttempt(tx, { runId, delegationId, to: 'FAILED', reason }, this.ctx.clock.now()),
    );
  }

  /**
   * Renews the lease of a worker this coordinator drives (counted as a heartbeat). Whether the
   * lease still holds is judged on the monotonic clock from the last renewal — a wall-clock
   * jump does not end it — and, failing that, on the stored expiry: only a lease that both
   * say ran out is lost (made STALE; the retry policy applies).
   */
  private async renewLease(attempt: Attempt): Promise<RenewalOutcome> {
    try {
      // Judged when the transaction runs, not when the timer fired: the process may have been paused in between.
      let renewedAtMono = 0;
      let renewedAt = 0;
      const outcome = await this.ctx.store.transact((tx) => {
        renewedAtMono = this.ctx.clock.monotonic();
        renewedAt = this.ctx.clock.now();
        const authority = {
          holder: 'coordinator' as const,
          runId: this.host.runId,
          epoch: this.host.epoch(),
          withinLease: renewedAtMono < attempt.leaseUntilMono,
        };
        return renewRuntimeLease(tx, { runtimeId: attempt.runtimeId, authority }, renewedAt);
      });
      if (outcome.renewed) {
        attempt.leaseUntilMono = renewedAtMono + attempt.leaseMs;
        this.recordDeadline(attempt, renewedAt + attempt.leaseMs);
        return 'renewed';
      }
      // The lease ran out before we renewed it (this process was paused): the attempt is STALE now.
      this.ctx.log(`${attempt.delegationId}: ${outcome.error.message}`);
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) return 'lost';
      if (!BatonError.is(err, 'runtime.not-live')) {
        this.ctx.log(`${attempt.delegationId}: lease not renewed, trying again: ${(err as Error).message}`);
        return 'retry';
      }
      // Decided elsewhere (ingested by hand, stopped): the next pass ends it.
      this.host.wake();
      return 'lost';
    }
    if (this.owns(attempt) && !attempt.ending) {
      await this.end(attempt, 'stale').catch((err: unknown) =>
        this.ctx.log(`${attempt.delegationId}: ${(err as Error).message}`),
      );
      this.forget(attempt);
    }
    return 'lost';
  }

  /**
   * The agent's spend crossed a budget line (docs/workers.md, "Budgets"): the attempt is
   * cancelled and its task waits at a budget gate — approve raises the limits and continues,
   * reject fails the task — and then its processes are ended (graceful, then immediate).
   * Decided first, as the task timeout is: the decision goes through the fenced store, so a
   * coordinator that lost the run has it refused and kills nothing (the successor that adopted
   * the worker keeps it); one stopped between the decision and the kill leaves a CANCELLED
   * attempt whose processes its successor ends (reconcile). The attempt stays tracked — its
   * task is not handed out again — until its processes are gone.
   */
  overBudget(attempt: Attempt, crossings: BudgetCrossing[]): void {
    if (!this.owns(attempt) || attempt.ending || this.host.lost()) return;
    this.markEnding(attempt, 'budget');
    const why = crossings.map(describeCrossing).join('; ');
    void (async () => {
      try {
        await this.ctx.store.transact((tx) =>
          endAttemptOverBudget(
            tx,
            { runId: this.host.runId, delegationId: attempt.delegationId, crossings, why },
            this.ctx.clock.now(),
          ),
        );
        const report = await this.terminate(attempt);
        if (report && !report.confirmed)
          this.ctx.log(
            `${attempt.delegationId}: over budget; termination NOT confirmed (${report.survivors.length} left)`,
          );
      } catch (err) {
        if (!BatonError.is(err, 'coordinator.superseded'))
          this.ctx.log(`${attempt.delegationId}: over budget, not recorded: ${(err as Error).message}`);
      } finally {
        this.forget(attempt);
      }
    })();
  }

  /**
   * The task timeout: decided first — the attempt FAILED, through the fenced store, so only
   * while this coordinator holds the run — and only then are its processes ended. A
   * coordinator that was paused past its lease has its decision refused and kills nothing;
   * one stopped between the decision and the kill leaves a decision its successor carries out.
   */
  private async timeOut(attempt: Attempt): Promise<void> {
    if (attempt.ending) return;
    this.markEnding(attempt, 'timeout');
    try {
      const seconds = this.ctx.config.taskTimeoutSeconds;
      await this.fail(attempt.delegationId, `timed out after ${seconds} s`);
      const report = await this.terminate(attempt);
      if (report && !report.confirmed)
        this.ctx.log(`${attempt.delegationId}: timed out; termination NOT confirmed (${report.survivors.length} left)`);
    } catch (err) {
      if (!BatonError.is(err, 'coordinator.superseded'))
        this.ctx.log(`${attempt.delegationId}: ${(err as Error).message}`);
    } finally {
      this.forget(attempt);
    }
  }

  /** A worker process ended by itself: take its result (artifact file, else its output) or fail the attempt. */
  private async onWorkerExit(attempt: Attempt, exit: WorkerExit): Promise<void> {
    attempt.timers.get('renew')?.();
    attempt.timers.get('timeout')?.();
    // Ended by a stop, a timeout or a lost lease: whoever ended it records the outcome.
    if (attempt.ending || !this.owns(attempt) || this.host.halted()) return;
    attempt.settling = true;
    try {
      // A store out of reach (a server restart) fails no attempt: its result stays on disk and is taken once the
      // store answers; its slot stays busy meanwhile. Taking it again is safe: ingestion is idempotent.
      for (let tries = 1; ; tries++) {
        try {
          return await this.takeResult(attempt, exit);
        } catch (err) {
          if (!isStoreOutage(err) || !this.owns(attempt) || this.host.halted()) throw err;
          if (tries === 1) this.ctx.log(`${attempt.delegationId}: the store is out of reach; its result waits for it`);
          await sleep(this.ctx.clock, outageWait(tries));
        }
      }
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) return;
      this.ctx.log(`${attempt.delegationId}: ${(err as Error).message}`);
      // Still out of reach as this coordinator lets go: its result stays on disk for the next one's reconcile.
      if (isStoreOutage(err)) return;
      // Its result could not be taken (unreadable, vanished): the attempt fails rather than waiting for its lease.
      await this.fail(attempt.delegationId, `its result could not be taken: ${(err as Error).message}`).catch(
        (failed: unknown) =>
          this.ctx.log(`${attempt.delegationId}: not recorded as failed: ${(failed as Error).message}`),
      );
    } finally {
      this.forget(attempt);
      if (attempt.identity) this.host.exited({ ...attempt, identity: attempt.identity });
    }
  }

  /** Takes an exited worker's result: its artifact (ingested), else its output, else the attempt fails. */
  private async takeResult(attempt: Attempt, exit: WorkerExit): Promise<void> {
    const runId = this.host.runId;
    const delegation = await this.ctx.store.read((r) => getDelegation(r, runId, attempt.delegationId));
    if (!delegation || delegation.status !== 'RUNNING') return; // decided elsewhere meanwhile
    // Before its result is taken: completing it may start dependents that change the shared tree.
    await recordSharedTreeAfter(this.ctx, { runId, delegationId: attempt.delegationId });
    if (attempt.plainCommand && !existsSync(attempt.artifactPath)) {
      const { command, cwd, agent } = attempt.plainCommand;
      await writeExitCodeResult(
        this.ctx,
        {
          runId,
          delegationId: attempt.delegationId,
          taskId: attempt.taskId,
          agent,
          artifactPath: attempt.artifactPath,
        },
        { command, cwd },
        exit,
      );
    }
    const activity = await attempt.stream?.finish();
    const agent = attempt.stream
      ? {
          kind: attempt.stream.agent.kind,
          ...(activity?.ended?.finalText ? { finalText: activity.ended.finalText } : {}),
        }
      : undefined;
    const artifact = resultOnDisk(this.ctx.workspace, attempt.artifactPath, attempt.logPath, true, agent);
    if (!artifact) {
      const how = exit.signal
        ? `was killed by ${exit.signal}`
        : exit.exitCode === null
          ? 'ended'
          : `exited with code ${exit.exitCode}`;
      // An agent that said why it stopped (a refused request, a model error) is quoted.
      const said = activity?.errors.at(-1);
      await this.fail(attempt.delegationId, `the worker ${how} without a result${said ? `: ${said}` : ''}`);
      return;
    }
    const outcome = await ingestArtifact(this.ctx, delegation, artifact);
    const what = outcome.record.accepted ? `result ${outcome.record.resultStatus}` : 'result rejected';
    this.ctx.log(`${attempt.delegationId}: ${what}; ${outcome.delegation.status}`);
  }
}
