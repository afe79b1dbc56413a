import type { Clock } from './domain/clock';
import { Emitter, type Disposable } from './domain/emitter';
import type { BeatUsage, EventOf, EventType } from './domain/events';
import { liveAttemptUsage } from './queries/agentUsage';
import { eventsSince, lastEventId, liveRuntimes } from './queries/runView';
import type { StorePort } from './store/port';
import { toRuntime } from './store/rows';

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

/**
 * Announces every change the store's watch reports — commits of this process and of others —
 * as typed events, in commit order: new rows of the event log (each once; a run's in its order),
 * then heartbeats found by comparing the live runtimes' heartbeat counts with the last look.
 */
/**
 * How long a missing event id is waited for before the announcer goes past it. On a shared store writers of different
 * runs commit side by side (docs/team.md, "Concurrency"), so an event can become visible after one with a higher id;
 * an id that never shows up was taken by a transaction that rolled back. A transaction holding an id ends within the
 * server's limits (idle_in_transaction_session_timeout 10 s; it waits on no lock after its first event).
 */
export const EVENT_GAP_WAIT_MS = 30_000;

export class EventAnnouncer implements Disposable {
  private readonly emitter = new Emitter<EngineEvent>();
  /** Every event id up to here was announced, or was never committed (a gap waited out). */
  private lastId = 0;
  /** Ids above lastId already announced: events that committed before a lower id did. */
  private readonly announcedAbove = new Set<number>();
  /** When the id after lastId was first found missing below announced ones (the clock's ms). */
  private gapSince: number | undefined;
  /**
   * With nobody listening, commits leave the log's position where it was (reading it after each one cost a store read
   * per commit); the first listener to come has it read then, before any announcement it could hear.
   */
  private positionStale = false;
  private positionRead: Promise<void> | undefined;
  private readonly beats = new Map<string, number>();
  private announcing: Promise<void> = Promise.resolve();
  private queued = false;
  private readonly subscription: Disposable;

  private constructor(
    private readonly store: StorePort,
    private readonly clock: Clock,
    private readonly log: (line: string) => void,
  ) {
    this.subscription = store.watch(() => {
      if (!this.emitter.hasListeners) {
        this.positionStale = true;
        return;
      }
      // One announcement waiting is enough: it reads everything since the last one.
      if (this.queued) return;
      this.queued = true;
      this.announcing = this.announcing
        .then(() => {
          this.queued = false;
          return this.announce();
        })
        .catch((err: unknown) =>
          this.log(`events not announced (the next change tries again): ${(err as Error).message}`),
        );
    });
  }

  /** Hears every announcement from now on: events committed after this call (in this process) and heartbeats. */
  readonly onEvent = (listener: (event: EngineEvent) => void): Disposable => {
    if (this.positionStale && !this.emitter.hasListeners && !this.positionRead) {
      this.positionStale = false;
      // Asked now, so it queues in the store behind the commits already started and ahead of any started after
      // this call: the listener hears the latter and none of the former.
      const position = this.store.read((r) => lastEventId(r));
      this.positionRead = position.then(
        (lastId) => {
          this.lastId = Math.max(this.lastId, lastId);
          for (const id of this.announcedAbove) if (id <= this.lastId) this.announcedAbove.delete(id);
          this.positionRead = undefined;
        },
        (err: unknown) => {
          this.positionStale = true;
          this.positionRead = undefined;
          this.log(`event log position not read (the next listener tries again): ${(err as Error).message}`);
        },
      );
    }
    return this.emitter.event(listener);
  };

  /** Starts after what the store holds now: a listener hears what happens from here on. */
  static async start(store: StorePort, clock: Clock, log: (line: string) => void): Promise<EventAnnouncer> {
    const announcer = new EventAnnouncer(store, clock, log);
    await store.read(async (r) => {
      announcer.lastId = await lastEventId(r);
      for (const row of await liveRuntimes(r)) announcer.beats.set(row.id, row.heartbeat_count);
    });
    return announcer;
  }

  /** Resolves once what was queued is announced. */
  settled(): Promise<void> {
    return this.announcing;
  }

  dispose(): void {
    this.subscription.dispose();
    this.emitter.dispose();
  }

  /** Announces what changed since the last announcement: new log events, then heartbeats. */
  private async announce(): Promise<void> {
    // A listener's first announcement starts from the log's position as it was when the listener came.
    if (this.positionRead) await this.positionRead;
    // Nobody listens any more (a listener went while this was queued): the position is read when the next one comes.
    // A listener who comes later hears the events from then on, and a heartbeat for each runtime that beat since the
    // last full look (its state as it is now).
    if (!this.emitter.hasListeners) {
      this.positionStale = true;
      return;
    }
    const now = this.clock.now();
    const { events, runtimes, usage } = await this.store.read(async (r) => {
      const live = await liveRuntimes(r);
      // Only when a runtime beat: an agent's spend is written with its heartbeat, in the same transaction.
      const beating = live.some((row) => this.beats.get(row.id) !== row.heartbeat_count);
      return {
        events: await eventsSince(r, this.lastId),
        runtimes: live,
        usage: beating ? await liveAttemptUsage(r) : new Map<string, BeatUsage>(),
      };
    });
    for (const event of events) {
      if (this.announcedAbove.has(event.id)) continue;
      this.announcedAbove.add(event.id);
      this.emitter.fire(event);
    }
    this.advancePosition(now);
    const live = new Set<string>();
    for (const row of runtimes) {
      live.add(row.id);
      if (this.beats.get(row.id) === row.heartbeat_count) continue;
      const first = !this.beats.has(row.id);
      this.beats.set(row.id, row.heartbeat_count);
      if (first && row.heartbeat_count === 0) continue;
      const runtime = toRuntime(row, now);
      const spent = usage.get(`${row.run_id}/${row.delegation_id}`);
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
          ...(runtime.workerBeatAt !== undefined ? { workerBeatAt: runtime.workerBeatAt } : {}),
          ...(spent ? { usage: spent } : {}),
        },
      });
    }
    for (const id of this.beats.keys()) if (!live.has(id)) this.beats.delete(id);
  }

  /**
   * Moves lastId over the ids announced right after it. A missing id below announced ones may still commit (another
   * run's writer): it is read again at each look until it comes, or until EVENT_GAP_WAIT_MS says it never will.
   */
  private advancePosition(now: number): void {
    for (;;) {
      while (this.announcedAbove.delete(this.lastId + 1)) this.lastId++;
      if (this.announcedAbove.size === 0) {
        this.gapSince = undefined;
        return;
      }
      this.gapSince ??= now;
      if (now - this.gapSince < EVENT_GAP_WAIT_MS) return;
      this.lastId = Math.min(...this.announcedAbove) - 1;
      this.gapSince = undefined;
    }
  }
}
