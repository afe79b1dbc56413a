import { createHash } from 'node:crypto';

/** `sha256:<hex>` of some content: how Baton names an artifact's bytes and a verify command's output. */
export function contentDigest(content: string | Uint8Array): string {
  return `sha256:${createHash('sha256').update(content).digest('hex')}`;
}

/**
 * The bytes as text, or undefined when they are not UTF-8 or hold a NUL (PostgreSQL's text
 * refuses NUL, and no markdown result has one). A leading byte-order mark stays part of the text.
 */
export function textOf(bytes: Uint8Array): string | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
  return text.includes('\0') ? undefined : text;
}
