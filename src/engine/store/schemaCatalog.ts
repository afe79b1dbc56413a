import { MIGRATIONS, type Migration } from './migrations';

/** One table of the store as the migrations leave it at some schema version. */
export interface CatalogTable {
  name: string;
  /** In the order the migrations added them (CREATE TABLE, then each ADD COLUMN). */
  columns: string[];
  primaryKey: string[];
  /**
   * The column the backend numbers itself (`INTEGER PRIMARY KEY`: SQLite's rowid, an identity
   * on PostgreSQL), if any: a copy that writes it explicitly must make the numbering continue.
   */
  numbered?: string;
}

/**
 * The store's tables at `version`, read from the migrations themselves rather than kept as a
 * second list: replaying the DDL of migrations 1…version (CREATE TABLE, ALTER TABLE … ADD
 * COLUMN / RENAME TO, DROP TABLE). A statement that changes a table in any other way throws,
 * so a migration this reader does not understand is found by the unit test that compares the
 * catalog with a migrated store, not by a lossy export.
 */
export function catalogAt(version: number, migrations: readonly Migration[] = MIGRATIONS): CatalogTable[] {
  const tables = new Map<string, CatalogTable>();
  for (const migration of migrations) {
    if (migration.version > version) break;
    for (const statement of migration.statements) applyDdl(tables, statement, migration.version);
  }
  return [...tables.values()];
}

const CREATE_TABLE = /^\s*CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*)\s*\(([\s\S]*)\)\s*$/i;
const ADD_COLUMN = /^\s*ALTER TABLE ([a-z_][a-z0-9_]*) ADD COLUMN ([a-z_][a-z0-9_]*)\b/i;
const RENAME_TABLE = /^\s*ALTER TABLE ([a-z_][a-z0-9_]*) RENAME TO ([a-z_][a-z0-9_]*)\s*$/i;
const DROP_TABLE = /^\s*DROP TABLE (?:IF EXISTS )?([a-z_][a-z0-9_]*)\s*$/i;

function applyDdl(tables: Map<string, CatalogTable>, statement: string, version: number): void {
  const create = CREATE_TABLE.exec(statement);
  if (create) {
    tables.set(create[1]!, parseTableBody(create[1]!, create[2]!));
    return;
  }
  const add = ADD_COLUMN.exec(statement);
  if (add) {
    table(tables, add[1]!, version).columns.push(add[2]!);
    return;
  }
  const rename = RENAME_TABLE.exec(statement);
  if (rename) {
    const renamed = table(tables, rename[1]!, version);
    tables.delete(rename[1]!);
    tables.set(rename[2]!, { ...renamed, name: rename[2]! });
    return;
  }
  const drop = DROP_TABLE.exec(statement);
  if (drop) {
    table(tables, drop[1]!, version);
    tables.delete(drop[1]!);
    return;
  }
  if (/^\s*(?:ALTER|DROP)\s+TABLE\b/i.test(statement) || /^\s*CREATE\s+TABLE\b/i.test(statement)) {
    throw new Error(`migration ${version}: the store catalog does not understand "${statement.trim().slice(0, 80)}"`);
  }
}

function table(tables: Map<string, CatalogTable>, name: string, version: number): CatalogTable {
  const found = tables.get(name);
  if (!found) throw new Error(`migration ${version} changes the table ${name}, which no earlier migration created`);
  return found;
}

/** The column definitions and table constraints of a CREATE TABLE, split at top-level commas. */
function parseTableBody(name: string, body: string): CatalogTable {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of body) {
    if (c === '(') depth++;
    if (c === ')') depth--;
    if (c === ',' && depth === 0) {
      parts.push(current.trim());
      current = '';
    } else current += c;
  }
  if (current.trim()) parts.push(current.trim());
  const columns: string[] = [];
  let primaryKey: string[] = [];
  let numbered: string | undefined;
  for (const part of parts) {
    const tableKey = /^PRIMARY KEY\s*\(([^)]*)\)/i.exec(part);
    if (tableKey) {
      primaryKey = tableKey[1]!.split(',').map((c) => c.trim());
      continue;
    }
    if (/^(?:UNIQUE|CHECK|FOREIGN KEY|CONSTRAINT)\b/i.test(part)) continue;
    const column = /^([a-z_][a-z0-9_]*)\s+(\w+)/i.exec(part);
    if (!column) throw new Error(`table ${name}: the store catalog does not understand "${part}"`);
    columns.push(column[1]!);
    if (/\bPRIMARY KEY\b/i.test(part)) {
      primaryKey = [column[1]!];
      if (/^INTEGER$/i.test(column[2]!)) numbered = column[1]!;
    }
  }
  if (!primaryKey.length) throw new Error(`table ${name} has no primary key: a copy could not page through it`);
  return numbered ? { name, columns, primaryKey, numbered } : { name, columns, primaryKey };
}
