// Gemini API: POST /v1beta/models/<model>:streamGenerateContent?alt=sse (SSE),
// :generateContent (one JSON response) and :countTokens. Spoken to Gemini CLI
// (GOOGLE_GEMINI_BASE_URL with GEMINI_API_KEY).
import type { ServerResponse } from 'node:http';
import type { Format, IdSource, RecordedRequest, Reply } from '../modelServer';
import { sendJson, sse, startSse } from './common';

interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { name: string; args?: unknown; id?: string };
  functionResponse?: { name: string; id?: string; response?: unknown };
}
interface Content {
  role?: string;
  parts?: Part[];
}
interface Body {
  contents?: Content[];
  systemInstruction?: Content | string;
  tools?: { functionDeclarations?: { name: string; parameters?: unknown; parametersJsonSchema?: unknown }[] }[];
  // Some clients nest the request (countTokens takes { generateContentRequest } or { contents }).
  generateContentRequest?: Body;
  generationConfig?: { responseJsonSchema?: unknown; responseSchema?: unknown };
}

const PATH = /^\/(v1beta|v1|v1alpha)\/models\/([^:/]+):(streamGenerateContent|generateContent|countTokens)$/;

export const geminiFormat: Format = {
  format: 'gemini',
  matches: (method, path) => method === 'POST' && PATH.test(path),
  parse(raw, path) {
    const body = raw as Body;
    const [, , model = '', action = ''] = PATH.exec(path.split('?')[0] ?? '') ?? [];
    const contents = body.contents ?? body.generateContentRequest?.contents ?? [];
    const userTexts: string[] = [];
    const toolResults: RecordedRequest['toolResults'] = [];
    for (const content of contents)
      for (const part of content.parts ?? []) {
        if (content.role !== 'model' && typeof part.text === 'string') userTexts.push(part.text);
        if (part.functionResponse)
          toolResults.push({
            name: part.functionResponse.name,
            callId: part.functionResponse.id,
            output: JSON.stringify(part.functionResponse.response ?? null),
          });
      }
    const system =
      typeof body.systemInstruction === 'string'
        ? body.systemInstruction
        : (body.systemInstruction?.parts ?? []).map((p) => p.text ?? '').join('\n');
    return {
      model,
      stream: action === 'streamGenerateContent',
      tools:
        action === 'countTokens'
          ? []
          : (body.tools ?? []).flatMap((t) =>
              (t.functionDeclarations ?? []).map((d) => ({
                name: d.name,
                schema: d.parametersJsonSchema ?? d.parameters ?? null,
              })),
            ),
      system,
      responseSchema: body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema,
      userTexts,
      toolResults,
      turn: contents.filter((c) => c.role === 'model').length,
    };
  },
  auxiliary(res, request) {
    if (!request.path.includes(':countTokens')) return false;
    sendJson(res, 200, { totalTokens: Math.ceil(JSON.stringify(request.body).length / 4) });
    return true;
  },
  respond(res: ServerResponse, request: RecordedRequest, reply: Reply, ids: IdSource) {
    const usage = reply.usage ?? { input: 0, output: 0 };
    const parts: Part[] = [];
    if (reply.text) parts.push({ text: reply.text });
    for (const call of reply.toolCalls ?? [])
      parts.push({
        functionCall: { name: call.name, args: typeof call.input === 'string' ? { input: call.input } : call.input },
      });
    const response = {
      candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
      },
      modelVersion: request.model,
      responseId: ids.next('resp-'),
    };
    if (!request.stream) {
      sendJson(res, 200, response);
      return;
    }
    startSse(res);
    sse(res, response);
    res.end();
  },
};
