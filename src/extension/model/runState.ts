import type {
  AttemptEnds,
  Clock,
  Delegation,
  Disposable,
  Engine,
  EngineEvent,
  EventMap,
  Gate,
  IngestionRecord,
  Run,
  RunEvent,
  RunOverview,
  WorkerRuntime,
} from '../../engine/index';
import { attemptEndsOf, Emitter, isCoordinatorLive } from '../../engine/index';

/** What a heartbeat carries (announced from the runtimes' state; not in the event log). */
type HeartbeatPayload = EventMap['runtime:heartbeat'];

/**
 * What changed in one publication of the run state. Keys of tasks, runtimes, beats and gates
 * are `runId/id`, so a consumer picks out its run without a lookup.
 */
export interface RunStateChange {
  /**
   * The shared clock of this publication. Every surface (the Runs and Workers views, the
   * dashboard) shows ages and durations as of it until the next publication, so they agree.
   */
  readonly now: number;
  /** The list of runs changed (a run appeared or went, or their order): trees refresh from the root. */
  readonly structure: boolean;
  /** Runs whose own facts changed: status, plan, or the tally of their tasks by status. */
  readonly runs: ReadonlySet<string>;
  /** `runId/taskId`: the task or one of its attempts changed (or it appeared, or its isolation became known). */
  readonly tasks: ReadonlySet<string>;
  /** `runId/runtimeId`: a runtime appeared, went or changed, as read from the store. */
  readonly runtimes: ReadonlySet<string>;
  /** `runId/runtimeId`: a heartbeat applied from its event (count, time, lease, progress) — no store read. */
  readonly beats: ReadonlySet<string>;
  /** `runId/gateId`: a gate opened or changed. */
  readonly gates: ReadonlySet<string>;
  /** Followed runs with new log events. */
  readonly events: ReadonlySet<string>;
  /** Runs whose ingestion records changed (or were read for the first time). */
  readonly ingestions: ReadonlySet<string>;
}

export interface RunStateOptions {
  /**
   * The cache's timers (coalescing, publication gaps, ticks, a lease's expiry) and the gaps it
   * measures run on this clock's monotonic time: the engine's `Clock`, so tests drive it with a
   * fake one. The wall time a publication carries is the engine's (`engine.now()`), the clock its
   * records are stamped with — give both the same clock.
   */
  clock: Clock;
  /** Engine events are coalesced this long into one store read, while something shows. */
  coalesceMs?: number;
  /** While nothing shows (no Baton view, no dashboard) reads wait this long: the status bar follows, late. */
  hiddenMs?: number;
  /**
   * Two publications are at least this far apart. VS Code's extension host debounces a tree's
   * onDidChangeTreeData over 200 ms — it shows the first change at once and holds every change
   * that follows within 200 ms until 200 ms pass without one — so publications further apart
   * than that are each shown at once, and a stream of heartbeats never holds a view back.
   */
  publishGapMs?: number;
  /** With nothing else to publish, the shared clock moves on this long after the last publication. */
  tickMs?: number;
  /** The newest runs held (runs a consumer follows are held too). */
  maxRuns?: number;
  /** Log events held per followed run (the newest). */
  eventsKept?: number;
  /** A store read failed (the next engine event tries again). */
  onError?: (err: unknown) => void;
}

const DEFAULTS = {
  coalesceMs: 250,
  hiddenMs: 3000,
  publishGapMs: 250,
  tickMs: 1000,
  maxRuns: 10,
  eventsKept: 2000,
};

/** A tick is not put in the 250 ms before a runtime's expected next beat (nor 50 ms after): see `tickTime`. */
const BEAT_GUARD_BEFORE_MS = 250;
const BEAT_GUARD_AFTER_MS = 50;
const EVENTS_PAGE = 10_000;
const LEASE_EXPIRY_MARGIN_MS = 50;
/** A read pass that failed is tried again, each time later (doubling from the coalescing wait), at most this late. */
const READ_RETRY_MAX_MS = 5000;

interface RunEntry {
  overview: RunOverview;
  /** Whether a live coordinator held the run as of this read: time alone can flip it (at the lease's expiry). */
  coordinatorLive: boolean;
  ingestions?: readonly IngestionRecord[];
  /** Followed runs: delegations that ran in their own worktree. */
  worktrees?: ReadonlySet<string>;
}

interface ReadWork {
  list: boolean;
  all: boolean;
  runs: Set<string>;
  ingestions: Set<string>;
  events: Set<string>;
}

class PendingChange {
  structure = false;
  readonly runs = new Set<string>();
  readonly tasks = new Set<string>();
  readonly runtimes = new Set<string>();
  readonly beats = new Set<string>();
  readonly gates = new Set<string>();
  readonly events = new Set<string>();
  readonly ingestions = new Set<string>();

  get empty(): boolean {
    return !this.structure && this.sets().every((s) => s.size === 0);
  }

  get onlyBeats(): boolean {
    return !this.structure && this.sets().every((s) => s === this.beats || s.size === 0);
  }

  merge(other: PendingChange): void {
    this.structure ||= other.structure;
    const mine = this.sets();
    other.sets().forEach((set, i) => set.forEach((k) => mine[i]!.add(k)));
  }

  private sets(): Array<Set<string>> {
    return [this.runs, this.tasks, this.runtimes, this.beats, this.gates, this.events, this.ingestions];
  }
}

const emptyWork = (): ReadWork => ({
  list: false,
  all: false,
  runs: new Set(),
  ingestions: new Set(),
  events: new Set(),
});

/** Adds `more` to `into`: what a failed read pass was to read is read by the next one. */
function mergeWork(into: ReadWork, more: ReadWork): void {
  into.list ||= more.list;
  into.all ||= more.all;
  for (const key of ['runs', 'ingestions', 'events'] as const) more[key].forEach((id) => into[key].add(id));
}

/** Whether a publication only moved the clock on. */
export function isTick(change: RunStateChange): boolean {
  return (
    !change.structure &&
    [change.runs, change.tasks, change.runtimes, change.beats, change.gates, change.events, change.ingestions].every(
      (s) => s.size === 0,
    )
  );
}

/** A runtime holding a lease or waiting for one to run out (not ended, not held at a gate). */
export function isLiveRuntime(r: WorkerRuntime): boolean {
  return r.status === 'claimed' || r.status === 'active' || r.status === 'stale';
}

/**
 * The extension's one picture of the runs (CONVENTIONS: model first, tree second): the Runs,
 * Workers and Gates views, the status bar, the diagnostics and the dashboard all map from it;
 * none reads the store or keeps a timer of its own.
 *
 * It subscribes once to the engine's events. A heartbeat is applied from its event (no read)
 * and published at once; any other event marks its run, and a burst of them is coalesced into
 * one read pass (`coalesceMs`; `hiddenMs` while nothing shows) that re-reads only the marked
 * runs and reports precisely what changed. Every publication carries the shared `now`; while
 * something shows, a publication without news (a tick) moves it on `tickMs` after the last one.
 * Every timer is on the injected clock (`options.clock`), never `setTimeout`: no vscode here, and
 * the unit tests drive it against a real engine on a fake clock that they move, without sleeping.
 */
export class RunStateCache implements Disposable {
  private readonly changed = new Emitter<RunStateChange>();
  /** Fired once per publication, with what changed since the previous one. */
  readonly onDidChange = this.changed.event;
  private readonly options: typeof DEFAULTS & Pick<RunStateOptions, 'onError'>;
  private readonly clock: Clock;
  private list: Run[] = [];
  private readonly entries = new Map<string, RunEntry>();
  /** The newest beat seen of each runtime, re-applied over a read that started before it. */
  private readonly latestBeats = new Map<string, HeartbeatPayload & { at: number }>();
  /** When each runtime last beat (monotonic) and the gap before that: ticks keep clear of the next beat. */
  private readonly rhythm = new Map<string, { at: number; every?: number }>();
  private readonly followers = new Map<string, number>();
  /** Followed runs' newest log events (ascending seq); `loaded` once the store's part was read. */
  private readonly eventLogs = new Map<string, { loaded: boolean; events: RunEvent[] }>();
  private readonly attemptsMemo = new WeakMap<RunOverview, Map<string, Delegation[]>>();
  private readonly endsMemo = new WeakMap<RunOverview, ReadonlyMap<string, AttemptEnds>>();
  private dirty: ReadWork = { ...emptyWork(), list: true, all: true };
  private pending = new PendingChange();
  private readonly visibleSources = new Set<string>();
  /** Each timer is the cancel function the clock gave for it. */
  private readTimer: (() => void) | undefined;
  private publishTimer: (() => void) | undefined;
  private tickTimer: (() => void) | undefined;
  /** At the earliest expiry of a held coordinator lease: the run is read again and its shown state may flip. */
  private leaseTimer: { at: number; cancel: () => void } | undefined;
  private reading: Promise<void> | undefined;
  /** Work the cache started by itself that has not ended yet (read passes, a catch-up): see `settled`. */
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Read passes that failed in a row (the store busy under load): the retry waits longer each time. */
  private failedReads = 0;
  private lastPublishedAt = -Infinity;
  private shared: number;
  private readonly subscription: Disposable;
  private disposed = false;

  constructor(
    private readonly engine: Engine,
    options: RunStateOptions,
  ) {
    this.clock = options.clock;
    this.options = {
      coalesceMs: options.coalesceMs ?? DEFAULTS.coalesceMs,
      hiddenMs: options.hiddenMs ?? DEFAULTS.hiddenMs,
      publishGapMs: options.publishGapMs ?? DEFAULTS.publishGapMs,
      tickMs: options.tickMs ?? DEFAULTS.tickMs,
      maxRuns: options.maxRuns ?? DEFAULTS.maxRuns,
      eventsKept: options.eventsKept ?? DEFAULTS.eventsKept,
      ...(options.onError ? { onError: options.onError } : {}),
    };
    this.shared = engine.now();
    this.subscription = engine.onEvent((e) => this.onEngineEvent(e));
  }

  // ── what the consumers map from ─────────────────────────────────────────

  /** The shared clock: the `now` of the last publication. */
  get now(): number {
    return this.shared;
  }

  /** The newest runs, newest first (and any run a consumer follows). */
  get runs(): readonly Run[] {
    return this.list;
  }

  overview(runId: string): RunOverview | undefined {
    return this.entries.get(runId)?.overview;
  }

  /** A task's attempts (delegations), oldest first. */
  attempts(runId: string, taskId: string): readonly Delegation[] {
    const overview = this.entries.get(runId)?.overview;
    if (!overview) return [];
    let byTask = this.attemptsMemo.get(overview);
    if (!byTask) {
      byTask = new Map();
      for (const d of overview.delegations) {
        const list = byTask.get(d.taskId);
        if (list) list.push(d);
        else byTask.set(d.taskId, [d]);
      }
      this.attemptsMemo.set(overview, byTask);
    }
    return byTask.get(taskId) ?? [];
  }

  /** When each attempt's worker ended and when it began to wait at a gate (its run time ends there: attemptSpan). */
  attemptEnds(runId: string): ReadonlyMap<string, AttemptEnds> {
    const overview = this.entries.get(runId)?.overview;
    if (!overview) return new Map();
    let ends = this.endsMemo.get(overview);
    if (!ends) {
      ends = attemptEndsOf(overview);
      this.endsMemo.set(overview, ends);
    }
    return ends;
  }

  /** Live runtimes (claimed, active, stale) of every held run, with their task. */
  liveRuntimes(): Array<WorkerRuntime & { taskId: string }> {
    const out: Array<WorkerRuntime & { taskId: string }> = [];
    for (const run of this.list) {
      const view = this.entries.get(run.id)?.overview;
      if (!view) continue;
      for (const r of view.runtimes) if (isLiveRuntime(r)) out.push({ ...r, taskId: taskOf(view, r.delegationId) });
    }
    return out;
  }

  /** One live runtime, with its task (undefined when it is not held or not live). */
  liveRuntime(runId: string, runtimeId: string): (WorkerRuntime & { taskId: string }) | undefined {
    const view = this.entries.get(runId)?.overview;
    const r = view?.runtimes.find((x) => x.id === runtimeId);
    return view && r && isLiveRuntime(r) ? { ...r, taskId: taskOf(view, r.delegationId) } : undefined;
  }

  openGates(): Gate[] {
    return this.list.flatMap(
      (run) => this.entries.get(run.id)?.overview.gates.filter((g) => g.status === 'open') ?? [],
    );
  }

  /** A run's ingestion records, oldest first (undefined until read). */
  ingestions(runId: string): readonly IngestionRecord[] | undefined {
    return this.entries.get(runId)?.ingestions;
  }

  /** A followed run's newest log events, oldest first. */
  events(runId: string): readonly RunEvent[] {
    return this.eventLogs.get(runId)?.events ?? [];
  }

  /** Delegations of a followed run that ran in their own worktree. */
  worktreeDelegations(runId: string): ReadonlySet<string> {
    return this.entries.get(runId)?.worktrees ?? new Set();
  }

  get workspace(): string {
    return this.engine.workspace;
  }

  /** The workspace's Baton settings (not a store read). */
  get config(): Engine['config'] {
    return this.engine.config;
  }

  /** One task's attempts, receipts, logs and ingestions: read on request (the dashboard's details). */
  taskRecord(runId: string, taskId: string): ReturnType<Engine['taskRecord']> {
    return this.engine.taskRecord(runId, taskId);
  }

  // ── what the consumers tell it ──────────────────────────────────────────

  /**
   * A surface showing (a view, the dashboard) or not. While none shows, reads wait `hiddenMs`,
   * heartbeats wait for the next read and the clock stands still; when one shows again, it
   * catches up at once.
   */
  setVisible(source: string, visible: boolean): void {
    const was = this.visible;
    if (visible) this.visibleSources.add(source);
    else this.visibleSources.delete(source);
    if (was === this.visible || this.disposed) return;
    if (this.visible) void this.track(this.catchUp());
    else {
      this.clearTick();
      if (this.readTimer) {
        this.readTimer();
        this.readTimer = undefined;
        this.scheduleRead();
      }
    }
  }

  get visible(): boolean {
    return this.visibleSources.size > 0;
  }

  /** A surface shows again: what is pending is read now, and a publication (a tick if nothing else) moves the clock. */
  private async catchUp(): Promise<void> {
    if (this.readTimer || this.isDirty()) await this.read();
    if (this.visible) this.publishSoon(0, true);
  }

  /** Hold this run (even when it is not among the newest) with its log events and worktrees, until disposed. */
  follow(runId: string): Disposable {
    this.followers.set(runId, (this.followers.get(runId) ?? 0) + 1);
    // Created before the store's part is read, so that no event falls between the two.
    if (!this.eventLogs.has(runId)) this.eventLogs.set(runId, { loaded: false, events: [] });
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        const count = (this.followers.get(runId) ?? 1) - 1;
        if (count > 0) {
          this.followers.set(runId, count);
          return;
        }
        this.followers.delete(runId);
        this.eventLogs.delete(runId);
        const entry = this.entries.get(runId);
        if (entry) delete entry.worktrees;
      },
    };
  }

  /**
   * Brings the cache up to date now: everything pending, and the run (with its details, when
   * followed) if it is not held yet. What it read is published before this returns.
   */
  async load(runId?: string): Promise<void> {
    if (runId && (!this.entries.has(runId) || this.needsDetails(runId))) this.dirty.runs.add(runId);
    if (this.isDirty()) await this.read();
    else if (this.reading) await this.reading;
    this.publishNow();
  }

  /** Reads every held run again now (first show, after a command). */
  async refreshNow(): Promise<void> {
    this.dirty.list = true;
    this.dirty.all = true;
    await this.read();
    this.publishNow();
  }

  /**
   * Resolves once the work the cache started by itself has ended — a read pass a timer began
   * (and any read chained to it), a catch-up — so that what it read is held and its publication
   * is on the clock. The clock's timers are not waited for: on a fake clock, a test moves the
   * clock and then waits here before it looks.
   */
  async settled(): Promise<void> {
    do {
      while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
      // A listener may chain work of its own to what ended (the dashboard's snapshot loads the run it follows).
      await new Promise<void>((resolve) => setImmediate(resolve));
    } while (this.inFlight.size > 0);
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const ended = (): void => {
      this.inFlight.delete(work);
    };
    work.then(ended, ended);
    return work;
  }

  dispose(): void {
    this.disposed = true;
    for (const cancel of [this.readTimer, this.publishTimer, this.tickTimer, this.leaseTimer?.cancel]) cancel?.();
    this.subscription.dispose();
    this.changed.dispose();
  }

  // ── engine events ───────────────────────────────────────────────────────

  private onEngineEvent(e: EngineEvent): void {
    if (this.disposed) return;
    if (e.type === 'runtime:heartbeat') {
      if (this.applyBeat(e.runId, e.data, e.at)) return;
    } else {
      if (e.type === 'run:created' || e.type === 'run:replanned') this.dirty.list = true;
      if (e.type === 'ingestion:recorded') this.dirty.ingestions.add(e.runId);
      if (e.seq !== undefined) this.appendEvent(e);
    }
    // Anything else (or a beat of a runtime not held yet) is read from the store.
    this.dirty.runs.add(e.runId);
    this.scheduleRead();
  }

  /** Applies a heartbeat to the held runtime; false when the runtime is not held (a read brings it). */
  private applyBeat(runId: string, beat: HeartbeatPayload, at: number): boolean {
    const entry = this.entries.get(runId);
    const index = entry?.overview.runtimes.findIndex((r) => r.id === beat.runtimeId) ?? -1;
    if (!entry || index < 0) return false;
    const runtime = entry.overview.runtimes[index]!;
    if (beat.heartbeatCount <= runtime.heartbeatCount) return true; // an older beat, late
    this.latestBeats.set(runtime.id, { ...beat, at });
    const runtimes = [...entry.overview.runtimes];
    runtimes[index] = withBeat(runtime, beat, at);
    entry.overview = { ...entry.overview, runtimes };
    if (beat.usage) {
      // An agent's spend moves its task's and its run's figures in every view; a row not held yet is read.
      const spent = withBeatUsage(entry.overview, beat.delegationId, beat.usage, at);
      if (!spent) {
        this.dirty.runs.add(runId);
        this.scheduleRead();
      } else if (spent.changed) {
        entry.overview = spent.overview;
        this.pending.tasks.add(`${runId}/${spent.taskId}`);
      }
    }
    const seen = this.clock.monotonic();
    const before = this.rhythm.get(runtime.id);
    this.rhythm.set(runtime.id, { at: seen, ...(before ? { every: seen - before.at } : {}) });
    this.pending.beats.add(`${runId}/${runtime.id}`);
    // Hidden: no view needs the beat now; it goes out with the next read, or when a view shows.
    if (this.visible) this.publishSoon(this.options.publishGapMs);
    return true;
  }

  private appendEvent(e: EngineEvent): void {
    const log = this.eventLogs.get(e.runId);
    if (!log) return;
    const last = log.events.at(-1)?.seq ?? 0;
    if (!isLogged(e) || e.seq <= last) return;
    log.events.push(e);
    if (log.events.length > this.options.eventsKept) log.events.splice(0, log.events.length - this.options.eventsKept);
    // Published with the read this event causes, so the timeline and the tasks move together.
    if (log.loaded) this.dirty.events.add(e.runId);
  }

  // ── reading ─────────────────────────────────────────────────────────────

  private isDirty(): boolean {
    const d = this.dirty;
    return d.list || d.all || d.runs.size > 0;
  }

  private needsDetails(runId: string): boolean {
    return this.followers.has(runId) && (!this.eventLogs.get(runId)?.loaded || !this.entries.get(runId)?.worktrees);
  }

  /**
   * The coalescing rule: the first event after a read starts one timer, and the events that
   * follow join the read it triggers — they never push it back. A constant stream of events
   * (a busy run) is read every `coalesceMs` plus the read's own time, never starved until the
   * stream pauses. After failed reads the wait doubles, up to READ_RETRY_MAX_MS.
   */
  private scheduleRead(): void {
    if (this.readTimer || this.disposed) return;
    const wait = this.visible ? this.options.coalesceMs : this.options.hiddenMs;
    const retry = this.failedReads > 0 ? Math.min(wait * 2 ** (this.failedReads - 1), READ_RETRY_MAX_MS) : 0;
    this.readTimer = this.clock.setTimer(Math.max(wait, retry), () => {
      this.readTimer = undefined;
      void this.read();
    });
  }

  /** One read pass of everything marked so far (after the one in flight, if any). */
  private read(): Promise<void> {
    if (this.readTimer) {
      this.readTimer();
      this.readTimer = undefined;
    }
    if (this.reading) return this.track(this.reading.then(() => (this.isDirty() ? this.read() : undefined)));
    const work = this.dirty;
    this.dirty = emptyWork();
    const reading = this.readPass(work)
      .then(() => {
        this.failedReads = 0;
      })
      .catch((err: unknown) => {
        if (this.disposed) return;
        // What it was to read is read again, without waiting for another event: a run whose read failed (the store
        // busy, its lock held by another process under load) would otherwise stay stale until its next event —
        // and a run whose workers only beat has none for minutes.
        mergeWork(this.dirty, work);
        this.failedReads++;
        this.options.onError?.(err);
      })
      .finally(() => {
        this.reading = undefined;
        if (this.disposed) return;
        if (this.isDirty()) this.scheduleRead();
        this.scheduleLeaseExpiry();
        this.publishSoon(this.options.publishGapMs);
      });
    this.reading = reading;
    return this.track(reading);
  }

  private async readPass(work: ReadWork): Promise<void> {
    const change = new PendingChange();
    try {
      if (work.list || [...work.runs].some((id) => !this.entries.has(id))) await this.readList(work, change);
      const held = new Set(this.list.map((r) => r.id));
      const toRead = work.all ? [...held] : [...work.runs].filter((id) => held.has(id));
      for (const runId of toRead) await this.readRun(runId, work, change);
      for (const runId of work.events) if (held.has(runId)) change.events.add(runId);
    } finally {
      // What was read before a failure is held, so it is published too.
      this.pending.merge(change);
    }
  }

  private async readList(work: ReadWork, change: PendingChange): Promise<void> {
    const all = await this.engine.listRuns();
    const next = all.filter((r, i) => i < this.options.maxRuns || this.followers.has(r.id));
    if (next.map((r) => r.id).join() !== this.list.map((r) => r.id).join()) change.structure = true;
    for (const run of next) {
      const held = this.entries.get(run.id)?.overview.run;
      if (!held || held.status !== run.status || work.all) work.runs.add(run.id);
    }
    const kept = new Set(next.map((r) => r.id));
    for (const [id, entry] of [...this.entries]) {
      if (kept.has(id)) continue;
      this.entries.delete(id);
      for (const r of entry.overview.runtimes) this.forgetBeats(r.id);
    }
    this.list = next.map((r) => this.entries.get(r.id)?.overview.run ?? r);
  }

  private async readRun(runId: string, work: ReadWork, change: PendingChange): Promise<void> {
    const previous = this.entries.get(runId);
    const overview = this.withLatestBeats(await this.engine.overview(runId));
    diffOverview(previous?.overview, overview, change);
    const coordinatorLive = isCoordinatorLive(overview.coordinatorLease, this.engine.now());
    // The lease ran out (or its holder went) with nothing logged: the run's shown state changes all the same.
    if (previous && previous.coordinatorLive !== coordinatorLive) change.runs.add(runId);
    const entry: RunEntry = { overview, coordinatorLive };
    if (previous?.ingestions && !work.ingestions.has(runId) && !work.all) entry.ingestions = previous.ingestions;
    else {
      entry.ingestions = await this.engine.listIngestions(runId);
      if (!previous?.ingestions || idList(previous.ingestions) !== idList(entry.ingestions))
        change.ingestions.add(runId);
    }
    if (this.followers.has(runId)) {
      entry.worktrees = new Set((await this.engine.listWorktrees(runId)).map((w) => w.delegationId));
      if (previous?.worktrees) {
        for (const d of overview.delegations)
          if (previous.worktrees.has(d.id) !== entry.worktrees.has(d.id)) change.tasks.add(`${runId}/${d.taskId}`);
      }
      const log = this.eventLogs.get(runId);
      if (log && !log.loaded) {
        log.events = mergeEvents(await this.readEvents(runId), log.events).slice(-this.options.eventsKept);
        log.loaded = true;
        change.events.add(runId);
      }
    }
    // A heartbeat applied while the details above were read went to the entry this one replaces.
    entry.overview = this.withLatestBeats(entry.overview);
    this.entries.set(runId, entry);
    this.list = this.list.map((r) => (r.id === runId ? overview.run : r));
    for (const r of overview.runtimes) if (!isLiveRuntime(r)) this.forgetBeats(r.id);
  }

  private forgetBeats(runtimeId: string): void {
    this.latestBeats.delete(runtimeId);
    this.rhythm.delete(runtimeId);
  }

  /** All of a run's log events, kept to the newest `eventsKept`. */
  private async readEvents(runId: string): Promise<RunEvent[]> {
    let out: RunEvent[] = [];
    for (let after = 0; ;) {
      const page = await this.engine.listEvents(runId, after, EVENTS_PAGE);
      out = out.concat(page.map(({ id: _id, ...e }) => e)).slice(-this.options.eventsKept);
      if (page.length < EVENTS_PAGE) return out;
      after = page.at(-1)!.seq;
    }
  }

  /** A read that started before a heartbeat must not take it back. */
  private withLatestBeats(overview: RunOverview): RunOverview {
    if (!overview.runtimes.some((r) => (this.latestBeats.get(r.id)?.heartbeatCount ?? -1) > r.heartbeatCount))
      return overview;
    let next: RunOverview = {
      ...overview,
      runtimes: overview.runtimes.map((r) => {
        const beat = this.latestBeats.get(r.id);
        return beat && beat.heartbeatCount > r.heartbeatCount ? withBeat(r, beat, beat.at) : r;
      }),
    };
    for (const r of overview.runtimes) {
      const beat = this.latestBeats.get(r.id);
      if (beat?.usage && beat.heartbeatCount > r.heartbeatCount)
        next = withBeatUsage(next, beat.delegationId, beat.usage, beat.at)?.overview ?? next;
    }
    return next;
  }

  /**
   * A coordinator lease is renewed without an event, and one that runs out changes nothing in
   * the store — yet the run it held then has no live coordinator, and every surface must say so.
   * A timer at the earliest expiry among the held runs reads those runs again: a renewed lease
   * moves the timer on (one read per run every lease or so); one that ran out flips the run.
   */
  private scheduleLeaseExpiry(): void {
    if (this.disposed) return;
    const now = this.engine.now();
    let at: number | undefined;
    for (const entry of this.entries.values()) {
      const lease = entry.overview.coordinatorLease;
      if (entry.coordinatorLive && lease) at = Math.min(at ?? Infinity, lease.expiresAt);
    }
    if (this.leaseTimer?.at === at) return;
    this.leaseTimer?.cancel();
    this.leaseTimer = undefined;
    if (at === undefined) return;
    // A little past the expiry, so that the read finds it run out; at most an hour ahead (a timer's limit is ~24 days).
    const delay = Math.min(Math.max(0, at - now) + LEASE_EXPIRY_MARGIN_MS, 3_600_000);
    this.leaseTimer = {
      at,
      cancel: this.clock.setTimer(delay, () => {
        this.leaseTimer = undefined;
        const later = this.engine.now();
        for (const [runId, entry] of this.entries) {
          const lease = entry.overview.coordinatorLease;
          if (entry.coordinatorLive && lease && lease.expiresAt <= later) this.dirty.runs.add(runId);
        }
        if (this.isDirty()) void this.read();
        else this.scheduleLeaseExpiry();
      }),
    };
  }

  // ── publishing ──────────────────────────────────────────────────────────

  /**
   * Publishes what is pending as soon as the gap since the last publication allows (batched);
   * `evenIfNothing`: a tick when nothing is pending (a surface just showed: its clock is old).
   */
  private publishSoon(gapMs: number, evenIfNothing = false): void {
    if (this.publishTimer || this.disposed) return;
    if (this.pending.empty && !evenIfNothing) return;
    if (!this.visible && (this.pending.empty || this.pending.onlyBeats)) return;
    const wait = Math.max(0, this.lastPublishedAt + gapMs - this.clock.monotonic());
    this.publishTimer = this.clock.setTimer(wait, () => {
      this.publishTimer = undefined;
      this.publish();
    });
  }

  private publishNow(): void {
    if (this.disposed || this.pending.empty) return;
    this.publishTimer?.();
    this.publishTimer = undefined;
    this.publish();
  }

  private publish(): void {
    if (this.disposed) return;
    const change = this.pending;
    this.pending = new PendingChange();
    this.shared = this.engine.now();
    this.lastPublishedAt = this.clock.monotonic();
    this.clearTick();
    this.changed.fire({
      now: this.shared,
      structure: change.structure,
      runs: change.runs,
      tasks: change.tasks,
      runtimes: change.runtimes,
      beats: change.beats,
      gates: change.gates,
      events: change.events,
      ingestions: change.ingestions,
    });
    this.scheduleTick();
  }

  private clearTick(): void {
    this.tickTimer?.();
    this.tickTimer = undefined;
  }

  /** While something shows and something on it counts time, the clock moves on `tickMs` after the last publication. */
  private scheduleTick(): void {
    if (!this.visible || !this.countsTime()) return;
    const at = this.tickTime(this.lastPublishedAt + this.options.tickMs);
    this.tickTimer = this.clock.setTimer(Math.max(0, at - this.clock.monotonic()), () => {
      this.tickTimer = undefined;
      if (!this.publishTimer) this.publish();
    });
  }

  /**
   * A tick refreshes the Workers view; a heartbeat arriving within VS Code's 200 ms tree
   * debounce after it would wait the rest of those 200 ms. A runtime that beats at a steady
   * pace (a coordinator renewing its workers' leases, a worker's `baton heartbeat` loop) would
   * meet its own tick every time; the tick is moved just past such an expected beat instead.
   */
  private tickTime(nominal: number): number {
    let at = nominal;
    for (let round = 0; round < 3; round++) {
      let moved = false;
      for (const { at: last, every } of this.rhythm.values()) {
        if (every === undefined) continue;
        const expected = last + every;
        if (at > expected - BEAT_GUARD_BEFORE_MS && at < expected + BEAT_GUARD_AFTER_MS) {
          at = expected + BEAT_GUARD_BEFORE_MS;
          moved = true;
        }
      }
      if (!moved) break;
    }
    return at;
  }

  private countsTime(): boolean {
    if (this.followers.size > 0) return true; // the dashboard shows the run's elapsed time
    for (const entry of this.entries.values()) {
      if (entry.overview.runtimes.some(isLiveRuntime)) return true;
      if (entry.overview.tasks.some((t) => t.status === 'running' || t.status === 'verifying')) return true;
    }
    return false;
  }
}

function withBeat(runtime: WorkerRuntime, beat: HeartbeatPayload, at: number): WorkerRuntime {
  return {
    ...runtime,
    heartbeatCount: beat.heartbeatCount,
    lastHeartbeatAt: at,
    leaseExpiresAt: beat.leaseExpiresAt,
    ...(beat.progress !== undefined ? { progress: beat.progress } : {}),
    ...(beat.workerBeatAt !== undefined ? { workerBeatAt: beat.workerBeatAt } : {}),
    status: runtime.status === 'claimed' || runtime.status === 'stale' ? 'active' : runtime.status,
  };
}

/**
 * The overview with an attempt's usage row moved on to what its heartbeat carried; undefined
 * when the row is not held (the run is read to get it). `changed`: a figure the views show moved.
 */
function withBeatUsage(
  view: RunOverview,
  delegationId: string,
  usage: NonNullable<HeartbeatPayload['usage']>,
  at: number,
): { overview: RunOverview; taskId: string; changed: boolean } | undefined {
  const index = view.usage.findIndex((u) => u.delegationId === delegationId);
  if (index < 0) return undefined;
  const held = view.usage[index]!;
  const { costUsd: _cost, costSource: _source, ...rest } = held;
  const next = {
    ...rest,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(usage.costUsd !== undefined ? { costUsd: usage.costUsd } : {}),
    ...(usage.costSource ? { costSource: usage.costSource } : {}),
    turns: usage.turns,
    toolCalls: usage.toolCalls,
    failedToolCalls: usage.failedToolCalls,
    updatedAt: Math.max(held.updatedAt, at),
  };
  const changed = usageFacts(held) !== usageFacts(next);
  const list = [...view.usage];
  list[index] = next;
  return { overview: { ...view, usage: list }, taskId: held.taskId, changed };
}

/** The figures of a usage row the views show (its activity text and update time are not among them). */
function usageFacts(u: RunOverview['usage'][number]): string {
  return JSON.stringify([u.inputTokens, u.outputTokens, u.costUsd ?? null, u.turns, u.toolCalls, u.failedToolCalls]);
}

function taskOf(view: RunOverview, delegationId: string): string {
  return view.delegations.find((d) => d.id === delegationId)?.taskId ?? '?';
}

function idList(records: readonly { id: string }[]): string {
  return records.map((r) => r.id).join();
}

function mergeEvents(read: RunEvent[], heard: RunEvent[]): RunEvent[] {
  const last = read.at(-1)?.seq ?? 0;
  return [...read, ...heard.filter((e) => e.seq > last)];
}

/** What changed between two reads of a run, by id: compared as their facts' JSON. */
function diffOverview(previous: RunOverview | undefined, next: RunOverview, change: PendingChange): void {
  const runId = next.run.id;
  if (!previous || runFacts(previous) !== runFacts(next)) change.runs.add(runId);
  diffFacts(previous && taskFacts(previous), taskFacts(next), (id) => change.tasks.add(`${runId}/${id}`));
  diffFacts(previous && factsById(previous.runtimes), factsById(next.runtimes), (id) =>
    change.runtimes.add(`${runId}/${id}`),
  );
  diffFacts(previous && factsById(previous.gates), factsById(next.gates), (id) => change.gates.add(`${runId}/${id}`));
}

function diffFacts(
  before: Map<string, string> | undefined,
  after: Map<string, string>,
  changed: (id: string) => void,
): void {
  for (const [id, facts] of after) if (before?.get(id) !== facts) changed(id);
  if (before) for (const id of before.keys()) if (!after.has(id)) changed(id);
}

function runFacts(view: RunOverview): string {
  const tally: Record<string, number> = {};
  for (const t of view.tasks) tally[t.status] = (tally[t.status] ?? 0) + 1;
  // Who holds the run, not until when: a renewal (every third of a lease) is no change to show.
  const lease = view.coordinatorLease;
  const coordinator = lease && [
    lease.holder,
    lease.epoch,
    lease.releasedAt !== undefined,
    lease.handedOver ?? null,
    lease.holderProcess ?? null,
  ];
  return JSON.stringify([
    view.run.status,
    view.run.stopMode ?? null,
    view.run.planPath,
    view.tasks.length,
    tally,
    coordinator,
  ]);
}

function taskFacts(view: RunOverview): Map<string, string> {
  const attempts = new Map<string, Delegation[]>();
  for (const d of view.delegations) {
    const list = attempts.get(d.taskId);
    if (list) list.push(d);
    else attempts.set(d.taskId, [d]);
  }
  // What its agents spent is shown with the task (and its attempts) too.
  const spent = new Map<string, string[]>();
  for (const u of view.usage)
    spent.set(u.taskId, [...(spent.get(u.taskId) ?? []), `${u.delegationId}:${usageFacts(u)}`]);
  return new Map(view.tasks.map((t) => [t.id, JSON.stringify([t, attempts.get(t.id) ?? [], spent.get(t.id) ?? []])]));
}

function factsById(items: readonly { id: string }[]): Map<string, string> {
  return new Map(items.map((item) => [item.id, JSON.stringify(item)]));
}

/** A row of the run's event log (heartbeats are announced without a place in it). */
function isLogged(e: EngineEvent): e is EngineEvent & { seq: number } {
  return e.seq !== undefined;
}
