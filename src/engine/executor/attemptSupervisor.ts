import { describeCrossing, type BudgetCrossing } from '../domain/agents/budget';
import { sleep } from '../domain/clock';
import { BatonError } from '../domain/errors';
import type { ProcessIdentity } from '../domain/process';
import type { StopRequest } from '../domain/stops';
import { isSharedStore } from '../domain/config';
import { isProcessAlive, terminateWorker, workerMarker, type TerminationReport } from '../effects/processes/processes';
import { readExitRecord } from '../effects/processes/exitRecord';
import { runPaths } from '../effects/workspaceLayout';
import type { WorkerExit } from '../effects/processes/spawnSupervised';
import { endAttemptOverBudget } from '../operations/delegations/endAttemptOverBudget';
import { endRunningAttempt } from '../operations/delegations/endRunningAttempt';
import { parkAttempt } from '../operations/delegations/parkAttempt';
import { cancelStoppedAttempt } from '../operations/stops/stopRequests';
import { decidedAttempts, getDelegation } from '../queries/delegations';
import { questionWindows } from '../queries/runView';
import { checkTaskTimeout, QUESTION_RECHECK_MS, type TimeoutCheck } from '../domain/question';
import { sideEffectPoint } from '../store/faultPoint';
import type { StoreTx } from '../store/port';
import type { EngineContext } from '../usecases/context';
import type { LiveWorker } from '../usecases/reconcileRun';
import { settleExitedWorker } from '../usecases/settleExitedWorker';
import { recordSharedTreeAfter } from '../usecases/sharedTreeSnapshots';
import { AgentStreamFollower, type AttemptAgent, type StreamFollowerHost } from './agentStreamFollower';
import { Attempt, type AttemptEnding, type AttemptIdentity } from './attempt';
import { HeartbeatRelay } from './heartbeatRelay';
import { isStoreOutage, outageWait } from './storeOutage';
import type { WorkerLeaseKeeper } from './workerLeaseKeeper';

/** How many more looks (every 250 ms) an adopted worker's exit record gets for its end, once the worker is gone. */
const RECORD_LOOKS_AFTER_END = 20;

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
  exited(worker: { delegationId: string; runtimeId: string; identity: ProcessIdentity }): void;
}

/**
 * Supervises the attempts a coordinator drives: has the WorkerLeaseKeeper renew each worker's
 * lease while its process lives (and ends an attempt whose lease it lost), ends it on its task
 * timeout, takes its result when it exits (ingest, verify, integrate — or the attempt fails),
 * and ends attempts someone else decided. An attempt stays tracked — its slot busy — until its
 * outcome is recorded.
 */
export class AttemptSupervisor implements StreamFollowerHost {
  private readonly attempts = new Map<string, Attempt>();

  /** On a shared store a worker's `baton heartbeat` reaches the store through its coordinator (HeartbeatRelay). */
  private readonly relays: boolean;

  constructor(
    private readonly ctx: EngineContext,
    private readonly host: SupervisorHost,
    private readonly leases: WorkerLeaseKeeper,
  ) {
    this.relays = isSharedStore(ctx.config);
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

  /**
   * The runtimes of attempts whose worker ended within its lease and whose result is being taken: their leases are
   * not expired meanwhile (issue 25, item 4.4 — a store outage longer than the lease would make done work STALE).
   */
  doneWithinLease(): string[] {
    return [...this.attempts.values()].filter((a) => a.settling && a.endedWithinLease()).map((a) => a.runtimeId);
  }

  has(delegationId: string): boolean {
    return this.attempts.has(delegationId);
  }

  /** A person's attempt (manual hand-off), handed over by the launcher: tracked with a long lease, no process. */
  trackManual(claimed: AttemptIdentity, leaseUntilMono: number): void {
    this.attempts.set(claimed.delegationId, new Attempt(claimed, leaseUntilMono));
  }

  /**
   * An attempt the launcher started, handed over once the store recorded its worker and before
   * the worker is let go: supervised from now on (watch), its lease watchdog started on a shared
   * store with the lease as the claim set it.
   */
  supervise(
    claimed: AttemptIdentity,
    leaseUntilMono: number,
    worker: { identity: ProcessIdentity; exited: Promise<WorkerExit> },
    options: { plainCommand?: Attempt['plainCommand']; agent?: { agent: AttemptAgent; cwd: string } } = {},
  ): Attempt {
    const attempt = new Attempt(claimed, leaseUntilMono);
    attempt.identity = worker.identity;
    if (options.plainCommand) attempt.plainCommand = options.plainCommand;
    this.watch(attempt, worker.exited, {
      startedAt: this.ctx.clock.now(),
      ...(options.agent ? { agent: options.agent } : {}),
      // On a shared store the watchdog ends the worker if no one renews its lease.
      watchdogUntil: this.ctx.clock.now() + (leaseUntilMono - this.ctx.clock.monotonic()),
    });
    return attempt;
  }

  /** Is this attempt still one the coordinator drives (not ended, forgotten, or abandoned)? */
  owns(attempt: Attempt): boolean {
    return this.attempts.get(attempt.delegationId) === attempt;
  }

  /**
   * The attempt's outcome is recorded (or someone else's business): stop tracking it. `settled: false` — its worker's
   * end could not be recorded (the store out of reach, the run lost): its watchdog is not told it was settled, so it
   * hands the end in once this coordinator is gone (docs/team.md, "Finished work on a dead host").
   */
  forget(attempt: Attempt, settled = true): void {
    attempt.cancelTimers();
    this.leases.untrack(attempt);
    // Its watchdog has nothing to hand in: this coordinator took its end (or saw it decided).
    if (settled) this.leases.recordSettled(attempt);
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
    await this.leases.holdForHandOver(kept, this.ctx.clock.now() + this.ctx.config.taskTimeoutSeconds * 1000);
    this.abandon();
    return kept.length;
  }

  /** Another coordinator holds the run: stop every timer and leave the workers to it. */
  abandon(): void {
    this.cancelTimers();
    this.attempts.clear();
  }

  cancelTimers(): void {
    for (const attempt of this.attempts.values()) attempt.cancelTimers();
    this.leases.untrackAll();
  }

  /**
   * Takes the attempt over from its start: its lease renewals (WorkerLeaseKeeper), the task
   * timeout, what happens when the worker exits — for an agent preset its event stream,
   * followed from the start of its log; on a shared store its heartbeat relay and, once
   * `watchdogUntil` (the lease the store holds for it now) is given, its lease watchdog.
   */
  private watch(
    attempt: Attempt,
    exited: Promise<WorkerExit>,
    options: { startedAt: number; agent?: { agent: AttemptAgent; cwd: string }; watchdogUntil?: number },
  ): void {
    this.attempts.set(attempt.delegationId, attempt);
    // On a shared store the worker has no store credential: its `baton heartbeat` reaches the store through us.
    if (this.relays && !attempt.manual)
      new HeartbeatRelay(
        this.ctx,
        attempt,
        runPaths(this.ctx.workspace, this.host.runId).heartbeatRelay(attempt.delegationId),
      ).start();
    if (options.agent) {
      const stream = new AgentStreamFollower(this.ctx, this, attempt, options.agent.agent, options.agent.cwd);
      attempt.stream = stream;
      stream.start();
    }
    this.leases.track(attempt);
    this.armTimeout(attempt, options.startedAt, options.startedAt + this.timeoutMs() - this.ctx.clock.now());
    void exited
      .then((exit) => this.onWorkerExit(attempt, exit))
      .catch((err) => this.ctx.log(`${attempt.delegationId}: ${(err as Error).message}`));
    if (options.watchdogUntil !== undefined && attempt.identity)
      this.leases.guardWithWatchdog({ ...attempt, identity: attempt.identity }, options.watchdogUntil);
  }

  /**
   * Takes over a live worker of a predecessor (reconcile renewed its lease already): renew it
   * like its own, keep its task timeout from its start, watch for its end, then take its result.
   */
  adopt(found: LiveWorker): void {
    const attempt = new Attempt(
      {
        delegationId: found.delegationId,
        taskId: found.taskId,
        runtimeId: found.runtimeId,
        artifactPath: found.artifactPath,
        logPath: found.logPath,
        manual: false,
        leaseMs: found.leaseMs,
        ...(found.watchdogKey ? { watchdogKey: found.watchdogKey } : {}),
      },
      this.ctx.clock.monotonic() + found.leaseMs,
    );
    attempt.identity = found.identity;
    if (found.plainCommand) attempt.plainCommand = found.plainCommand;
    // Not our child: its end is seen by polling its identity, and how it ended is read from its exit record — which its
    // waiter writes right after it ends, so a record still without its end is given a few more looks.
    const record = runPaths(this.ctx.workspace, this.host.runId).exitRecord(found.delegationId);
    const owner = { delegationId: found.delegationId, runtimeId: found.runtimeId };
    const exited = new Promise<WorkerExit>((resolveExit) => {
      let looksAfterEnd = 0;
      const poll = (): void => {
        attempt.setTimer(
          'poll',
          this.ctx.clock.setTimer(250, () => {
            if (isProcessAlive(found.identity) !== false) return poll();
            const read = readExitRecord(record, owner);
            if ('exit' in read) resolveExit(read.exit);
            else if (read.none === 'not-ended' && ++looksAfterEnd < RECORD_LOOKS_AFTER_END) poll();
            else resolveExit({ exitCode: null, signal: null });
          }),
        );
      };
      poll();
    });
    // Reconcile renewed its lease just now: its watchdog (a predecessor on this host started it) is told.
    this.leases.recordDeadline(attempt, this.ctx.clock.now() + found.leaseMs);
    this.watch(attempt, exited, {
      startedAt: found.startedAt ?? this.ctx.clock.now(),
      ...(found.agent ? { agent: found.agent } : {}),
    });
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
    why: AttemptEnding,
    graceMs = this.ctx.config.stopGraceSeconds * 1000,
  ): Promise<TerminationReport | undefined> {
    if (attempt.ending) return undefined;
    this.markEnding(attempt, why);
    return this.terminate(attempt, graceMs);
  }

  private markEnding(attempt: Attempt, why: AttemptEnding): void {
    attempt.ending = why;
    attempt.cancelTimers();
    this.leases.untrack(attempt);
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

  /**
   * Shutdown's stop was applied while this attempt's worker was starting (the launcher hands it
   * over first): it ends like the others, recorded under the same stop.
   */
  async endUnderStop(attempt: Attempt, stop: StopRequest): Promise<void> {
    const termination = await this.end(attempt, 'stopped');
    const entry = {
      delegationId: attempt.delegationId,
      processes: termination?.processes.map((p) => p.pid) ?? [],
      confirmed: termination ? termination.confirmed : true,
      survivors: termination?.survivors.map((p) => p.pid) ?? [],
    };
    try {
      await this.ctx.store.transact((tx) =>
        cancelStoppedAttempt(
          tx,
          { runId: this.host.runId, delegationId: attempt.delegationId, request: stop, entry },
          this.ctx.clock.now(),
        ),
      );
    } finally {
      this.forget(attempt);
    }
  }

  /**
   * An attempt that someone else settled (ingested by hand, marked STALE, cancelled, ended for a follow-up message) has
   * no business running: its processes are ended (TERM, grace, KILL) before the pass dispatches anything, so the
   * task's next attempt never runs beside it.
   */
  async endDecidedElsewhere(): Promise<void> {
    if (this.attempts.size === 0) return;
    const ids = [...this.attempts.keys()];
    const settled = await this.ctx.store.read((r) => decidedAttempts(r, this.host.runId, ids));
    for (const attempt of [...this.attempts.values()]) {
      // One that is being ended (a timeout, a stop) is forgotten by whoever ends it, once its processes are gone.
      if (!settled.has(attempt.delegationId) || attempt.settling || attempt.ending) continue;
      if (!attempt.manual) await this.end(attempt, 'decided elsewhere');
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
   * The WorkerLeaseKeeper lost an attempt's lease: it ran out before the renewal (this process
   * was paused; the attempt is STALE now and its processes are ended), or the attempt was
   * decided elsewhere (ingested by hand, stopped: the next pass ends it).
   */
  leaseLost(attempt: Attempt, why: 'expired' | 'decided'): void {
    if (why === 'decided') {
      this.host.wake();
      return;
    }
    if (!this.owns(attempt) || attempt.ending) return;
    void this.end(attempt, 'stale')
      .catch((err: unknown) => this.ctx.log(`${attempt.delegationId}: ${(err as Error).message}`))
      .finally(() => this.forget(attempt));
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
    const why = crossings.map(describeCrossing).join('; ');
    this.endByDecision(attempt, 'budget', 'over budget', (tx, now) =>
      endAttemptOverBudget(tx, { runId: this.host.runId, delegationId: attempt.delegationId, crossings, why }, now),
    );
  }

  /**
   * The agent's stream was silent for silenceSeconds and silenceAction is `stop` (docs/agents.md, "Silent
   * streams"): the attempt is parked — CANCELLED, not counted against maxAttempts — and its task ready at once, its
   * next attempt continuing the session; then its processes are ended, gracefully first. Decided first, as a budget
   * stop is. An agent that waits for a person's answer (an open question of its own) is silent for that reason and
   * is not stopped.
   */
  silent(attempt: Attempt): void {
    const { runId } = this.host;
    void this.ctx.store
      .read((r) => questionWindows(r, runId, attempt.delegationId))
      .then((questions) => {
        if (questions.some((q) => q.decidedAt === undefined)) {
          this.ctx.log(`${attempt.delegationId}: silent while its question waits for an answer; not stopped`);
          return;
        }
        this.endByDecision(attempt, 'parked', 'silent, parked', async (tx, now) => {
          await parkAttempt(tx, { runId, delegationId: attempt.delegationId, cause: 'silence', until: now }, now);
        });
      })
      .catch((err: unknown) => this.ctx.log(`${attempt.delegationId}: silent, not stopped: ${(err as Error).message}`));
  }

  /**
   * Ends an attempt on a decision of its own: the decision goes through the fenced store first, so a coordinator
   * that lost the run has it refused and kills nothing (the successor that adopted the worker keeps it); one stopped
   * between the decision and the kill leaves a decided attempt whose processes its successor ends (reconcile). The
   * attempt stays tracked — its task is not handed out again — until its processes are gone.
   */
  private endByDecision(
    attempt: Attempt,
    ending: AttemptEnding,
    what: string,
    decide: (tx: StoreTx, now: number) => Promise<void>,
  ): void {
    if (!this.owns(attempt) || attempt.ending || this.host.lost()) return;
    this.markEnding(attempt, ending);
    void (async () => {
      try {
        await this.ctx.store.transact((tx) => decide(tx, this.ctx.clock.now()));
        const report = await this.terminate(attempt);
        if (report && !report.confirmed)
          this.ctx.log(`${attempt.delegationId}: ${what}; termination NOT confirmed (${report.survivors.length} left)`);
      } catch (err) {
        if (!BatonError.is(err, 'coordinator.superseded'))
          this.ctx.log(`${attempt.delegationId}: ${what}, not recorded: ${(err as Error).message}`);
      } finally {
        this.forget(attempt);
      }
    })();
  }

  private timeoutMs(): number {
    return this.ctx.config.taskTimeoutSeconds * 1000;
  }

  /**
   * The task timeout's timer. When it fires, the time the attempt's questions waited for a person
   * is not counted (checkTaskTimeout): while one waits, or after one was answered, the deadline is
   * later and the timer is set again for it.
   */
  private armTimeout(attempt: Attempt, startedAt: number, delayMs: number): void {
    attempt.setTimer(
      'timeout',
      this.ctx.clock.setTimer(Math.max(0, delayMs), () => {
        if (this.owns(attempt) && !attempt.ending && !this.host.lost()) void this.checkTimeout(attempt, startedAt);
      }),
    );
  }

  private async checkTimeout(attempt: Attempt, startedAt: number): Promise<void> {
    let check: TimeoutCheck;
    try {
      const questions = await this.ctx.store.read((r) => questionWindows(r, this.host.runId, attempt.delegationId));
      check = checkTaskTimeout({ startedAt, timeoutMs: this.timeoutMs(), questions, now: this.ctx.clock.now() });
    } catch (err) {
      // The store out of reach: nothing could be recorded now either; look again shortly.
      this.ctx.log(`${attempt.delegationId}: its task timeout was not checked: ${(err as Error).message}`);
      check = { due: false, recheckInMs: QUESTION_RECHECK_MS, waitedMs: 0 };
    }
    if (!this.owns(attempt) || attempt.ending || this.host.lost()) return;
    if (check.due) return this.timeOut(attempt, check.waitedMs);
    this.armTimeout(attempt, startedAt, check.recheckInMs);
  }

  /**
   * The task timeout: decided first — the attempt FAILED, through the fenced store, so only
   * while this coordinator holds the run — and only then are its processes ended. A
   * coordinator that was paused past its lease has its decision refused and kills nothing;
   * one stopped between the decision and the kill leaves a decision its successor carries out.
   */
  private async timeOut(attempt: Attempt, waitedMs: number): Promise<void> {
    if (attempt.ending) return;
    this.markEnding(attempt, 'timeout');
    try {
      const seconds = this.ctx.config.taskTimeoutSeconds;
      const waited =
        waitedMs > 0 ? ` (not counting ${Math.round(waitedMs / 1000)} s its questions waited for answers)` : '';
      await this.fail(attempt.delegationId, `timed out after ${seconds} s${waited}`);
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
    attempt.exitedAtMono = this.ctx.clock.monotonic();
    this.leases.untrack(attempt);
    attempt.cancelTimer('timeout');
    // Ended by a stop, a timeout or a lost lease: whoever ended it records the outcome.
    if (attempt.ending || !this.owns(attempt) || this.host.halted()) return;
    attempt.settling = true;
    let recorded = false;
    try {
      // A store out of reach (a server restart) fails no attempt: its result stays on disk and is taken once the
      // store answers; its slot stays busy meanwhile. Taking it again is safe: ingestion is idempotent.
      for (let tries = 1; ; tries++) {
        try {
          await this.takeResult(attempt, exit);
          recorded = true;
          return;
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
      await this.fail(attempt.delegationId, `its result could not be taken: ${(err as Error).message}`).then(
        () => (recorded = true),
        (failed: unknown) =>
          this.ctx.log(`${attempt.delegationId}: not recorded as failed: ${(failed as Error).message}`),
      );
    } finally {
      this.forget(attempt, recorded);
      if (attempt.identity)
        this.host.exited({
          delegationId: attempt.delegationId,
          runtimeId: attempt.runtimeId,
          identity: attempt.identity,
        });
    }
  }

  /** Takes an exited worker's result: its artifact (ingested), else its output, else the attempt fails. */
  private async takeResult(attempt: Attempt, exit: WorkerExit): Promise<void> {
    const runId = this.host.runId;
    const delegation = await this.ctx.store.read((r) => getDelegation(r, runId, attempt.delegationId));
    if (!delegation || delegation.status !== 'RUNNING') return; // decided elsewhere meanwhile
    // Before its result is taken: completing it may start dependents that change the shared tree.
    await recordSharedTreeAfter(this.ctx, { runId, delegationId: attempt.delegationId });
    const activity = await attempt.stream?.finish();
    const finalText = activity?.ended?.finalText;
    // An agent that said why it stopped (a refused request, a model error) is quoted.
    const said = activity?.errors.at(-1);
    const usageLimit = attempt.stream?.usageLimit();
    const settled = await settleExitedWorker(
      this.ctx,
      delegation,
      {
        artifactPath: attempt.artifactPath,
        logPath: attempt.logPath,
        ...(attempt.plainCommand ? { plainCommand: attempt.plainCommand } : {}),
        ...(attempt.stream
          ? {
              agent: {
                kind: attempt.stream.agent.kind,
                ...(finalText ? { finalText } : {}),
                ...(usageLimit ? { usageLimit } : {}),
              },
            }
          : {}),
        ...(said ? { said } : {}),
      },
      exit,
    );
    this.ctx.log(`${attempt.delegationId}: ${settled}`);
  }
}
