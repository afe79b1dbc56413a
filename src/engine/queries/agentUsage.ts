import type { AgentKind } from '../domain/agents/agentActivity';
import type { Spend, SpendSoFar } from '../domain/agents/budget';
import type { BeatUsage } from '../domain/events';
import { BatonError } from '../domain/errors';
import type { RunSettings } from '../domain/runSettings';
import type { StoreReader } from '../store/port';

type Reader = Pick<StoreReader, 'get' | 'all'>;

interface SpendRow {
  tokens: number | null;
  cost: number | null;
}

const spend = (row: SpendRow | undefined): Spend => ({
  tokens: row?.tokens ?? 0,
  ...(row?.cost !== null && row?.cost !== undefined ? { costUsd: row.cost } : {}),
});

/**
 * What a run, one of its tasks and one of its agents spent so far by the stored usage of
 * their attempts — without `exclude` (the attempt in flight, whose figures the caller adds).
 */
export async function spendSoFar(
  r: Reader,
  runId: string,
  scope: { taskId: string; agent: string; exclude?: string },
): Promise<SpendSoFar> {
  const sum = `SELECT SUM(input_tokens + output_tokens) AS tokens, SUM(cost_usd) AS cost FROM agent_usage
    WHERE run_id = ? AND delegation_id <> ?`;
  const exclude = scope.exclude ?? '';
  const [run, task, agent] = await Promise.all([
    r.get<SpendRow>(sum, [runId, exclude]),
    r.get<SpendRow>(`${sum} AND task_id = ?`, [runId, exclude, scope.taskId]),
    r.get<SpendRow>(`${sum} AND agent = ?`, [runId, exclude, scope.agent]),
  ]);
  return { run: spend(run), task: spend(task), agent: spend(agent) };
}

/** The agent session a task's latest attempt of this CLI left, for a retry that continues it. */
export async function lastAgentSession(
  r: Reader,
  runId: string,
  taskId: string,
  kind: AgentKind,
): Promise<string | undefined> {
  const row = await r.get<{ session_id: string }>(
    `SELECT u.session_id FROM agent_usage u JOIN delegations d ON d.run_id = u.run_id AND d.id = u.delegation_id
     WHERE u.run_id = ? AND u.task_id = ? AND u.kind = ? AND u.session_id IS NOT NULL
     ORDER BY d.attempt DESC LIMIT 1`,
    [runId, taskId, kind],
  );
  return row?.session_id;
}

/**
 * The tokens a task's earlier attempts spent in one agent session: what a CLI that counts the
 * whole thread (Codex) has already reported before an attempt that continues the session.
 */
export async function sessionTotalsBefore(
  r: Reader,
  runId: string,
  taskId: string,
  sessionId: string,
): Promise<{ inputTokens: number; outputTokens: number }> {
  const row = await r.get<{ input: number | null; output: number | null }>(
    `SELECT SUM(input_tokens) AS input, SUM(output_tokens) AS output FROM agent_usage
     WHERE run_id = ? AND task_id = ? AND session_id = ?`,
    [runId, taskId, sessionId],
  );
  return { inputTokens: row?.input ?? 0, outputTokens: row?.output ?? 0 };
}

/** One attempt's usage as the views and reports show it. */
export interface AttemptUsage {
  delegationId: string;
  taskId: string;
  agent: string;
  kind: AgentKind;
  sessionId?: string;
  model?: string;
  permissions: { profile: string; allowTools?: string[]; denyTools?: string[] };
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
  costSource?: 'cli' | 'priced';
  turns: number;
  toolCalls: number;
  failedToolCalls: number;
  activity?: string;
  updatedAt: number;
}

interface UsageRow {
  delegation_id: string;
  task_id: string;
  agent: string;
  kind: AgentKind;
  session_id: string | null;
  model: string | null;
  permissions_json: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number | null;
  cost_source: 'cli' | 'priced' | null;
  turns: number;
  tool_calls: number;
  failed_tool_calls: number;
  activity: string | null;
  updated_at: number;
}

export async function listAgentUsage(r: Reader, runId: string): Promise<AttemptUsage[]> {
  const rows = await r.all<UsageRow>(
    `SELECT delegation_id, task_id, agent, kind, session_id, model, permissions_json, input_tokens, output_tokens,
       cost_usd, cost_source, turns, tool_calls, failed_tool_calls, activity, updated_at
     FROM agent_usage WHERE run_id = ? ORDER BY updated_at`,
    [runId],
  );
  return rows.map((u) => ({
    delegationId: u.delegation_id,
    taskId: u.task_id,
    agent: u.agent,
    kind: u.kind,
    ...(u.session_id ? { sessionId: u.session_id } : {}),
    ...(u.model ? { model: u.model } : {}),
    permissions: JSON.parse(u.permissions_json) as AttemptUsage['permissions'],
    inputTokens: u.input_tokens,
    outputTokens: u.output_tokens,
    ...(u.cost_usd !== null ? { costUsd: u.cost_usd } : {}),
    ...(u.cost_source ? { costSource: u.cost_source } : {}),
    turns: u.turns,
    toolCalls: u.tool_calls,
    failedToolCalls: u.failed_tool_calls,
    ...(u.activity ? { activity: u.activity } : {}),
    updatedAt: u.updated_at,
  }));
}

/** Usage added up: per task, per agent, and for the run (what `status`, `diagnose` and the views show). */
export interface UsageTotals {
  run: Spend & { inputTokens: number; outputTokens: number };
  byTask: Record<string, Spend>;
  byAgent: Record<string, Spend>;
}

export function totalUsage(usage: readonly AttemptUsage[]): UsageTotals {
  const add = (into: Spend, u: AttemptUsage): Spend => ({
    tokens: into.tokens + u.inputTokens + u.outputTokens,
    ...(into.costUsd !== undefined || u.costUsd !== undefined
      ? { costUsd: (into.costUsd ?? 0) + (u.costUsd ?? 0) }
      : {}),
  });
  const totals: UsageTotals = { run: { tokens: 0, inputTokens: 0, outputTokens: 0 }, byTask: {}, byAgent: {} };
  for (const u of usage) {
    totals.run = {
      ...add(totals.run, u),
      inputTokens: totals.run.inputTokens + u.inputTokens,
      outputTokens: totals.run.outputTokens + u.outputTokens,
    };
    totals.byTask[u.taskId] = add(totals.byTask[u.taskId] ?? { tokens: 0 }, u);
    totals.byAgent[u.agent] = add(totals.byAgent[u.agent] ?? { tokens: 0 }, u);
  }
  return totals;
}

/** The worker id an attempt was started with (runtimes.worker), if it was started by a coordinator. */
export async function attemptWorker(r: Reader, runId: string, delegationId: string): Promise<string | undefined> {
  const row = await r.get<{ worker: string | null }>(
    `SELECT worker FROM runtimes WHERE run_id = ? AND delegation_id = ? ORDER BY claimed_at DESC LIMIT 1`,
    [runId, delegationId],
  );
  return row?.worker ?? undefined;
}

/**
 * The usage rows of the attempts whose runtime holds a live lease, keyed `runId/delegationId`:
 * what their heartbeats carry to the views (EventAnnouncer).
 */
export async function liveAttemptUsage(r: Reader): Promise<Map<string, BeatUsage>> {
  const rows = await r.all<{
    run_id: string;
    delegation_id: string;
    input_tokens: number;
    output_tokens: number;
    cost_usd: number | null;
    cost_source: 'cli' | 'priced' | null;
    turns: number;
    tool_calls: number;
    failed_tool_calls: number;
  }>(
    `SELECT u.run_id, u.delegation_id, u.input_tokens, u.output_tokens, u.cost_usd, u.cost_source, u.turns,
       u.tool_calls, u.failed_tool_calls
     FROM agent_usage u
     JOIN runtimes rt ON rt.run_id = u.run_id AND rt.delegation_id = u.delegation_id AND rt.ended_at IS NULL
     JOIN delegations d ON d.run_id = u.run_id AND d.id = u.delegation_id AND d.status = 'RUNNING'`,
  );
  return new Map(
    rows.map((u) => [
      `${u.run_id}/${u.delegation_id}`,
      {
        inputTokens: u.input_tokens,
        outputTokens: u.output_tokens,
        ...(u.cost_usd !== null ? { costUsd: u.cost_usd } : {}),
        ...(u.cost_source ? { costSource: u.cost_source } : {}),
        turns: u.turns,
        toolCalls: u.tool_calls,
        failedToolCalls: u.failed_tool_calls,
      },
    ]),
  );
}

/** Where a delegation's latest attempt worked and logged, and its agent preset (kind null for other workers). */
export interface AttemptTrail {
  cwd: string | null;
  logPath: string | null;
  kind: string | null;
}

/**
 * The run's settings and where the delegation's latest attempt worked (undefined: it never ran), in one statement: what
 * judging a result for it reads (usecases/ingestArtifact.ts, `judgingFactsOf`).
 */
export async function settingsAndAttemptTrail(
  r: Reader,
  runId: string,
  delegationId: string,
): Promise<{ settings: RunSettings; attempt: AttemptTrail | undefined }> {
  const row = await r.get<AttemptTrail & { config_json: string; runtime_id: string | null }>(
    `SELECT ru.config_json, r.id AS runtime_id, r.cwd AS cwd, r.log_path AS "logPath", u.kind AS kind FROM runs ru
       LEFT JOIN runtimes r ON r.run_id = ru.id AND r.id = (SELECT latest.id FROM runtimes latest
         WHERE latest.run_id = ru.id AND latest.delegation_id = ? ORDER BY latest.claimed_at DESC LIMIT 1)
       LEFT JOIN agent_usage u ON u.run_id = r.run_id AND u.delegation_id = r.delegation_id
     WHERE ru.id = ?`,
    [delegationId, runId],
  );
  if (!row) throw new BatonError('run.unknown', `There is no run ${runId}.`);
  return {
    settings: JSON.parse(row.config_json) as RunSettings,
    attempt: row.runtime_id === null ? undefined : { cwd: row.cwd, logPath: row.logPath, kind: row.kind },
  };
}
