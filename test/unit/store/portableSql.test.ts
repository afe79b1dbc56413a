// Every operation and query is written once, in SQL both backends run (docs/architecture.md,
// "Decision: one portable SQL subset"): the file store's SQLite and PostgreSQL, through the
// thin seam of src/engine/store/postgresDialect.ts. This test keeps SQLite-only constructs
// out of the engine, so a new statement cannot quietly work on one backend only.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const ENGINE = join(__dirname, '../../../src/engine');

/** The backends' own code: the file store speaks SQLite, the PostgreSQL store PostgreSQL; migrations are translated. */
const BACKEND_FILES = new Set([
  'store/fileStore.ts',
  'store/journal.ts',
  'store/sqljs.ts',
  'store/migrations.ts',
  'store/pgStore.ts',
  'store/postgresDialect.ts',
]);

/** SQLite-only constructs, each with what to write instead. */
export const NOT_PORTABLE: ReadonlyArray<{ pattern: RegExp; instead: string }> = [
  { pattern: /\bINSERT\s+OR\s+(?:IGNORE|REPLACE)\b/, instead: 'INSERT … ON CONFLICT (…) DO NOTHING / DO UPDATE SET' },
  { pattern: /\bjson(?:_\w+)?\s*\(/i, instead: 'reading the JSON column and taking it apart in TypeScript' },
  { pattern: /->>?/, instead: 'reading the JSON column and taking it apart in TypeScript' },
  { pattern: /\browid\b/i, instead: 'an explicit column (ids, ordinals, created_at)' },
  { pattern: /\bIS\s+(?:NOT\s+)?\?/, instead: 'IS [NOT] DISTINCT FROM ?' },
  { pattern: /\bAS\s+[a-z]+[A-Z]\w*/, instead: 'a snake_case alias (PostgreSQL folds unquoted names to lower case)' },
  { pattern: /\b(?:IFNULL|IIF|GROUP_CONCAT|TOTAL|STRFTIME|DATETIME|JULIANDAY|PRINTF)\s*\(/i, instead: 'standard SQL' },
  {
    pattern: /\b(?:MAX|MIN)\s*\([^()]*,[^()]*\)/,
    instead: 'GREATEST / LEAST are not portable either: compare in TypeScript',
  },
  { pattern: /\bGLOB\b|\bLIKE\b/, instead: 'an exact comparison (LIKE folds case in SQLite only)' },
];

/** The SQL-looking template literals of a source file. */
export function sqlLiterals(source: string): string[] {
  return [...source.matchAll(/`([^`]*)`/g)]
    .map((m) => m[1]!)
    .filter((text) => /\b(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER)\b/.test(text));
}

export function portabilityProblems(file: string, source: string): string[] {
  return sqlLiterals(source).flatMap((sql) =>
    NOT_PORTABLE.filter(({ pattern }) => pattern.test(sql)).map(
      ({ pattern, instead }) => `${file}: ${pattern.source} in \`${sql.trim().slice(0, 100)}\` — use ${instead}`,
    ),
  );
}

function engineFiles(dir = ENGINE): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? engineFiles(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

describe('one portable SQL subset', () => {
  it('no engine statement outside the backends uses a SQLite-only construct', () => {
    const problems: string[] = [];
    let statements = 0;
    for (const path of engineFiles()) {
      const file = relative(ENGINE, path).split('\\').join('/');
      if (BACKEND_FILES.has(file)) continue;
      const source = readFileSync(path, 'utf8');
      statements += sqlLiterals(source).length;
      problems.push(...portabilityProblems(file, source));
    }
    assert.ok(statements > 100, `found only ${statements} statements: the scan is not looking at the engine`);
    assert.deepEqual(problems, []);
  });

  it('finds each SQLite-only construct it names (the check bites)', () => {
    const samples = [
      'await tx.run(`INSERT OR IGNORE INTO task_dependencies (run_id) VALUES (?)`);',
      'await tx.run(`INSERT OR REPLACE INTO coordinator_leases (run_id) VALUES (?)`);',
      "r.get(`SELECT 1 FROM gates WHERE json_extract(details_json, '$.accepted') = 1`);",
      "tx.run(`UPDATE gates SET details_json = json_set(details_json, '$.a', json('true'))`);",
      'tx.get(`SELECT id FROM ingestions ORDER BY created_at DESC, rowid DESC`);',
      'tx.get(`SELECT id FROM gates WHERE task_id IS NOT ? LIMIT 1`);',
      'tx.get(`SELECT EXISTS (SELECT 1 FROM tasks) AS inFlight`);',
      'tx.get(`SELECT MAX(a, b) AS m FROM tasks`);',
    ];
    for (const sample of samples) assert.equal(portabilityProblems('x.ts', sample).length, 1, sample);
    assert.deepEqual(
      portabilityProblems(
        'x.ts',
        'tx.run(`INSERT INTO tree_snapshots (run_id) VALUES (?) ON CONFLICT DO NOTHING`); tx.get(`SELECT MAX(seq) AS n FROM events WHERE task_id IS DISTINCT FROM ?`);',
      ),
      [],
    );
  });
});
