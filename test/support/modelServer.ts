// A scripted model server on loopback, for running the real agent CLIs (Claude Code, Codex,
// Gemini CLI, opencode) without a model or a key: test/system/agents/, docs/agent-clis.md.
//
// It speaks just enough of four wire formats, one module each under ./modelFormats/:
//   POST /v1/messages                                  Anthropic Messages (SSE or JSON)
//   POST /v1/responses                                 OpenAI Responses (SSE)
//   POST /v1/chat/completions                          OpenAI Chat Completions (SSE or JSON)
//   POST /v1beta/models/<model>:streamGenerateContent  Gemini (SSE), :generateContent, :countTokens
//
// Each "main" request (one that offers tools) is answered by one step of the script: which
// step is read from the conversation it carries (the number of model turns in it so far), so
// a retried request gets the same answer and a side request (a title, a summary, a
// classifier: no tools offered) does not move the script on. Every request is recorded.
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicFormat } from './modelFormats/anthropic';
import { geminiFormat } from './modelFormats/gemini';
import { chatCompletionsFormat } from './modelFormats/openaiChat';
import { sendJson } from './modelFormats/common';
import { responsesFormat } from './modelFormats/openaiResponses';

export interface Usage {
  input: number;
  output: number;
}

/**
 * One tool call. `input` is the tool's JSON arguments; a string is the raw input of a
 * free-form ("custom") tool, such as Codex's apply_patch.
 */
export interface ToolCall {
  name: string;
  input: Record<string, unknown> | string;
}

/** What the model answers to one request: tool calls (then the CLI runs them and asks again), or a final text. */
export interface Reply {
  text?: string;
  toolCalls?: ToolCall[];
  usage?: Usage;
  /** Answer with this HTTP error instead (400 and other 4xx are not retried by the CLIs; 5xx and 429 are). */
  error?: { status: number; message: string };
  /** Think this long before answering (to watch what the agent shows meanwhile). */
  delayMs?: number;
}

/** A step of the script: a reply, or a function of the request (to pick the CLI's own tool names). */
export type Step = Reply | ((request: RecordedRequest) => Reply);

export interface ModelScript {
  steps: Step[];
  /**
   * The answer to side requests (no tools offered): a title, a summary, a routing classifier.
   * Default: a minimal JSON value of the schema asked for, or the text "OK".
   */
  side?: (request: RecordedRequest) => Reply;
}

export type WireFormat = 'anthropic' | 'responses' | 'chat' | 'gemini';

export interface ToolSpec {
  name: string;
  /** The tool's parameter schema, or the grammar/format of a free-form tool. */
  schema: unknown;
  freeform?: boolean;
}

export interface RecordedRequest {
  format: WireFormat;
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  model: string;
  stream: boolean;
  tools: ToolSpec[];
  /** The system prompt / instructions, joined. */
  system: string;
  /** Every user text in the conversation, in order (the first is the prompt, or follows the CLI's own context). */
  userTexts: string[];
  /** Tool results sent back so far, in order. */
  toolResults: { name?: string; callId?: string; output: string; isError?: boolean }[];
  /** The JSON schema the answer must follow, when the request asks for structured output. */
  responseSchema?: unknown;
  /** Model turns already in the conversation = the index of the script step that answers it. */
  turn: number;
  /** Whether it was answered from the script (false: a side request, or not a model call). */
  main: boolean;
  /** The reply sent, once decided. */
  reply?: Reply;
}

/** What a wire-format module reads from a request and how it writes a reply. */
export interface Format {
  format: WireFormat;
  matches(method: string, path: string): boolean;
  /** Fills the neutral fields of a request from its body (and URL). */
  parse(
    body: unknown,
    path: string,
  ): Omit<RecordedRequest, 'method' | 'path' | 'headers' | 'body' | 'main' | 'reply' | 'format'>;
  /** Writes the reply (streamed or not, as the request asked). */
  respond(res: ServerResponse, request: RecordedRequest, reply: Reply, ids: IdSource): void;
  /** Answers a request that is not a model turn (token counting, model lists), or returns false. */
  auxiliary?(res: ServerResponse, request: RecordedRequest): boolean;
}

export interface IdSource {
  next(prefix: string): string;
}

export interface ModelServer {
  /** http://127.0.0.1:<port> */
  url: string;
  requests: RecordedRequest[];
  /** Requests answered from the script. */
  mainRequests(): RecordedRequest[];
  /** Problems answered with an error (a script that ran out, an unknown path): a test should expect none. */
  errors: string[];
  setScript(script: ModelScript): void;
  close(): Promise<void>;
}

const FORMATS: Format[] = [anthropicFormat, responsesFormat, chatCompletionsFormat, geminiFormat];

const DEFAULT_USAGE: Usage = { input: 100, output: 10 };

export async function startModelServer(script: ModelScript = { steps: [] }): Promise<ModelServer> {
  let current = script;
  const requests: RecordedRequest[] = [];
  const errors: string[] = [];
  let counter = 0;
  const ids: IdSource = { next: (prefix) => `${prefix}${String(++counter).padStart(4, '0')}` };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const raw = await readBody(req);
    const format = FORMATS.find((f) => f.matches(method, path.split('?')[0] ?? path));
    if (!format) {
      errors.push(`unknown request ${method} ${path}`);
      return sendJson(res, 404, {
        error: { type: 'not_found', message: `scripted model server: no ${method} ${path}` },
      });
    }
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : {};
    } catch {
      errors.push(`${method} ${path}: body is not JSON`);
      return sendJson(res, 400, { error: { type: 'invalid_request_error', message: 'body is not JSON' } });
    }
    const request: RecordedRequest = {
      format: format.format,
      method,
      path,
      headers: req.headers,
      body,
      main: false,
      ...format.parse(body, path),
    };
    requests.push(request);
    if (format.auxiliary?.(res, request)) return;
    let reply: Reply;
    if (request.tools.length > 0) {
      const step = current.steps[request.turn];
      if (!step) {
        const message = `script has no step ${request.turn} (it has ${current.steps.length}) for ${method} ${path}`;
        errors.push(message);
        return sendJson(res, 400, {
          error: { type: 'invalid_request_error', message: `scripted model server: ${message}` },
        });
      }
      try {
        reply = typeof step === 'function' ? step(request) : step;
      } catch (error) {
        const message = `step ${request.turn}: ${(error as Error).message}`;
        errors.push(message);
        return sendJson(res, 400, {
          error: { type: 'invalid_request_error', message: `scripted model server: ${message}` },
        });
      }
      request.main = true;
    } else {
      reply = current.side?.(request) ?? {
        text: request.responseSchema ? JSON.stringify(sampleOf(request.responseSchema)) : 'OK',
      };
    }
    reply = { ...reply, usage: reply.usage ?? DEFAULT_USAGE };
    request.reply = reply;
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.error) return sendError(res, request.format, reply.error.status, reply.error.message);
    format.respond(res, request, reply, ids);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      errors.push(`handler failed: ${(error as Error).stack ?? String(error)}`);
      if (!res.headersSent) sendJson(res, 500, { error: { type: 'api_error', message: String(error) } });
      else res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    errors,
    mainRequests: () => requests.filter((r) => r.main),
    setScript(next) {
      current = next;
      requests.length = 0;
      errors.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** An error body in the shape each API uses (Anthropic, OpenAI and Gemini differ a little). */
function sendError(res: ServerResponse, format: WireFormat, status: number, message: string): void {
  const type = status === 429 ? 'rate_limit_error' : status >= 500 ? 'api_error' : 'invalid_request_error';
  if (format === 'anthropic') return sendJson(res, status, { type: 'error', error: { type, message } });
  if (format === 'gemini')
    return sendJson(res, status, {
      error: { code: status, message, status: status === 400 ? 'INVALID_ARGUMENT' : 'INTERNAL' },
    });
  sendJson(res, status, { error: { message, type, code: null, param: null } });
}

/** The offered tool among `candidates` (first match), or an error naming the tools that were offered. */
export function pickTool(request: RecordedRequest, ...candidates: string[]): ToolSpec {
  for (const name of candidates) {
    const tool = request.tools.find((t) => t.name === name);
    if (tool) return tool;
  }
  throw new Error(`none of ${candidates.join(', ')} offered; tools: ${request.tools.map((t) => t.name).join(', ')}`);
}

/** The smallest value that satisfies a (simple) JSON schema: enough for a CLI's side request to parse. */
export function sampleOf(schema: unknown): unknown {
  const s = (schema ?? {}) as {
    type?: string | string[];
    enum?: unknown[];
    properties?: Record<string, unknown>;
    required?: string[];
    items?: unknown;
    minimum?: number;
  };
  if (s.enum?.length) return s.enum[0];
  const type = (Array.isArray(s.type) ? s.type[0] : s.type)?.toLowerCase();
  switch (type) {
    case 'object':
      return Object.fromEntries(Object.entries(s.properties ?? {}).map(([key, value]) => [key, sampleOf(value)]));
    case 'array':
      return [];
    case 'integer':
    case 'number':
      return s.minimum ?? 1;
    case 'boolean':
      return false;
    case 'null':
      return null;
    default:
      return 'ok';
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
