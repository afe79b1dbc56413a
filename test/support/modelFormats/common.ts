// Helpers shared by the wire-format modules of the scripted model server (../modelServer.ts).
import type { ServerResponse } from 'node:http';

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** Starts a server-sent event stream. */
export function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

/** One SSE event: `event:` line when named, one `data:` line of JSON (or a literal like [DONE]). */
export function sse(res: ServerResponse, data: unknown, event?: string): void {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  res.write(`${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`);
}

/** Text of a content value that may be a string or a list of typed parts. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part: { text?: unknown; type?: string }) => (typeof part?.text === 'string' ? part.text : ''))
      .filter(Boolean)
      .join('\n');
  return '';
}
