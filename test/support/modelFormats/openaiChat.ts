// OpenAI Chat Completions: POST /v1/chat/completions, streamed as SSE chunks ending in
// `data: [DONE]` (or one JSON completion). Spoken to opencode (an @ai-sdk/openai-compatible
// provider) and to anything else OpenAI-compatible.
import type { ServerResponse } from 'node:http';
import type { Format, IdSource, RecordedRequest, Reply } from '../modelServer';
import { sendJson, sse, startSse, textOf } from './common';

interface Message {
  role: string;
  content?: unknown;
  tool_calls?: { id: string; function: { name: string } }[];
  tool_call_id?: string;
}
interface Body {
  model?: string;
  stream?: boolean;
  messages?: Message[];
  tools?: { type: string; function?: { name: string; parameters?: unknown } }[];
}

export const chatCompletionsFormat: Format = {
  format: 'chat',
  matches: (method, path) => method === 'POST' && /^\/(v1\/)?chat\/completions$/.test(path),
  parse(raw) {
    const body = raw as Body;
    const messages = body.messages ?? [];
    const names = new Map<string, string>();
    for (const message of messages) for (const call of message.tool_calls ?? []) names.set(call.id, call.function.name);
    return {
      model: body.model ?? '',
      stream: body.stream === true,
      tools: (body.tools ?? []).map((t) => ({
        name: t.function?.name ?? t.type,
        schema: t.function?.parameters ?? null,
      })),
      system: messages
        .filter((m) => m.role === 'system' || m.role === 'developer')
        .map((m) => textOf(m.content))
        .join('\n'),
      userTexts: messages.filter((m) => m.role === 'user').map((m) => textOf(m.content)),
      toolResults: messages
        .filter((m) => m.role === 'tool')
        .map((m) => ({ name: names.get(m.tool_call_id ?? ''), callId: m.tool_call_id, output: textOf(m.content) })),
      turn: messages.filter((m) => m.role === 'assistant').length,
    };
  },
  respond(res: ServerResponse, request: RecordedRequest, reply: Reply, ids: IdSource) {
    const usage = reply.usage ?? { input: 0, output: 0 };
    const id = ids.next('chatcmpl-');
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
      index,
      id: ids.next('call_'),
      type: 'function',
      function: {
        name: call.name,
        arguments: typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
      },
    }));
    const finish = toolCalls.length ? 'tool_calls' : 'stop';
    const usageField = {
      prompt_tokens: usage.input,
      completion_tokens: usage.output,
      total_tokens: usage.input + usage.output,
    };
    const base = { id, object: 'chat.completion.chunk', created, model: request.model };
    if (!request.stream) {
      sendJson(res, 200, {
        ...base,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: reply.text ?? null,
              ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _index, ...call }) => call) } : {}),
            },
            finish_reason: finish,
          },
        ],
        usage: usageField,
      });
      return;
    }
    startSse(res);
    sse(res, { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    if (reply.text) sse(res, { ...base, choices: [{ index: 0, delta: { content: reply.text }, finish_reason: null }] });
    if (toolCalls.length)
      sse(res, { ...base, choices: [{ index: 0, delta: { tool_calls: toolCalls }, finish_reason: null }] });
    sse(res, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] });
    sse(res, { ...base, choices: [], usage: usageField });
    sse(res, '[DONE]');
    res.end();
  },
};
