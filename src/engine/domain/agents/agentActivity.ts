import type { AgentEvent, AgentStreamParser, ParserOptions } from './agentEvents';
import { claudeCodeParser } from './claudeCode';
import { codexParser } from './codex';
import { geminiCliParser } from './geminiCli';
import { opencodeParser } from './opencode';
import type { Permissions } from './presets';

export const AGENT_KINDS = ['claude-code', 'codex', 'gemini', 'opencode'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];

export function isAgentKind(value: unknown): value is AgentKind {
  return (AGENT_KINDS as readonly unknown[]).includes(value);
}

/** The agent behind an attempt: which CLI's stream, the plan's agent name (budgets add up per agent), its
 * permissions. */
export interface AttemptAgent {
  kind: AgentKind;
  agent: string;
  permissions: Permissions;
  /** The model its worker is configured with: what its tokens are priced by unless the CLI names another. */
  model?: string;
  /** A continued session's tokens before this attempt (Codex reports the thread's totals). */
  priorTotals?: { inputTokens: number; outputTokens: number };
}

/**
 * The activity an attempt starts from: nothing done, and the configured model, so that a CLI
 * whose stream names no model (Codex) is still priced by `prices` and a `usd` budget binds it.
 * A model the stream reports replaces it.
 */
export function startingActivity(agent: Pick<AttemptAgent, 'model'>): AgentActivity {
  return { ...emptyActivity(), ...(agent.model ? { model: agent.model } : {}) };
}

export function agentStreamParser(kind: AgentKind, options: ParserOptions = {}): AgentStreamParser {
  switch (kind) {
    case 'claude-code':
      return claudeCodeParser(options);
    case 'codex':
      return codexParser(options);
    case 'gemini':
      return geminiCliParser(options);
    case 'opencode':
      return opencodeParser(options);
  }
}

/** What an attempt's agent has done so far, folded from its events: what the views show and budgets count. */
export interface AgentActivity {
  sessionId?: string;
  model?: string;
  turns: number;
  toolCalls: number;
  /** Tool calls that failed or were refused (by the CLI's own permission controls, for one). */
  failedToolCalls: number;
  /** What it does now, for a person: the tool call in flight, else the last thing it did or said. */
  current?: string;
  /** Tokens and cost of this attempt (cost only where the CLI prices its calls). */
  inputTokens: number;
  outputTokens: number;
  costUsd?: number;
  errors: string[];
  ended?: { ok: boolean; finalText?: string };
}

export function emptyActivity(): AgentActivity {
  return { turns: 0, toolCalls: 0, failedToolCalls: 0, inputTokens: 0, outputTokens: 0, errors: [] };
}

/** Tools that run a command: shown "Bash: npm test"; the others "Edit src/notes.js". */
const SHELL_TOOLS = new Set(['Bash', 'bash', 'shell', 'run_shell_command', 'exec_command']);

/** The attempt's MCP tools, by the name each CLI gives them (mcp__baton__baton_progress, baton_baton_progress, …). */
const BATON_TOOL = /(?:^|_)baton_(?:task|progress|check_result|submit_result|ask)$/;

export function isBatonTool(tool: string): boolean {
  return BATON_TOOL.test(tool);
}

export function describeToolCall(tool: string, target?: string): string {
  if (!target) return tool;
  return SHELL_TOOLS.has(tool) ? `${tool}: ${target}` : `${tool} ${target}`;
}

/**
 * Folds one event into the activity. `run` usage replaces this run's figures (a CLI that
 * reports its run's total), `call` usage adds up; an attempt that continues an earlier
 * session starts from an empty activity, so its figures are its own.
 */
export function applyAgentEvent(activity: AgentActivity, event: AgentEvent): AgentActivity {
  switch (event.kind) {
    case 'session':
      return { ...activity, sessionId: event.sessionId, ...(event.model ? { model: event.model } : {}) };
    case 'turn':
      return { ...activity, turns: activity.turns + 1 };
    case 'tool':
      if (event.phase === 'started') {
        // A call of Baton's own tools (its note, its result check) is counted, but is not what the agent does: the
        // note it sends through baton_progress says that better than "mcp__baton__baton_progress" would.
        if (isBatonTool(event.tool)) return { ...activity, toolCalls: activity.toolCalls + 1 };
        return { ...activity, toolCalls: activity.toolCalls + 1, current: describeToolCall(event.tool, event.target) };
      }
      return event.ok === false
        ? {
            ...activity,
            failedToolCalls: activity.failedToolCalls + 1,
            current: `${describeToolCall(event.tool, event.target)} — ${event.detail ? `refused or failed: ${event.detail}` : 'failed'}`,
          }
        : activity;
    case 'message':
      return { ...activity, current: firstLine(event.text) };
    case 'usage':
      if (event.scope === 'run') {
        return {
          ...activity,
          inputTokens: event.inputTokens,
          outputTokens: event.outputTokens,
          ...(event.costUsd !== undefined ? { costUsd: event.costUsd } : {}),
        };
      }
      return {
        ...activity,
        inputTokens: activity.inputTokens + event.inputTokens,
        outputTokens: activity.outputTokens + event.outputTokens,
        ...(event.costUsd !== undefined ? { costUsd: (activity.costUsd ?? 0) + event.costUsd } : {}),
      };
    case 'error':
      return {
        ...activity,
        errors: [...activity.errors, event.message],
        current: `error: ${firstLine(event.message)}`,
      };
    case 'end':
      return {
        ...activity,
        ended: { ok: event.ok, ...(event.finalText !== undefined ? { finalText: event.finalText } : {}) },
      };
  }
}

/** The progress text a heartbeat carries: what the agent does now, and how far it got. */
export function progressOf(activity: AgentActivity): string {
  const counts = `${activity.turns} turn${activity.turns === 1 ? '' : 's'}, ${activity.toolCalls} tool call${activity.toolCalls === 1 ? '' : 's'}`;
  return activity.current ? `${activity.current} · ${counts}` : counts;
}

/** Reads a whole stream (a finished attempt's log) into its activity. */
export function readAgentStream(kind: AgentKind, lines: Iterable<string>, options: ParserOptions = {}): AgentActivity {
  const parser = agentStreamParser(kind, options);
  let activity = emptyActivity();
  for (const line of lines) for (const event of parser.feed(line)) activity = applyAgentEvent(activity, event);
  for (const event of parser.end()) activity = applyAgentEvent(activity, event);
  return activity;
}

function firstLine(value: string, max = 160): string {
  const line = value.split('\n').find((l) => l.trim()) ?? '';
  const one = line.trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
