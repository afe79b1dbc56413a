import type { AgentActivity, AgentKind } from '../../domain/agents/agentActivity';
import type { Permissions } from '../../domain/agents/presets';
import type { StoreTx } from '../../store/port';
import { appendEvent } from '../events/appendEvent';

export interface AgentUsageInput {
  runId: string;
  delegationId: string;
  taskId: string;
  /** The plan's agent name (coder, reviewer): usage adds up per agent too. */
  agent: string;
  kind: AgentKind;
  /** The permissions the CLI enforced for this attempt (what the launch asked of it). */
  permissions: Permissions;
  activity: AgentActivity;
  /** Where the cost came from: the CLI's own figure, or Baton's price table; absent when unknown. */
  costSource?: 'cli' | 'priced';
  costUsd?: number;
  /** The attempt ended: its figures are final and an `agent:usage` event records them. */
  final?: boolean;
}

/**
 * What an agent preset's attempt did and cost so far — tokens, cost, turns, tool calls, what it
 * does now — one row per attempt, rewritten as its stream goes on (the latest figures win).
 */
export async function recordAgentUsage(tx: StoreTx, input: AgentUsageInput, now: number): Promise<void> {
  const a = input.activity;
  await tx.run(
    `INSERT INTO agent_usage (run_id, delegation_id, task_id, agent, kind, session_id, model, permissions_json,
       input_tokens, output_tokens, cost_usd, cost_source, turns, tool_calls, failed_tool_calls, activity, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (run_id, delegation_id) DO UPDATE SET session_id = excluded.session_id, model = excluded.model,
       input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, cost_usd = excluded.cost_usd,
       cost_source = excluded.cost_source, turns = excluded.turns, tool_calls = excluded.tool_calls,
       failed_tool_calls = excluded.failed_tool_calls, activity = excluded.activity, updated_at = excluded.updated_at`,
    [
      input.runId,
      input.delegationId,
      input.taskId,
      input.agent,
      input.kind,
      a.sessionId ?? null,
      a.model ?? null,
      JSON.stringify(input.permissions),
      a.inputTokens,
      a.outputTokens,
      input.costUsd ?? null,
      input.costSource ?? null,
      a.turns,
      a.toolCalls,
      a.failedToolCalls,
      a.current ?? null,
      now,
    ],
  );
  if (!input.final) return;
  await appendEvent(tx, input.runId, 'agent:usage', now, {
    delegationId: input.delegationId,
    taskId: input.taskId,
    agent: input.agent,
    kind: input.kind,
    ...(a.sessionId ? { sessionId: a.sessionId } : {}),
    ...(a.model ? { model: a.model } : {}),
    inputTokens: a.inputTokens,
    outputTokens: a.outputTokens,
    ...(input.costUsd !== undefined ? { costUsd: input.costUsd } : {}),
    turns: a.turns,
    toolCalls: a.toolCalls,
  });
}
