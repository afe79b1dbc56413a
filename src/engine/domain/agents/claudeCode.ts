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
 * Claude Code's `--output-format stream-json --verbose` (docs/workers.md): a `system/init`
 * line, `assistant` lines with one content block each (a `tool_use` starts a call, `text` is a
 * message), `user` lines whose `tool_result` finishes a call, and a `result` line with the
 * final text, this run's usage and its priced cost. The usage on `assistant` lines is partial
 * (output tokens 1): it adds up to a running estimate, which the result's totals replace.
 */
export function claudeCodeParser(options: ParserOptions = {}): AgentStreamParser {
  let cwd = options.cwd;
  const tools = new Map<string, string>();
  let lastTurn: string | undefined;
  return {
    feed(line) {
      const o = jsonLine(line);
      if (!o) return [];
      const events: AgentEvent[] = [];
      switch (o.type) {
        case 'system':
          if (o.subtype === 'init' && typeof o.session_id === 'string') {
            cwd = text(o.cwd) ?? cwd;
            const model = text(o.model);
            const offered = Array.isArray(o.tools) ? o.tools.filter((t): t is string => typeof t === 'string') : [];
            events.push({ kind: 'session', sessionId: o.session_id, ...(model ? { model } : {}), tools: offered });
          }
          break;
        case 'assistant': {
          const message = record(o.message);
          // One model answer may come as several lines (one per content block): one turn.
          const id = text(message.id);
          if (id !== lastTurn) {
            lastTurn = id;
            events.push({ kind: 'turn' });
            // A running estimate (so a token budget can stop a long run): the result's totals replace it.
            const usage = record(message.usage);
            const input = count(usage.input_tokens);
            const output = count(usage.output_tokens);
            if (input + output > 0)
              events.push({ kind: 'usage', scope: 'call', inputTokens: input, outputTokens: output });
          }
          if (o.is_api_error_message === true) {
            const said = blocks(message)
              .map((b) => text(b.text) ?? '')
              .join(' ');
            events.push({ kind: 'error', message: said || 'the model request failed', fatal: true });
            break;
          }
          for (const block of blocks(message)) {
            if (block.type === 'tool_use') {
              const tool = text(block.name) ?? 'tool';
              const callId = text(block.id);
              if (callId) tools.set(callId, tool);
              const target = toolTarget(record(block.input), cwd);
              events.push({
                kind: 'tool',
                phase: 'started',
                tool,
                ...(target ? { target } : {}),
                ...(callId ? { callId } : {}),
              });
            } else if (block.type === 'text' && text(block.text)) {
              events.push({ kind: 'message', text: text(block.text)! });
            }
          }
          break;
        }
        case 'user':
          for (const block of blocks(record(o.message))) {
            if (block.type !== 'tool_result') continue;
            const callId = text(block.tool_use_id);
            const failed = block.is_error === true;
            const detail = failed ? (text(block.content) ?? resultText(block.content)) : undefined;
            events.push({
              kind: 'tool',
              phase: 'finished',
              tool: (callId && tools.get(callId)) || 'tool',
              ...(callId ? { callId } : {}),
              ok: !failed,
              ...(detail ? { detail } : {}),
            });
          }
          break;
        case 'result': {
          const usage = record(o.usage);
          const cost = typeof o.total_cost_usd === 'number' ? { costUsd: o.total_cost_usd } : {};
          events.push({
            kind: 'usage',
            scope: 'run',
            inputTokens: count(usage.input_tokens),
            outputTokens: count(usage.output_tokens),
            ...cost,
          });
          const finalText = text(o.result);
          events.push({ kind: 'end', ok: o.is_error !== true, ...(finalText ? { finalText } : {}) });
          break;
        }
      }
      return events;
    },
    end: () => [],
  };
}

function blocks(message: Record<string, unknown>): Array<Record<string, unknown>> {
  return Array.isArray(message.content) ? message.content.map(record) : [];
}

function resultText(content: unknown): string | undefined {
  if (!Array.isArray(content)) return undefined;
  return content.map((c) => text(record(c).text) ?? '').join(' ') || undefined;
}
