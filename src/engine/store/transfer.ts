/**
 * The bulk copy under `baton store export` / `import` (docs/store-transfer.md): every row of
 * every table, read in pages and written back with placeholders, on either backend.
 *
 * This is the one module outside operations/ that writes the operations' tables
 * (test/unit/engine/ownership.test.ts names it as the exception). Why it may: it does not
 * change state, it moves a store's state verbatim into an empty store, in one transaction;
 * going through each table's owner would mean an "insert this exact row" operation per table
 * that nothing else may call. Which tables and columns there are comes from the migrations
 * (schemaCatalog.ts), never from a list kept here.
 */
import type { SqlValue, StorePort, StoreReader, StoreTx } from './port';
import { catalogAt, type CatalogTable } from './schemaCatalog';

/** The store's own bookkeeping (schema version, journal stamp) is not copied: the target keeps its own. */
const NOT_COPIED = new Set(['store_meta']);
/** Counters exist in every migrated store; a copy raises them to at least the copied value. */
const COUNTERS = 'counters';
/** Rows per page when reading; and the most parameters one INSERT binds (below SQLite's old 999). */
const PAGE_ROWS = 500;
const MAX_PARAMETERS = 900;

/** The tables a document at schema `version` holds, in the order the migrations created them. */
export function copiedTables(version: number): CatalogTable[] {
  return catalogAt(version).filter((t) => !NOT_COPIED.has(t.name));
}

export async function countRows(reader: StoreReader, table: CatalogTable): Promise<number> {
  const row = await reader.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table.name}`);
  return Number(row?.n ?? 0);
}

/**
 * A table's rows as value arrays in catalog column order, page by page in primary-key order.
 * Call it inside one `read` so every page comes from the same state.
 */
export async function* rowsOf(reader: StoreReader, table: CatalogTable): AsyncGenerator<SqlValue[]> {
  const select = `SELECT ${table.columns.join(', ')} FROM ${table.name} ORDER BY ${table.primaryKey.join(', ')} LIMIT ? OFFSET ?`;
  for (let offset = 0; ; offset += PAGE_ROWS) {
    const page = await reader.all<Record<string, SqlValue>>(select, [PAGE_ROWS, offset]);
    for (const row of page) yield table.columns.map((c) => row[c] ?? null);
    if (page.length < PAGE_ROWS) return;
  }
}

/** The copied tables that hold rows, counters aside (a fresh store has its counters at 0). */
export async function tablesWithRows(reader: StoreReader, tables: readonly CatalogTable[]): Promise<string[]> {
  const occupied: string[] = [];
  for (const table of tables) {
    if (table.name === COUNTERS) continue;
    if (await reader.get(`SELECT 1 AS present FROM ${table.name} LIMIT 1`)) occupied.push(table.name);
  }
  return occupied;
}

/**
 * Writes `rows` (value arrays in `columns` order) into `table`, several rows per statement.
 * Counters are raised, never lowered: `value` becomes the larger of the store's and the row's.
 */
export async function insertRows(
  tx: StoreTx,
  table: CatalogTable,
  columns: readonly string[],
  rows: readonly SqlValue[][],
): Promise<void> {
  if (table.name === COUNTERS) {
    const name = columns.indexOf('name');
    const value = columns.indexOf('value');
    for (const row of rows) {
      await tx.run(
        `INSERT INTO counters (name, value) VALUES (?, ?)
         ON CONFLICT (name) DO UPDATE SET value = CASE WHEN excluded.value > counters.value THEN excluded.value ELSE counters.value END`,
        [row[name] ?? null, row[value] ?? null],
      );
    }
    return;
  }
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / columns.length));
  const oneRow = `(${columns.map(() => '?').join(', ')})`;
  for (let start = 0; start < rows.length; start += perStatement) {
    const batch = rows.slice(start, start + perStatement);
    await tx.run(
      `INSERT INTO ${table.name} (${columns.join(', ')}) VALUES ${batch.map(() => oneRow).join(', ')}`,
      batch.flat(),
    );
  }
}

/** After the copy: ids the backend assigns continue past the copied ones (events.id, …). */
export async function continueNumbering(store: StorePort, tx: StoreTx, tables: readonly CatalogTable[]): Promise<void> {
  await store.continueNumbering(
    tx,
    tables.flatMap((t) => (t.numbered ? [{ table: t.name, column: t.numbered }] : [])),
  );
}
