// OpenAI Responses: POST /v1/responses, streamed as SSE (`response.*` events). Spoken to
// Codex (a custom model provider with wire_api = "responses").
import type { ServerResponse } from 'node:http';
import type { Format, IdSource, RecordedRequest, Reply } from '../modelServer';
import { sendJson, sse, startSse, textOf } from './common';

interface Item {
  type?: string;
  role?: string;
  content?: unknown;
  name?: string;
  call_id?: string;
  output?: unknown;
}
interface Body {
  model?: string;
  stream?: boolean;
  instructions?: string;
  input?: string | Item[];
  tools?: { type: string; name?: string; parameters?: unknown; format?: unknown }[];
}

/** Items a model produces: a run of them in the input is one earlier model turn. */
const MODEL_ITEMS = new Set(['function_call', 'custom_tool_call', 'local_shell_call', 'reasoning', 'web_search_call']);
const isModelItem = (item: Item) =>
  MODEL_ITEMS.has(item.type ?? '') || ((item.type === 'message' || !item.type) && item.role === 'assistant');

export const responsesFormat: Format = {
  format: 'responses',
  matches: (method, path) => method === 'POST' && /^\/(v1\/)?responses$/.test(path),
  parse(raw) {
    const body = raw as Body;
    const input: Item[] = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : (body.input ?? []);
    const names = new Map<string, string>();
    const userTexts: string[] = [];
    const toolResults: RecordedRequest['toolResults'] = [];
    let turn = 0;
    let inModelRun = false;
    for (const item of input) {
      const model = isModelItem(item);
      if (model && !inModelRun) turn++;
      inModelRun = model;
      if (item.call_id && item.name) names.set(item.call_id, item.name);
      if (item.role === 'user') userTexts.push(textOf(item.content));
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output')
        toolResults.push({
          name: names.get(item.call_id ?? ''),
          callId: item.call_id,
          output: typeof item.output === 'string' ? item.output : JSON.stringify(item.output),
        });
    }
    return {
      model: body.model ?? '',
      stream: body.stream !== false,
      tools: (body.tools ?? []).map((t) => ({
        name: t.name ?? t.type,
        schema: t.parameters ?? t.format ?? null,
        ...(t.type === 'custom' ? { freeform: true } : {}),
      })),
      system: body.instructions ?? '',
      userTexts,
      toolResults,
      turn,
    };
  },
  respond(res: ServerResponse, request: RecordedRequest, reply: Reply, ids: IdSource) {
    const usage = reply.usage ?? { input: 0, output: 0 };
    const output: Record<string, unknown>[] = [];
    for (const call of reply.toolCalls ?? []) {
      const callId = ids.next('call_');
      output.push(
        typeof call.input === 'string'
          ? {
              type: 'custom_tool_call',
              id: ids.next('ctc_'),
              call_id: callId,
              name: call.name,
              input: call.input,
              status: 'completed',
            }
          : {
              type: 'function_call',
              id: ids.next('fc_'),
              call_id: callId,
              name: call.name,
              arguments: JSON.stringify(call.input),
              status: 'completed',
            },
      );
    }
    if (reply.text)
      output.push({
        type: 'message',
        id: ids.next('msg_'),
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: reply.text, annotations: [] }],
      });
    const response = {
      id: ids.next('resp_'),
      object: 'response',
      created_at: Math.floor(Date.now() / 1000),
      model: request.model,
      status: 'completed',
      output,
      usage: {
        input_tokens: usage.input,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.output,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input + usage.output,
      },
    };
    if (!request.stream) {
      sendJson(res, 200, response);
      return;
    }
    startSse(res);
    let sequence = 0;
    const event = (type: string, data: Record<string, unknown>) =>
      sse(res, { type, sequence_number: sequence++, ...data }, type);
    event('response.created', { response: { ...response, status: 'in_progress', output: [], usage: null } });
    output.forEach((item, index) => {
      const base = { output_index: index };
      if (item.type === 'message') {
        event('response.output_item.added', { ...base, item: { ...item, status: 'in_progress', content: [] } });
        event('response.output_text.delta', { ...base, item_id: item.id, content_index: 0, delta: reply.text });
        event('response.output_text.done', { ...base, item_id: item.id, content_index: 0, text: reply.text });
      } else if (item.type === 'function_call') {
        event('response.output_item.added', { ...base, item: { ...item, status: 'in_progress', arguments: '' } });
        event('response.function_call_arguments.delta', { ...base, item_id: item.id, delta: item.arguments });
        event('response.function_call_arguments.done', { ...base, item_id: item.id, arguments: item.arguments });
      } else {
        event('response.output_item.added', { ...base, item: { ...item, status: 'in_progress', input: '' } });
        event('response.custom_tool_call_input.delta', { ...base, item_id: item.id, delta: item.input });
        event('response.custom_tool_call_input.done', { ...base, item_id: item.id, input: item.input });
      }
      event('response.output_item.done', { ...base, item });
    });
    event('response.completed', { response });
    res.end();
  },
};
