/**
 * `baton store export` / `baton store import` (docs/store-transfer.md): a workspace's whole
 * store as one portable document, and back into an empty store of either backend.
 */
import { BatonError } from '../domain/errors';
import type { Issue } from '../domain/issue';
import { counted } from '../domain/plural';
import {
  endLine,
  headerLine,
  parseDocumentLine,
  rowLine,
  storeDocumentEndSchema,
  storeDocumentHeaderSchema,
  storeDocumentRowSchema,
  documentIssue,
  STORE_DOCUMENT_FORMAT,
  STORE_DOCUMENT_VERSION,
  type StoreDocumentHeader,
} from '../domain/storeDocument';
import { SCHEMA_VERSION } from '../store/migrations';
import type { SqlValue, StorePort } from '../store/port';
import type { CatalogTable } from '../store/schemaCatalog';
import { continueNumbering, copiedTables, countRows, insertRows, rowsOf, tablesWithRows } from '../store/transfer';

export interface StoreTransferSummary {
  schemaVersion: number;
  /** Rows per table. */
  tables: Record<string, number>;
  rows: number;
}

/**
 * Writes the whole store to `write`, one line at a time, from one consistent read: the header
 * (with each table's row count), every row in primary-key order, the end line. Pages of rows
 * are read as they are written, so the document is never held whole.
 */
export async function exportStore(
  store: StorePort,
  write: (line: string) => Promise<void>,
  exportedAt: number,
): Promise<StoreTransferSummary> {
  const tables = copiedTables(SCHEMA_VERSION);
  return store.read(async (reader) => {
    const counts: Record<string, number> = {};
    for (const table of tables) counts[table.name] = await countRows(reader, table);
    const header: StoreDocumentHeader = {
      format: STORE_DOCUMENT_FORMAT,
      version: STORE_DOCUMENT_VERSION,
      schemaVersion: SCHEMA_VERSION,
      exportedAt,
      tables: Object.fromEntries(tables.map((t) => [t.name, { columns: t.columns, rows: counts[t.name]! }])),
    };
    await write(headerLine(header));
    let rows = 0;
    for (const table of tables) {
      for await (const values of rowsOf(reader, table)) {
        await write(rowLine(table.name, values));
        rows++;
      }
    }
    await write(endLine(rows));
    return { schemaVersion: SCHEMA_VERSION, tables: counts, rows };
  });
}

/**
 * Reads a document through, checking every line (zod), and hands each row to `onRow`. Throws
 * `store.document-invalid` naming the first bad line — not JSON, not the shape it must have, a
 * table or column this schema version does not have, more or fewer rows than the header
 * announced, or no end line (the document was cut short) — `store.schema-too-new` for a
 * document a newer Baton wrote and `store.document-too-old` for one an older Baton wrote.
 */
export async function readStoreDocument(
  lines: AsyncIterable<string>,
  onRow: (table: CatalogTable, values: SqlValue[], line: number) => Promise<void> = async () => undefined,
  /** The document's name in issues (a path, or "stdin"). */
  source?: string,
): Promise<{ header: StoreDocumentHeader; summary: StoreTransferSummary }> {
  let line = 0;
  let header: StoreDocumentHeader | undefined;
  let catalog = new Map<string, CatalogTable>();
  const seen: Record<string, number> = {};
  let rows = 0;
  let ended = false;
  const refuse = (message: string, at = line, column = 1): never => {
    throw invalidDocument(documentIssue(at, message, column), source);
  };
  const parsed = <T>(result: { value: T } | { issue: Issue }): T => {
    if ('issue' in result) throw invalidDocument(result.issue, source);
    return result.value;
  };
  for await (const text of lines) {
    line++;
    if (ended) refuse('a line comes after the end line');
    if (!header) {
      header = parsed(parseDocumentLine(text, line, storeDocumentHeaderSchema, 'a Baton store document header'));
      catalog = checkHeader(header, line, source);
      continue;
    }
    if (/^\s*\{\s*"end"/.test(text)) {
      const end = parsed(parseDocumentLine(text, line, storeDocumentEndSchema, 'the end line'));
      if (end.rows !== rows) refuse(`the end line counts ${end.rows} rows, the document has ${rows}`);
      for (const [name, expected] of Object.entries(header.tables)) {
        const found = seen[name] ?? 0;
        if (found !== expected.rows)
          refuse(`the header announces ${expected.rows} rows of ${name}, the document has ${found}`);
      }
      ended = true;
      continue;
    }
    const row = parsed(parseDocumentLine(text, line, storeDocumentRowSchema, 'a row ({"table", "values"})'));
    const table = catalog.get(row.table);
    if (!table) return refuse(`a row of ${row.table}, a table the header does not name`);
    if (row.values.length !== table.columns.length) {
      refuse(`${row.values.length} values, but ${row.table} has ${table.columns.length} columns`);
    }
    seen[row.table] = (seen[row.table] ?? 0) + 1;
    if (seen[row.table]! > header.tables[row.table]!.rows) {
      refuse(`one row of ${row.table} more than the header announces (${header.tables[row.table]!.rows})`);
    }
    rows++;
    await onRow(table, row.values, line);
  }
  if (!header) return refuse('the document is empty', 1);
  if (!ended) refuse(`the document ends here without its end line: it was cut short (${counted(rows, 'row')} read)`);
  const tables = Object.fromEntries(Object.keys(header.tables).map((name) => [name, seen[name] ?? 0]));
  return { header, summary: { schemaVersion: header.schemaVersion, tables, rows } };
}

/** The refusal of a bad document: one line that says where, with the issue (line, column) beside it. */
function invalidDocument(issue: Issue, source: string | undefined): BatonError {
  const located = source ? { ...issue, file: source } : issue;
  const line = issue.range?.start.line;
  return new BatonError(
    'store.document-invalid',
    `The store document${source ? ` ${source}` : ''} is not valid${line ? ` at line ${line}` : ''}: ${issue.message}; nothing was written.`,
    [located],
  );
}

/** The header's tables must be exactly this Baton's at the document's schema version, column for column. */
function checkHeader(header: StoreDocumentHeader, line: number, source?: string): Map<string, CatalogTable> {
  if (header.schemaVersion > SCHEMA_VERSION) {
    throw new BatonError(
      'store.schema-too-new',
      `The store document was written by a newer Baton (schema ${header.schemaVersion}; this one knows up to ${SCHEMA_VERSION}). Update Baton and import again; nothing was written.`,
    );
  }
  if (header.schemaVersion < SCHEMA_VERSION) {
    throw new BatonError(
      'store.document-too-old',
      `The store document is of schema ${header.schemaVersion}, this Baton's stores are of schema ${SCHEMA_VERSION}. Open the source workspace with this Baton (any command, e.g. baton status, migrates its store) and export it again; nothing was written.`,
    );
  }
  const expected = copiedTables(header.schemaVersion);
  const problem = (message: string): never => {
    throw invalidDocument(documentIssue(line, message), source);
  };
  const named = Object.keys(header.tables);
  const missing = expected.filter((t) => !(t.name in header.tables)).map((t) => t.name);
  if (missing.length)
    problem(`the header names no table ${missing.join(', ')} (schema ${header.schemaVersion} has them)`);
  const unknown = named.filter((n) => !expected.some((t) => t.name === n));
  if (unknown.length) problem(`the header names ${unknown.join(', ')}, not a table of schema ${header.schemaVersion}`);
  for (const table of expected) {
    const columns = header.tables[table.name]!.columns;
    if (columns.join(',') !== table.columns.join(',')) {
      problem(
        `the header gives ${table.name} the columns ${columns.join(', ')}; schema ${header.schemaVersion} has ${table.columns.join(', ')}`,
      );
    }
  }
  return new Map(expected.map((t) => [t.name, t]));
}

/**
 * Imports a document into `store` in one transaction: refused, with nothing written, when the
 * store holds anything already (a run, an event, …) or when any line of the document is bad.
 * `lines` is read inside the transaction; check the document with `readStoreDocument` first
 * so a bad one is refused before the store is touched.
 */
export async function importStore(
  store: StorePort,
  lines: AsyncIterable<string>,
  where: string,
  source?: string,
): Promise<StoreTransferSummary> {
  const tables = copiedTables(SCHEMA_VERSION);
  return store.transact(async (tx) => {
    const occupied = await tablesWithRows(tx, tables);
    if (occupied.length) {
      const runs = Number((await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM runs`))?.n ?? 0);
      throw new BatonError(
        'store.not-empty',
        `${where} already holds ${runs ? counted(runs, 'run') : `rows (in ${occupied.join(', ')})`}: a store is imported only into an empty one. Point the workspace at a new store (another schema or folder); nothing was written.`,
      );
    }
    let pending: { table: CatalogTable; rows: SqlValue[][]; firstLine: number } | undefined;
    const flush = async (): Promise<void> => {
      if (!pending?.rows.length) return;
      const batch = pending;
      pending = undefined;
      try {
        await insertRows(tx, batch.table, batch.table.columns, batch.rows);
      } catch (err) {
        // Only the rows' own fault is the document's; a lost connection or a full disk stays what it is.
        if (BatonError.is(err) || !isRowRefusal(err)) throw err;
        const last = batch.firstLine + batch.rows.length - 1;
        const issue = documentIssue(
          batch.firstLine,
          `the rows of ${batch.table.name} at lines ${batch.firstLine}–${last} could not be written (${(err as Error).message})`,
        );
        throw invalidDocument(issue, source);
      }
    };
    const { summary } = await readStoreDocument(
      lines,
      async (table, values, line) => {
        if (pending && pending.table !== table) await flush();
        pending ??= { table, rows: [], firstLine: line };
        pending.rows.push(values);
        if (pending.rows.length >= 500) await flush();
      },
      source,
    );
    await flush();
    await continueNumbering(store, tx, tables);
    return summary;
  });
}

/**
 * Whether the store refused rows for what they hold: PostgreSQL's data exceptions and integrity
 * violations (SQLSTATE classes 22 and 23: a duplicate key, a NULL where none may be, text in a
 * number column), SQLite's constraint failures and type mismatches (SQLITE_CONSTRAINT_…).
 */
function isRowRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') return /^2[23][0-9A-Z]{3}$/.test(code) || /^SQLITE_(?:CONSTRAINT|MISMATCH)/.test(code);
  return false;
}
