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
 * Gemini CLI's `--output-format stream-json`: `init` (session and model), `message` lines (the
 * assistant's text comes in `delta` chunks, joined here), `tool_use` / `tool_result`, `error`,
 * and a `result` with this run's token counts (no cost).
 */
export function geminiCliParser(options: ParserOptions = {}): AgentStreamParser {
  const tools = new Map<string, string>();
  let pending = '';
  let lastMessage: string | undefined;
  let sawTurn = false;
  const flush = (): AgentEvent[] => {
    if (!pending) return [];
    lastMessage = pending;
    pending = '';
    return [{ kind: 'message', text: lastMessage }];
  };
  return {
    feed(line) {
      const o = jsonLine(line);
      if (!o) return [];
      const events: AgentEvent[] = [];
      if (o.type !== 'message' || o.role !== 'assistant') events.push(...flush());
      switch (o.type) {
        case 'init':
          if (typeof o.session_id === 'string') {
            const model = text(o.model);
            events.push({ kind: 'session', sessionId: o.session_id, ...(model ? { model } : {}) });
          }
          break;
        case 'message':
          if (o.role === 'assistant') {
            if (!sawTurn) events.push({ kind: 'turn' });
            sawTurn = true;
            pending += text(o.content) ?? '';
          } else sawTurn = false;
          break;
        case 'tool_use': {
          if (!sawTurn) events.push({ kind: 'turn' });
          sawTurn = false;
          const tool = text(o.tool_name) ?? 'tool';
          const callId = text(o.tool_id);
          if (callId) tools.set(callId, tool);
          const target = toolTarget(record(o.parameters), options.cwd);
          events.push({
            kind: 'tool',
            phase: 'started',
            tool,
            ...(target ? { target } : {}),
            ...(callId ? { callId } : {}),
          });
          break;
        }
        case 'tool_result': {
          const callId = text(o.tool_id);
          const ok = o.status === 'success';
          const detail = ok ? undefined : (text(record(o.error).message) ?? text(o.output));
          events.push({
            kind: 'tool',
            phase: 'finished',
            tool: (callId && tools.get(callId)) || 'tool',
            ...(callId ? { callId } : {}),
            ok,
            ...(detail ? { detail } : {}),
          });
          break;
        }
        case 'error':
          if (text(o.message)) events.push({ kind: 'error', message: text(o.message)!, fatal: o.severity === 'error' });
          break;
        case 'result': {
          const stats = record(o.stats);
          events.push({
            kind: 'usage',
            scope: 'run',
            inputTokens: count(stats.input_tokens),
            outputTokens: count(stats.output_tokens),
          });
          const ok = o.status === 'success';
          if (!ok) {
            const message = text(record(o.error).message) ?? 'the run failed';
            events.push({ kind: 'error', message, fatal: true });
          }
          events.push({ kind: 'end', ok, ...(lastMessage ? { finalText: lastMessage } : {}) });
          break;
        }
      }
      return events;
    },
    end: () => flush(),
  };
}
