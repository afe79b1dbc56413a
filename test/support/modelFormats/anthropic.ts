// Anthropic Messages: POST /v1/messages (streaming SSE or one JSON message) and
// POST /v1/messages/count_tokens. Spoken to Claude Code (ANTHROPIC_BASE_URL).
import type { ServerResponse } from 'node:http';
import type { Format, IdSource, RecordedRequest, Reply } from '../modelServer';
import { sendJson, sse, startSse, textOf } from './common';

interface Block {
  type: string;
  text?: string;
  id?: string;
  tool_use_id?: string;
  name?: string;
  content?: unknown;
  is_error?: boolean;
}
interface Message {
  role: string;
  content: string | Block[];
}
interface Body {
  model?: string;
  stream?: boolean;
  system?: string | Block[];
  messages?: Message[];
  tools?: { name: string; input_schema?: unknown; type?: string }[];
}

export const anthropicFormat: Format = {
  format: 'anthropic',
  matches: (method, path) => method === 'POST' && /^\/(v1\/)?messages(\/count_tokens)?$/.test(path),
  parse(raw, path) {
    const body = raw as Body;
    const messages = body.messages ?? [];
    const toolNames = new Map<string, string>();
    const userTexts: string[] = [];
    const toolResults: RecordedRequest['toolResults'] = [];
    for (const message of messages) {
      const blocks: Block[] =
        typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      for (const block of blocks) {
        if (block.type === 'tool_use' && block.id && block.name) toolNames.set(block.id, block.name);
        if (message.role === 'user' && block.type === 'text' && block.text) userTexts.push(block.text);
        if (block.type === 'tool_result')
          toolResults.push({
            name: toolNames.get(block.tool_use_id ?? ''),
            callId: block.tool_use_id,
            output: textOf(block.content),
            isError: block.is_error === true,
          });
      }
    }
    return {
      model: body.model ?? '',
      stream: body.stream === true,
      // count_tokens carries tools too, but is no model turn: keep it out of the script.
      tools: path.includes('count_tokens')
        ? []
        : (body.tools ?? []).map((t) => ({ name: t.name, schema: t.input_schema ?? t.type })),
      system: textOf(body.system),
      userTexts,
      toolResults,
      turn: messages.filter((m) => m.role === 'assistant').length,
    };
  },
  auxiliary(res, request) {
    if (!request.path.includes('count_tokens')) return false;
    sendJson(res, 200, { input_tokens: Math.ceil(JSON.stringify(request.body).length / 4) });
    return true;
  },
  respond(res: ServerResponse, request: RecordedRequest, reply: Reply, ids: IdSource) {
    const usage = reply.usage ?? { input: 0, output: 0 };
    const content: Record<string, unknown>[] = [];
    if (reply.text) content.push({ type: 'text', text: reply.text });
    for (const call of reply.toolCalls ?? [])
      content.push({ type: 'tool_use', id: ids.next('toolu_'), name: call.name, input: call.input });
    const stopReason = reply.toolCalls?.length ? 'tool_use' : 'end_turn';
    const message = {
      id: ids.next('msg_'),
      type: 'message',
      role: 'assistant',
      model: request.model,
      stop_sequence: null,
    };
    const fullUsage = {
      input_tokens: usage.input,
      output_tokens: usage.output,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    };
    if (!request.stream) {
      sendJson(res, 200, { ...message, content, stop_reason: stopReason, usage: fullUsage });
      return;
    }
    startSse(res);
    sse(
      res,
      {
        type: 'message_start',
        message: { ...message, content: [], stop_reason: null, usage: { ...fullUsage, output_tokens: 1 } },
      },
      'message_start',
    );
    content.forEach((block, index) => {
      if (block.type === 'text') {
        sse(
          res,
          { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
          'content_block_start',
        );
        sse(
          res,
          { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } },
          'content_block_delta',
        );
      } else {
        sse(res, { type: 'content_block_start', index, content_block: { ...block, input: {} } }, 'content_block_start');
        sse(
          res,
          {
            type: 'content_block_delta',
            index,
            delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
          },
          'content_block_delta',
        );
      }
      sse(res, { type: 'content_block_stop', index }, 'content_block_stop');
    });
    sse(
      res,
      {
        type: 'message_delta',
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
      'message_delta',
    );
    sse(res, { type: 'message_stop' }, 'message_stop');
    res.end();
  },
};
