import type { Engine, EngineEvent, Gate, Run, RunOverview, WorkerRuntime } from '../engine/index';
import { Emitter, type Disposable } from '../engine/index';

/** Which parts of the model changed in one refresh: views refresh only those nodes. */
export interface ModelChange {
  runs: Set<string>;
  /** `runId/taskId` of tasks whose item (status, attempts) changed. */
  tasks: Set<string>;
  runtimes: boolean;
  gates: boolean;
  /** The list of runs itself changed (a run appeared, or its order). */
  structure: boolean;
}

const MAX_RUNS = 10;
const HIDDEN_COALESCE_MS = 3000;
/** Heartbeats reach the Workers view this soon (batched): they need no store read. */
const BEAT_MS = 40;

/**
 * The view-model behind the Runs, Workers and Gates views (CONVENTIONS: model first, tree
 * second). It holds the overview of the most recent runs, refreshes from the engine when
 * engine events say something changed — coalescing bursts into one read every `coalesceMs`
 * — and reports exactly what changed. It does no UI and imports nothing from vscode.
 */
export class RunsModel implements Disposable {
  private readonly changed = new Emitter<ModelChange>();
  readonly onDidChange = this.changed.event;
  private runs: Run[] = [];
  private readonly overviews = new Map<string, RunOverview>();
  private pending: { runs: Set<string>; all: boolean } = { runs: new Set(), all: true };
  private timer: ReturnType<typeof setTimeout> | undefined;
  private refreshing: Promise<void> | undefined;
  private subscription: Disposable | undefined;
  private paused = false;
  private beatTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly engine: Engine,
    private readonly coalesceMs = 250,
  ) {
    this.subscription = engine.onEvent((e) => this.onEngineEvent(e));
  }

  get allRuns(): readonly Run[] {
    return this.runs;
  }

  overview(runId: string): RunOverview | undefined {
    return this.overviews.get(runId);
  }

  /** Live runtimes of every shown run (claimed, active, stale). */
  liveRuntimes(): Array<WorkerRuntime & { taskId: string }> {
    const out: Array<WorkerRuntime & { taskId: string }> = [];
    for (const run of this.runs) {
      const view = this.overviews.get(run.id);
      if (!view) continue;
      for (const r of view.runtimes) {
        if (r.status === 'terminal' || r.status === 'blocked') continue;
        out.push({ ...r, taskId: view.delegations.find((d) => d.id === r.delegationId)?.taskId ?? '?' });
      }
    }
    return out;
  }

  openGates(): Gate[] {
    return this.runs.flatMap((run) => this.overviews.get(run.id)?.gates.filter((g) => g.status === 'open') ?? []);
  }

  now(): number {
    return this.engine.now();
  }

  /**
   * While no Baton view is visible the model refreshes less often (the status bar still
   * follows, a few seconds late); `resume()` catches up at once.
   */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.schedule();
    }
  }

  resume(): void {
    const wasPaused = this.paused;
    this.paused = false;
    if (wasPaused && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.schedule();
  }

  /** Reads everything again now (first show, after a command). */
  async refreshNow(): Promise<void> {
    this.pending.all = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
  }

  private onEngineEvent(e: EngineEvent): void {
    if (e.type === 'runtime:heartbeat' && this.applyBeat(e)) return;
    if (e.type === 'run:created' || e.type === 'run:replanned') this.pending.all = true;
    this.pending.runs.add(e.runId);
    this.schedule();
  }

  /**
   * A heartbeat carries everything the Workers view shows of it (count, time, lease, progress):
   * it is applied to the cached overview without a store read, and announced after at most
   * BEAT_MS (batched) — not after the coalescing of other changes. False when the runtime is
   * not in the cache yet (then the usual read brings it).
   */
  private applyBeat(e: EngineEvent): boolean {
    const view = this.overviews.get(e.runId);
    const d = e.data as { runtimeId?: string; heartbeatCount?: number; leaseExpiresAt?: number; progress?: string };
    const index = view?.runtimes.findIndex((r) => r.id === d.runtimeId) ?? -1;
    if (!view || index < 0 || typeof d.heartbeatCount !== 'number' || typeof d.leaseExpiresAt !== 'number')
      return false;
    const runtime = view.runtimes[index]!;
    if (d.heartbeatCount <= runtime.heartbeatCount) return true; // an older beat, late
    const runtimes = [...view.runtimes];
    runtimes[index] = {
      ...runtime,
      heartbeatCount: d.heartbeatCount,
      lastHeartbeatAt: e.at,
      leaseExpiresAt: d.leaseExpiresAt,
      ...(d.progress !== undefined ? { progress: d.progress } : {}),
      status: runtime.status === 'claimed' || runtime.status === 'stale' ? 'active' : runtime.status,
    };
    this.overviews.set(e.runId, { ...view, runtimes });
    this.beatTimer ??= setTimeout(
      () => {
        this.beatTimer = undefined;
        this.changed.fire({ runs: new Set(), tasks: new Set(), runtimes: true, gates: false, structure: false });
      },
      this.paused ? HIDDEN_COALESCE_MS : BEAT_MS,
    );
    return true;
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.flush();
      },
      this.paused ? HIDDEN_COALESCE_MS : this.coalesceMs,
    );
  }

  private async flush(): Promise<void> {
    if (this.refreshing) {
      await this.refreshing;
      if (this.pending.all || this.pending.runs.size > 0) return this.flush();
      return;
    }
    const work = this.pending;
    this.pending = { runs: new Set(), all: false };
    this.refreshing = this.read(work).finally(() => (this.refreshing = undefined));
    await this.refreshing;
  }

  private async read(work: { runs: Set<string>; all: boolean }): Promise<void> {
    const change: ModelChange = { runs: new Set(), tasks: new Set(), runtimes: false, gates: false, structure: false };
    if (work.all) {
      const runs = (await this.engine.listRuns()).slice(0, MAX_RUNS);
      if (runs.map((r) => `${r.id}:${r.status}`).join() !== this.runs.map((r) => `${r.id}:${r.status}`).join())
        change.structure = true;
      this.runs = runs;
      for (const id of [...this.overviews.keys()]) if (!runs.some((r) => r.id === id)) this.overviews.delete(id);
      for (const run of runs) work.runs.add(run.id);
    }
    for (const runId of work.runs) {
      if (!this.runs.some((r) => r.id === runId)) {
        change.structure = true;
        this.runs = (await this.engine.listRuns()).slice(0, MAX_RUNS);
        if (!this.runs.some((r) => r.id === runId)) continue;
      }
      const next = await this.engine.overview(runId);
      const previous = this.overviews.get(runId);
      this.overviews.set(runId, next);
      this.runs = this.runs.map((r) => (r.id === runId ? next.run : r));
      diff(previous, next, change);
    }
    if (change.structure || change.runs.size > 0 || change.tasks.size > 0 || change.runtimes || change.gates)
      this.changed.fire(change);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.subscription?.dispose();
    this.changed.dispose();
  }
}

function diff(previous: RunOverview | undefined, next: RunOverview, change: ModelChange): void {
  const runId = next.run.id;
  if (!previous || previous.run.status !== next.run.status || previous.tasks.length !== next.tasks.length)
    change.runs.add(runId);
  for (const task of next.tasks) {
    const before = previous?.tasks.find((t) => t.id === task.id);
    const attemptsBefore = previous?.delegations
      .filter((d) => d.taskId === task.id)
      .map((d) => `${d.id}:${d.status}:${d.resultStatus ?? ''}`)
      .join();
    const attemptsNow = next.delegations
      .filter((d) => d.taskId === task.id)
      .map((d) => `${d.id}:${d.status}:${d.resultStatus ?? ''}`)
      .join();
    if (
      !before ||
      before.status !== task.status ||
      before.statusReason !== task.statusReason ||
      attemptsBefore !== attemptsNow
    )
      change.tasks.add(`${runId}/${task.id}`);
  }
  const beats = (v?: RunOverview): string =>
    (v?.runtimes ?? []).map((r) => `${r.id}:${r.status}:${r.heartbeatCount}:${r.progress ?? ''}`).join();
  if (beats(previous) !== beats(next)) change.runtimes = true;
  const gates = (v?: RunOverview): string => (v?.gates ?? []).map((g) => `${g.id}:${g.status}`).join();
  if (gates(previous) !== gates(next)) change.gates = true;
}
