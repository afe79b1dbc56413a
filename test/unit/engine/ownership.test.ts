// One owner per table (docs/architecture.md, "One owner per state change"): only
// src/engine/operations/<owner>/ may INSERT, UPDATE or DELETE a table. The store owns its own
// bookkeeping (store_meta, the counters' first rows in migrations).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ENGINE = join(__dirname, '../../../src/engine');

/** Table → the folder under operations/ that owns it. */
const OWNERS: Readonly<Record<string, string>> = {
  runs: 'runs',
  run_isolation: 'runs',
  tasks: 'tasks',
  task_dependencies: 'tasks',
  delegations: 'delegations',
  runtimes: 'runtimes',
  gates: 'gates',
  ingestions: 'ingestions',
  // A result artifact's content, by digest (migration 9): kept by the ingestion that records it.
  artifacts: 'ingestions',
  events: 'events',
  counters: 'counters',
  stop_requests: 'stops',
  coordinator_leases: 'coordinatorLease',
  verification_receipts: 'receipts',
  worktrees: 'worktrees',
  verify_processes: 'verifyProcesses',
  tree_snapshots: 'treeSnapshots',
  agent_usage: 'agentUsage',
};
/** Written by the store itself, below the operations. */
const STORE_TABLES: Readonly<Record<string, readonly string[]>> = {
  store_meta: ['store/fileStore.ts', 'store/pgStore.ts', 'store/migrations.ts'],
  counters: ['store/migrations.ts'],
  // Migration 4 rebuilds the table (to drop a UNIQUE constraint) and copies its rows back.
  ingestions: ['store/migrations.ts'],
  // Migration 8 gives runs from before it their expected target head (the last integration's result, else the base).
  run_isolation: ['store/migrations.ts'],
};

/**
 * The bulk copy of `baton store import` (docs/store-transfer.md): it writes every table, named at
 * run time from the migrations, verbatim into an empty store in one transaction — not a state
 * change an owner could make. It is the only file that may write a table it does not own, and
 * the only one that may name the table of a write at run time (`INSERT INTO ${table.name}`).
 */
const BULK_COPY = 'store/transfer.ts';
/** What `writesIn` reports for a write whose table is a template expression. */
const DYNAMIC_TABLE = '${…}';

const WRITE = /\b(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+([a-z_]+\b|\$\{)/g;

/** Every write statement in `source`, with the table it writes. */
export function writesIn(source: string): string[] {
  return [...source.matchAll(WRITE)].map((m) => (m[1] === '${' ? DYNAMIC_TABLE : m[1]!));
}

/** Where a write to `table` from `file` (relative to src/engine) breaks ownership, if it does. */
export function ownershipViolation(file: string, table: string): string | undefined {
  if (file === BULK_COPY) return undefined;
  if (table === DYNAMIC_TABLE) return `${file} writes a table named at run time, which only ${BULK_COPY} may do`;
  if (STORE_TABLES[table]?.includes(file)) return undefined;
  const owner = OWNERS[table];
  if (!owner) return `${file} writes ${table}, a table with no owner in operations/`;
  if (!file.startsWith(`operations/${owner}/`))
    return `${file} writes ${table}, which only operations/${owner}/ may write`;
  return undefined;
}

function engineFiles(dir = ENGINE): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? engineFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('one owner per table', () => {
  it('no engine file writes a table it does not own', () => {
    const violations: string[] = [];
    for (const path of engineFiles()) {
      const file = relative(ENGINE, path).split('\\').join('/');
      for (const table of writesIn(readFileSync(path, 'utf8'))) {
        const violation = ownershipViolation(file, table);
        if (violation) violations.push(violation);
      }
    }
    assert.deepEqual(violations, []);
  });

  it('every table the migrations create has an owner', () => {
    const migrations = readFileSync(join(ENGINE, 'store/migrations.ts'), 'utf8');
    const tables = [...migrations.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)].map((m) => m[1]!);
    assert.ok(tables.length >= 14, `found the tables: ${tables.join(', ')}`);
    assert.deepEqual(
      tables.filter((t) => !OWNERS[t] && !STORE_TABLES[t]),
      [],
    );
  });

  it('catches a write outside the owner (the check bites)', () => {
    const source =
      "await tx.run(`UPDATE runtimes SET pid = ? WHERE id = ?`, [1, 'W']);\nINSERT OR REPLACE INTO gates (id) VALUES (?)";
    assert.deepEqual(writesIn(source), ['runtimes', 'gates']);
    assert.match(
      ownershipViolation('executor/coordinator.ts', 'runtimes') ?? '',
      /only operations\/runtimes\/ may write/,
    );
    assert.match(ownershipViolation('operations/tasks/x.ts', 'gates') ?? '', /only operations\/gates\//);
    assert.equal(ownershipViolation('operations/runtimes/createRuntime.ts', 'runtimes'), undefined);
    assert.match(ownershipViolation('operations/x/y.ts', 'new_table') ?? '', /no owner/);
    // A table named at run time is the bulk copy's alone.
    assert.deepEqual(writesIn('tx.run(`INSERT INTO ${table.name} (id) VALUES (?)`); tx.run(`DELETE FROM ${t}`)'), [
      DYNAMIC_TABLE,
      DYNAMIC_TABLE,
    ]);
    assert.match(ownershipViolation('operations/runs/x.ts', DYNAMIC_TABLE) ?? '', /named at run time/);
    assert.equal(ownershipViolation(BULK_COPY, DYNAMIC_TABLE), undefined);
    assert.equal(ownershipViolation(BULK_COPY, 'counters'), undefined);
  });
});
