import type { Permissions } from './agents/presets';
import type { Issue, Range } from './issue';

export const RUN_STATUSES = [
  'running',
  'paused',
  'stopping',
  'completed',
  'failed',
  'blocked',
  'cancelled',
  'superseded',
] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * A run in one of these states does nothing more by itself: no task of it can start again.
 * `blocked` is among them (what is left depends on work that failed or was cancelled); a new
 * try is a new run (or a replan). The editor files them under History.
 */
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = [
  'completed',
  'failed',
  'blocked',
  'cancelled',
  'superseded',
];

export function isFinishedRun(status: RunStatus): boolean {
  return FINISHED_RUN_STATUSES.includes(status);
}

export const TASK_STATUSES = [
  'pending',
  'ready',
  'gated',
  'running',
  'verifying',
  'completed',
  'failed',
  'blocked',
  'skipped',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const DELEGATION_STATUSES = [
  'PENDING',
  'RUNNING',
  'COMPLETED',
  'FAILED',
  'BLOCKED',
  'CANCELLED',
  'STALE',
] as const;
export type DelegationStatus = (typeof DELEGATION_STATUSES)[number];

export const RUNTIME_STATUSES = ['claimed', 'active', 'stale', 'terminal', 'blocked'] as const;
export type RuntimeStatus = (typeof RUNTIME_STATUSES)[number];

export const GATE_KINDS = [
  'risk_approval',
  'manual_handoff',
  'ingestion_failed',
  'verification_failed',
  'integration_conflict',
  'budget',
  'isolation',
  // The run's target branch moved backwards or sideways since Baton last saw it (docs/isolation.md).
  'target_moved',
  // An attempt changed files outside its task's `files:` declaration (docs/isolation.md).
  'undeclared_files',
  // A passed task's merged tree (the target plus its change) failed a verify command (docs/isolation.md,
  // "The merge queue").
  'integration_failed',
  // The config's worker definitions differ from those the run froze (docs/architecture.md, "Trust model").
  'config_changed',
  // An attempt's agent asks a person (baton_ask, baton ask): answered, not approved or rejected (docs/agents.md).
  'question',
  // A passed task waits for a person's review before its work is integrated (config review: required;
  // docs/extension.md, "Review required").
  'review',
] as const;
export type GateKind = (typeof GATE_KINDS)[number];

// `answered`: a question gate's only decision by a person; closed without an answer it is `rejected` (by baton).
export const GATE_STATUSES = ['open', 'approved', 'rejected', 'answered'] as const;
export type GateStatus = (typeof GATE_STATUSES)[number];

export type GateDecision = 'approved' | 'rejected';
export type StopMode = 'graceful' | 'immediate';
export type IntegrationStrategy = 'merge' | 'rebase' | 'cherry-pick' | 'branch';

export const RESULT_STATUSES = ['PASS', 'FAIL', 'BLOCKED'] as const;
export type ResultStatus = (typeof RESULT_STATUSES)[number];

/** One task as written in a plan file (DESIGN §6, docs/plan-format.md). */
export interface PlanTask {
  id: string;
  title: string;
  agent: string;
  worker?: string;
  depends: string[];
  risk: string[];
  files: string[];
  /** Each verify command is an argv array; it never passes through a shell. */
  verify: string[][];
  /** Overrides the run's isolation for this task (docs/isolation.md). */
  isolation?: 'worktree' | 'none';
  /** What its agent may do (agent presets; docs/workers.md, "Permission profiles"). */
  permissions?: Permissions;
  /** The free text after the block: the task's instructions. */
  instructions: string;
  /** Where the `baton-task` block sits in the markdown (the fence lines included). */
  range: Range;
}

export interface ParsedPlan {
  tasks: PlanTask[];
  issues: Issue[];
}

export interface Run {
  id: string;
  planPath: string;
  planDigest: string;
  status: RunStatus;
  createdAt: number;
  updatedAt: number;
  /** The run a replan mapped this one onto (status `superseded`). */
  supersededBy?: string;
  /** A stop in force (nothing new is dispatched until it is lifted by resume). */
  stopMode?: StopMode;
}

export interface Task {
  runId: string;
  id: string;
  title: string;
  agent: string;
  worker?: string;
  depends: string[];
  risk: string[];
  files: string[];
  verify: string[][];
  instructions: string;
  line: number;
  status: TaskStatus;
  statusReason?: string;
  isolation?: 'worktree' | 'none';
  permissions?: Permissions;
}

export interface Delegation {
  runId: string;
  id: string;
  taskId: string;
  agent: string;
  attempt: number;
  status: DelegationStatus;
  reason?: string;
  runtimeId?: string;
  resultStatus?: ResultStatus;
  artifactPath?: string;
  createdAt: number;
  updatedAt: number;
  startedAt?: number;
  finishedAt?: number;
  /** The exact prompt the attempt got (prompt provenance): its sha256, its length in bytes, whether it was cut. */
  prompt?: { sha256: string; bytes: number; truncated: boolean };
  /** A follow-up: the attempt carried a person's message no attempt carried before (docs/agents.md). Not a retry. */
  followUp?: true;
}

export interface WorkerRuntime {
  id: string;
  runId: string;
  delegationId: string;
  epoch: number;
  leaseMs: number;
  leaseExpiresAt: number;
  claimedAt: number;
  lastHeartbeatAt?: number;
  heartbeatCount: number;
  progress?: string;
  holder?: string;
  endedAt?: number;
  endReason?: string;
  /** The worker's process, once started (absent for an external claim, or before the spawn). */
  pid?: number;
  host?: string;
  /** Its start time (Linux): with pid and host, the process's identity (domain/process.ts). */
  pidStart?: string;
  /** The PID namespace it was started in, where it was (domain/process.ts, `runsUnderWorker`). */
  pidNamespace?: string;
  /**
   * A look at the machine found the recorded process gone (same host, pid and start time no
   * longer running), though its attempt is not settled yet: no coordinator watched it end.
   */
  processGone?: true;
  /** When the worker's process was recorded: how long Baton's supervisor has seen it. */
  processStartedAt?: number;
  /**
   * The last heartbeat the worker sent itself (`baton heartbeat`). `lastHeartbeatAt` also counts the
   * coordinator's renewals of a process it supervises.
   */
  workerBeatAt?: number;
  /** Derived from the delegation and the lease at read time (never stored). */
  status: RuntimeStatus;
}

export interface Gate {
  id: string;
  runId: string;
  taskId?: string;
  delegationId?: string;
  kind: GateKind;
  status: GateStatus;
  reason: string;
  details: Record<string, unknown>;
  openedAt: number;
  decidedAt?: number;
  decidedBy?: string;
  note?: string;
}

export interface IngestionRecord {
  id: string;
  runId: string;
  delegationId: string;
  artifactPath: string;
  digest: string;
  accepted: boolean;
  resultStatus?: ResultStatus;
  issues: Issue[];
  createdAt: number;
}

export type { EventMap, EventType, RunEvent } from './events';
