import type { Clock } from '../domain/clock';
import { BatonError } from '../domain/errors';
import type { HandOver } from '../domain/events';
import type { ProcessIdentity } from '../domain/process';
import {
  assertCoordinatorEpoch,
  releaseCoordinatorLease,
  renewCoordinatorLease,
} from '../operations/coordinatorLease/coordinatorLease';
import { joinRun, leaveRun, renewRunPlace } from '../operations/coordinatorLease/runDrivers';
import type { CoordinatorLease } from '../queries/coordinatorLease';
import { fencedStore } from '../store/fenced';
import type { StorePort, StoreReader } from '../store/port';
import type { Fence } from '../usecases/context';
import { takeCoordinatorLease } from '../usecases/coordinatorLiveness';

/** After a renewal failed for a passing reason (the store was busy), try again this soon. */
const RENEWAL_RETRY_MS = 1000;

/**
 * A coordinator's hold on its run (BullMQ's lock manager is the model: a keeper apart from
 * the work loop, renewing on a timer and reporting a lost lock instead of deciding alone).
 * It takes the lease, renews it at a third of its length, and lets it go. It hands out a
 * fenced store — every transaction checks the epoch — and a fence that proves the epoch
 * before a side effect. The first refusal means another coordinator holds the run: the
 * keeper stops renewing and reports the loss once (`onLost`).
 */
export class LeaseKeeper {
  private currentEpoch = 0;
  private acquiredAt = 0;
  private lostDetail: string | undefined;
  private released = false;
  private cancelRenewal: (() => void) | undefined;
  /** The store as this coordinator writes it: every transaction first checks the epoch. */
  readonly store: StorePort;
  readonly fence: Fence;

  constructor(
    private readonly deps: { store: StorePort; clock: Clock; log: (line: string) => void },
    readonly lease: {
      runId: string;
      holder: string;
      identity: ProcessIdentity;
      leaseMs: number;
      foreignGraceMs?: number;
      /**
       * Join the run beside its lease holder (operations/coordinatorLease/runDrivers.ts): a place of its own, renewed
       * and let go like the lease, instead of the lease.
       */
      join?: boolean;
    },
    private readonly onLost: (detail: string) => void,
    /**
     * Told until when the store holds the lease, after each commit that took or renewed it — and, when it is let
     * go or lost, that it has run out (now): the verify commands' watchdogs read it (leaseWatchdog.ts). Returns
     * whether they were told.
     */
    private readonly onHeldUntil: (until: number) => boolean = () => true,
  ) {
    this.store = fencedStore(deps.store, (tx) => this.checkEpoch(tx), { runId: lease.runId });
    this.fence = {
      // A read catches up with every other process first: the epoch it sees is the latest.
      assertHeld: () => deps.store.read((r) => this.checkEpoch(r)),
      heldSince: () => this.acquiredAt,
    };
  }

  get epoch(): number {
    return this.currentEpoch;
  }

  /** Why this coordinator no longer holds the run, once it does not. */
  get lost(): string | undefined {
    return this.lostDetail;
  }

  holds(): boolean {
    return this.currentEpoch > 0 && !this.lostDetail && !this.released;
  }

  /** Takes the lease (or says who holds it) and starts renewing it. */
  async acquire(): Promise<{ acquired: true } | { acquired: false; heldBy: CoordinatorLease; why: string }> {
    const before = this.deps.clock.now();
    const outcome = this.lease.join
      ? {
          acquired: true as const,
          epoch: await this.deps.store.transact((tx) => joinRun(tx, this.lease, this.deps.clock.now())),
        }
      : await takeCoordinatorLease(this.deps.store, this.deps.clock, this.lease);
    if (!outcome.acquired) return outcome;
    this.currentEpoch = outcome.epoch;
    this.acquiredAt = this.deps.clock.now();
    // Taken at `before` or later: the store's deadline is no earlier than this one (early, never late).
    this.onHeldUntil(before + this.lease.leaseMs);
    this.scheduleRenewal(Math.floor(this.lease.leaseMs / 3));
    return { acquired: true };
  }

  /** Another coordinator holds the run now: stop renewing and report it, once. */
  stepDown(detail: string): void {
    if (this.lostDetail) return;
    this.lostDetail = detail;
    this.cancelRenewal?.();
    this.onHeldUntil(this.deps.clock.now());
    this.onLost(detail);
  }

  /**
   * Lets the lease go (a coordinator that lost it has nothing to let go); `handedOver`: with its
   * workers still running, for the successor to adopt.
   */
  async release(handedOver?: HandOver): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.cancelRenewal?.();
    if (this.lostDetail || this.currentEpoch === 0) return;
    // Before the store lets a successor in: what this holder's verify commands still run ends. Untold, they would
    // run until the last deadline: the lease then runs out by itself, and a successor waits for it and their time.
    if (!this.onHeldUntil(this.deps.clock.now())) return;
    const release = { runId: this.lease.runId, epoch: this.currentEpoch, ...(handedOver ? { handedOver } : {}) };
    await this.deps.store
      .transact(
        (tx) =>
          this.lease.join
            ? leaveRun(tx, release, this.deps.clock.now())
            : releaseCoordinatorLease(tx, release, this.deps.clock.now()),
        { runId: this.lease.runId },
      )
      .catch((err: unknown) => {
        // The lease then runs out by itself; a successor takes over after it.
        this.deps.log(`could not release the coordinator lease (it expires by itself): ${(err as Error).message}`);
      });
  }

  private async checkEpoch(tx: Pick<StoreReader, 'get'>): Promise<void> {
    if (this.lostDetail) throw new BatonError('coordinator.superseded', this.lostDetail);
    try {
      await assertCoordinatorEpoch(tx, this.lease.runId, this.currentEpoch);
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) this.stepDown(err.message);
      throw err;
    }
  }

  private scheduleRenewal(delay: number): void {
    this.cancelRenewal = this.deps.clock.setTimer(delay, () => {
      if (this.lostDetail || this.released) return;
      const { runId, leaseMs } = this.lease;
      const now = this.deps.clock.now();
      this.deps.store
        .transact(
          (tx) =>
            (this.lease.join ? renewRunPlace : renewCoordinatorLease)(
              tx,
              { runId, epoch: this.currentEpoch, leaseMs },
              now,
            ),
          { runId },
        )
        .then(
          () => {
            if (this.lostDetail || this.released) return;
            this.onHeldUntil(now + leaseMs);
            this.scheduleRenewal(Math.floor(leaseMs / 3));
          },
          (err: unknown) => {
            if (BatonError.is(err, 'coordinator.superseded')) this.stepDown(err.message);
            else {
              // A passing failure (the store was busy): the lease has two more thirds to go.
              this.deps.log(`coordinator lease not renewed, trying again: ${(err as Error).message}`);
              this.scheduleRenewal(Math.min(RENEWAL_RETRY_MS, Math.floor(leaseMs / 10)));
            }
          },
        );
    });
  }
}
