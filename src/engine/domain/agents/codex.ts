import {
  count,
  jsonLine,
  record,
  text,
  toolTarget,
  type AgentEvent,
  type AgentStreamParser,
  type ParserOptions,
} from './agentEvents';

/**
 * Codex's `exec --json`: `thread.started` (the session), `turn.started`, work items that start
 * and complete (`command_execution`, `file_change`, `mcp_tool_call`, `web_search`; an
 * `agent_message` is a message), `turn.completed` with usage, `turn.failed`. Codex reports no
 * cost, and its usage is cumulative for the thread: a resumed session's first turn already
 * counts the earlier run, so the parser reports the difference from the totals it was told
 * the session had (`priorTotals`).
 *
 * A Codex `turn` is one prompt round, in which the model is asked again after each tool result;
 * its stream marks no single model request. A `turn` event (a request to the model) is counted
 * at `turn.started` and again when the agent goes on after its tool calls all finished: the
 * model answered their results. (Tool calls of one answer that Codex runs one after another
 * count as one request each: an upper bound, exact when the model calls one tool at a time.)
 */
export function codexParser(options: ParserOptions = {}): AgentStreamParser {
  let previous = options.priorTotals ?? { inputTokens: 0, outputTokens: 0 };
  let lastMessage: string | undefined;
  let failed = false;
  let ended = false;
  const endEvent = (): AgentEvent[] => {
    if (ended) return [];
    ended = true;
    return [{ kind: 'end', ok: !failed, ...(lastMessage ? { finalText: lastMessage } : {}) }];
  };
  /** Tool items started and not yet finished. */
  const inFlight = new Set<string>();
  /** A tool call finished with none left in flight: the next item is the model's answer to the results. */
  let resultsSent = false;
  return {
    feed(line) {
      const o = jsonLine(line);
      if (!o) return refusedOnStderr(line);
      const events: AgentEvent[] = [];
      switch (o.type) {
        case 'thread.started':
          if (typeof o.thread_id === 'string') events.push({ kind: 'session', sessionId: o.thread_id });
          break;
        case 'turn.started':
          resultsSent = false;
          events.push({ kind: 'turn' });
          break;
        case 'item.started':
        case 'item.completed': {
          const item = record(o.item);
          const phase = o.type === 'item.started' ? 'started' : 'finished';
          const callId = text(item.id);
          const id = callId ? { callId } : {};
          const isTool = TOOL_ITEMS.has(String(item.type));
          if (resultsSent && (isTool || item.type === 'agent_message' || item.type === 'reasoning')) {
            resultsSent = false;
            events.push({ kind: 'turn' });
          }
          if (isTool && callId) {
            if (phase === 'started') inFlight.add(callId);
            else {
              inFlight.delete(callId);
              resultsSent = inFlight.size === 0;
            }
          }
          if (item.type === 'agent_message') {
            if (phase === 'finished' && text(item.text)) {
              lastMessage = text(item.text)!;
              events.push({ kind: 'message', text: lastMessage });
            }
          } else if (item.type === 'command_execution') {
            const target = toolTarget({ command: unwrapShell(text(item.command) ?? '') }, options.cwd);
            const ok = item.status === 'completed' && (item.exit_code === 0 || item.exit_code === null);
            events.push({
              kind: 'tool',
              phase,
              tool: 'shell',
              ...(target ? { target } : {}),
              ...id,
              ...(phase === 'finished' ? { ok, ...(ok ? {} : { detail: `exit ${String(item.exit_code)}` }) } : {}),
            });
          } else if (item.type === 'file_change') {
            const changes = Array.isArray(item.changes) ? item.changes.map(record) : [];
            const target =
              changes
                .map((c) => toolTarget({ path: c.path }, options.cwd))
                .filter(Boolean)
                .join(', ') || undefined;
            const ok = item.status !== 'failed';
            events.push({
              kind: 'tool',
              phase,
              tool: 'apply_patch',
              ...(target ? { target } : {}),
              ...id,
              ...(phase === 'finished' ? { ok } : {}),
            });
          } else if (item.type === 'mcp_tool_call' || item.type === 'web_search') {
            const tool = text(item.tool) ?? String(item.type);
            events.push({
              kind: 'tool',
              phase,
              tool,
              ...id,
              ...(phase === 'finished' ? { ok: item.status !== 'failed' } : {}),
            });
          } else if (item.type === 'error' && text(item.message)) {
            events.push({ kind: 'error', message: text(item.message)!, fatal: false });
          }
          break;
        }
        case 'turn.completed': {
          const usage = record(o.usage);
          const totals = { inputTokens: count(usage.input_tokens), outputTokens: count(usage.output_tokens) };
          events.push({
            kind: 'usage',
            scope: 'call',
            inputTokens: Math.max(0, totals.inputTokens - previous.inputTokens),
            outputTokens: Math.max(0, totals.outputTokens - previous.outputTokens),
          });
          previous = totals;
          // `codex exec` runs one turn: its completion is the run's end, and the agent has answered. Said here, not
          // only at exit, so that the final usage (a budget crossed by it) never stops an agent that already answered.
          events.push(...endEvent());
          break;
        }
        case 'turn.failed':
          failed = true;
          events.push({ kind: 'error', message: text(record(o.error).message) ?? 'the turn failed', fatal: true });
          break;
        case 'error':
          // A stream-level error: also "Reconnecting... n/5" while it retries.
          if (text(o.message)) events.push({ kind: 'error', message: text(o.message)!, fatal: false });
          break;
      }
      return events;
    },
    // Codex has no final line of its own: the run ends when the process exits.
    end: endEvent,
  };
}

/** Work items that are tool calls (the others: messages, reasoning, warnings, to-do lists). */
const TOOL_ITEMS = new Set(['command_execution', 'file_change', 'mcp_tool_call', 'web_search']);

/** `/bin/bash -lc "npm test"` → `npm test`: the command the model asked for, not the wrapper. */
function unwrapShell(command: string): string {
  const match = /^\/bin\/(?:ba)?sh -lc "(.*)"$/s.exec(command) ?? /^\/bin\/(?:ba)?sh -lc '(.*)'$/s.exec(command);
  return match ? match[1]!.replace(/\\(["\\$`])/g, '$1') : command;
}

/**
 * Codex reports a tool call its sandbox or approval policy refused only on stderr (the model
 * gets the refusal; `exec --json` prints no item for it): `… ERROR codex_core::tools::router:
 * error=patch rejected: writing is blocked by read-only sandbox; …`. The worker's log holds
 * both streams, so the refusal is read from that line: a call started and refused.
 */
function refusedOnStderr(line: string): AgentEvent[] {
  const refused = /codex_core::tools::router: error=(.+)$/.exec(line.trim());
  if (!refused) return [];
  const detail = refused[1]!;
  const tool = /^patch\b/.test(detail) ? 'apply_patch' : /^exec|command/.test(detail) ? 'shell' : 'tool';
  return [
    { kind: 'tool', phase: 'started', tool },
    { kind: 'tool', phase: 'finished', tool, ok: false, detail },
  ];
}
