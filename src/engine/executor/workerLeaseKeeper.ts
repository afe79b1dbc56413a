import { BatonError } from '../domain/errors';
import { isSharedStore } from '../domain/config';
import type { ProcessIdentity } from '../domain/process';
import { startLeaseWatchdog, writeAttemptSettled, writeLeaseDeadline } from '../effects/processes/leaseWatchdog';
import { selfIdentity, workerMarker } from '../effects/processes/processes';
import { runPaths } from '../effects/workspaceLayout';
import { renewWorkerLeases, type LeaseAuthority } from '../operations/runtimes/renewRuntimeLease';
import { lapsedRuntimes } from '../queries/delegations';
import type { StoreTx } from '../store/port';
import type { EngineContext } from '../usecases/context';
import type { Attempt, AttemptIdentity } from './attempt';

/** After a renewal failed for a passing reason (the store was busy), try again this soon. */
const RENEWAL_RETRY_MS = 1000;

/** What the keeper needs from the coordinator it serves. */
export interface WorkerLeaseHost {
  runId: string;
  /** The coordinator's current epoch: the authority its renewals carry. */
  epoch(): number;
  /** The coordinator lost the run: it renews nothing more. */
  lost(): boolean;
  /**
   * A tracked attempt's lease is gone: `expired` — it ran out before the renewal (this process was paused), and the
   * renewal made that official (STALE, the retry policy); `decided` — the attempt was decided elsewhere (ingested by
   * hand, stopped). The keeper no longer tracks it.
   */
  leaseLost(attempt: Attempt, why: 'expired' | 'decided'): void;
}

/**
 * Keeps the leases of the workers a coordinator drives (BullMQ's lock manager: trackJob /
 * untrackJob, one timer, extendLocks for all, lockRenewalFailed): every tracked attempt is
 * renewed at a third of the lease by one batched transaction per tick (`renewWorkerLeases`),
 * with the coordinator's epoch as authority. Whether a lease still holds is judged on the
 * monotonic clock from its last renewal — a wall-clock jump does not end it — and, failing
 * that, on the stored expiry: only a lease that both say ran out is lost, and reported to the
 * supervisor. On a shared store each worker also has a lease watchdog, told the new deadline
 * after every committed renewal.
 */
export class WorkerLeaseKeeper {
  private readonly tracked = new Set<Attempt>();
  private cancelTick: (() => void) | undefined;
  /** When the scheduled tick fires (monotonic), while one is scheduled. */
  private nextTickAt = 0;
  private readonly renewEvery: number;
  private readonly watchdogs: boolean;

  constructor(
    private readonly ctx: EngineContext,
    private readonly host: WorkerLeaseHost,
  ) {
    this.renewEvery = Math.max(1000, Math.floor((ctx.config.leaseSeconds * 1000) / 3));
    this.watchdogs = isSharedStore(ctx.config);
  }

  /** Renew this attempt's lease from the next tick on (a person's hand-off is not renewed: its lease is long). */
  track(attempt: Attempt): void {
    if (attempt.manual) return;
    this.tracked.add(attempt);
    // Its lease ran from its claim: a launch that took a while (a loaded machine) leaves less of it than a tick, so the
    // first renewal comes at a third of what is left, not a whole tick on.
    const left = attempt.leaseUntilMono - this.ctx.clock.monotonic();
    this.schedule(Math.min(this.renewEvery, Math.max(0, Math.floor(left / 3))));
  }

  untrack(attempt: Attempt): void {
    this.tracked.delete(attempt);
    if (this.tracked.size === 0) this.stop();
  }

  /** Renews nothing more (the coordinator lets go, or lost the run). */
  untrackAll(): void {
    this.tracked.clear();
    this.stop();
  }

  private stop(): void {
    this.cancelTick?.();
    this.cancelTick = undefined;
  }

  /** Ticks at `delay` from now, unless a tick is due sooner already. */
  private schedule(delay: number): void {
    const at = this.ctx.clock.monotonic() + delay;
    if (this.cancelTick && this.nextTickAt <= at) return;
    this.cancelTick?.();
    this.nextTickAt = at;
    this.cancelTick = this.ctx.clock.setTimer(delay, () => {
      this.cancelTick = undefined;
      if (this.host.lost()) return;
      void this.renewAll().then((next) => {
        if (next !== undefined && this.tracked.size > 0) this.schedule(next);
      });
    });
  }

  /** One transaction for every tracked lease; returns when to renew next (undefined: the coordinator lost the run). */
  private async renewAll(): Promise<number | undefined> {
    const due = [...this.tracked].filter((a) => !a.ending);
    if (due.length === 0) return this.renewEvery;
    // Judged when the transaction runs, not when the timer fired: the process may have been paused in between.
    let renewedAtMono = 0;
    let renewedAt = 0;
    let outcomes;
    try {
      outcomes = await this.ctx.store.transact((tx) => {
        renewedAtMono = this.ctx.clock.monotonic();
        renewedAt = this.ctx.clock.now();
        const renewals = due.map((a) => ({
          runtimeId: a.runtimeId,
          authority: this.authority({ withinLease: renewedAtMono < a.leaseUntilMono }),
        }));
        return renewWorkerLeases(tx, renewals, renewedAt);
      });
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) return undefined;
      this.ctx.log(`worker leases not renewed, trying again: ${(err as Error).message}`);
      return Math.min(this.renewEvery, RENEWAL_RETRY_MS);
    }
    outcomes.forEach((outcome, i) => {
      const attempt = due[i]!;
      if (outcome.renewed) {
        attempt.leaseUntilMono = renewedAtMono + attempt.leaseMs;
        this.recordDeadline(attempt, renewedAt + attempt.leaseMs);
        return;
      }
      if (!this.tracked.has(attempt)) return;
      const { error } = outcome;
      const lost =
        error.code === 'runtime.lease-expired' ? 'expired' : error.code === 'runtime.not-live' ? 'decided' : undefined;
      // Neither ran out nor was decided: a passing refusal; the next tick tries again.
      if (!lost) return this.ctx.log(`${attempt.delegationId}: lease not renewed, trying again: ${error.message}`);
      if (lost === 'expired') this.ctx.log(`${attempt.delegationId}: ${error.message}`);
      this.untrack(attempt);
      this.host.leaseLost(attempt, lost);
    });
    return this.renewEvery;
  }

  private authority(extra: { withinLease: boolean; until?: number }): LeaseAuthority {
    return { holder: 'coordinator', runId: this.host.runId, epoch: this.host.epoch(), ...extra };
  }

  /**
   * A lease this coordinator renews on time (monotonic) is not expired by a wall-clock jump:
   * it is restated, inside the caller's transaction, before stale leases are expired. Only
   * when needed: any write is a journaled commit, and a commit wakes the coordinator again.
   */
  async restate(tx: StoreTx, now: number): Promise<void> {
    const mono = this.ctx.clock.monotonic();
    const live = [...this.tracked].filter((a) => !a.ending && mono < a.leaseUntilMono);
    if (live.length === 0) return;
    const lapsed = await lapsedRuntimes(
      tx,
      live.map((a) => a.runtimeId),
      now,
    );
    if (lapsed.size === 0) return;
    const authority = this.authority({ withinLease: true });
    const renewals = [...lapsed].map((runtimeId) => ({ runtimeId, authority, beat: false }));
    await renewWorkerLeases(tx, renewals, now);
  }

  /**
   * The coordinator hands the run over with these workers running: their leases are held until
   * `until` (a task timeout from now), so that a successor that comes later than one lease
   * length still adopts them. Returns whether the store took it.
   */
  async holdForHandOver(attempts: readonly Attempt[], until: number): Promise<boolean> {
    if (attempts.length === 0) return true;
    const now = this.ctx.clock.now();
    const authority = this.authority({ withinLease: true, until });
    try {
      // An attempt ended meanwhile (its exit is being recorded) is refused alone: nothing of it to hold.
      await this.ctx.store.transact((tx) =>
        renewWorkerLeases(
          tx,
          attempts.map((a) => ({ runtimeId: a.runtimeId, authority, beat: false })),
          now,
        ),
      );
    } catch (err) {
      // Their leases then run out by themselves; a successor within one lease still adopts them.
      this.ctx.log(`hand-over: the workers' leases were not extended: ${(err as Error).message}`);
      return false;
    }
    for (const attempt of attempts) this.recordDeadline(attempt, until);
    return true;
  }

  /**
   * On a shared store: starts the worker's lease watchdog, once the store recorded the worker
   * and before it runs (a successor on another machine relies on it: docs/team.md, "Failover").
   * `leaseUntil` is the lease the store holds for it now (wall clock).
   */
  guardWithWatchdog(attempt: AttemptIdentity & { identity: ProcessIdentity }, leaseUntil: number): void {
    if (!this.watchdogs) return;
    if (!this.ctx.cliPath) {
      this.ctx.log(
        `${attempt.delegationId}: no lease watchdog (no baton CLI to run it); a successor on another machine may run the task again while it runs`,
      );
      return;
    }
    this.recordDeadline(attempt, leaseUntil);
    // Its watchdog hands in what the worker leaves when it ends (domain/handIn.ts) — holding the store's access, which
    // only a worker that cannot see it (a PID namespace of its own) may have beside it.
    const handIn =
      this.ctx.storeAccess && attempt.watchdogKey && attempt.identity.pidNamespace
        ? {
            workspace: this.ctx.workspace,
            runId: this.host.runId,
            delegationId: attempt.delegationId,
            runtimeId: attempt.runtimeId,
            host: attempt.identity.host,
            logPath: attempt.logPath,
            maxArtifactBytes: this.ctx.config.maxArtifactBytes,
          }
        : undefined;
    startLeaseWatchdog(
      this.ctx.cliPath,
      {
        kind: 'worker',
        workspace: this.ctx.workspace,
        marker: workerMarker(attempt.runtimeId),
        delegationId: attempt.delegationId,
        identity: attempt.identity,
        deadlinePath: runPaths(this.ctx.workspace, this.host.runId).leaseDeadline(attempt.delegationId),
        logPath: attempt.logPath,
        graceMs: this.ctx.config.stopGraceSeconds * 1000,
        ...(handIn ? { handIn, coordinator: selfIdentity() } : {}),
      },
      attempt.watchdogKey,
      handIn ? this.ctx.storeAccess : undefined,
    );
  }

  /**
   * Tells the attempt's watchdog that this coordinator is done with the attempt (its end settled, or decided
   * elsewhere): the watchdog hands nothing in (usecases/handIn.ts). A failed write only costs a hand-in the store
   * refuses (the runtime has ended).
   */
  recordSettled(attempt: Pick<AttemptIdentity, 'delegationId' | 'manual' | 'watchdogKey'>): void {
    if (!this.watchdogs || attempt.manual || !attempt.watchdogKey || !this.ctx.storeAccess) return;
    try {
      writeAttemptSettled(
        this.ctx.workspace,
        runPaths(this.ctx.workspace, this.host.runId).leaseDeadline(attempt.delegationId),
        { key: attempt.watchdogKey, subject: attempt.delegationId },
      );
    } catch (err) {
      this.ctx.log(`${attempt.delegationId}: its lease watchdog was not told it is settled: ${(err as Error).message}`);
    }
  }

  /**
   * Tells the attempt's watchdog until when the store now holds its lease: only after the store
   * committed it, so the watchdog never lets a worker run past a lease another host could see
   * as expired. A failed write leaves the older deadline: the worker is ended early, never late.
   */
  recordDeadline(attempt: Pick<AttemptIdentity, 'delegationId' | 'manual' | 'watchdogKey'>, leaseUntil: number): void {
    if (!this.watchdogs || attempt.manual) return;
    try {
      const path = runPaths(this.ctx.workspace, this.host.runId).leaseDeadline(attempt.delegationId);
      // Signed with the attempt's key: its watchdog takes no deadline the worker wrote (an attempt launched before the
      // key existed has an unsigned one, as its watchdog expects).
      const signing = attempt.watchdogKey ? { key: attempt.watchdogKey, subject: attempt.delegationId } : undefined;
      // In this machine's time: the watchdog compares it with its own wall clock.
      const local = this.ctx.clock.toLocal?.(leaseUntil) ?? leaseUntil;
      writeLeaseDeadline(this.ctx.workspace, path, local, signing);
    } catch (err) {
      this.ctx.log(
        `${attempt.delegationId}: its lease watchdog was not told of the renewal: ${(err as Error).message}`,
      );
    }
  }
}
