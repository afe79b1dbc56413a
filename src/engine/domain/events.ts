import type { ReviewComment } from './review';
import type {
  DelegationStatus,
  GateDecision,
  GateKind,
  IntegrationStrategy,
  ResultStatus,
  RunStatus,
  StopMode,
  TaskStatus,
} from './types';

/**
 * Every event of a run, declared once with its payload (GitLens declares its webview
 * messages the same way): the operations that append them and the adapters that read them
 * use this map, so two places cannot disagree about a field. All but `runtime:heartbeat` are
 * rows of the run's event log; heartbeats are announced from the runtimes' state (a
 * heartbeat is a renewal, not a transition — docs/architecture.md).
 */
/** What a coordinator that let go of a run without stopping it left to its successor. */
export interface HandOver {
  /** Workers it was supervising, left running for the successor to adopt. */
  workers: number;
  /** The tasks it was limited to (`Run Task`), if any: the successor keeps to them. */
  tasks?: string[];
}

/** An attempt's spend so far, carried by its heartbeats (docs/workers.md, "Tokens and cost"). */
export interface BeatUsage {
  inputTokens: number;
  outputTokens: number;
  /** Absent while its cost is unknown (a CLI that reports none, a model without a price). */
  costUsd?: number;
  costSource?: 'cli' | 'priced';
  turns: number;
  toolCalls: number;
  failedToolCalls: number;
}

export interface EventMap {
  'run:created': { planPath: string; planDigest: string; tasks: number };
  'run:status': { from: RunStatus; to: RunStatus; reason?: string };
  'run:resumed': Record<string, never>;
  'run:replanned': { from: string; carried: number };
  'task:status': { taskId: string; from: TaskStatus; to: TaskStatus; reason?: string };
  'delegation:created': { delegationId: string; taskId: string; agent: string; attempt: number };
  'delegation:claimed': {
    delegationId: string;
    taskId: string;
    runtimeId: string;
    epoch: number;
    leaseExpiresAt: number;
    holder?: string;
  };
  'delegation:status': {
    delegationId: string;
    taskId: string;
    from: DelegationStatus;
    to: DelegationStatus;
    reason?: string;
  };
  'runtime:heartbeat': {
    runtimeId: string;
    delegationId: string;
    heartbeatCount: number;
    leaseExpiresAt: number;
    progress?: string;
    /** The worker's own last beat (absent while only its coordinator renews the lease). */
    workerBeatAt?: number;
    /**
     * An agent preset's attempt: what it spent so far, as its `agent_usage` row holds it at this
     * beat (written in the same transaction) — the views show it without a store read.
     */
    usage?: BeatUsage;
  };
  'runtime:stale': { runtimeId: string; delegationId: string; taskId: string };
  /**
   * A worker that ended while no coordinator watched, as its exit record tells it (domain/exitRecord.ts): the next
   * coordinator settles its attempt from this, as the one that watched would have.
   */
  'runtime:exited': {
    runtimeId: string;
    delegationId: string;
    taskId: string;
    exitCode: number | null;
    signal: string | null;
    endedAt: number;
    /** Its end was handed in by the lease watchdog on this host (docs/team.md): the worker ran there, not here. */
    handedInBy?: string;
  };
  /** The worker's process is known: started by its coordinator, or found by its marker (`found`). */
  'runtime:started': { runtimeId: string; delegationId: string; pid: number; host: string; found?: boolean };
  /** The exact prompt an attempt got (prompt provenance): its digest, its length, whether it was cut to fit. */
  'delegation:prompt': { delegationId: string; taskId: string; sha256: string; bytes: number; truncated: boolean };
  /** An agent preset's attempt ended: what it did and spent (docs/workers.md, "Tokens and cost"). */
  'agent:usage': {
    delegationId: string;
    taskId: string;
    agent: string;
    kind: string;
    sessionId?: string;
    model?: string;
    inputTokens: number;
    outputTokens: number;
    costUsd?: number;
    turns: number;
    toolCalls: number;
  };
  'gate:opened': { gateId: string; kind: GateKind; reason: string; taskId?: string; delegationId?: string };
  'gate:decided': { gateId: string; kind: GateKind; decision: GateDecision; by: string; note?: string };
  'gate:updated': { gateId: string; kind: GateKind; reason: string };
  /** A person answered an attempt's question (a `question` gate): the first answer, the only one taken. */
  'gate:answered': { gateId: string; delegationId: string; taskId: string; answer: string; by: string };
  'ingestion:recorded': {
    ingestionId: string;
    delegationId: string;
    taskId: string;
    accepted: boolean;
    resultStatus?: ResultStatus;
    /** How many error issues the result had. */
    issues: number;
  };
  /**
   * An agent's stop hook checked the result it was about to end with (docs/agents.md, "The stop hook"): round `round`
   * of its attempt, `issues` errors found; `sentBack` when they went back to the agent to fix in its session.
   */
  'result:checked': {
    delegationId: string;
    taskId: string;
    attempt: number;
    round: number;
    issues: number;
    sentBack: boolean;
  };
  'verification:receipt': {
    delegationId: string;
    taskId: string;
    command: string[];
    exitCode: number | null;
    timedOut: boolean;
    durationMs: number;
    /** Run on the merged tree before integration (its git tree id), not in the attempt's own folder. */
    treeDigest?: string;
  };
  'coordinator:acquired': { holder: string; epoch: number; tookOverFrom?: string };
  /**
   * `handedOver`: the coordinator let go without stopping its workers (its window closed with
   * `baton.onWindowClose: keepRunning`); the next coordinator adopts them and drives on with the
   * same task selection. Without it, a coordinator let go because its work was done for now.
   */
  'coordinator:released': { epoch: number; handedOver?: HandOver };
  /** A coordinator on another host (or process) joined the run to execute its tasks beside the lease holder. */
  'coordinator:joined': { holder: string; epoch: number; host: string };
  /** A joined coordinator left the run, or lapsed (no renewal) and was retired by another (`lapsed`). */
  'coordinator:left': { holder: string; epoch: number; lapsed?: true };
  'stop:requested': { stopId: string; mode: StopMode; by: string; delegationId?: string };
  'stop:applied': { stopId: string; mode: StopMode; attempts: number; confirmed: boolean; delegationId?: string };
  'integration:committed': { delegationId: string; taskId: string; sourceHead: string; changedFiles: number };
  /**
   * An isolated attempt's worktree starts from the committed work of the task's attempt a person requested changes of
   * at its review (`fromDelegationId`, `commit`), not from the target branch (docs/isolation.md, "Review required").
   */
  'worktree:carried': { delegationId: string; taskId: string; fromDelegationId: string; commit: string };
  /** A conflict's resolution started in the task's worktree (docs/isolation.md, "Resolving a conflict"). */
  'integration:resolving': {
    gateId: string;
    delegationId: string;
    taskId: string;
    move: 'merge' | 'rebase';
    targetBranch: string;
    files: string[];
  };
  'integration:done': {
    delegationId: string;
    taskId: string;
    strategy: IntegrationStrategy;
    sourceHead: string;
    targetBefore: string;
    targetAfter: string;
    changedFiles: string[];
    alreadyOnTarget?: boolean;
  };
  /**
   * The merge queue (docs/isolation.md, "The merge queue"): before the target moves, the merged tree (`tree`, the
   * target at `targetHead` plus the task, combined by the run's strategy) is verified in a scratch worktree. `toRun`
   * commands run now, `reused` passed on this very tree before.
   */
  'integration:verifying': {
    delegationId: string;
    taskId: string;
    /** A batch's tasks, in order (`integrationBatch`): the tree is the target plus all of them; `taskId` the last. */
    batch?: string[];
    tree: string;
    targetHead: string;
    toRun: number;
    reused: number;
  };
  /** The merged tree passed (`approvedAt`: not run — a person approved integrating despite a failure there). */
  'integration:verified': {
    delegationId: string;
    taskId: string;
    batch?: string[];
    tree: string;
    ran: number;
    reused: number;
    approvedAt?: string;
  };
  /** A command failed on the merged tree: the target did not move, an integration_failed gate opened. */
  'integration:failed': {
    delegationId: string;
    taskId: string;
    tree: string;
    command: string[];
    exitCode: number | null;
    timedOut: boolean;
    gateId: string;
  };
  /**
   * `integration: branch` (docs/isolation.md, "Branch and pull request"): the task's branch at `sourceHead` is on
   * `remote` as `branch`; the target branch did not move (`targetHead`: where it was, the pull request's base).
   */
  'integration:pushed': {
    delegationId: string;
    taskId: string;
    remote: string;
    branch: string;
    sourceHead: string;
    targetBranch: string;
    targetHead: string;
  };
  /**
   * The pushed branch's pull request: opened by gh (`url`), or suggested — gh `absent`, `unauthenticated`, or it
   * `failed` (`detail`: its last line) — with the text in `bodyFile` and the gh command that opens it (`command`).
   */
  'integration:pull-request': {
    delegationId: string;
    taskId: string;
    branch: string;
    targetBranch: string;
    title: string;
    bodyFile: string;
    opened: boolean;
    url?: string;
    gh?: 'absent' | 'unauthenticated' | 'failed';
    detail?: string;
    command: string;
  };
  /** The remote did not take the task's branch: nothing was pushed, an integration_failed gate opened (`refusal`). */
  'integration:push-failed': {
    delegationId: string;
    taskId: string;
    remote: string;
    branch: string;
    refusal: string;
    gateId: string;
  };
  /**
   * Batching with bisection (docs/isolation.md): `taskIds`, passed and waiting, are merged onto the target at
   * `targetHead` together and verified once.
   */
  'integration:batch-started': { taskIds: string[]; targetHead: string };
  /**
   * A batch's merged tree (the target plus `failed`) failed `command`: the bisection goes on with `next` — the first
   * half of `failed`, verified next — and what is left waits its turn after it.
   */
  'integration:batch-split': {
    failed: string[];
    next: string[];
    tree: string;
    command: string[];
    exitCode: number | null;
    timedOut: boolean;
  };
  /**
   * `.baton/config.json` differs from what the run last saw (docs/architecture.md, "Trust model"): noticed by the
   * run's coordinator at a pass or by an editor window's file watcher. The run goes on with its frozen settings;
   * `changes` are worker differences (env keys, never values), `settings` the other frozen settings the file now sets
   * otherwise; `invalid` when the file no longer parses (its first problem).
   */
  'config:changed': {
    configDigest: string;
    frozenDigest: string;
    changes: string[];
    settings: string[];
    invalid?: string;
    noticedBy: 'coordinator' | 'editor';
  };
  /**
   * The run's worker definitions were frozen: from the config as it was at the first resume of a run started before
   * Baton froze them (`legacy`), or adopted from the config at an approved config_changed gate (`adopted`).
   */
  /**
   * An attempt was parked (docs/agents.md, "Usage limits park"): ended CANCELLED, not counted against maxAttempts.
   * `usage-limit`: its CLI hit its account's limit — no task starts on `worker` until `until`, when this task resumes
   * in the same session; `silence`: its silent stream was stopped (silenceAction stop) and it resumes at once.
   */
  'attempt:parked': {
    delegationId: string;
    taskId: string;
    worker: string;
    cause: 'usage-limit' | 'silence';
    until: number;
    /** What the CLI said (its limit message). */
    said?: string;
  };
  /** The next attempt of a parked task started, continuing the parked attempt's session where its CLI can. */
  'attempt:resumed': { delegationId: string; taskId: string; parkedDelegationId: string; sessionId?: string };
  /**
   * A person sent a follow-up message to a task (docs/agents.md, "Follow-up messages"): `interrupt` ended its running
   * attempt (`interruptedDelegationId`), `reopen` took the finished task back to ready, `queue` left it for the task's
   * next attempt, `send-back` requested changes of a passed attempt held at a review gate (`sentBack`: that attempt
   * and its gate, rejected). `message` is its start (at most 200 characters); follow_ups keeps all of it.
   */
  'follow-up:sent': {
    followUpId: string;
    taskId: string;
    by: string;
    action: 'interrupt' | 'reopen' | 'queue' | 'send-back';
    message: string;
    interruptedDelegationId?: string;
    /** `gateKind`: where it was held (absent in events of a Baton before integration_failed sent back: review). */
    sentBack?: { delegationId: string; gateId: string; gateKind?: 'review' | 'integration_failed' };
  };
  /**
   * An attempt started that carries follow-up messages (a follow-up attempt: not a failure retry), continuing the
   * session of the task's last attempt (`sessionId`) where its CLI can.
   */
  'attempt:follow-up': {
    delegationId: string;
    taskId: string;
    followUpIds: string[];
    by: string[];
    sessionId?: string;
  };
  /**
   * A person's review comments on an attempt's changes (docs/extension.md, "Review comments"), sent to the task's agent
   * as one follow-up message (`followUpId`, recorded in the same transaction): every comment in full, and what the
   * follow-up did to the task (`action`). `reviewed` is the attempt whose changes were commented on.
   */
  'review:sent': {
    followUpId: string;
    taskId: string;
    by: string;
    action: 'interrupt' | 'reopen' | 'queue' | 'send-back';
    reviewed?: string;
    comments: ReviewComment[];
  };
  /**
   * Files dropped from a held attempt's integration at its review gate (issue 27): a new commit on its branch
   * (`sourceHead`) puts them back as they were at its base; approving integrates only what was kept.
   */
  'review:dropped': {
    gateId: string;
    delegationId: string;
    taskId: string;
    by: string;
    files: string[];
    sourceHead: string;
  };
  /** A live agent's stream said nothing for `silentSeconds` (config silenceSeconds); `action` is what follows. */
  'attempt:silent': { delegationId: string; taskId: string; silentSeconds: number; action: 'wait' | 'stop' };
  'config:frozen': {
    digest: string;
    previousDigest?: string;
    defaultWorker: string;
    workers: string[];
    why: 'legacy' | 'adopted';
    gateId?: string;
  };
}

export type EventType = keyof EventMap;

/** The types that are rows of the event log (everything but the announced heartbeat). */
export type LoggedEventType = Exclude<EventType, 'runtime:heartbeat'>;

/**
 * An event's type with its payload, discriminated by `type`: `if (e.type === 'gate:decided') e.data.kind` needs no
 * cast.
 */
export type EventOf<K extends EventType = EventType> = { [T in K]: { type: T; data: EventMap[T] } }[K];

/** One event of a run's log (or an announced heartbeat, with no place in the log). */
export type RunEvent<K extends EventType = EventType> = EventOf<K> & { runId: string; seq: number; at: number };

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_TYPES, value);
}

/** The event types, for code that receives a type as text (a stored row, a CLI filter). */
export const EVENT_TYPES: Readonly<Record<EventType, true>> = {
  'run:created': true,
  'run:status': true,
  'run:resumed': true,
  'run:replanned': true,
  'task:status': true,
  'delegation:created': true,
  'delegation:claimed': true,
  'delegation:status': true,
  'runtime:heartbeat': true,
  'runtime:stale': true,
  'runtime:exited': true,
  'runtime:started': true,
  'delegation:prompt': true,
  'agent:usage': true,
  'gate:opened': true,
  'gate:decided': true,
  'gate:updated': true,
  'gate:answered': true,
  'ingestion:recorded': true,
  'result:checked': true,
  'verification:receipt': true,
  'coordinator:acquired': true,
  'coordinator:released': true,
  'coordinator:joined': true,
  'coordinator:left': true,
  'stop:requested': true,
  'stop:applied': true,
  'integration:committed': true,
  'worktree:carried': true,
  'review:dropped': true,
  'integration:resolving': true,
  'integration:done': true,
  'integration:verifying': true,
  'integration:verified': true,
  'integration:failed': true,
  'integration:pushed': true,
  'integration:pull-request': true,
  'integration:push-failed': true,
  'integration:batch-started': true,
  'integration:batch-split': true,
  'config:changed': true,
  'config:frozen': true,
  'attempt:parked': true,
  'attempt:resumed': true,
  'attempt:silent': true,
  'follow-up:sent': true,
  'attempt:follow-up': true,
  'review:sent': true,
};
