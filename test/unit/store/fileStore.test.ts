import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError } from '../../../src/engine/domain/errors';
import { FileStore } from '../../../src/engine/store/fileStore';
import { encodeJournalLine } from '../../../src/engine/store/journal';
import { SCHEMA_VERSION } from '../../../src/engine/store/migrations';
import { loadSqlJs } from '../../../src/engine/store/sqljs';
import { counterNames, insertCounters, storeFiles } from '../../support/storeFiles';
import { useTempDir } from '../../support/tempDir';

const files = storeFiles;
const lastSegment = (dir: string): string => join(dir, files(dir, /^journal-\d+\.log$/).pop()!);

const expected = (n: number): string[] => Array.from({ length: n }, (_, i) => `k${i}`);

function snapshotOf(dir: string): Record<string, Buffer> {
  return Object.fromEntries(readdirSync(dir).map((n) => [n, readFileSync(join(dir, n))]));
}

describe('FileStore durability and recovery', () => {
  const tmp = useTempDir('baton-store-');

  it('writes one journal line per committed write transaction and none for a read-only one', async () => {
    const store = await FileStore.open(tmp.path);
    const before = readFileSync(lastSegment(tmp.path), 'utf8').split('\n').length;
    await store.transact(async (tx) => {
      await tx.get(`SELECT 1`);
    });
    await insertCounters(store, 0, 3);
    const after = readFileSync(lastSegment(tmp.path), 'utf8').split('\n').length;
    assert.equal(after - before, 3);
    await store.close();
  });

  it('cuts off an incomplete last journal line, reports it, and keeps every commit before it', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 5);
    await store.close();
    appendFileSync(lastSegment(tmp.path), '0123456789abcdef {"q":99,"v":1,"s":[["INSERT INTO cou');
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), expected(5));
    assert.equal(reopened.recovery.notices.length, 1);
    assert.match(reopened.recovery.notices[0]!, /torn last journal line .*incomplete/);
    assert.ok(readFileSync(lastSegment(tmp.path), 'utf8').endsWith('\n'), 'the torn bytes are gone');
    await insertCounters(reopened, 5, 6);
    await reopened.close();
    assert.deepEqual(await counterNames(await FileStore.open(tmp.path)), expected(6));
  });

  it('reports a complete, acknowledged last line with a wrong checksum as damage (not as torn) and keeps what precedes it', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.close();
    const path = lastSegment(tmp.path);
    const lines = readFileSync(path, 'utf8').split('\n');
    const last = lines[lines.length - 2]!;
    lines[lines.length - 2] = last.replace('"k2"', '"kX"');
    writeFileSync(path, lines.join('\n'));
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), expected(2));
    assert.match(reopened.recovery.notices[0]!, /bad checksum\), though it was acknowledged/);
    await reopened.close();
  });

  it('cuts a garbage tail that spans several "lines" when none of them is a valid journal line', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 4);
    await store.close();
    appendFileSync(lastSegment(tmp.path), Buffer.from('\u0001garbage\nmore garbage\n0123456789abcdef {"q":1}\n\u00ff'));
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), expected(4));
    assert.match(reopened.recovery.notices.join('\n'), /Cut off a torn last journal line/);
    await insertCounters(reopened, 4, 5);
    await reopened.close();
    assert.deepEqual(await counterNames(await FileStore.open(tmp.path)), expected(5));
  });

  it('refuses a journal damaged before its last line, without changing any file', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 4);
    await store.close();
    const path = lastSegment(tmp.path);
    const lines = readFileSync(path, 'utf8').split('\n');
    lines[lines.length - 3] = lines[lines.length - 3]!.replace('"k2"', '"kY"');
    writeFileSync(path, lines.join('\n'));
    const before = snapshotOf(tmp.path);
    await assert.rejects(
      FileStore.open(tmp.path),
      (err) => BatonError.is(err, 'store.journal-corrupt') && / 1 line after the damage/.test(err.message),
    );
    assert.deepEqual(snapshotOf(tmp.path), before);
  });

  it('moves a snapshot that will not open aside and recovers from the previous snapshot and the journal', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.snapshot();
    await insertCounters(store, 3, 6);
    await store.snapshot();
    await insertCounters(store, 6, 8);
    await store.close();
    const snapshots = files(tmp.path, /^snapshot-\d+\.sqlite$/);
    assert.equal(snapshots.length, 2);
    const newest = join(tmp.path, snapshots[1]!);
    const bytes = readFileSync(newest);
    bytes.fill(0x5a, 100, 4000); // garble the header and first pages
    writeFileSync(newest, bytes);
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), expected(8));
    assert.ok(existsSync(`${newest}.corrupt`), 'the bad snapshot is kept, renamed');
    assert.deepEqual(readFileSync(`${newest}.corrupt`), bytes);
    assert.match(reopened.recovery.notices.join('\n'), /would not open.*moved it aside/);
    await reopened.close();
  });

  it('rebuilds from the journal alone when the only snapshot is damaged and the journal reaches back to the start', async () => {
    const store = await FileStore.open(tmp.path, { closeSnapshotMinBytes: Infinity });
    await insertCounters(store, 0, 4);
    await store.snapshot();
    await store.close();
    // The first snapshot was written after line 1 (see the first commit); keep the journal from line 1.
    const snapshots = files(tmp.path, /^snapshot-\d+\.sqlite$/);
    for (const name of snapshots) writeFileSync(join(tmp.path, name), 'not a database at all, just text');
    assert.ok(files(tmp.path, /^journal-\d+\.log$/)[0]!.includes('000000000001'));
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), expected(4));
    assert.equal(files(tmp.path, /\.corrupt$/).length, snapshots.length);
    await reopened.close();
  });

  it('names the preserved files when nothing can rebuild the store, and deletes none', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.snapshot();
    await insertCounters(store, 3, 5);
    await store.snapshot();
    await insertCounters(store, 5, 7);
    await store.snapshot(); // prunes the journal before the second snapshot
    await store.close();
    assert.ok(
      !files(tmp.path, /^journal-\d+\.log$/)[0]!.includes('000000000001'),
      'the oldest journal lines are pruned',
    );
    for (const name of files(tmp.path, /^snapshot-\d+\.sqlite$/)) writeFileSync(join(tmp.path, name), 'garbage');
    const namesBefore = readdirSync(tmp.path).sort();
    await assert.rejects(FileStore.open(tmp.path), (err) => {
      assert.ok(BatonError.is(err, 'store.unrecoverable'));
      assert.match(err.message, /preserved files: .*journal-.*snapshot-.*\.corrupt/);
      return true;
    });
    const namesAfter = readdirSync(tmp.path).sort();
    assert.equal(namesAfter.length, namesBefore.length, 'every file is still there (some renamed .corrupt)');
  });

  it('finds a flipped bit in a value of a snapshot that still opens (its checksum), moves it aside and recovers from the previous one', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.snapshot();
    await insertCounters(store, 3, 6);
    await store.snapshot();
    await store.close();
    const newest = join(tmp.path, files(tmp.path, /^snapshot-\d+\.sqlite$/).pop()!);
    const bytes = readFileSync(newest);
    // k4 → k5 inside the row: SQLite's own checks see a well-formed page.
    const at = bytes.indexOf(Buffer.from('k4'));
    assert.ok(at > 0);
    bytes[at + 1] = bytes[at + 1]! ^ 0x01;
    writeFileSync(newest, bytes);
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(
      await counterNames(reopened),
      expected(6),
      'the true values, from the previous snapshot and the journal',
    );
    assert.ok(existsSync(`${newest}.corrupt`));
    assert.match(reopened.recovery.notices.join('\n'), /sha256 does not match/);
    await reopened.close();
  });

  it('refuses a snapshot written by a newer schema and leaves the files untouched', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 2);
    await store.snapshot();
    await store.close();
    const name = files(tmp.path, /^snapshot-\d+\.sqlite$/).pop()!;
    const SQL = await loadSqlJs();
    const db = new SQL.Database(readFileSync(join(tmp.path, name)));
    db.run(`UPDATE store_meta SET value = '${SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`);
    // As a newer Baton would write it: the snapshot and its checksum.
    const bytes = db.export();
    writeFileSync(join(tmp.path, name), bytes);
    writeFileSync(join(tmp.path, `${name}.sha256`), `${createHash('sha256').update(bytes).digest('hex')}\n`);
    db.close();
    const before = snapshotOf(tmp.path);
    await assert.rejects(
      FileStore.open(tmp.path),
      (err) =>
        BatonError.is(err, 'store.schema-too-new') && err.kind === 'not-qualified' && /newer Baton/.test(err.message),
    );
    assert.deepEqual(snapshotOf(tmp.path), before);
  });

  it('refuses a journal line written by a newer schema before applying it', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 2);
    const seq = store.sequence;
    await store.close();
    appendFileSync(
      lastSegment(tmp.path),
      encodeJournalLine({ seq: seq + 1, schema: SCHEMA_VERSION + 1, statements: [[`CREATE TABLE future (x)`, []]] }),
    );
    const before = snapshotOf(tmp.path);
    await assert.rejects(FileStore.open(tmp.path), (err) => BatonError.is(err, 'store.schema-too-new'));
    assert.deepEqual(snapshotOf(tmp.path), before);
  });

  it('removes a snapshot temp file left by a process that stopped mid-snapshot', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 2);
    await store.close();
    writeFileSync(join(tmp.path, 'snapshot-000000000099.sqlite.tmp'), 'half written');
    const reopened = await FileStore.open(tmp.path);
    assert.ok(!existsSync(join(tmp.path, 'snapshot-000000000099.sqlite.tmp')));
    assert.match(reopened.recovery.notices.join('\n'), /was being written when a process stopped/);
    assert.deepEqual(await counterNames(reopened), expected(2));
    await reopened.close();
  });

  it('keeps two snapshots and prunes only the journal neither of them needs', async () => {
    const store = await FileStore.open(tmp.path);
    for (let round = 0; round < 3; round++) {
      await insertCounters(store, round * 10, round * 10 + 10);
      await store.snapshot();
    }
    await store.close();
    assert.equal(files(tmp.path, /^snapshot-\d+\.sqlite$/).length, 2);
    const olderSeq = Number(/\d+/.exec(files(tmp.path, /^snapshot-\d+\.sqlite$/)[0]!)![0]);
    const segments = files(tmp.path, /^journal-\d+\.log$/).map((n) => Number(/\d+/.exec(n)![0]));
    assert.ok(segments[0]! <= olderSeq + 1, 'the journal still reaches back to the older snapshot');
    assert.deepEqual(await counterNames(await FileStore.open(tmp.path)), expected(30));
  });

  it('brings a reader that fell behind a pruned journal up to date from the newest snapshot', async () => {
    const writer = await FileStore.open(tmp.path);
    const laggard = await FileStore.open(tmp.path);
    for (let round = 0; round < 4; round++) {
      await insertCounters(writer, round * 10, round * 10 + 10);
      await writer.snapshot();
    }
    assert.ok(
      !files(tmp.path, /^journal-\d+\.log$/)[0]!.includes('000000000001'),
      'the lines the laggard needs next are pruned',
    );
    assert.deepEqual(await counterNames(laggard), expected(40));
    await insertCounters(laggard, 40, 41);
    assert.deepEqual(await counterNames(writer), expected(41));
    await writer.close();
    await laggard.close();
  });

  it('does not journal a commit whose work failed after some statements ran', async () => {
    const store = await FileStore.open(tmp.path);
    const seq = store.sequence;
    await assert.rejects(
      store.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('k0', 0)`);
        await tx.run(`INSERT INTO counters (name, value) VALUES ('k0', 1)`); // primary key violation
      }),
      /UNIQUE constraint failed: counters\.name/,
    );
    assert.equal(store.sequence, seq);
    await store.close();
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), []);
    await reopened.close();
  });
});
