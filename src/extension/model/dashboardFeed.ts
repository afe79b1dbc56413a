import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  attemptSpan,
  describeEvent,
  isFinishedRun,
  runPaths,
  type AttemptEnds,
  type Disposable,
  type IngestionRecord,
  type RunEvent,
  type RunOverview,
} from '../../engine/index';
import {
  PROTOCOL_VERSION,
  type Beat,
  type Delta,
  type EventView,
  type GateView,
  type HostMessage,
  type IssueView,
  type RunHeader,
  type RuntimeView,
  type Series,
  type Snapshot,
  type TaskDetails,
  type TaskView,
} from '../../protocol/messages';
import type { RunStateCache, RunStateChange } from './runState';
import { runActions, runActivity, spendOf, taskRunTimeShown } from './viewRows';

export interface FeedOptions {
  /** Show this run; without it, the newest run (and the next one when it starts). */
  runId?: string;
  /** Is this window coordinating the run (Stop applies here, Resume does not)? */
  coordinatedHere(runId: string): boolean;
  maxConcurrency(): number;
  /** Where a failure no caller waits for is written (the Baton log). */
  log?(line: string): void;
}

const EVENTS_IN_SNAPSHOT = 1000;
const ARTIFACT_BYTES = 64 * 1024;
const LOG_TAIL_BYTES = 8 * 1024;

/**
 * What the dashboard shows, as protocol messages (src/protocol), mapped from the run-state
 * cache: a full snapshot on demand (the webview's `ready`), then, for each publication of the
 * cache, what it says changed in this run — a `delta` (tasks, runtimes and gates by id, new
 * events, the header, issues, series), a `heartbeats` batch, or a `clock` tick — each with the
 * publication's shared `now`. It reads nothing and keeps no timer: the cache coalesces and
 * batches for every surface at once. While paused (the panel is hidden) it posts nothing; the
 * next `ready` brings a fresh snapshot. No vscode here: the unit tests drive it against a real engine.
 */
export class DashboardFeed implements Disposable {
  private runId: string | undefined;
  /** The run it was asked to show (it stays on it); undefined: the newest run, and the next one when it starts. */
  private pinned: string | undefined;
  private following: { runId: string; hold: Disposable } | undefined;
  private live = false;
  /** The newest event the webview has (deltas carry the ones after it). */
  private lastSeq = 0;
  private readonly subscription: Disposable;

  constructor(
    private readonly cache: RunStateCache,
    private readonly options: FeedOptions,
    private readonly post: (message: HostMessage) => void,
  ) {
    this.runId = this.pinned = options.runId;
    if (this.runId) this.follow(this.runId);
    this.subscription = cache.onDidChange((change) => this.onCacheChange(change));
  }

  get currentRunId(): string | undefined {
    return this.runId;
  }

  /** The webview is (re)ready: send everything, then keep it current. */
  async sendSnapshot(): Promise<Snapshot> {
    this.live = false; // what the cache publishes while this loads is in the snapshot
    const snapshot = await this.buildSnapshot();
    this.live = true;
    this.post(snapshot);
    return snapshot;
  }

  /**
   * Show another run in the same panel (the link of a replanned run to its successor, Open
   * Dashboard on another run): the feed stays on it, and a live webview gets its snapshot.
   */
  async showRun(runId: string): Promise<void> {
    if (runId === this.runId && runId === this.pinned) return;
    this.runId = this.pinned = runId;
    this.follow(runId);
    if (this.live) await this.sendSnapshot();
  }

  /** Hidden: stop posting until the next `ready`. */
  pause(): void {
    this.live = false;
  }

  /** Something the header shows changed outside the cache (this window started or stopped driving the run). */
  touch(): void {
    const view = this.runId ? this.cache.overview(this.runId) : undefined;
    if (this.live && view) this.post({ type: 'delta', now: this.cache.now, run: this.header(view) });
  }

  async buildSnapshot(): Promise<Snapshot> {
    await this.cache.load(this.runId);
    if (!this.pinned && this.cache.runs[0]?.id !== this.runId) {
      this.runId = this.cache.runs[0]?.id;
      if (this.runId) {
        this.follow(this.runId);
        await this.cache.load(this.runId);
      }
    }
    const view = this.runId ? this.cache.overview(this.runId) : undefined;
    const now = this.cache.now;
    if (!view) {
      this.lastSeq = 0;
      return {
        type: 'snapshot',
        protocolVersion: PROTOCOL_VERSION,
        now,
        run: null,
        tasks: [],
        runtimes: [],
        gates: [],
        events: [],
        issues: [],
        series: { finished: [], spans: [] },
      };
    }
    const runId = view.run.id;
    const events = this.cache.events(runId);
    this.lastSeq = events.at(-1)?.seq ?? 0;
    return {
      type: 'snapshot',
      protocolVersion: PROTOCOL_VERSION,
      now,
      run: this.header(view),
      tasks: view.tasks.map((t) => this.taskView(view, t.id)!),
      runtimes: view.runtimes.filter((r) => r.status !== 'terminal').map((r) => runtimeView(view, r)),
      gates: view.gates.map(gateView),
      events: events.slice(-EVENTS_IN_SNAPSHOT).reverse().map(eventView),
      issues: issueViewsOf(this.cache.ingestions(runId) ?? []),
      series: seriesOf(view, this.cache.attemptEnds(runId)),
    };
  }

  /** A task as the dashboard shows it: its latest attempt's facts and its run time, as the Runs view shows them. */
  taskView(view: RunOverview, taskId: string): TaskView | undefined {
    const t = view.tasks.find((x) => x.id === taskId);
    if (!t) return undefined;
    const attempts = this.cache.attempts(view.run.id, taskId);
    const d = attempts.at(-1);
    const isolation =
      t.isolation ?? (d && this.cache.worktreeDelegations(view.run.id).has(d.id) ? 'worktree' : undefined);
    const worker = t.worker ?? this.cache.config.defaultWorker;
    return {
      id: t.id,
      title: t.title,
      status: t.status,
      ...(t.statusReason ? { reason: t.statusReason } : {}),
      attempt: attempts.length,
      ...(d ? { delegationId: d.id } : {}),
      ...(worker ? { worker } : {}),
      ...(isolation ? { isolation } : {}),
      ...taskRunTimeShown(this.cache, view.run.id, t.id),
      ...(d?.resultStatus ? { resultStatus: d.resultStatus } : {}),
      line: t.line,
      ...withSpend(spendOf(view, { taskId })),
    };
  }

  /** A task's attempts, receipts, result artifact (its first 64 KiB), log tail and issues. */
  async taskDetails(taskId: string): Promise<TaskDetails> {
    const runId = this.runId;
    if (!runId) throw new Error('There is no run to show.');
    const record = await this.cache.taskRecord(runId, taskId);
    const latest = record.delegations.at(-1);
    // The artifact last handed in for the latest attempt (a re-ingested one replaces the first), else where it is
    // expected.
    const ingested = latest
      ? record.ingestions.filter((r) => r.delegationId === latest.id).at(-1)?.artifactPath
      : undefined;
    const artifactPath =
      ingested ??
      latest?.artifactPath ??
      (latest ? runPaths(this.cache.workspace, runId).artifact(latest.id) : undefined);
    const artifactText = artifactPath
      ? readHead(resolve(this.cache.workspace, artifactPath), ARTIFACT_BYTES)
      : undefined;
    const logPath = latest ? record.logPaths.get(latest.id) : undefined;
    return {
      type: 'taskDetails',
      taskId,
      delegations: record.delegations.map((d) => ({
        id: d.id,
        status: d.status,
        attempt: d.attempt,
        ...(d.reason ? { reason: d.reason } : {}),
        ...(d.resultStatus ? { resultStatus: d.resultStatus } : {}),
        ...(d.startedAt !== undefined ? { startedAt: d.startedAt } : {}),
        ...(d.finishedAt !== undefined ? { finishedAt: d.finishedAt } : {}),
      })),
      receipts: record.receipts.map((r) => ({
        delegationId: r.delegationId,
        command: r.command,
        exitCode: r.exitCode,
        durationMs: r.durationMs,
      })),
      ...(artifactPath && artifactText !== undefined ? { artifact: { path: artifactPath, text: artifactText } } : {}),
      logTail: logPath ? readTail(logPath, LOG_TAIL_BYTES) : '',
      issues: issueViewsOf(record.ingestions),
      ...(record.reviews.length
        ? {
            reviews: record.reviews.map((r) => {
              const carrier = r.deliveredTo ? record.delegations.find((d) => d.id === r.deliveredTo) : undefined;
              return {
                followUpId: r.followUpId,
                by: r.by,
                sentAt: r.sentAt,
                ...(r.reviewed ? { reviewed: r.reviewed } : {}),
                ...(r.deliveredTo ? { deliveredTo: r.deliveredTo } : {}),
                ...(carrier
                  ? { outcome: `${carrier.status}${carrier.resultStatus ? ` · ${carrier.resultStatus}` : ''}` }
                  : {}),
                comments: r.comments,
              };
            }),
          }
        : {}),
    };
  }

  dispose(): void {
    this.subscription.dispose();
    this.following?.hold.dispose();
    this.following = undefined;
    this.live = false;
  }

  private follow(runId: string): void {
    if (this.following?.runId === runId) return;
    this.following?.hold.dispose();
    this.following = { runId, hold: this.cache.follow(runId) };
  }

  /** One publication of the cache → at most a delta and a heartbeat batch, or a clock tick. */
  private onCacheChange(change: RunStateChange): void {
    if (!this.pinned && change.structure) {
      const newest = this.cache.runs[0]?.id;
      if (newest && newest !== this.runId) {
        // Follow the newest run: the next message is a snapshot of it.
        this.runId = newest;
        this.follow(newest);
        if (this.live) {
          this.live = false;
          void this.sendSnapshot().catch((err: unknown) =>
            this.options.log?.(`dashboard: the snapshot of ${newest} was not sent: ${(err as Error).message}`),
          );
        }
        return;
      }
    }
    if (!this.live) return;
    const view = this.runId ? this.cache.overview(this.runId) : undefined;
    if (!view) {
      this.post({ type: 'clock', now: change.now });
      return;
    }
    const delta = this.deltaOf(view, change);
    const beats = this.beatsOf(view, change);
    if (delta) this.post(delta);
    if (beats.length) this.post({ type: 'heartbeats', now: change.now, beats });
    if (!delta && !beats.length) this.post({ type: 'clock', now: change.now });
  }

  private deltaOf(view: RunOverview, change: RunStateChange): Delta | undefined {
    const runId = view.run.id;
    const mine = (keys: ReadonlySet<string>): string[] =>
      [...keys].filter((k) => k.startsWith(`${runId}/`)).map((k) => k.slice(runId.length + 1));
    const delta: Delta = { type: 'delta', now: change.now };
    const tasks = mine(change.tasks)
      .map((id) => this.taskView(view, id))
      .filter((t): t is TaskView => t !== undefined);
    if (tasks.length) delta.tasks = tasks;
    const runtimes: RuntimeView[] = [];
    const removed: string[] = [];
    for (const id of mine(change.runtimes)) {
      const r = view.runtimes.find((x) => x.id === id);
      if (r && r.status !== 'terminal') runtimes.push(runtimeView(view, r));
      else removed.push(id);
    }
    if (runtimes.length) delta.runtimes = runtimes;
    if (removed.length) delta.removedRuntimes = removed;
    const gates = mine(change.gates)
      .map((id) => view.gates.find((g) => g.id === id))
      .filter((g) => g !== undefined)
      .map(gateView);
    if (gates.length) delta.gates = gates;
    if (change.events.has(runId)) {
      const events = this.cache.events(runId).filter((e) => e.seq > this.lastSeq);
      if (events.length) {
        delta.events = events.reverse().map(eventView);
        this.lastSeq = events[0]!.seq;
      }
    }
    if (change.ingestions.has(runId)) delta.issues = issueViewsOf(this.cache.ingestions(runId) ?? []);
    if (tasks.length) delta.series = seriesOf(view, this.cache.attemptEnds(runId));
    if (change.runs.has(runId) || tasks.length || runtimes.length || removed.length) delta.run = this.header(view);
    return Object.keys(delta).length > 2 ? delta : undefined;
  }

  private beatsOf(view: RunOverview, change: RunStateChange): Beat[] {
    const out: Beat[] = [];
    for (const key of change.beats) {
      if (!key.startsWith(`${view.run.id}/`)) continue;
      const r = view.runtimes.find((x) => x.id === key.slice(view.run.id.length + 1));
      if (!r) continue;
      out.push({
        runtimeId: r.id,
        heartbeatCount: r.heartbeatCount,
        ...(r.lastHeartbeatAt !== undefined ? { lastHeartbeatAt: r.lastHeartbeatAt } : {}),
        leaseExpiresAt: r.leaseExpiresAt,
        ...(r.progress !== undefined ? { progress: r.progress } : {}),
        ...(r.workerBeatAt !== undefined ? { workerBeatAt: r.workerBeatAt } : {}),
        ...withSpend(spendOf(view, { delegationId: r.delegationId })),
      });
    }
    return out;
  }

  private header(view: RunOverview): RunHeader {
    const count = (...statuses: string[]): number => view.tasks.filter((t) => statuses.includes(t.status)).length;
    const { run } = view;
    const activity = runActivity(run, view, this.cache.now);
    return {
      id: run.id,
      planPath: run.planPath,
      status: run.status,
      createdAt: run.createdAt,
      // A finished run's last change is its end: its elapsed time stops there.
      ...(isFinishedRun(run.status) ? { endedAt: run.updatedAt } : {}),
      ...(run.supersededBy ? { supersededBy: run.supersededBy } : {}),
      maxConcurrency: this.options.maxConcurrency(),
      slotsInUse: view.runtimes.filter((r) => r.status === 'claimed' || r.status === 'active').length,
      coordinatedHere: this.options.coordinatedHere(view.run.id),
      activity: {
        kind: activity.kind,
        label: activity.label,
        detail: activity.detail,
        canResume: activity.action === 'resume',
        // The Runs view's Stop (its menus' canStop): not on a run that is stopped, waits, or ended.
        canStop: runActions(run.status).includes('canStop'),
      },
      counts: {
        total: view.tasks.length,
        done: count('completed', 'skipped'),
        running: count('running', 'verifying'),
        waiting: count('pending', 'ready'),
        failed: count('failed'),
        blocked: count('blocked'),
        cancelled: count('cancelled'),
        gated: count('gated'),
      },
      ...withSpend(spendOf(view)),
    };
  }
}

/** `{ spend }` when there is one: the same figure the Runs and Workers views show (viewRows.ts `spendOf`). */
function withSpend(spend: ReturnType<typeof spendOf>): { spend?: NonNullable<ReturnType<typeof spendOf>> } {
  return spend ? { spend } : {};
}

/** The issues of each delegation's latest ingestion, with 1-based positions. */
function issueViewsOf(ingestions: readonly IngestionRecord[]): IssueView[] {
  const latest = new Map<string, (typeof ingestions)[number]>();
  for (const record of ingestions) latest.set(record.delegationId, record);
  const out: IssueView[] = [];
  for (const record of latest.values()) {
    for (const i of record.issues) {
      out.push({
        ingestionId: record.id,
        delegationId: record.delegationId,
        artifactPath: record.artifactPath,
        code: i.code,
        severity: i.severity,
        message: i.message,
        recommendation: i.recommendation,
        ...(i.range ? { line: i.range.start.line, column: i.range.start.column } : {}),
      });
    }
  }
  return out;
}

function runtimeView(view: RunOverview, r: RunOverview['runtimes'][number]): RuntimeView {
  return {
    id: r.id,
    delegationId: r.delegationId,
    taskId: view.delegations.find((d) => d.id === r.delegationId)?.taskId ?? '?',
    status: r.status,
    leaseMs: r.leaseMs,
    leaseExpiresAt: r.leaseExpiresAt,
    ...(r.lastHeartbeatAt !== undefined ? { lastHeartbeatAt: r.lastHeartbeatAt } : {}),
    heartbeatCount: r.heartbeatCount,
    ...(r.progress !== undefined ? { progress: r.progress } : {}),
    ...(r.workerBeatAt !== undefined ? { workerBeatAt: r.workerBeatAt } : {}),
    ...(r.pid !== undefined ? { pid: r.pid } : {}),
    ...(r.processStartedAt !== undefined ? { processStartedAt: r.processStartedAt } : {}),
    ...(r.processGone ? { processGone: true } : {}),
    ...(r.holder !== undefined ? { holder: r.holder } : {}),
    ...withSpend(spendOf(view, { delegationId: r.delegationId })),
  };
}

function gateView(g: RunOverview['gates'][number]): GateView {
  const risk = Array.isArray((g.details as { risk?: unknown }).risk)
    ? ((g.details as { risk: unknown[] }).risk.filter((x) => typeof x === 'string') as string[])
    : [];
  return {
    id: g.id,
    kind: g.kind,
    status: g.status,
    ...(g.taskId ? { taskId: g.taskId } : {}),
    ...(g.delegationId ? { delegationId: g.delegationId } : {}),
    reason: g.reason,
    risk,
    openedAt: g.openedAt,
    ...(g.decidedAt !== undefined ? { decidedAt: g.decidedAt } : {}),
    ...(g.decidedBy ? { decidedBy: g.decidedBy } : {}),
    ...(g.note ? { note: g.note } : {}),
  };
}

function eventView(e: RunEvent): EventView {
  return { seq: e.seq, at: e.at, type: e.type, text: describeEvent(e, 300) };
}

function seriesOf(view: RunOverview, ends: ReadonlyMap<string, AttemptEnds>): Series {
  const finished: number[] = [];
  const spans: Array<[number, number | null]> = [];
  for (const d of view.delegations) {
    if (d.status === 'COMPLETED' && d.finishedAt !== undefined) finished.push(d.finishedAt);
    // In flight while it runs (engine runTime.ts): an attempt that waits at a gate no longer is.
    const span = attemptSpan(d, ends.get(d.id));
    if (span) spans.push([span.from, span.to ?? null]);
  }
  finished.sort((a, b) => a - b);
  return { finished, spans };
}

function readHead(path: string, bytes: number): string | undefined {
  try {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(bytes, statSync(path).size));
      const n = readSync(fd, buffer, 0, buffer.length, 0);
      return buffer.subarray(0, n).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch {
    return undefined;
  }
}

function readTail(path: string, bytes: number): string {
  try {
    const size = statSync(path).size;
    const from = Math.max(0, size - bytes);
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(size - from);
      readSync(fd, buffer, 0, buffer.length, from);
      const text = buffer.toString('utf8');
      return from > 0 ? text.slice(text.indexOf('\n') + 1) : text;
    } finally {
      closeSync(fd);
    }
  } catch {
    return '';
  }
}
