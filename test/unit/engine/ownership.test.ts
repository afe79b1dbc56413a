// One owner per table (docs/architecture.md, "One owner per state change"): only
// src/engine/operations/<owner>/ may INSERT, UPDATE or DELETE a table. The store owns its own
// bookkeeping (store_meta, the counters' first rows in migrations). The statements are read from
// the parsed source (test/support/sqlWrites.ts): strings, templates and concatenations evaluated
// as far as they can be known statically, so `'UPDATE ' + TABLE` is a write to TABLE's table.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { DYNAMIC_TABLE, StringEvaluator, writesInFile } from '../../support/sqlWrites';

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
  // Coordinators that joined a run beside its lease holder (migration 17).
  run_drivers: 'coordinatorLease',
  verification_receipts: 'receipts',
  worktrees: 'worktrees',
  verify_processes: 'verifyProcesses',
  tree_snapshots: 'treeSnapshots',
  agent_usage: 'agentUsage',
  // A person's follow-up messages to a task (migration 12, docs/agents.md "Follow-up messages").
  follow_ups: 'followUps',
  // Finished work a lease watchdog handed to a shared store (migration 16, usecases/handIn.ts).
  hand_ins: 'handIns',
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
  /** The engine's files, each parsed once for the checks below. */
  const evaluator = new StringEvaluator();

  it('no engine file writes a table it does not own', () => {
    const violations: string[] = [];
    let writes = 0;
    for (const path of engineFiles()) {
      const file = relative(ENGINE, path).split('\\').join('/');
      for (const { table, line } of writesInFile(evaluator, path)) {
        writes++;
        const violation = ownershipViolation(file, table);
        if (violation) violations.push(`${violation} (line ${line})`);
      }
    }
    assert.deepEqual(violations, []);
    assert.ok(writes >= 60, `found ${writes} write statements in src/engine`);
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
      "await tx.run(`UPDATE runtimes SET pid = ? WHERE id = ?`, [1, 'W']);\ntx.run('INSERT OR REPLACE INTO gates (id) VALUES (?)');";
    assert.deepEqual(tablesWritten(source), ['runtimes', 'gates']);
    assert.match(
      ownershipViolation('executor/coordinator.ts', 'runtimes') ?? '',
      /only operations\/runtimes\/ may write/,
    );
    assert.match(ownershipViolation('operations/tasks/x.ts', 'gates') ?? '', /only operations\/gates\//);
    assert.equal(ownershipViolation('operations/runtimes/createRuntime.ts', 'runtimes'), undefined);
    assert.match(ownershipViolation('operations/x/y.ts', 'new_table') ?? '', /no owner/);
    // A table named at run time is the bulk copy's alone.
    assert.deepEqual(tablesWritten('tx.run(`INSERT INTO ${table.name} (id) VALUES (?)`); tx.run(`DELETE FROM ${t}`)'), [
      DYNAMIC_TABLE,
      DYNAMIC_TABLE,
    ]);
    assert.match(ownershipViolation('operations/runs/x.ts', DYNAMIC_TABLE) ?? '', /named at run time/);
    assert.equal(ownershipViolation(BULK_COPY, DYNAMIC_TABLE), undefined);
    assert.equal(ownershipViolation(BULK_COPY, 'counters'), undefined);
  });

  it('each event is appended by one file (one owner per state change)', () => {
    const writers = new Map<string, Set<string>>();
    for (const path of engineFiles()) {
      const file = relative(ENGINE, path).split('\\').join('/');
      for (const type of eventsAppendedIn(evaluator.file(path)!.source)) {
        writers.set(type, new Set([...(writers.get(type) ?? []), file]));
      }
    }
    assert.ok(writers.size >= 20, `found the events: ${[...writers.keys()].join(', ')}`);
    assert.equal(writers.get(NOT_A_LITERAL), undefined, 'every appendEvent names its event with a literal');
    const shared = [...writers].filter(([, files]) => files.size > 1).map(([type, files]) => [type, [...files].sort()]);
    // run:status is still told by three operations (issue 28 names only gate:updated); it is the one left.
    assert.deepEqual(shared, [
      [
        'run:status',
        ['operations/runs/cancelRun.ts', 'operations/runs/refreshRunStatus.ts', 'operations/runs/replanRun.ts'],
      ],
    ]);
    assert.deepEqual([...(writers.get('gate:updated') ?? [])], ['operations/gates/updateGate.ts']);
    const probe = ts.createSourceFile(
      'x.ts',
      "await appendEvent(tx, run,\n  'gate:updated', now, {});",
      ts.ScriptTarget.Latest,
    );
    assert.deepEqual(eventsAppendedIn(probe), ['gate:updated']);
  });

  describe('reads statements from the parsed source, not the text', () => {
    it("catches 'UPDATE ' + TABLE: the table of a constant, or a table named at run time", () => {
      const constant = `const TABLE = 'gates';\nexport const close = (tx: Tx) => tx.run('UPDATE ' + TABLE + ' SET status = ?', ['x']);`;
      assert.deepEqual(tablesWritten(constant), ['gates']);
      assert.deepEqual(violationsIn('executor/coordinator.ts', constant), [
        'executor/coordinator.ts writes gates, which only operations/gates/ may write',
      ]);
      const parameter = `export const touch = (tx: Tx, TABLE: string) => tx.run('UPDATE ' + TABLE);`;
      assert.deepEqual(tablesWritten(parameter), [DYNAMIC_TABLE]);
      assert.match(violationsIn('operations/gates/x.ts', parameter)[0] ?? '', /a table named at run time/);
    });

    it('catches a template with the table interpolated', () => {
      const known = "const t = 'runtimes';\ntx.run(`UPDATE ${t} SET pid = ? WHERE id = ?`, [1, 'W']);";
      assert.deepEqual(tablesWritten(known), ['runtimes']);
      assert.match(violationsIn('usecases/x.ts', known)[0] ?? '', /only operations\/runtimes\//);
      const unknown =
        'export function wipe(tx: Tx, table: string) { return tx.run(`DELETE FROM ${table} WHERE run_id = ?`); }';
      assert.deepEqual(tablesWritten(unknown), [DYNAMIC_TABLE]);
      assert.deepEqual(tablesWritten('tx.run(`INSERT INTO runs${suffix} (id) VALUES (?)`);'), [DYNAMIC_TABLE]);
      assert.deepEqual(violationsIn(BULK_COPY, unknown), [], 'the bulk copy may');
    });

    it('catches a split string: concatenated, across lines, in a nested template, or from an imported constant', () => {
      assert.deepEqual(tablesWritten(`tx.run('UPD' + 'ATE runtimes SET pid = ?');`), ['runtimes']);
      assert.deepEqual(tablesWritten(`tx.run('INSERT INTO ' +\n  'gates (id) VALUES (?)');`), ['gates']);
      assert.deepEqual(tablesWritten("tx.run(`DELETE ${'FROM'} tasks WHERE id = ?`);"), ['tasks']);
      assert.deepEqual(tablesWritten("const VERB = 'UPDATE';\nconst SQL = `${VERB} runs` + ' SET status = ?';"), [
        'runs',
      ]);
      const files = new Map([['/engine/domain/tables.ts', "export const GATES = 'gates';\n"]]);
      assert.deepEqual(
        tablesWritten(
          `import { GATES as G } from '../domain/tables';\ntx.run('DELETE FROM ' + G + ' WHERE id = ?');`,
          files,
        ),
        ['gates'],
      );
    });

    it('finds no statement in a comment, in prose, or in a DO UPDATE / FOR UPDATE clause', () => {
      assert.deepEqual(
        tablesWritten('// UPDATE runs SET status = ?\n/* DELETE FROM gates */\nexport const x = 1;'),
        [],
      );
      assert.deepEqual(tablesWritten("throw new Error('Update Baton; the store was left untouched.');"), []);
      assert.deepEqual(
        tablesWritten(
          "tx.run('INSERT INTO counters (name) VALUES (?) ON CONFLICT (name) DO UPDATE SET value = 1 RETURNING value');\n" +
            "tx.run('SELECT id FROM runs FOR UPDATE SKIP LOCKED');",
        ),
        ['counters'],
      );
    });
  });
});

/** The tables the statements of `source` (a file at /engine/usecases/x.ts) write; `files`: the modules it imports. */
function tablesWritten(source: string, files: ReadonlyMap<string, string> = new Map()): string[] {
  const evaluator = new StringEvaluator((path) => files.get(path));
  return writesInFile(evaluator, '/engine/usecases/x.ts', source).map((w) => w.table);
}

/** The ownership violations of `source` as the file `file` (relative to src/engine). */
function violationsIn(file: string, source: string): string[] {
  return tablesWritten(source).flatMap((table) => ownershipViolation(file, table) ?? []);
}

const NOT_A_LITERAL = '(not a literal)';

/** The event types a file appends (`appendEvent(tx, runId, type, …)` with a literal type). */
function eventsAppendedIn(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'appendEvent') {
      const type = node.arguments[2];
      found.push(type && ts.isStringLiteralLike(type) ? type.text : NOT_A_LITERAL);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
