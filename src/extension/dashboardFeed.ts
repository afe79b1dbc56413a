import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describeEvent, type Engine, type EngineEvent, type RunEvent, type RunOverview } from '../engine/index';
import type { Disposable } from '../engine/index';
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
} from '../protocol/messages';

export interface FeedOptions {
  /** Show this run; without it, the newest run (and the next one when it starts). */
  runId?: string;
  /** Is this window coordinating the run (Stop applies here, Resume does not)? */
  coordinatedHere(runId: string): boolean;
  maxConcurrency(): number;
  /** Coalescing of store changes into one delta, and of heartbeats into one message. */
  coalesceMs?: number;
  beatMs?: number;
}

const EVENTS_IN_SNAPSHOT = 1000;
const ARTIFACT_BYTES = 64 * 1024;
const LOG_TAIL_BYTES = 8 * 1024;

/**
 * What the dashboard shows, as protocol messages (src/protocol): a full snapshot on demand
 * (the webview's `ready`), then deltas of what changed — tasks, runtimes and gates by id,
 * new events, the run header — coalesced over `coalesceMs`, and heartbeats batched over
 * `beatMs`. While paused (the panel is hidden) it posts nothing; the next `ready` brings a
 * fresh snapshot. No vscode here: the unit tests drive it against a real engine.
 */
export class DashboardFeed implements Disposable {
  private runId: string | undefined;
  private readonly sent = {
    tasks: new Map<string, string>(),
    runtimes: new Map<string, string>(),
    gates: new Map<string, string>(),
    header: '',
    issues: '',
    series: '',
    lastSeq: 0,
  };
  private live = false;
  private dirty = false;
  private issuesDirty = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private beatTimer: ReturnType<typeof setTimeout> | undefined;
  private beats = new Map<string, Beat>();
  private readonly subscription: Disposable;
  private refreshing: Promise<void> = Promise.resolve();

  constructor(
    private readonly engine: Engine,
    private readonly options: FeedOptions,
    private readonly post: (message: HostMessage) => void,
  ) {
    this.runId = options.runId;
    this.subscription = engine.onEvent((e) => this.onEvent(e));
  }

  get currentRunId(): string | undefined {
    return this.runId;
  }

  /** The webview is (re)ready: send everything, then keep it current. */
  async sendSnapshot(): Promise<Snapshot> {
    this.live = true;
    const snapshot = await this.buildSnapshot();
    this.post(snapshot);
    return snapshot;
  }

  /** Hidden: stop posting until the next `ready`. */
  pause(): void {
    this.live = false;
  }

  /** Something the dashboard shows may have changed outside the event stream (this window started driving). */
  touch(): void {
    this.dirty = true;
    this.schedule();
  }

  async buildSnapshot(): Promise<Snapshot> {
    const runs = await this.engine.listRuns();
    if (!this.options.runId) this.runId = runs[0]?.id;
    this.resetSent();
    if (!this.runId || !runs.some((r) => r.id === this.runId)) {
      return {
        type: 'snapshot',
        protocolVersion: PROTOCOL_VERSION,
        now: this.engine.now(),
        run: null,
        tasks: [],
        runtimes: [],
        gates: [],
        events: [],
        issues: [],
        series: { finished: [], spans: [] },
      };
    }
    const runId = this.runId;
    const view = await this.engine.overview(runId);
    const events = await this.engine.listEvents(runId);
    const tasks = await this.taskViews(view);
    const runtimes = runtimeViews(view);
    const gates = view.gates.map(gateView);
    const issues = await this.issueViews(runId);
    const header = this.header(view);
    const series = seriesOf(view);
    for (const t of tasks) this.sent.tasks.set(t.id, JSON.stringify(t));
    for (const r of runtimes) this.sent.runtimes.set(r.id, JSON.stringify(r));
    for (const g of gates) this.sent.gates.set(g.id, JSON.stringify(g));
    this.sent.header = JSON.stringify(header);
    this.sent.issues = JSON.stringify(issues);
    this.sent.series = JSON.stringify(series);
    this.sent.lastSeq = events.at(-1)?.seq ?? 0;
    return {
      type: 'snapshot',
      protocolVersion: PROTOCOL_VERSION,
      now: this.engine.now(),
      run: header,
      tasks,
      runtimes,
      gates,
      events: events.slice(-EVENTS_IN_SNAPSHOT).reverse().map(eventView),
      issues,
      series,
    };
  }

  /** What changed since the last message, or undefined when nothing did. */
  async buildDelta(): Promise<Delta | undefined> {
    const runId = this.runId;
    if (!runId) return undefined;
    const view = await this.engine.overview(runId);
    const delta: Delta = { type: 'delta', now: this.engine.now() };
    const header = this.header(view);
    if (JSON.stringify(header) !== this.sent.header) {
      delta.run = header;
      this.sent.header = JSON.stringify(header);
    }
    const tasks = changed(await this.taskViews(view), this.sent.tasks, (t) => t.id);
    if (tasks.length) delta.tasks = tasks;
    const runtimes = runtimeViews(view);
    const changedRuntimes = changed(runtimes, this.sent.runtimes, (r) => r.id);
    if (changedRuntimes.length) delta.runtimes = changedRuntimes;
    const ids = new Set(runtimes.map((r) => r.id));
    const removed = [...this.sent.runtimes.keys()].filter((id) => !ids.has(id));
    if (removed.length) {
      delta.removedRuntimes = removed;
      for (const id of removed) this.sent.runtimes.delete(id);
    }
    const gates = changed(view.gates.map(gateView), this.sent.gates, (g) => g.id);
    if (gates.length) delta.gates = gates;
    const events = await this.engine.listEvents(runId, this.sent.lastSeq);
    if (events.length) {
      delta.events = events.reverse().map(eventView);
      this.sent.lastSeq = events[0]!.seq;
    }
    if (this.issuesDirty) {
      this.issuesDirty = false;
      const issues = await this.issueViews(runId);
      if (JSON.stringify(issues) !== this.sent.issues) {
        delta.issues = issues;
        this.sent.issues = JSON.stringify(issues);
      }
    }
    const series = seriesOf(view);
    if (JSON.stringify(series) !== this.sent.series) {
      delta.series = series;
      this.sent.series = JSON.stringify(series);
    }
    return Object.keys(delta).length > 2 ? delta : undefined;
  }

  /** A task's attempts, receipts, result artifact (its first 64 KiB), log tail and issues. */
  async taskDetails(taskId: string): Promise<TaskDetails> {
    const runId = this.runId;
    if (!runId) throw new Error('There is no run to show.');
    const record = await this.engine.taskRecord(runId, taskId);
    const latest = record.delegations.at(-1);
    // The artifact last handed in for the latest attempt (a re-ingested one replaces the first), else where it is
    // expected.
    const ingested = latest
      ? record.ingestions.filter((r) => r.delegationId === latest.id).at(-1)?.artifactPath
      : undefined;
    const artifactPath =
      ingested ??
      latest?.artifactPath ??
      (latest ? join('.baton', 'runs', runId, 'artifacts', `${latest.id}.md`) : undefined);
    const artifactText = artifactPath ? readHead(join(this.engine.workspace, artifactPath), ARTIFACT_BYTES) : undefined;
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
    };
  }

  dispose(): void {
    this.subscription.dispose();
    if (this.timer) clearTimeout(this.timer);
    if (this.beatTimer) clearTimeout(this.beatTimer);
    this.live = false;
  }

  private onEvent(e: EngineEvent): void {
    if (e.type === 'run:created' && !this.options.runId) {
      // Follow the newest run: the next message is a snapshot of it.
      this.runId = e.runId;
      if (this.live) void this.sendSnapshot().catch(() => undefined);
      return;
    }
    if (e.runId !== this.runId || !this.live) return;
    if (e.type === 'runtime:heartbeat') {
      const d = e.data as { runtimeId: string; heartbeatCount: number; leaseExpiresAt: number; progress?: string };
      this.beats.set(d.runtimeId, {
        runtimeId: d.runtimeId,
        heartbeatCount: d.heartbeatCount,
        lastHeartbeatAt: e.at,
        leaseExpiresAt: d.leaseExpiresAt,
        ...(d.progress !== undefined ? { progress: d.progress } : {}),
      });
      this.beatTimer ??= setTimeout(() => this.flushBeats(), this.options.beatMs ?? 50);
      return;
    }
    if (e.type === 'ingestion:recorded') this.issuesDirty = true;
    this.dirty = true;
    this.schedule();
  }

  private flushBeats(): void {
    this.beatTimer = undefined;
    if (!this.live || this.beats.size === 0) return;
    const beats = [...this.beats.values()];
    this.beats = new Map();
    for (const b of beats) {
      // Keep the delta baseline in step, so the next delta does not repeat what the beat said.
      const sent = this.sent.runtimes.get(b.runtimeId);
      if (sent)
        this.sent.runtimes.set(
          b.runtimeId,
          JSON.stringify({ ...(JSON.parse(sent) as RuntimeView), ...withoutId(b), status: 'active' }),
        );
    }
    this.post({ type: 'heartbeats', now: this.engine.now(), beats });
  }

  private schedule(): void {
    if (this.timer || !this.live) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.dirty || !this.live) return;
      this.dirty = false;
      this.refreshing = this.refreshing
        .then(async () => {
          const delta = await this.buildDelta();
          if (delta && this.live) this.post(delta);
        })
        .catch(() => undefined);
    }, this.options.coalesceMs ?? 150);
  }

  private resetSent(): void {
    this.sent.tasks.clear();
    this.sent.runtimes.clear();
    this.sent.gates.clear();
    this.sent.header = '';
    this.sent.issues = '';
    this.sent.series = '';
    this.sent.lastSeq = 0;
    this.issuesDirty = false;
  }

  private header(view: RunOverview): RunHeader {
    const count = (...statuses: string[]): number => view.tasks.filter((t) => statuses.includes(t.status)).length;
    return {
      id: view.run.id,
      planPath: view.run.planPath,
      status: view.run.status,
      createdAt: view.run.createdAt,
      maxConcurrency: this.options.maxConcurrency(),
      slotsInUse: view.runtimes.filter((r) => r.status === 'claimed' || r.status === 'active').length,
      coordinatedHere: this.options.coordinatedHere(view.run.id),
      counts: {
        total: view.tasks.length,
        done: count('completed', 'skipped'),
        running: count('running', 'verifying'),
        waiting: count('pending', 'ready'),
        failed: count('failed', 'blocked', 'cancelled'),
        gated: count('gated'),
      },
    };
  }

  private async taskViews(view: RunOverview): Promise<TaskView[]> {
    const latest = new Map<string, RunOverview['delegations'][number]>();
    const attempts = new Map<string, number>();
    for (const d of view.delegations) {
      latest.set(d.taskId, d);
      attempts.set(d.taskId, (attempts.get(d.taskId) ?? 0) + 1);
    }
    const isolated = new Set((await this.engine.listWorktrees(view.run.id)).map((w) => w.delegationId));
    const defaultWorker = this.engine.config.defaultWorker;
    return view.tasks.map((t) => {
      const d = latest.get(t.id);
      const isolation = t.isolation ?? (d ? (isolated.has(d.id) ? 'worktree' : undefined) : undefined);
      return {
        id: t.id,
        title: t.title,
        status: t.status,
        ...(t.statusReason ? { reason: t.statusReason } : {}),
        attempt: attempts.get(t.id) ?? 0,
        ...(d ? { delegationId: d.id } : {}),
        worker: t.worker ?? defaultWorker,
        ...(isolation ? { isolation } : {}),
        ...(d?.startedAt !== undefined ? { startedAt: d.startedAt } : {}),
        ...(d?.finishedAt !== undefined ? { finishedAt: d.finishedAt } : {}),
        ...(d?.resultStatus ? { resultStatus: d.resultStatus } : {}),
        line: t.line,
      };
    });
  }

  private async issueViews(runId: string): Promise<IssueView[]> {
    return issueViewsOf(await this.engine.listIngestions(runId));
  }
}

/** The issues of each delegation's latest ingestion, with 1-based positions. */
function issueViewsOf(ingestions: Awaited<ReturnType<Engine['listIngestions']>>): IssueView[] {
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

function runtimeViews(view: RunOverview): RuntimeView[] {
  const taskOf = new Map(view.delegations.map((d) => [d.id, d.taskId]));
  return view.runtimes
    .filter((r) => r.status !== 'terminal')
    .map((r) => ({
      id: r.id,
      delegationId: r.delegationId,
      taskId: taskOf.get(r.delegationId) ?? '?',
      status: r.status,
      leaseMs: r.leaseMs,
      leaseExpiresAt: r.leaseExpiresAt,
      ...(r.lastHeartbeatAt !== undefined ? { lastHeartbeatAt: r.lastHeartbeatAt } : {}),
      heartbeatCount: r.heartbeatCount,
      ...(r.progress !== undefined ? { progress: r.progress } : {}),
    }));
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

function seriesOf(view: RunOverview): Series {
  const finished: number[] = [];
  const spans: Array<[number, number | null]> = [];
  for (const d of view.delegations) {
    if (d.status === 'COMPLETED' && d.finishedAt !== undefined) finished.push(d.finishedAt);
    // In flight while RUNNING; an attempt that stopped at a gate (BLOCKED) stopped working when it was last updated.
    if (d.startedAt !== undefined)
      spans.push([d.startedAt, d.finishedAt ?? (d.status === 'RUNNING' ? null : d.updatedAt)]);
  }
  finished.sort((a, b) => a - b);
  return { finished, spans };
}

/** Items whose JSON differs from what was sent; the baseline is updated to what is returned. */
function changed<T>(items: T[], sent: Map<string, string>, key: (item: T) => string): T[] {
  const out: T[] = [];
  for (const item of items) {
    const json = JSON.stringify(item);
    if (sent.get(key(item)) === json) continue;
    sent.set(key(item), json);
    out.push(item);
  }
  return out;
}

function withoutId(b: Beat): Omit<Beat, 'runtimeId'> {
  const { runtimeId: _id, ...rest } = b;
  return rest;
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
