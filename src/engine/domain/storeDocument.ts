import * as z from 'zod';
import { issue, type Issue } from './issue';

/**
 * The portable document `baton store export` writes and `baton store import` reads
 * (docs/store-transfer.md): JSON lines, one JSON value per line.
 *
 *   line 1      the header: {"format":"baton-store","version":1,"schemaVersion":8,"exportedAt":…,
 *               "tables":{"runs":{"columns":[…],"rows":2},…}}
 *   then        one line per row: {"table":"runs","values":[…]} — values in the header's column order
 *   last line   {"end":true,"rows":<every row line>}
 *
 * The header names every table with its columns and row count, so a reader knows before the
 * first row what to expect, and a document cut short (no end line, fewer rows) is told apart
 * from a complete one. Values are what the store holds: strings, finite numbers, null.
 */
export const STORE_DOCUMENT_FORMAT = 'baton-store';
export const STORE_DOCUMENT_VERSION = 1;

const NAME = z.string().regex(/^[a-z_][a-z0-9_]*$/, 'must be a plain lower-case table or column name');

export const storeDocumentHeaderSchema = z
  .object({
    format: z.literal(STORE_DOCUMENT_FORMAT),
    version: z.literal(STORE_DOCUMENT_VERSION),
    schemaVersion: z.number().int().positive(),
    exportedAt: z.number().int().nonnegative(),
    tables: z.record(NAME, z.object({ columns: z.array(NAME).min(1), rows: z.number().int().nonnegative() }).strict()),
  })
  .strict();
export type StoreDocumentHeader = z.infer<typeof storeDocumentHeaderSchema>;

const VALUE = z.union([z.string(), z.number().refine(Number.isFinite, 'must be a finite number'), z.null()]);
export const storeDocumentRowSchema = z.object({ table: NAME, values: z.array(VALUE) }).strict();
export type StoreDocumentRow = z.infer<typeof storeDocumentRowSchema>;

export const storeDocumentEndSchema = z.object({ end: z.literal(true), rows: z.number().int().nonnegative() }).strict();

export function headerLine(header: StoreDocumentHeader): string {
  return JSON.stringify(header);
}

export function rowLine(table: string, values: readonly (string | number | null)[]): string {
  return JSON.stringify({ table, values });
}

export function endLine(rows: number): string {
  return JSON.stringify({ end: true, rows });
}

/** A problem of the document at a line (1-based), for the one-line refusal and `--json`'s issues. */
export function documentIssue(line: number, message: string, column = 1): Issue {
  return issue(
    'store-document.invalid',
    '',
    message,
    'Export the store again with `baton store export`; a document is imported only whole and unchanged.',
    { start: { line, column }, end: { line, column } },
  );
}

/** One line parsed as JSON and checked against `schema`; the first problem as an issue at that line. */
export function parseDocumentLine<T>(
  text: string,
  line: number,
  schema: z.ZodType<T>,
  what: string,
): { value: T } | { issue: Issue } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    const position = /position (\d+)/.exec((err as Error).message);
    return {
      issue: documentIssue(line, `not JSON (${what} expected)`, position ? Number(position[1]) + 1 : 1),
    };
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return { value: parsed.data };
  const first = parsed.error.issues[0]!;
  const path = first.path.length ? ` at ${first.path.join('.')}` : '';
  return { issue: documentIssue(line, `not ${what}${path}: ${first.message}`) };
}
