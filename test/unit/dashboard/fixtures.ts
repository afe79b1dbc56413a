import type {
  GateView,
  HostMessage,
  RuntimeView,
  Snapshot,
  TaskView,
  WebviewMessage,
} from '../../../src/protocol/messages';
import { PROTOCOL_VERSION } from '../../../src/protocol/messages';

export function task(id: string, extra: Partial<TaskView> = {}): TaskView {
  return { id, title: `Task ${id}`, status: 'ready', attempt: 0, line: 1, ...extra };
}

export function runtime(id: string, extra: Partial<RuntimeView> = {}): RuntimeView {
  return {
    id,
    delegationId: `D-${id}-coder-001`,
    taskId: id,
    status: 'active',
    leaseMs: 30_000,
    leaseExpiresAt: 130_000,
    lastHeartbeatAt: 100_000,
    heartbeatCount: 1,
    ...extra,
  };
}

export function gate(id: string, extra: Partial<GateView> = {}): GateView {
  return {
    id,
    kind: 'risk_approval',
    status: 'open',
    taskId: 'T1',
    reason: 'Task T1 is tagged database; approve it before it runs.',
    risk: ['database'],
    openedAt: 1000,
    ...extra,
  };
}

export function snapshot(extra: Partial<Snapshot> = {}): Snapshot {
  return {
    type: 'snapshot',
    protocolVersion: PROTOCOL_VERSION,
    now: 100_000,
    run: {
      id: 'R-1',
      planPath: 'plan.md',
      status: 'running',
      createdAt: 1000,
      maxConcurrency: 4,
      slotsInUse: 1,
      coordinatedHere: true,
      activity: {
        kind: 'running',
        label: 'running',
        detail: 'Driven by this window.',
        canResume: false,
        canStop: true,
      },
      counts: { total: 2, done: 0, running: 1, waiting: 1, failed: 0, blocked: 0, cancelled: 0, gated: 0 },
    },
    tasks: [
      task('T1', { status: 'running', attempt: 1, delegationId: 'D-T1-coder-001', runningSince: 2000 }),
      task('T2'),
    ],
    runtimes: [runtime('T1')],
    gates: [],
    events: [{ seq: 2, at: 2000, type: 'task:status', text: 'T1 ready → running' }],
    issues: [],
    series: { finished: [], spans: [[2000, null]] },
    ...extra,
  };
}

/** One valid example of every host → webview message type. */
export const HOST_EXAMPLES: HostMessage[] = [
  snapshot(),
  {
    type: 'delta',
    now: 101_000,
    tasks: [task('T2', { status: 'gated' })],
    gates: [gate('G-1')],
    events: [{ seq: 3, at: 101_000, type: 'gate:opened', text: 'G-1 opened' }],
  },
  {
    type: 'heartbeats',
    now: 102_000,
    beats: [
      { runtimeId: 'T1', heartbeatCount: 2, lastHeartbeatAt: 102_000, leaseExpiresAt: 132_000, progress: 'step 2' },
    ],
  },
  {
    type: 'taskDetails',
    taskId: 'T1',
    delegations: [{ id: 'D-T1-coder-001', status: 'RUNNING', attempt: 1 }],
    receipts: [],
    logTail: 'working\n',
    issues: [],
  },
  { type: 'clock', now: 103_000 },
  { type: 'notice', level: 'error', message: 'Gate G-1 is no longer open.' },
];

/** One valid example of every webview → host message type. */
export const WEBVIEW_EXAMPLES: WebviewMessage[] = [
  { type: 'ready', protocolVersion: PROTOCOL_VERSION },
  { type: 'approveGate', gateId: 'G-1' },
  { type: 'approveGate', gateId: 'G-1', note: 'backup taken' },
  { type: 'rejectGate', gateId: 'G-1', note: 'not now' },
  { type: 'answerQuestion', gateId: 'G-4' },
  { type: 'resolveConflict', gateId: 'G-3' },
  { type: 'stopRun', mode: 'graceful' },
  { type: 'stopRun', mode: 'immediate' },
  { type: 'resumeRun' },
  { type: 'showRun', runId: 'R-2' },
  { type: 'openArtifact', path: '.baton/runs/R-1/artifacts/D-T2-coder-001.md', line: 7, column: 5 },
  { type: 'requestTaskDetails', taskId: 'T1' },
  { type: 'showChanges', delegationId: 'D-T1-coder-001' },
  { type: 'showOutput', delegationId: 'D-T1-coder-001' },
];
