// `baton store export` / `import` (docs/store-transfer.md) on the file store: a workspace's
// history moves into a new store row for row, its counters and ids continue there, and a bad
// document or a store that is not empty is refused with nothing written.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError, Engine } from '../../../src/engine/index';
import { storeDirOf } from '../../../src/engine/effects/workspaceLayout';
import { FileStore } from '../../../src/engine/store/fileStore';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src/engine/store/migrations';
import type { Row, StorePort } from '../../../src/engine/store/port';
import { catalogAt } from '../../../src/engine/store/schemaCatalog';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

async function* linesOf(lines: readonly string[]): AsyncGenerator<string> {
  yield* lines;
}

/** Every table SQLite holds (not the catalog's idea of them), with all its rows in a stable order. */
async function everyTable(store: StorePort): Promise<Record<string, Row[]>> {
  return store.read(async (r) => {
    const names = await r.all<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
    );
    const out: Record<string, Row[]> = {};
    for (const { name } of names) {
      const rows = await r.all(`SELECT * FROM ${name}`);
      out[name] = rows.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
    }
    return out;
  });
}

/** One made-up row in every table the engine left empty, so that a table the copy forgot shows. */
async function fillEmptyTables(store: StorePort): Promise<void> {
  await store.transact(async (tx) => {
    const names = await tx.all<{ name: string }>(
      `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`,
    );
    for (const { name } of names) {
      if (await tx.get(`SELECT 1 AS x FROM ${name} LIMIT 1`)) continue;
      const columns = await tx.all<{ name: string; type: string }>(`PRAGMA table_info(${name})`);
      const values = columns.map((c) =>
        /INT/i.test(c.type)
          ? 7
          : /REAL/i.test(c.type)
            ? 1.25
            : `${name}.${c.name} with "quotes", ünïcödé\nand a newline`,
      );
      await tx.run(
        `INSERT INTO ${name} (${columns.map((c) => c.name).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
        values,
      );
    }
  });
}

describe('store export and import', () => {
  const fixtures: EngineFixture[] = [];
  const fixture = (): EngineFixture => {
    const f = new EngineFixture();
    fixtures.push(f);
    return f;
  };
  afterEach(async () => {
    for (const f of fixtures.splice(0)) await f.dispose();
  });

  /** A run with a decided gate, a completed task, an accepted and a rejected ingestion, a live attempt, events. */
  async function workedWorkspace(): Promise<{ source: EngineFixture; token: string; runtimeId: string }> {
    const source = fixture();
    source.write('plan.md', DEMO_PLAN);
    const engine = await source.open();
    const t1 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
    await engine.heartbeat({ runtimeId: t1.runtimeId, token: t1.token, progress: 'reading' });
    await engine.decideGate({ gateId: 'G-1', decision: 'approved', by: 'ann', note: 'schema reviewed' });
    await engine.ingest({
      delegationId: t1.delegation.id,
      token: t1.token,
      artifactPath: source.writeResult('T1.md', { task: 'T1' }),
    });
    const t3 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T3' });
    await engine.ingest({
      delegationId: t3.delegation.id,
      token: t3.token,
      artifactPath: source.writeResult('T3.md', { task: 'T9', status: 'DONE' }),
    });
    const t5 = await engine.claimTask({ planPath: 'plan.md', taskId: 'T5' });
    await engine.close();
    return { source, token: t5.token, runtimeId: t5.runtimeId };
  }

  async function exportOf(engine: Engine): Promise<string[]> {
    const lines: string[] = [];
    await engine.exportStore(async (line) => void lines.push(line));
    return lines;
  }

  /** A store's tables after its engines closed; store_meta is the store's own (its journal stamp), not history. */
  async function tablesOf(f: EngineFixture): Promise<Record<string, Row[]>> {
    const store = await FileStore.open(storeDirOf(f.workspace));
    try {
      const tables = await everyTable(store);
      delete tables.store_meta;
      return tables;
    } finally {
      await store.close();
    }
  }

  async function imported(document: readonly string[]): Promise<EngineFixture> {
    const target = fixture();
    const engine = await target.open();
    await engine.importStore(linesOf(document));
    await engine.close();
    return target;
  }

  it('moves every table, row for row, into a new store: run, tasks, delegations, runtimes, gates, ingestions, events and the rest', async () => {
    const { source } = await workedWorkspace();
    const sourceStore = await FileStore.open(storeDirOf(source.workspace));
    await fillEmptyTables(sourceStore);
    // More events than one page of the copy (500) and one INSERT of it: the paging and the batching are crossed.
    await sourceStore.transact(async (tx) => {
      for (let seq = 1; seq <= 1234; seq++) {
        await tx.run(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES (?, ?, ?, ?, ?)`, [
          'R-older',
          seq,
          'task:status',
          1_700_000_000_000 + seq,
          JSON.stringify({ taskId: `T${seq}`, note: 'ü\u0001"' }),
        ]);
      }
    });
    await sourceStore.close();
    const before = await tablesOf(source);
    for (const table of ['runs', 'tasks', 'delegations', 'runtimes', 'gates', 'ingestions', 'events']) {
      assert.ok(before[table]!.length >= 1, `${table} has rows`);
    }
    assert.ok(
      before.ingestions!.some((r) => r.accepted === 1) && before.ingestions!.some((r) => r.accepted === 0),
      'an accepted and a rejected ingestion',
    );
    assert.ok(before.gates!.some((g) => g.status === 'approved' && g.decided_by === 'ann'));
    assert.ok(before.events!.length > 1234);

    const document = await exportOf(await source.open());
    const header = JSON.parse(document[0]!) as { schemaVersion: number; tables: Record<string, { rows: number }> };
    assert.equal(header.schemaVersion, SCHEMA_VERSION);
    assert.deepEqual(Object.keys(header.tables).sort(), Object.keys(before).sort());

    const target = await imported(document);
    assert.deepEqual(await tablesOf(target), before);
  });

  it('continues ids and counters in the new store: the next run, gate, epoch and event come after the imported ones', async () => {
    const { source, token, runtimeId } = await workedWorkspace();
    const document = await exportOf(await source.open());
    const before = await tablesOf(source);
    const target = await imported(document);
    target.write('plan.md', DEMO_PLAN);
    // Ids as a real engine makes them (the fixtures' sequential ids would repeat the source's R-test-1).
    const engine = await Engine.open({ workspace: target.workspace, clock: target.fakeClock });
    // The live attempt's runtime and token came along: its worker's next heartbeat is accepted.
    const beat = await engine.heartbeat({ runtimeId, token, progress: 'after the move' });
    assert.equal(beat.status, 'active');
    const fresh = await engine.startRun('plan.md');
    await engine.claimTask({ runId: fresh.id, taskId: 'T1' });
    await engine.close();
    const after = await tablesOf(target);
    const maxOf = (rows: Row[], column: string): number => Math.max(...rows.map((r) => Number(r[column])));
    assert.ok(maxOf(after.events!, 'id') > maxOf(before.events!, 'id'));
    // No id was reused: every imported event is still there, unchanged.
    for (const event of before.events!)
      assert.ok(after.events!.some((e) => JSON.stringify(e) === JSON.stringify(event)));
    assert.equal(after.events!.length, new Set(after.events!.map((e) => e.id)).size);
    const counter = (rows: Row[], name: string): number => Number(rows.find((r) => r.name === name)!.value);
    assert.equal(counter(after.counters!, 'run'), counter(before.counters!, 'run') + 1);
    assert.notEqual(fresh.id, (before.runs![0] as { id: string }).id);
    assert.ok(counter(after.counters!, 'gate') > counter(before.counters!, 'gate'), 'the new run opened its risk gate');
    // A new claim's lease epoch comes after every imported runtime's.
    assert.ok(maxOf(after.runtimes!, 'epoch') > maxOf(before.runtimes!, 'epoch'));
    assert.equal(counter(after.counters!, 'lease_epoch'), maxOf(after.runtimes!, 'epoch'));
  });

  it('refuses a store that already holds a run, with exit 3 and nothing written', async () => {
    const { source } = await workedWorkspace();
    const document = await exportOf(await source.open());
    const target = fixture();
    target.write('plan.md', DEMO_PLAN);
    const engine = await target.open();
    await engine.startRun('plan.md');
    await engine.close();
    const before = storeFiles(target.workspace);
    const again = await target.open();
    await assert.rejects(again.importStore(linesOf(document)), (err) => {
      assert.ok(BatonError.is(err, 'store.not-empty'), String(err));
      assert.equal(err.kind, 'conflict');
      assert.match(err.message, /already holds 1 run: a store is imported only into an empty one/);
      return true;
    });
    await again.close();
    assert.deepEqual(storeFiles(target.workspace), before);
  });

  describe('a bad document is refused at its line, before any store is touched', () => {
    let document: string[] = [];
    before(async () => {
      const { source } = await workedWorkspace();
      document = await exportOf(await source.open());
    });

    const refusal = async (
      lines: string[],
      code: 'store.document-invalid' | 'store.schema-too-new' | 'store.document-too-old',
      message: RegExp,
      line?: number,
    ) => {
      await assert.rejects(Engine.checkStoreDocument(linesOf(lines)), (err) => {
        assert.ok(BatonError.is(err, code), String(err));
        assert.match(err.message, message);
        if (line !== undefined) assert.equal(err.issues[0]?.range?.start.line, line);
        return true;
      });
      // And the import itself refuses it, leaving the empty target empty.
      const target = fixture();
      const engine = await target.open();
      await assert.rejects(engine.importStore(linesOf(lines)), (err) => BatonError.is(err, code));
      await engine.close();
      const tables = await tablesOf(target);
      assert.deepEqual(
        Object.entries(tables).filter(([name, rows]) => name !== 'counters' && rows.length),
        [],
      );
      assert.ok(tables.counters!.every((c) => c.value === 0));
    };

    it('cut short (no end line): names the last line', async () => {
      await refusal(
        document.slice(0, -3),
        'store.document-invalid',
        /not valid at line \d+: the document ends here without its end line: it was cut short/,
        document.length - 3,
      );
    });

    it('cut inside a line: not JSON at that line', async () => {
      const cut = [...document.slice(0, 5), document[5]!.slice(0, 20)];
      await refusal(cut, 'store.document-invalid', /at line 6: not JSON/, 6);
    });

    it('a row dropped from the middle: the header announced more', async () => {
      const eventLine = document.findIndex((l) => l.startsWith('{"table":"events"'));
      const dropped = document.filter((_l, i) => i !== eventLine);
      await refusal(dropped, 'store.document-invalid', /counts \d+ rows, the document has \d+/);
    });

    it('a row of the wrong shape: zod names the field', async () => {
      const bad = [...document];
      bad[2] = JSON.stringify({ table: 'runs', values: [{ nested: true }] });
      await refusal(bad, 'store.document-invalid', /at line 3: not a row .*at values\.0/, 3);
    });

    it('a row with too few values for its table', async () => {
      const bad = [...document];
      const row = JSON.parse(bad[2]!) as { table: string; values: unknown[] };
      bad[2] = JSON.stringify({ table: row.table, values: row.values.slice(1) });
      await refusal(
        bad,
        'store.document-invalid',
        new RegExp(`at line 3: ${row.values.length - 1} values, but \\w+ has`),
        3,
      );
    });

    it('a header that is not a store document', async () => {
      await refusal(
        ['{"format":"something-else"}', ...document.slice(1)],
        'store.document-invalid',
        /at line 1: not a Baton store document header/,
        1,
      );
      await refusal([], 'store.document-invalid', /the document is empty/, 1);
    });

    it('a header that lacks a table of its schema version', async () => {
      const header = JSON.parse(document[0]!) as { tables: Record<string, unknown> };
      delete header.tables.gates;
      const lines = [JSON.stringify(header), ...document.slice(1).filter((l) => !l.startsWith('{"table":"gates"'))];
      await refusal(lines, 'store.document-invalid', /the header names no table gates/, 1);
    });

    it('a row the store refuses, after others went in: the one transaction is rolled back', async () => {
      const taskLine = document.findIndex((l) => l.startsWith('{"table":"tasks"'));
      const header = JSON.parse(document[0]!) as { tables: Record<string, { rows: number }> };
      header.tables.tasks!.rows += 1;
      const end = JSON.parse(document.at(-1)!) as { rows: number };
      const twice = [
        JSON.stringify(header),
        ...document.slice(1, taskLine + 1),
        document[taskLine]!,
        ...document.slice(taskLine + 1, -1),
        JSON.stringify({ ...end, rows: end.rows + 1 }),
      ];
      // The check alone cannot see it (the rows are well formed); the import refuses it and writes nothing.
      await Engine.checkStoreDocument(linesOf(twice));
      const target = fixture();
      const engine = await target.open();
      await assert.rejects(engine.importStore(linesOf(twice)), (err) => {
        assert.ok(BatonError.is(err, 'store.document-invalid'), String(err));
        assert.match(err.message, /the rows of tasks at lines \d+–\d+ could not be written \(UNIQUE constraint failed/);
        return true;
      });
      await engine.close();
      const tables = await tablesOf(target);
      assert.deepEqual(
        Object.entries(tables).filter(([name, rows]) => name !== 'counters' && rows.length),
        [],
      );
    });

    it('a newer schema: store.schema-too-new (exit 7)', async () => {
      const header = JSON.parse(document[0]!) as { schemaVersion: number };
      header.schemaVersion = SCHEMA_VERSION + 1;
      await refusal([JSON.stringify(header), ...document.slice(1)], 'store.schema-too-new', /written by a newer Baton/);
    });

    it('an older schema: refused with what to do instead', async () => {
      const header = JSON.parse(document[0]!) as { schemaVersion: number };
      header.schemaVersion = SCHEMA_VERSION - 1;
      await refusal([JSON.stringify(header), ...document.slice(1)], 'store.document-too-old', /export it again/);
    });
  });

  it('reads the tables and columns from the migrations: the catalog is what a migrated store holds', async () => {
    const f = fixture();
    await (await f.open()).close();
    const store = await FileStore.open(storeDirOf(f.workspace));
    try {
      const actual = await store.read(async (r) => {
        const names = await r.all<{ name: string }>(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`,
        );
        const out: Record<string, string[]> = {};
        for (const { name } of names)
          out[name] = (await r.all<{ name: string }>(`PRAGMA table_info(${name})`)).map((c) => c.name);
        return out;
      });
      const catalog = Object.fromEntries(catalogAt(SCHEMA_VERSION).map((t) => [t.name, t.columns]));
      assert.deepEqual(catalog, actual);
    } finally {
      await store.close();
    }
    assert.throws(
      () =>
        catalogAt(99, [
          ...MIGRATIONS,
          { version: 99, name: 'x', statements: ['ALTER TABLE runs DROP COLUMN stop_mode'] },
        ]),
      /does not understand/,
    );
  });
});

function storeFiles(workspace: string): Record<string, string> {
  const dir = storeDirOf(workspace);
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n)).toString('base64')]));
}
