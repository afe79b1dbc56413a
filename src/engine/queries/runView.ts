import type { QuestionWindow } from '../domain/question';
import { listAgentUsage, type AttemptUsage } from './agentUsage';
import { BatonError } from '../domain/errors';
import type { RunEvent } from '../domain/events';
import type {
  Delegation,
  DelegationStatus,
  Gate,
  GateStatus,
  IngestionRecord,
  Run,
  Task,
  WorkerRuntime,
} from '../domain/types';
import type { StoreReader } from '../store/port';
import { readCoordinatorState, type CoordinatorState } from './coordinatorLease';
import { listAttemptWorktrees } from './worktrees';
import type { AttemptWorktree } from '../domain/isolation';
import { listReviews, type ReviewRecord } from './reviews';
import {
  DELEGATION_COLUMNS,
  GATE_COLUMNS,
  INGESTION_COLUMNS,
  RUN_COLUMNS,
  RUNTIME_SELECT,
  TASK_COLUMNS,
  toDelegation,
  toEvent,
  toGate,
  toIngestion,
  toRun,
  toRuntime,
  toTask,
  type DelegationRow,
  type EventRow,
  type GateRow,
  type IngestionRow,
  type RunRow,
  type RuntimeRow,
  type TaskRow,
} from '../store/rows';

/** A run with everything it holds: what the views, `status` and the dashboard show. */
export interface RunOverview {
  run: Run;
  tasks: Task[];
  delegations: Delegation[];
  runtimes: WorkerRuntime[];
  gates: Gate[];
  /** What each agent preset's attempt did and spent (docs/workers.md, "Tokens and cost"). */
  usage: AttemptUsage[];
  /** Who drives the run: its coordinator lease (absent while no coordinator ever took it). */
  coordinatorLease?: CoordinatorState;
  /**
   * The worktrees of its isolated attempts (docs/isolation.md), removed ones too (`removedAt`): where the editor opens
   * an attempt's worktree. Absent in a view built by hand.
   */
  worktrees?: AttemptWorktree[];
}

/** What one verify command did, as `diagnose` and the task details show it. */
export interface ReceiptView {
  delegationId: string;
  command: string[];
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  logPath: string;
}

/** One task's attempts with their receipts, log paths and ingestions (the dashboard's task details). */
export interface TaskRecord {
  delegations: Delegation[];
  receipts: ReceiptView[];
  logPaths: Map<string, string>;
  ingestions: IngestionRecord[];
  /** The review comments sent to its agent, with the attempt that carried each (docs/extension.md). */
  reviews: ReviewRecord[];
}

export async function listRuns(r: StoreReader): Promise<Run[]> {
  return (await r.all<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY ordinal DESC`)).map(toRun);
}

/** The run with this id, or the most recent run when no id is given. */
export async function findRun(r: StoreReader, runId?: string): Promise<Run> {
  const row = runId
    ? await r.get<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`, [runId])
    : await r.get<RunRow>(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY ordinal DESC LIMIT 1`);
  if (!row) {
    const why = runId ? `There is no run ${runId}.` : 'There is no run yet; claim a task or start a plan first.';
    throw new BatonError('run.unknown', why);
  }
  return toRun(row);
}

/**
 * The active run of a plan: the newest one that can still go on (running, paused, stopping).
 * A finished run — blocked and cancelled included — is never continued by starting its plan
 * again: that starts a new run.
 */
export async function activeRunOf(
  r: StoreReader,
  planPath: string,
): Promise<{ id: string; plan_digest: string } | undefined> {
  return r.get<{ id: string; plan_digest: string }>(
    `SELECT id, plan_digest FROM runs WHERE plan_path = ? AND status IN ('running', 'paused', 'stopping')
     ORDER BY ordinal DESC LIMIT 1`,
    [planPath],
  );
}

/**
 * The plan's newest run when it completed from exactly this plan text and nothing of the plan is
 * active: `baton start` then says so instead of running every task again (agent work costs money).
 */
export async function completedRunOfSamePlan(
  r: StoreReader,
  planPath: string,
  digest: string,
): Promise<string | undefined> {
  const newest = await r.get<{ id: string; status: string; plan_digest: string }>(
    `SELECT id, status, plan_digest FROM runs WHERE plan_path = ? ORDER BY ordinal DESC LIMIT 1`,
    [planPath],
  );
  return newest?.status === 'completed' && newest.plan_digest === digest ? newest.id : undefined;
}

/** Runtime statuses are derived at `now` (a lease that ran out reads as stale). */
export async function readOverview(r: StoreReader, runId: string | undefined, now: number): Promise<RunOverview> {
  const run = await findRun(r, runId);
  const coordinatorLease = await readCoordinatorState(r, run.id);
  return {
    run,
    tasks: (await r.all<TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE run_id = ? ORDER BY ordinal`, [run.id])).map(
      toTask,
    ),
    delegations: (
      await r.all<DelegationRow>(
        `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? ORDER BY created_at, id`,
        [run.id],
      )
    ).map(toDelegation),
    runtimes: (await r.all<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.run_id = ? ORDER BY r.claimed_at`, [run.id])).map(
      (row) => toRuntime(row, now),
    ),
    gates: (await r.all<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE run_id = ? ORDER BY ordinal`, [run.id])).map(
      toGate,
    ),
    usage: await listAgentUsage(r, run.id),
    ...(coordinatorLease ? { coordinatorLease } : {}),
    worktrees: await listAttemptWorktrees(r, run.id),
  };
}

export async function listDelegations(
  r: StoreReader,
  runId: string | undefined,
  status?: DelegationStatus,
): Promise<{ run: Run; delegations: Delegation[] }> {
  const run = await findRun(r, runId);
  const rows = await r.all<DelegationRow>(
    `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ?${status ? ' AND status = ?' : ''} ORDER BY created_at, id`,
    status ? [run.id, status] : [run.id],
  );
  return { run, delegations: rows.map(toDelegation) };
}

/**
 * A delegation id names one attempt of one run; without a run, the most recent run that has
 * one with this id (delegation ids repeat across runs of one plan).
 */
export async function findDelegation(r: StoreReader, delegationId: string, runId?: string): Promise<Delegation> {
  const columns = DELEGATION_COLUMNS.split(', ')
    .map((c) => `d.${c}`)
    .join(', ');
  const row = runId
    ? await r.get<DelegationRow>(`SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND id = ?`, [
        runId,
        delegationId,
      ])
    : await r.get<DelegationRow>(
        `SELECT ${columns} FROM delegations d JOIN runs ON runs.id = d.run_id WHERE d.id = ? ORDER BY runs.ordinal DESC LIMIT 1`,
        [delegationId],
      );
  if (!row) {
    throw new BatonError(
      'delegation.unknown',
      `There is no delegation ${delegationId}${runId ? ` in run ${runId}` : ''}.`,
    );
  }
  return toDelegation(row);
}

export async function listGates(r: StoreReader, filter: { runId?: string; status?: GateStatus } = {}): Promise<Gate[]> {
  const where: string[] = [];
  const params: string[] = [];
  if (filter.runId) {
    where.push('run_id = ?');
    params.push(filter.runId);
  }
  if (filter.status) {
    where.push('status = ?');
    params.push(filter.status);
  }
  const sql = `SELECT ${GATE_COLUMNS} FROM gates ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY ordinal`;
  return (await r.all<GateRow>(sql, params)).map(toGate);
}

/** One gate by id, or undefined. */
export async function findGate(r: StoreReader, gateId: string): Promise<Gate | undefined> {
  const row = await r.get<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE id = ?`, [gateId]);
  return row ? toGate(row) : undefined;
}

/** When each question of an attempt waited for a person (the task timeout does not count it: checkTaskTimeout). */
export async function questionWindows(r: StoreReader, runId: string, delegationId: string): Promise<QuestionWindow[]> {
  const rows = await r.all<{ opened_at: number; decided_at: number | null }>(
    `SELECT opened_at, decided_at FROM gates WHERE run_id = ? AND delegation_id = ? AND kind = 'question'`,
    [runId, delegationId],
  );
  return rows.map((g) => ({ openedAt: g.opened_at, ...(g.decided_at !== null ? { decidedAt: g.decided_at } : {}) }));
}

/** Workers new to a run whose adoption a person rejected at a config_changed gate. */
export async function rejectedNewWorkers(r: StoreReader, runId: string): Promise<Set<string>> {
  const rows = await r.all<{ details_json: string }>(
    `SELECT details_json FROM gates WHERE run_id = ? AND kind = 'config_changed' AND status = 'rejected'`,
    [runId],
  );
  const ids = new Set<string>();
  for (const row of rows) {
    const changes = (JSON.parse(row.details_json) as { changes?: Array<{ kind?: string; workerId?: string }> }).changes;
    for (const change of changes ?? []) if (change.kind === 'added' && change.workerId) ids.add(change.workerId);
  }
  return ids;
}

/** A run's ingestion records, oldest first. */
export async function listIngestions(r: StoreReader, runId: string): Promise<IngestionRecord[]> {
  return (
    await r.all<IngestionRow>(`SELECT ${INGESTION_COLUMNS} FROM ingestions WHERE run_id = ? ORDER BY created_at, id`, [
      runId,
    ])
  ).map(toIngestion);
}

/** A run's events after `afterSeq`, in order, with their store-wide id. */
export async function listEvents(
  r: StoreReader,
  runId: string,
  afterSeq: number,
  limit: number,
): Promise<Array<RunEvent & { id: number }>> {
  const rows = await r.all<EventRow>(
    `SELECT id, run_id, seq, type, at, data_json FROM events WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    [runId, afterSeq, limit],
  );
  return rows.map((row) => ({ ...toEvent(row), id: row.id }));
}

/** Every run's events after a store-wide id, in commit order (what the engine announces). */
export async function eventsSince(r: StoreReader, afterId: number): Promise<Array<RunEvent & { id: number }>> {
  const rows = await r.all<EventRow>(
    `SELECT id, run_id, seq, type, at, data_json FROM events WHERE id > ? ORDER BY id`,
    [afterId],
  );
  return rows.map((row) => ({ ...toEvent(row), id: row.id }));
}

export async function lastEventId(r: StoreReader): Promise<number> {
  return (await r.get<{ id: number | null }>(`SELECT MAX(id) AS id FROM events`))?.id ?? 0;
}

/** The runtimes that hold a live lease on a RUNNING attempt, in every run. */
export function liveRuntimes(r: StoreReader): Promise<RuntimeRow[]> {
  return r.all<RuntimeRow>(`${RUNTIME_SELECT} WHERE r.ended_at IS NULL AND d.status = 'RUNNING'`);
}

export function toReceiptView(x: {
  delegation_id: string;
  command_json: string;
  exit_code: number | null;
  timed_out: number;
  duration_ms: number;
  log_path: string;
}): ReceiptView {
  return {
    delegationId: x.delegation_id,
    command: JSON.parse(x.command_json) as string[],
    exitCode: x.exit_code,
    timedOut: x.timed_out === 1,
    durationMs: x.duration_ms,
    logPath: x.log_path,
  };
}

const RECEIPT_COLUMNS = 'delegation_id, command_json, exit_code, timed_out, duration_ms, log_path';

/** The verification receipts of a run (or of one task), in the order they were recorded. */
export async function listReceipts(r: StoreReader, runId: string, taskId?: string): Promise<ReceiptView[]> {
  const rows = await r.all<Parameters<typeof toReceiptView>[0]>(
    `SELECT ${RECEIPT_COLUMNS} FROM verification_receipts WHERE run_id = ?${taskId ? ' AND task_id = ?' : ''} ORDER BY id`,
    taskId ? [runId, taskId] : [runId],
  );
  return rows.map(toReceiptView);
}

export async function readTaskRecord(r: StoreReader, runId: string, taskId: string): Promise<TaskRecord> {
  const delegations = (
    await r.all<DelegationRow>(
      `SELECT ${DELEGATION_COLUMNS} FROM delegations WHERE run_id = ? AND task_id = ? ORDER BY created_at, id`,
      [runId, taskId],
    )
  ).map(toDelegation);
  const ids = delegations.map((d) => d.id);
  const inIds = ids.map(() => '?').join(', ');
  const logs = ids.length
    ? await r.all<{ delegation_id: string; log_path: string }>(
        `SELECT delegation_id, log_path FROM runtimes WHERE run_id = ? AND log_path IS NOT NULL AND delegation_id IN (${inIds})`,
        [runId, ...ids],
      )
    : [];
  const ingestions = ids.length
    ? (
        await r.all<IngestionRow>(
          `SELECT ${INGESTION_COLUMNS} FROM ingestions WHERE run_id = ? AND delegation_id IN (${inIds}) ORDER BY created_at, id`,
          [runId, ...ids],
        )
      ).map(toIngestion)
    : [];
  return {
    delegations,
    receipts: await listReceipts(r, runId, taskId),
    logPaths: new Map(logs.map((l) => [l.delegation_id, l.log_path])),
    ingestions,
    reviews: await listReviews(r, runId, taskId),
  };
}

/** How many of the run's worktrees are still on disk. */
export async function countLiveWorktrees(r: StoreReader, runId: string): Promise<number> {
  const row = await r.get<{ n: number }>(
    `SELECT COUNT(*) AS n FROM worktrees WHERE run_id = ? AND removed_at IS NULL`,
    [runId],
  );
  return row?.n ?? 0;
}
