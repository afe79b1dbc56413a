/**
 * What an agent CLI's event stream says, in one vocabulary for the four CLIs Baton drives
 * (docs/workers.md, "Agent presets"). Each CLI's parser turns its own JSON lines into these;
 * everything Baton does with a stream — heartbeats with progress, counts, usage and cost,
 * budgets, the final message that carries the result block, the transcript — reads them.
 */
export type AgentEvent =
  /** The agent's session: its id (to continue it later), the model, the tools it offers. */
  | { kind: 'session'; sessionId: string; model?: string; tools?: string[] }
  /** A model turn (a request to the model) began. */
  | { kind: 'turn' }
  /** A tool call started or finished; `target` is what it acts on (a file, a command). */
  | {
      kind: 'tool';
      phase: 'started' | 'finished';
      tool: string;
      target?: string;
      callId?: string;
      /** finished: false when it failed or was refused. */
      ok?: boolean;
      /** finished and not ok: why (a refusal, an error). */
      detail?: string;
    }
  /** An agent message: complete text (chunks of one message are joined by the parser). */
  | { kind: 'message'; text: string }
  /**
   * Tokens (and cost, where the CLI prices them) used so far. `scope` says how to add them
   * up: `call` for one model call (add), `run` for this run's total (replace).
   */
  | { kind: 'usage'; scope: 'call' | 'run'; inputTokens: number; outputTokens: number; costUsd?: number }
  /** A problem the CLI reported; `fatal` when the run ends with it. */
  | { kind: 'error'; message: string; fatal: boolean }
  /** The run's end as the CLI reports it, with its final answer. */
  | { kind: 'end'; ok: boolean; finalText?: string };

export interface ParserOptions {
  /** The worker's folder: targets inside it are shown relative to it. */
  cwd?: string;
  /** Codex: the session's usage totals before this run (its usage counts the whole thread). */
  priorTotals?: { inputTokens: number; outputTokens: number };
}

/** A parser of one CLI's stream: fed line by line, in order; keeps what spans lines. */
export interface AgentStreamParser {
  feed(line: string): AgentEvent[];
  /** The stream ended (the process exited): what is pending (a message still being joined). */
  end(): AgentEvent[];
}

/** The object on a line, or undefined for a line that is not a JSON object (stderr noise, a banner). */
export function jsonLine(line: string): Record<string, unknown> | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(trimmed);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined; // a line cut short or mixed with other output: skipped, the stream goes on
  }
}

/** A field as a record, or {} — streams are read tolerantly: unknown types and missing fields are skipped. */
export function record(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}

/**
 * What a tool call acts on, for a person: the file it writes or reads (relative when it is
 * inside `cwd`), or the command it runs. Long values are cut.
 */
export function toolTarget(input: Record<string, unknown>, cwd?: string): string | undefined {
  const path = text(input.file_path) ?? text(input.filePath) ?? text(input.path) ?? text(input.absolute_path);
  if (path) return shorten(cwd && path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path);
  const command = text(input.command) ?? text(input.cmd);
  if (command) return shorten(command);
  const pattern = text(input.pattern) ?? text(input.query) ?? text(input.url);
  return pattern ? shorten(pattern) : undefined;
}

function shorten(value: string, max = 120): string {
  const one = value.replace(/\s+/g, ' ').trim();
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}
