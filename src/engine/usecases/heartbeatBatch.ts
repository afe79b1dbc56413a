import type { Clock } from '../domain/clock';
import type { WorkerRuntime } from '../domain/types';
import { renewWorkerLeases, type RenewLeaseOutcome, type WorkerBeat } from '../operations/runtimes/renewRuntimeLease';
import type { StorePort } from '../store/port';
import { runsOfRuntimes } from '../queries/runtimes';

export type { WorkerBeat };

interface PendingBeat {
  beat: WorkerBeat;
  resolve: (runtime: WorkerRuntime) => void;
  reject: (err: unknown) => void;
}

/** Enough to keep one transaction short under the store's lock. */
const MAX_BEATS_PER_COMMIT = 256;

/** How many runtimes' runs a batch remembers (a run of a runtime never changes; the map only saves a read). */
const REMEMBERED_RUNTIMES = 10_000;

/**
 * Workers' heartbeats through one engine, committed together: a beat that arrives while a commit is under way
 * waits for the next one, which carries every beat queued by then (a group commit, as the file store groups its
 * journal lines). A process that holds many resident workers then makes a few commits a second instead of one
 * per beat (docs/team.md, "Throughput").
 *
 * Each beat is still its own decision (operations/runtimes/renewRuntimeLease.ts, renewWorkerLeases): renewed, or
 * refused with its own error (wrong token, not live, lease expired — the expiry it makes official commits with the
 * others). A beat resolves only once the commit that carries it is durable; a commit that fails rejects every beat
 * in it, none of which was written. A batch commits one transaction per run, scoped to it (store/port.ts,
 * WriteScope): on a shared store, beats of different runs do not wait for each other.
 */
export class HeartbeatBatch {
  private queue: PendingBeat[] = [];
  private committing: Promise<void> | undefined;
  private readonly runOf = new Map<string, string>();

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

  /** The run a runtime belongs to, known from its claim: its beats need no read to find it. */
  remember(runtimeId: string, runId: string): void {
    if (this.runOf.size >= REMEMBERED_RUNTIMES) this.runOf.clear();
    this.runOf.set(runtimeId, runId);
  }

  /** Resolves once every beat sent so far has its outcome. */
  async settled(): Promise<void> {
    await this.committing;
  }

  private async commitQueued(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BEATS_PER_COMMIT);
        let byRun: Map<string | undefined, PendingBeat[]>;
        try {
          byRun = await this.groupByRun(batch);
        } catch (err) {
          for (const pending of batch) pending.reject(err);
          continue;
        }
        // One commit per run, scoped to it (docs/team.md, "Concurrency"): a beat touches only its runtime's run. Beats
        // of runtimes the store does not know commit unscoped, and are refused there.
        for (const [runId, beats] of byRun) await this.commitBeats(beats, runId);
      }
    } finally {
      this.committing = undefined;
    }
  }

  private async groupByRun(batch: PendingBeat[]): Promise<Map<string | undefined, PendingBeat[]>> {
    const unknown = [...new Set(batch.map(({ beat }) => beat.runtimeId).filter((id) => !this.runOf.has(id)))];
    if (unknown.length > 0) {
      const found = await this.store.read((r) => runsOfRuntimes(r, unknown));
      for (const { id, run_id } of found) this.remember(id, run_id);
    }
    const byRun = new Map<string | undefined, PendingBeat[]>();
    for (const pending of batch) {
      const runId = this.runOf.get(pending.beat.runtimeId);
      const beats = byRun.get(runId);
      if (beats) beats.push(pending);
      else byRun.set(runId, [pending]);
    }
    return byRun;
  }

  private async commitBeats(beats: PendingBeat[], runId: string | undefined): Promise<void> {
    let outcomes: RenewLeaseOutcome[];
    try {
      outcomes = await this.store.transact(
        (tx) =>
          renewWorkerLeases(
            tx,
            beats.map(({ beat }) => beat),
            this.clock.now(),
          ),
        runId !== undefined ? { runId } : undefined,
      );
    } catch (err) {
      for (const pending of beats) pending.reject(err);
      return;
    }
    outcomes.forEach((outcome, i) => {
      const pending = beats[i]!;
      if (outcome.renewed) pending.resolve(outcome.runtime);
      else pending.reject(outcome.error);
    });
  }
}
