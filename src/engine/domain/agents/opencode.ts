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
 * opencode's `run --format json`: every line carries the session id; `step_start` begins a
 * model call, `text` is a complete message, `tool_use` a *finished* tool call (opencode prints
 * no start), `step_finish` the call's tokens and cost (add them up), `error` a failed session.
 * There is no final line: the run ends when the process exits.
 */
export function opencodeParser(options: ParserOptions = {}): AgentStreamParser {
  let session: string | undefined;
  let lastMessage: string | undefined;
  let failed = false;
  let answered = false;
  const end = (): AgentEvent => ({ kind: 'end', ok: !failed, ...(lastMessage ? { finalText: lastMessage } : {}) });
  return {
    feed(line) {
      const o = jsonLine(line);
      if (!o) return [];
      const events: AgentEvent[] = [];
      if (!session && typeof o.sessionID === 'string') {
        session = o.sessionID;
        events.push({ kind: 'session', sessionId: session });
      }
      const part = record(o.part);
      switch (o.type) {
        case 'step_start':
          events.push({ kind: 'turn' });
          break;
        case 'text':
          if (text(part.text)) {
            lastMessage = text(part.text)!;
            answered = false; // a message after the answer: its end is taken again when the process exits
            events.push({ kind: 'message', text: lastMessage });
          }
          break;
        case 'tool_use': {
          const state = record(part.state);
          const input = record(state.input);
          // A call to a tool the profile denied comes back as the `invalid` tool, naming the tool asked for.
          const refused = part.tool === 'invalid';
          const tool = refused ? (text(input.tool) ?? 'tool') : (text(part.tool) ?? 'tool');
          const target = refused ? undefined : (toolTarget(input, options.cwd) ?? text(state.title));
          const callId = text(part.callID);
          const exit = record(state.metadata).exit;
          const ok = !refused && state.status === 'completed' && (exit === undefined || exit === 0);
          const detail = ok ? undefined : (text(input.error) ?? text(state.error) ?? text(state.output));
          const common = { tool, ...(target ? { target } : {}), ...(callId ? { callId } : {}) };
          events.push({ kind: 'tool', phase: 'started', ...common });
          events.push({ kind: 'tool', phase: 'finished', ...common, ok, ...(detail ? { detail } : {}) });
          break;
        }
        case 'step_finish': {
          const tokens = record(part.tokens);
          const cost = typeof part.cost === 'number' ? { costUsd: part.cost } : {};
          events.push({
            kind: 'usage',
            scope: 'call',
            inputTokens: count(tokens.input),
            outputTokens: count(tokens.output),
            ...cost,
          });
          if (part.reason === 'stop' && lastMessage !== undefined && !failed) {
            answered = true;
            events.push(end());
          }
          break;
        }
        case 'error': {
          failed = true;
          const error = record(o.error);
          const message = text(record(error.data).message) ?? text(error.name) ?? 'the session failed';
          events.push({ kind: 'error', message, fatal: true });
          break;
        }
      }
      return events;
    },
    // Said again only when something came after the answer (an error, another message).
    end: () => (answered && !failed ? [] : [end()]),
  };
}
