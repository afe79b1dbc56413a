// Migrations applied to a store an older Baton wrote: its journal is replayed, then the
// migrations it lacks run, and what it held is still there.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../../src/engine/store/fileStore';
import { encodeJournalLine, type JournalStatement } from '../../../src/engine/store/journal';
import { MIGRATIONS, RUN_TABLES, SCHEMA_VERSION } from '../../../src/engine/store/migrations';
import { catalogAt } from '../../../src/engine/store/schemaCatalog';
import { storeArtifact } from '../../../src/engine/operations/ingestions/storeArtifact';
import { readIngestionArtifact } from '../../../src/engine/queries/artifacts';
import { useTempDir } from '../../support/tempDir';

/** The journal a Baton at schema `version` writes: its migrations, one line each, then `rows`. */
function journalAt(version: number, rows: JournalStatement[]): Buffer {
  const lines: Buffer[] = [];
  let seq = 0;
  for (const migration of MIGRATIONS.filter((m) => m.version <= version)) {
    lines.push(
      encodeJournalLine({
        seq: ++seq,
        schema: migration.version,
        statements: [
          ...migration.statements.map((sql): JournalStatement => [sql, []]),
          [`INSERT OR REPLACE INTO store_meta (key, value) VALUES ('schema_version', ?)`, [String(migration.version)]],
        ],
      }),
    );
  }
  lines.push(encodeJournalLine({ seq: seq + 1, schema: version, statements: rows }));
  return Buffer.concat(lines);
}

const INSERT_INGESTION = `INSERT INTO ingestions (id, run_id, delegation_id, artifact_path, digest, accepted, result_status, issues_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`;

describe('store migrations', () => {
  const tmp = useTempDir('baton-migrate-');

  it('5: keeps every ingestion of a version-4 store and lets the same artifact digest be recorded again for a delegation', async () => {
    const issues = JSON.stringify([{ code: 'result.artifact-missing' }]);
    writeFileSync(
      join(tmp.path, 'journal-000000000001.log'),
      journalAt(4, [
        [INSERT_INGESTION, ['I-1', 'R-1', 'D-T1-coder-001', 'a.md', 'sha256:aa', 0, null, issues, 10]],
        [INSERT_INGESTION, ['I-2', 'R-1', 'D-T2-coder-001', 'b.md', 'sha256:bb', 1, 'PASS', '[]', 20]],
      ]),
    );
    const store = await FileStore.open(tmp.path);
    try {
      assert.ok(SCHEMA_VERSION >= 5, `schema ${SCHEMA_VERSION}`);
      const rows = await store.read((r) =>
        r.all<{ id: string; digest: string; issues_json: string }>(
          `SELECT id, digest, issues_json FROM ingestions ORDER BY rowid`,
        ),
      );
      assert.deepEqual(rows, [
        { id: 'I-1', digest: 'sha256:aa', issues_json: issues },
        { id: 'I-2', digest: 'sha256:bb', issues_json: '[]' },
      ]);
      // Version 4 refused this row (UNIQUE run, delegation, digest): the same bytes, checked again after a fix.
      await store.transact(async (tx) => {
        await tx.run(INSERT_INGESTION, ['I-3', 'R-1', 'D-T1-coder-001', 'a.md', 'sha256:aa', 1, 'PASS', '[]', 30]);
      });
      const again = await store.read((r) =>
        r.all<{ id: string }>(`SELECT id FROM ingestions WHERE digest = 'sha256:aa' ORDER BY rowid`),
      );
      assert.deepEqual(
        again.map((r) => r.id),
        ['I-1', 'I-3'],
      );
    } finally {
      await store.close();
    }
  });

  it('8: gives each worktree run the head Baton expects its target at: the last integration result, else the base', async () => {
    const isolation = `INSERT INTO run_isolation (run_id, mode, strategy, repo_root, target_branch, base_commit, note, decided_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`;
    const worktree = `INSERT INTO worktrees (run_id, delegation_id, task_id, path, branch, base_commit, status, strategy, target_before, target_after, created_at, integrated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
    writeFileSync(
      join(tmp.path, 'journal-000000000001.log'),
      journalAt(7, [
        [isolation, ['R-1', 'worktree', 'merge', '/repo', 'main', 'base1', null, 1]],
        [isolation, ['R-2', 'worktree', 'merge', '/repo', 'main', 'base2', null, 1]],
        [isolation, ['R-3', 'none', 'merge', null, null, null, 'shared tree', 1]],
        [
          worktree,
          ['R-1', 'D-A-coder-001', 'A', '/w/a', 'b/a', 'base1', 'integrated', 'merge', 'base1', 'afterA', 1, 10],
        ],
        [
          worktree,
          ['R-1', 'D-B-coder-001', 'B', '/w/b', 'b/b', 'base1', 'integrated', 'merge', 'afterA', 'afterB', 1, 20],
        ],
        [worktree, ['R-1', 'D-C-coder-001', 'C', '/w/c', 'b/c', 'base1', 'conflict', 'merge', null, null, 1, null]],
        [worktree, ['R-2', 'D-A-coder-001', 'A', '/w/a2', 'b/a2', 'base2', 'committed', 'merge', null, null, 1, null]],
      ]),
    );
    const store = await FileStore.open(tmp.path);
    try {
      assert.ok(SCHEMA_VERSION >= 8, `schema ${SCHEMA_VERSION}`);
      const rows = await store.read((r) =>
        r.all<{ run_id: string; expected_head: string | null }>(
          `SELECT run_id, expected_head FROM run_isolation ORDER BY run_id`,
        ),
      );
      assert.deepEqual(rows, [
        { run_id: 'R-1', expected_head: 'afterB' },
        { run_id: 'R-2', expected_head: 'base2' },
        { run_id: 'R-3', expected_head: null },
      ]);
    } finally {
      await store.close();
    }
  });

  it('9: adds the artifacts table; an ingestion from before it keeps its record and has no content', async () => {
    writeFileSync(
      join(tmp.path, 'journal-000000000001.log'),
      journalAt(8, [[INSERT_INGESTION, ['I-1', 'R-1', 'D-T1-coder-001', 'a.md', 'sha256:aa', 1, 'PASS', '[]', 10]]]),
    );
    const store = await FileStore.open(tmp.path);
    try {
      assert.ok(SCHEMA_VERSION >= 9, `schema ${SCHEMA_VERSION}`);
      const found = await store.read((r) => readIngestionArtifact(r, 'I-1'));
      assert.equal(found.record.artifactPath, 'a.md');
      assert.equal(found.artifact, undefined);
      await store.transact((tx) =>
        storeArtifact(tx, { digest: 'sha256:aa', bytes: 4, content: 'text' }, 20).then(() =>
          storeArtifact(tx, { digest: 'sha256:aa', bytes: 4, content: 'text' }, 30),
        ),
      );
      assert.deepEqual((await store.read((r) => readIngestionArtifact(r, 'I-1'))).artifact, {
        digest: 'sha256:aa',
        bytes: 4,
        content: 'text',
      });
    } finally {
      await store.close();
    }
  });

  it("18: guards every table of a run's rows against a write scoped to another run (the PostgreSQL triggers)", () => {
    const withRun = catalogAt(SCHEMA_VERSION)
      .filter((table) => table.columns.includes('run_id'))
      .map((table) => table.name);
    assert.deepEqual(Object.keys(RUN_TABLES).sort(), ['runs', ...withRun].sort());
    const triggers = MIGRATIONS.flatMap((m) => m.postgres ?? []).filter((sql) => /CREATE TRIGGER/.test(sql));
    for (const table of Object.keys(RUN_TABLES))
      for (const op of ['INSERT', 'UPDATE', 'DELETE'])
        assert.ok(
          triggers.some((sql) => new RegExp(`AFTER ${op} ON ${table} FOR EACH ROW`).test(sql)),
          `${table} has its guard on ${op}`,
        );
  });
});
