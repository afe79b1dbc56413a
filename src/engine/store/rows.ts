import type { Issue } from '../domain/issue';
import { deriveRuntimeStatus } from '../domain/transitions';
import type {
  Delegation,
  DelegationStatus,
  Gate,
  GateKind,
  GateStatus,
  IngestionRecord,
  ResultStatus,
  Run,
  RunEvent,
  RunStatus,
  StopMode,
  Task,
  TaskStatus,
  WorkerRuntime,
} from '../domain/types';

/** Column lists and row mappers: the one place that knows how the model is laid out in SQL. */
export interface RunRow {
  id: string;
  plan_path: string;
  plan_digest: string;
  status: string;
  created_at: number;
  updated_at: number;
  superseded_by: string | null;
  stop_mode: string | null;
}
export const RUN_COLUMNS = 'id, plan_path, plan_digest, status, created_at, updated_at, superseded_by, stop_mode';
export function toRun(r: RunRow): Run {
  return {
    id: r.id,
    planPath: r.plan_path,
    planDigest: r.plan_digest,
    status: r.status as RunStatus,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(r.superseded_by !== null ? { supersededBy: r.superseded_by } : {}),
    ...(r.stop_mode ? { stopMode: r.stop_mode as StopMode } : {}),
  };
}

export interface TaskRow {
  run_id: string;
  id: string;
  title: string;
  agent: string;
  worker: string | null;
  depends_json: string;
  risk_json: string;
  files_json: string;
  verify_json: string;
  instructions: string;
  line: number;
  status: string;
  status_reason: string | null;
  isolation: string | null;
  permissions_json: string | null;
}
export const TASK_COLUMNS =
  'run_id, id, title, agent, worker, depends_json, risk_json, files_json, verify_json, instructions, line, status, status_reason, isolation, permissions_json';
export function toTask(r: TaskRow): Task {
  return {
    runId: r.run_id,
    id: r.id,
    title: r.title,
    agent: r.agent,
    ...(r.worker ? { worker: r.worker } : {}),
    depends: JSON.parse(r.depends_json) as string[],
    risk: JSON.parse(r.risk_json) as string[],
    files: JSON.parse(r.files_json) as string[],
    verify: JSON.parse(r.verify_json) as string[][],
    instructions: r.instructions,
    line: r.line,
    status: r.status as TaskStatus,
    ...(r.status_reason ? { statusReason: r.status_reason } : {}),
    ...(r.isolation ? { isolation: r.isolation as NonNullable<Task['isolation']> } : {}),
    ...(r.permissions_json ? { permissions: JSON.parse(r.permissions_json) as NonNullable<Task['permissions']> } : {}),
  };
}

export interface DelegationRow {
  run_id: string;
  id: string;
  task_id: string;
  agent: string;
  attempt: number;
  status: string;
  reason: string | null;
  runtime_id: string | null;
  result_status: string | null;
  artifact_path: string | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
  prompt_sha256: string | null;
  prompt_bytes: number | null;
  prompt_truncated: number | null;
  follow_up: number | null;
}
export const DELEGATION_COLUMNS =
  'run_id, id, task_id, agent, attempt, status, reason, runtime_id, result_status, artifact_path, created_at, updated_at, started_at, finished_at, prompt_sha256, prompt_bytes, prompt_truncated, follow_up';
export function toDelegation(r: DelegationRow): Delegation {
  return {
    runId: r.run_id,
    id: r.id,
    taskId: r.task_id,
    agent: r.agent,
    attempt: r.attempt,
    status: r.status as DelegationStatus,
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.runtime_id ? { runtimeId: r.runtime_id } : {}),
    ...(r.result_status ? { resultStatus: r.result_status as ResultStatus } : {}),
    ...(r.artifact_path ? { artifactPath: r.artifact_path } : {}),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    ...(r.started_at !== null ? { startedAt: r.started_at } : {}),
    ...(r.finished_at !== null ? { finishedAt: r.finished_at } : {}),
    ...(r.prompt_sha256 !== null
      ? { prompt: { sha256: r.prompt_sha256, bytes: r.prompt_bytes ?? 0, truncated: r.prompt_truncated === 1 } }
      : {}),
    ...(Number(r.follow_up) === 1 ? { followUp: true } : {}),
  };
}

export interface RuntimeRow {
  id: string;
  run_id: string;
  delegation_id: string;
  token_hash: string;
  epoch: number;
  lease_ms: number;
  lease_expires_at: number;
  claimed_at: number;
  last_heartbeat_at: number | null;
  heartbeat_count: number;
  progress: string | null;
  holder: string | null;
  ended_at: number | null;
  end_reason: string | null;
  pid: number | null;
  pid_start: string | null;
  host: string | null;
  pid_namespace: string | null;
  process_started_at: number | null;
  worker_beat_at: number | null;
  delegation_status: string;
}
/** Runtime columns joined with their delegation's status (needed to derive the runtime status). */
export const RUNTIME_SELECT = `SELECT r.id, r.run_id, r.delegation_id, r.token_hash, r.epoch, r.lease_ms, r.lease_expires_at, r.claimed_at,
  r.last_heartbeat_at, r.heartbeat_count, r.progress, r.holder, r.ended_at, r.end_reason, r.pid, r.pid_start, r.host,
  r.pid_namespace, r.process_started_at, r.worker_beat_at, d.status AS delegation_status
  FROM runtimes r JOIN delegations d ON d.run_id = r.run_id AND d.id = r.delegation_id`;
export function toRuntime(r: RuntimeRow, now: number): WorkerRuntime {
  return {
    id: r.id,
    runId: r.run_id,
    delegationId: r.delegation_id,
    epoch: r.epoch,
    leaseMs: r.lease_ms,
    leaseExpiresAt: r.lease_expires_at,
    claimedAt: r.claimed_at,
    ...(r.last_heartbeat_at !== null ? { lastHeartbeatAt: r.last_heartbeat_at } : {}),
    heartbeatCount: r.heartbeat_count,
    ...(r.progress !== null ? { progress: r.progress } : {}),
    ...(r.holder !== null ? { holder: r.holder } : {}),
    ...(r.ended_at !== null ? { endedAt: r.ended_at } : {}),
    ...(r.end_reason !== null ? { endReason: r.end_reason } : {}),
    ...(r.pid !== null ? { pid: r.pid } : {}),
    ...(r.host !== null ? { host: r.host } : {}),
    ...(r.pid_start !== null ? { pidStart: r.pid_start } : {}),
    ...(r.pid_namespace !== null ? { pidNamespace: r.pid_namespace } : {}),
    ...(r.process_started_at !== null ? { processStartedAt: r.process_started_at } : {}),
    ...(r.worker_beat_at !== null ? { workerBeatAt: r.worker_beat_at } : {}),
    status: deriveRuntimeStatus(
      {
        delegationStatus: r.delegation_status as DelegationStatus,
        heartbeatCount: r.heartbeat_count,
        leaseExpiresAt: r.lease_expires_at,
        endedAt: r.ended_at ?? undefined,
      },
      now,
    ),
  };
}

export interface GateRow {
  id: string;
  run_id: string;
  task_id: string | null;
  delegation_id: string | null;
  kind: string;
  status: string;
  reason: string;
  details_json: string;
  opened_at: number;
  decided_at: number | null;
  decided_by: string | null;
  note: string | null;
}
export const GATE_COLUMNS =
  'id, run_id, task_id, delegation_id, kind, status, reason, details_json, opened_at, decided_at, decided_by, note';
export function toGate(r: GateRow): Gate {
  return {
    id: r.id,
    runId: r.run_id,
    ...(r.task_id ? { taskId: r.task_id } : {}),
    ...(r.delegation_id ? { delegationId: r.delegation_id } : {}),
    kind: r.kind as GateKind,
    status: r.status as GateStatus,
    reason: r.reason,
    details: JSON.parse(r.details_json) as Record<string, unknown>,
    openedAt: r.opened_at,
    ...(r.decided_at !== null ? { decidedAt: r.decided_at } : {}),
    ...(r.decided_by !== null ? { decidedBy: r.decided_by } : {}),
    ...(r.note !== null ? { note: r.note } : {}),
  };
}

export interface IngestionRow {
  id: string;
  run_id: string;
  delegation_id: string;
  artifact_path: string;
  digest: string;
  accepted: number;
  result_status: string | null;
  issues_json: string;
  created_at: number;
}
export const INGESTION_COLUMNS =
  'id, run_id, delegation_id, artifact_path, digest, accepted, result_status, issues_json, created_at';
export function toIngestion(r: IngestionRow): IngestionRecord {
  return {
    id: r.id,
    runId: r.run_id,
    delegationId: r.delegation_id,
    artifactPath: r.artifact_path,
    digest: r.digest,
    accepted: r.accepted === 1,
    ...(r.result_status ? { resultStatus: r.result_status as ResultStatus } : {}),
    issues: JSON.parse(r.issues_json) as Issue[],
    createdAt: r.created_at,
  };
}

export interface EventRow {
  id: number;
  run_id: string;
  seq: number;
  type: string;
  at: number;
  data_json: string;
}
/** A row of the event log. Its type and payload were written through EventMap (appendEvent). */
export function toEvent(r: EventRow): RunEvent {
  return { runId: r.run_id, seq: r.seq, type: r.type, at: r.at, data: JSON.parse(r.data_json) } as RunEvent;
}

/**
 * One string field of a gate's `details_json` (undefined when absent or not a string). JSON is taken apart here, not
 * in SQL: JSON functions are not in the portable SQL subset both backends run (docs/architecture.md).
 */
export function jsonField(detailsJson: string | null, key: string): string | undefined {
  if (!detailsJson) return undefined;
  const value = (JSON.parse(detailsJson) as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}
