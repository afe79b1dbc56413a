import type { Clock } from '../domain/clock';
import type { WorkerRuntime } from '../domain/types';
import { renewWorkerLeases, type RenewLeaseOutcome, type WorkerBeat } from '../operations/runtimes/renewRuntimeLease';
import type { StorePort } from '../store/port';

export type { WorkerBeat };

interface PendingBeat {
  beat: WorkerBeat;
  resolve: (runtime: WorkerRuntime) => void;
  reject: (err: unknown) => void;
}

/** Enough to keep one transaction short under the store's lock. */
const MAX_BEATS_PER_COMMIT = 256;

/**
 * Workers' heartbeats through one engine, committed together: a beat that arrives while a commit is under way
 * waits for the next one, which carries every beat queued by then (a group commit, as the file store groups its
 * journal lines). A process that holds many resident workers then makes a few commits a second instead of one
 * per beat (docs/team.md, "Throughput").
 *
 * Each beat is still its own decision (operations/runtimes/renewRuntimeLease.ts, renewWorkerLeases): renewed, or
 * refused with its own error (wrong token, not live, lease expired — the expiry it makes official commits with the
 * others). A beat resolves only once the commit that carries it is durable; a commit that fails rejects every beat
 * in it, none of which was written.
 */
export class HeartbeatBatch {
  private queue: PendingBeat[] = [];
  private committing: Promise<void> | undefined;

  constructor(
    private readonly store: StorePort,
    private readonly clock: Clock,
  ) {}

  renew(beat: WorkerBeat): Promise<WorkerRuntime> {
    return new Promise((resolve, reject) => {
      this.queue.push({ beat, resolve, reject });
      // Cleared by the loop itself, in the same turn it sees the queue empty: a beat sent from a settled beat's
      // callback starts the next loop instead of waiting behind one that has ended.
      this.committing ??= this.commitQueued();
    });
  }

  /** Resolves once every beat sent so far has its outcome. */
  async settled(): Promise<void> {
    await this.committing;
  }

  private async commitQueued(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BEATS_PER_COMMIT);
        let outcomes: RenewLeaseOutcome[];
        try {
          outcomes = await this.store.transact((tx) =>
            renewWorkerLeases(
              tx,
              batch.map(({ beat }) => beat),
              this.clock.now(),
            ),
          );
        } catch (err) {
          for (const pending of batch) pending.reject(err);
          continue;
        }
        outcomes.forEach((outcome, i) => {
          const pending = batch[i]!;
          if (outcome.renewed) pending.resolve(outcome.runtime);
          else pending.reject(outcome.error);
        });
      }
    } finally {
      this.committing = undefined;
    }
  }
}
