// The scripted model server on its own (no agent CLI): each wire format streams the scripted
// step the conversation is at, side requests leave the script alone, problems are recorded.
import assert from 'node:assert/strict';
import type { ModelServer } from '../../support/modelServer';
import { sampleOf, startModelServer } from '../../support/modelServer';

/** The JSON `data:` payloads of a server-sent event stream ([DONE] left out). */
async function sseData(response: Response): Promise<Record<string, unknown>[]> {
  const text = await response.text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
}

describe('scripted model server', () => {
  let server: ModelServer;
  const post = (path: string, body: unknown) =>
    fetch(`${server.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  before(async () => {
    server = await startModelServer();
  });
  after(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.setScript({
      steps: [
        { toolCalls: [{ name: 'write', input: { path: 'a.txt', content: 'hi' } }], usage: { input: 11, output: 2 } },
        { text: 'done', usage: { input: 13, output: 3 } },
      ],
    });
  });

  it('Anthropic Messages: a tool_use block on the first turn, the text once a tool result came back', async () => {
    const tools = [{ name: 'write', input_schema: { type: 'object' } }];
    const first = await sseData(
      await post('/v1/messages?beta=true', {
        model: 'm',
        stream: true,
        tools,
        messages: [{ role: 'user', content: 'go' }],
      }),
    );
    assert.deepEqual(
      first.map((e) => e.type),
      [
        'message_start',
        'content_block_start',
        'content_block_delta',
        'content_block_stop',
        'message_delta',
        'message_stop',
      ],
    );
    const block = (first[1] as { content_block: { type: string; name: string; id: string } }).content_block;
    assert.equal(block.type, 'tool_use');
    assert.equal(block.name, 'write');
    assert.deepEqual(JSON.parse((first[2] as { delta: { partial_json: string } }).delta.partial_json), {
      path: 'a.txt',
      content: 'hi',
    });
    assert.deepEqual((first[4] as { usage: unknown }).usage, { output_tokens: 2 });
    const second = await post('/v1/messages', {
      model: 'm',
      tools,
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [{ type: 'tool_use', id: block.id, name: 'write', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: block.id, content: 'written' }] },
      ],
    });
    const message = (await second.json()) as { content: { text: string }[]; usage: { input_tokens: number } };
    assert.equal(message.content[0]!.text, 'done');
    assert.equal(message.usage.input_tokens, 13);
    const recorded = server.mainRequests()[1]!;
    assert.equal(recorded.turn, 1);
    assert.deepEqual(recorded.toolResults, [{ name: 'write', callId: block.id, output: 'written', isError: false }]);
    assert.deepEqual(recorded.userTexts, ['go']);
  });

  it('OpenAI Responses: function calls and free-form (custom) tool calls, usage in response.completed', async () => {
    server.setScript({ steps: [{ toolCalls: [{ name: 'apply_patch', input: '*** Begin Patch\n*** End Patch\n' }] }] });
    const events = await sseData(
      await post('/v1/responses', {
        model: 'm',
        stream: true,
        instructions: 'be brief',
        input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }],
        tools: [{ type: 'custom', name: 'apply_patch', format: { type: 'grammar' } }],
      }),
    );
    const done = events.find((e) => e.type === 'response.output_item.done') as { item: Record<string, unknown> };
    assert.equal(done.item.type, 'custom_tool_call');
    assert.equal(done.item.input, '*** Begin Patch\n*** End Patch\n');
    const completed = events.at(-1) as { type: string; response: { usage: { input_tokens: number } } };
    assert.equal(completed.type, 'response.completed');
    assert.equal(completed.response.usage.input_tokens, 100);
    assert.deepEqual(server.requests[0]!.tools, [{ name: 'apply_patch', schema: { type: 'grammar' }, freeform: true }]);
    assert.equal(server.requests[0]!.system, 'be brief');
  });

  it('Chat Completions: tool_calls chunks, then finish_reason and a usage chunk, then [DONE]', async () => {
    const response = await post('/v1/chat/completions', {
      model: 'm',
      stream: true,
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'go' },
      ],
      tools: [{ type: 'function', function: { name: 'write', parameters: {} } }],
    });
    const chunks = (await sseData(response)) as {
      choices: { delta: { tool_calls?: { function: { name: string } }[] }; finish_reason: string | null }[];
      usage?: { prompt_tokens: number };
    }[];
    assert.equal(
      chunks.find((c) => c.choices[0]?.delta.tool_calls)?.choices[0]!.delta.tool_calls![0]!.function.name,
      'write',
    );
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)?.choices[0]!.finish_reason, 'tool_calls');
    assert.equal(chunks.at(-1)!.usage!.prompt_tokens, 11);
  });

  it('Gemini: a functionCall part over SSE; routing-style side requests get JSON of the asked schema', async () => {
    const events = await sseData(
      await post('/v1beta/models/gemini-x:streamGenerateContent?alt=sse', {
        contents: [{ role: 'user', parts: [{ text: 'go' }] }],
        tools: [{ functionDeclarations: [{ name: 'write', parametersJsonSchema: {} }] }],
      }),
    );
    const candidate = (events[0] as { candidates: { content: { parts: { functionCall: { name: string } }[] } }[] })
      .candidates[0]!;
    assert.equal(candidate.content.parts[0]!.functionCall.name, 'write');
    const side = await post('/v1beta/models/gemini-lite:generateContent', {
      contents: [{ role: 'user', parts: [{ text: 'classify' }] }],
      generationConfig: {
        responseJsonSchema: {
          type: 'OBJECT',
          properties: { reasoning: { type: 'STRING' }, score: { type: 'INTEGER' } },
        },
      },
    });
    const answer = (await side.json()) as { candidates: { content: { parts: { text: string }[] } }[] };
    assert.deepEqual(JSON.parse(answer.candidates[0]!.content.parts[0]!.text), { reasoning: 'ok', score: 1 });
    assert.equal(server.mainRequests().length, 1, 'the side request did not use the script');
  });

  it('records what it could not answer, and answers scripted errors in the API shape', async () => {
    server.setScript({ steps: [{ error: { status: 400, message: 'nope' } }] });
    const refused = await post('/v1/messages', { model: 'm', tools: [{ name: 't' }], messages: [] });
    assert.equal(refused.status, 400);
    assert.deepEqual(await refused.json(), {
      type: 'error',
      error: { type: 'invalid_request_error', message: 'nope' },
    });
    const beyond = await post('/v1/messages', {
      model: 'm',
      tools: [{ name: 't' }],
      messages: [{ role: 'assistant', content: 'x' }],
    });
    assert.equal(beyond.status, 400);
    assert.equal((await post('/v1/unknown', {})).status, 404);
    assert.deepEqual(server.errors, [
      'script has no step 1 (it has 1) for POST /v1/messages',
      'unknown request POST /v1/unknown',
    ]);
  });

  it('sampleOf builds the smallest value of a schema', () => {
    assert.deepEqual(
      sampleOf({
        type: 'object',
        properties: { a: { type: 'string' }, b: { enum: ['x', 'y'] }, c: { type: ['integer', 'null'], minimum: 3 } },
      }),
      { a: 'ok', b: 'x', c: 3 },
    );
  });
});
