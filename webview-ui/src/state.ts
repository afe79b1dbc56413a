/**
 * The dashboard's state and the one function that changes it from host messages. Pure:
 * no DOM, no vscode — the unit tests drive it in plain Node. A part that did not change
 * keeps its identity (the same array), so the view redraws only what a message touched.
 */
import {
  parseHostMessage,
  type Beat,
  type EventView,
  type GateView,
  type HostMessage,
  type IssueView,
  type RunHeader,
  type RuntimeView,
  type Series,
  type TaskDetails,
  type TaskView,
} from '../../src/protocol/messages';

/** What the person chose in the UI: survives hide/show through the webview's saved state. */
export interface UiState {
  /** A task status to show, or 'all'. */
  filter: string;
  selectedTask?: string;
}

export interface DashboardState {
  /** A snapshot has arrived. */
  connected: boolean;
  /** The host's shared clock at its last message (ages and durations are shown as of it), and when it arrived. */
  now: number;
  receivedAt: number;
  run: RunHeader | null;
  tasks: readonly TaskView[];
  runtimes: readonly RuntimeView[];
  gates: readonly GateView[];
  /** Newest first, at most MAX_EVENTS. */
  events: readonly EventView[];
  issues: readonly IssueView[];
  series: Series;
  details?: TaskDetails;
  notice?: { level: 'info' | 'error'; message: string };
  ui: UiState;
}

export const MAX_EVENTS = 2000;

export const STATUS_FILTERS = [
  'all',
  'running',
  'ready',
  'pending',
  'gated',
  'verifying',
  'completed',
  'failed',
  'blocked',
  'cancelled',
] as const;

export function initialState(ui: Partial<UiState> = {}): DashboardState {
  return {
    connected: false,
    now: 0,
    receivedAt: 0,
    run: null,
    tasks: [],
    runtimes: [],
    gates: [],
    events: [],
    issues: [],
    series: { finished: [], spans: [] },
    ui: {
      filter:
        typeof ui.filter === 'string' && (STATUS_FILTERS as readonly string[]).includes(ui.filter) ? ui.filter : 'all',
      ...(typeof ui.selectedTask === 'string' ? { selectedTask: ui.selectedTask } : {}),
    },
  };
}

/**
 * What arrives from the host, unchecked: validated first (src/protocol), and only a valid
 * message changes the state. A rejected one leaves the very same state object and says why.
 */
export function receive(
  state: DashboardState,
  raw: unknown,
  at: number,
): { state: DashboardState; error?: string; message?: HostMessage } {
  const parsed = parseHostMessage(raw);
  if (!parsed.ok) return { state, error: parsed.error };
  return {
    state: parsed.message.type === 'heartbeats' ? state : reduce(state, parsed.message, at),
    message: parsed.message,
  };
}

/** Applies one (already validated) host message. `at` is performance.now() when it arrived. */
export function reduce(state: DashboardState, message: HostMessage, at: number): DashboardState {
  switch (message.type) {
    case 'snapshot': {
      const selected =
        state.ui.selectedTask && message.tasks.some((t) => t.id === state.ui.selectedTask)
          ? state.ui.selectedTask
          : undefined;
      return {
        ...state,
        connected: true,
        now: message.now,
        receivedAt: at,
        run: message.run,
        tasks: message.tasks,
        runtimes: message.runtimes,
        gates: message.gates,
        events: message.events.slice(0, MAX_EVENTS),
        issues: message.issues,
        series: message.series,
        details: state.details && state.details.taskId === selected ? state.details : undefined,
        ui: { filter: state.ui.filter, ...(selected ? { selectedTask: selected } : {}) },
      };
    }
    case 'delta': {
      if (!state.connected) return state; // a delta means nothing before its snapshot
      const runtimes =
        message.runtimes || message.removedRuntimes
          ? upsert(state.runtimes, message.runtimes ?? [], (r) => r.id, new Set(message.removedRuntimes ?? []))
          : state.runtimes;
      return {
        ...state,
        now: message.now,
        receivedAt: at,
        run: message.run ?? state.run,
        tasks: message.tasks?.length ? upsert(state.tasks, message.tasks, (t) => t.id) : state.tasks,
        runtimes,
        gates: message.gates?.length ? upsert(state.gates, message.gates, (g) => g.id) : state.gates,
        events: message.events?.length ? [...message.events, ...state.events].slice(0, MAX_EVENTS) : state.events,
        issues: message.issues ?? state.issues,
        series: message.series ?? state.series,
      };
    }
    case 'heartbeats':
      if (!state.connected) return state;
      return applyBeats(state, message.beats, message.now, at);
    case 'clock':
      return state.connected ? { ...state, now: message.now, receivedAt: at } : state;
    case 'taskDetails':
      return state.ui.selectedTask === message.taskId ? { ...state, details: message } : state;
    case 'notice':
      return { ...state, notice: { level: message.level, message: message.message } };
  }
}

/** A batch of heartbeats (one animation frame's worth): only the runtimes that beat change. */
export function applyBeats(state: DashboardState, beats: readonly Beat[], now: number, at: number): DashboardState {
  if (beats.length === 0) return state;
  const byId = new Map(beats.map((b) => [b.runtimeId, b]));
  let changed = false;
  const runtimes = state.runtimes.map((r) => {
    const beat = byId.get(r.id);
    if (!beat || beat.heartbeatCount < r.heartbeatCount) return r; // an older beat arriving late changes nothing
    changed = true;
    return {
      ...r,
      heartbeatCount: beat.heartbeatCount,
      leaseExpiresAt: beat.leaseExpiresAt,
      ...(beat.lastHeartbeatAt !== undefined ? { lastHeartbeatAt: beat.lastHeartbeatAt } : {}),
      ...(beat.progress !== undefined ? { progress: beat.progress } : {}),
      ...(beat.workerBeatAt !== undefined ? { workerBeatAt: beat.workerBeatAt } : {}),
      ...(beat.spend !== undefined ? { spend: beat.spend } : {}),
      status: r.status === 'claimed' ? 'active' : r.status,
    };
  });
  // A clock message that arrived after these beats (they wait for the next frame) keeps its later `now`.
  return changed ? { ...state, runtimes, now: Math.max(state.now, now), receivedAt: at } : state;
}

export type UiAction =
  { type: 'filter'; filter: string } | { type: 'select'; taskId?: string } | { type: 'dismissNotice' };

export function reduceUi(state: DashboardState, action: UiAction): DashboardState {
  switch (action.type) {
    case 'filter':
      if (!(STATUS_FILTERS as readonly string[]).includes(action.filter) || action.filter === state.ui.filter)
        return state;
      return { ...state, ui: { ...state.ui, filter: action.filter } };
    case 'select': {
      if (action.taskId === state.ui.selectedTask) return state;
      const { selectedTask: _previous, ...rest } = state.ui;
      return { ...state, details: undefined, ui: action.taskId ? { ...rest, selectedTask: action.taskId } : rest };
    }
    case 'dismissNotice':
      return state.notice ? { ...state, notice: undefined } : state;
  }
}

/** The tasks the queue shows under the current filter (the same array when nothing is filtered). */
export function visibleTasks(state: DashboardState): readonly TaskView[] {
  return state.ui.filter === 'all' ? state.tasks : state.tasks.filter((t) => t.status === state.ui.filter);
}

/**
 * The instant ages and durations are shown as of: the host's shared clock at its last message. Not moved on
 * locally — the host ticks it (a `clock` message about once a second), so the dashboard shows what the
 * sidebar's views show at the same moment.
 */
export function hostNow(state: DashboardState): number {
  return state.now;
}

/** Replaces items by key, appends new ones, drops removed ones; the order of the rest is kept. */
function upsert<T>(
  items: readonly T[],
  changes: readonly T[],
  key: (item: T) => string,
  removed: ReadonlySet<string> = new Set(),
): readonly T[] {
  const byKey = new Map(changes.map((c) => [key(c), c]));
  const out: T[] = [];
  for (const item of items) {
    const k = key(item);
    if (removed.has(k)) continue;
    const next = byKey.get(k);
    out.push(next ?? item);
    byKey.delete(k);
  }
  for (const item of byKey.values()) out.push(item);
  return out;
}
