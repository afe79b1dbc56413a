import assert from 'node:assert/strict';
import { fstatSync, readdirSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { BatonError } from '../../../src/engine/domain/errors';
import { FileStore } from '../../../src/engine/store/fileStore';
import { decodeJournalChunk } from '../../../src/engine/store/journal';
import { useTempDir } from '../../support/tempDir';

/**
 * Group commit in FileStore: concurrent commits share one fdatasync, a commit or read is
 * acknowledged only once the lines it saw are durable, and a failed flush is rolled back
 * (for the transactions waiting on it) without leaving the store unusable.
 */

// The module object itself (an import would give a copy): the store's compiled modules call through it.
type FsFn = (...args: any[]) => any; // eslint-disable-line @typescript-eslint/no-explicit-any
const fsModule = createRequire(__filename)('node:fs') as Record<string, FsFn>;

const files = (dir: string, pattern: RegExp): string[] =>
  readdirSync(dir)
    .filter((n) => pattern.test(n))
    .sort();
const segments = (dir: string): string[] => files(dir, /^journal-\d+\.log$/).map((n) => join(dir, n));
const lastSegment = (dir: string): string => segments(dir).pop()!;
const journalLines = (dir: string): number =>
  segments(dir).reduce((n, path) => n + decodeJournalChunk(readFileSync(path)).entries.length, 0);

const insert = (store: FileStore, name: string, value: number): Promise<number> =>
  store.transact((tx) => tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [name, value]));

async function namesLike(store: FileStore, prefix: string): Promise<string[]> {
  const rows = await store.read((r) =>
    r.all<{ name: string }>(`SELECT name FROM counters WHERE name GLOB ? ORDER BY value`, [`${prefix}-*`]),
  );
  return rows.map((r) => r.name);
}

/**
 * Names inserted by the journal lines in `bytes` (the second parameter of each INSERT is its value; the first its
 * name).
 */
function insertedNames(bytes: Buffer): Set<string> {
  const names = new Set<string>();
  for (const entry of decodeJournalChunk(bytes).entries) {
    for (const [sql, params] of entry.statements) if (/^INSERT INTO counters/.test(sql)) names.add(String(params[0]));
  }
  return names;
}

const isCommitFailed = (err: unknown): boolean =>
  BatonError.is(err, 'store.commit-failed') && /^Could not write the Baton journal/.test(err.message);

describe('FileStore group commit', () => {
  const tmp = useTempDir('baton-group-');
  const restores: Array<() => void> = [];
  const opened: FileStore[] = [];

  /** Replaces fs[name] for the store's modules; undone by `unpatch` (and after each test). */
  function patch(name: 'fdatasync' | 'fdatasyncSync', make: (original: FsFn) => FsFn): void {
    const original = fsModule[name]!;
    fsModule[name] = make(original);
    restores.push(() => (fsModule[name] = original));
  }
  const unpatch = (): void => {
    for (const restore of restores.splice(0).reverse()) restore();
  };

  /** Counts the store's flushes: fdatasync on the thread pool and fdatasyncSync. */
  function countFlushes(): { async: number; sync: number } {
    const counts = { async: 0, sync: 0 };
    patch('fdatasync', (original) => (...args) => {
      counts.async++;
      return original(...args);
    });
    patch('fdatasyncSync', (original) => (...args) => {
      counts.sync++;
      return original(...args);
    });
    return counts;
  }

  const open = async (options?: Parameters<typeof FileStore.open>[1]): Promise<FileStore> => {
    const store = await FileStore.open(tmp.path, options);
    opened.push(store);
    return store;
  };

  afterEach(async () => {
    unpatch();
    for (const store of opened.splice(0)) await store.close().catch(() => undefined);
  });

  it('lets many concurrent commits share flushes: every one is acknowledged, journaled once and kept', async () => {
    const store = await open();
    const linesBefore = journalLines(tmp.path);
    const flushes = countFlushes();
    const n = 40;
    const results = await Promise.all(Array.from({ length: n }, (_, i) => insert(store, `c-${i}`, i)));
    unpatch();
    assert.deepEqual(results, Array(n).fill(1), 'each insert changed one row');
    assert.equal(journalLines(tmp.path) - linesBefore, n, 'one journal line per commit');
    const total = flushes.async + flushes.sync;
    assert.ok(total >= 1, 'the lines were flushed');
    assert.ok(
      total < n,
      `${n} commits took ${total} flushes (${flushes.async} async, ${flushes.sync} sync): lines should share flushes`,
    );
    assert.ok(flushes.async >= 1, 'with other commits queued, the flush runs on the thread pool');
    await store.close();
    opened.pop();
    const reopened = await open();
    assert.deepEqual(
      await namesLike(reopened, 'c'),
      Array.from({ length: n }, (_, i) => `c-${i}`),
    );
  });

  it('flushes once per commit, synchronously, when commits come one at a time', async () => {
    const store = await open();
    const linesBefore = journalLines(tmp.path);
    const flushes = countFlushes();
    const n = 5;
    for (let i = 0; i < n; i++) await insert(store, `s-${i}`, i);
    unpatch();
    assert.equal(journalLines(tmp.path) - linesBefore, n);
    assert.deepEqual(
      flushes,
      { async: 0, sync: n },
      'nothing to overlap with: each commit flushes right away, without the thread pool',
    );
    await store.close();
    opened.pop();
    assert.deepEqual(
      await namesLike(await open(), 's'),
      Array.from({ length: n }, (_, i) => `s-${i}`),
    );
  });

  it('rejects the commits a failed async flush covered, cuts them from the journal, and stays usable', async () => {
    const store = await open();
    let failures = 0;
    // The first fdatasync on the thread pool reports EIO (after really running, as a disk that lost the write might).
    patch(
      'fdatasync',
      (original) => (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) =>
        original(fd, (err: NodeJS.ErrnoException | null) => {
          if (failures === 0) {
            failures++;
            callback(
              Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', errno: -5, syscall: 'fdatasync' }),
            );
          } else callback(err);
        }),
    );
    const n = 12;
    const commits = Array.from({ length: n }, (_, i) => insert(store, `f-${i}`, i));
    // A read queued behind them sees their rows: it must not return rows that are then rolled back.
    const read = store.read((r) =>
      r.all<{ name: string }>(`SELECT name FROM counters WHERE name GLOB 'f-*' ORDER BY value`),
    );
    const outcomes = await Promise.allSettled(commits);
    const readOutcome = (await Promise.allSettled([read]))[0]!;
    unpatch();
    assert.equal(failures, 1, 'the group was flushed on the thread pool, and that flush failed');
    const acknowledged = outcomes.flatMap((o, i) => (o.status === 'fulfilled' ? [`f-${i}`] : []));
    const rejected = outcomes.flatMap((o, i) =>
      o.status === 'rejected' ? [{ name: `f-${i}`, reason: o.reason as unknown }] : [],
    );
    assert.ok(
      rejected.some((r) => r.name === 'f-0'),
      'the first commit was in the failed flush',
    );
    for (const { name, reason } of rejected) assert.ok(isCommitFailed(reason), `${name} failed with ${String(reason)}`);
    if (readOutcome.status === 'rejected')
      assert.ok(isCommitFailed(readOutcome.reason), `the read failed with ${String(readOutcome.reason)}`);
    else
      assert.deepEqual(
        readOutcome.value.map((r) => r.name).filter((name) => !acknowledged.includes(name)),
        [],
        'the read returned only acknowledged rows',
      );

    // In this process already, nothing of the rejected commits is left.
    assert.deepEqual(await namesLike(store, 'f'), acknowledged);
    assert.match(store.recovery.notices.join('\n'), /Could not write the Baton journal.*cut back/);

    await insert(store, 'after-0', 1);
    await store.close();
    opened.pop();
    const reopened = await open();
    assert.deepEqual(await namesLike(reopened, 'f'), acknowledged, 'acknowledged commits kept, rejected ones gone');
    assert.deepEqual(await namesLike(reopened, 'after'), ['after-0']);
    const integrity = await reopened.read((r) => r.get<{ integrity_check: string }>('PRAGMA integrity_check'));
    assert.equal(integrity?.integrity_check, 'ok');
  });

  it('rejects a commit whose synchronous flush fails, cuts its line, and stays usable', async () => {
    const store = await open();
    await insert(store, 'g-0', 0);
    let failures = 0;
    patch('fdatasyncSync', (original) => (fd: number) => {
      if (failures === 0) {
        failures++;
        throw Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', errno: -5, syscall: 'fdatasync' });
      }
      return original(fd);
    });
    await assert.rejects(insert(store, 'g-1', 1), isCommitFailed);
    unpatch();
    assert.equal(failures, 1, 'the commit took the synchronous path');
    assert.deepEqual(await namesLike(store, 'g'), ['g-0']);
    assert.match(store.recovery.notices.join('\n'), /Could not write the Baton journal/);
    await insert(store, 'g-2', 2);
    await store.close();
    opened.pop();
    const reopened = await open();
    assert.deepEqual(await namesLike(reopened, 'g'), ['g-0', 'g-2']);
    const integrity = await reopened.read((r) => r.get<{ integrity_check: string }>('PRAGMA integrity_check'));
    assert.equal(integrity?.integrity_check, 'ok');
  });

  it('lets a second store on the same folder commit once the first one’s group lets go of the lock, and see its rows', async () => {
    const a = await open({ lockTimeoutMs: 5000 });
    const b = await open({ lockTimeoutMs: 5000 });
    const n = 20;
    let holding!: () => void;
    const aHolds = new Promise<void>((resolve) => (holding = resolve));
    const aCommits = Array.from({ length: n }, (_, i) =>
      a.transact(async (tx) => {
        if (i === 0) holding(); // A has the lock: B competes from here on
        await tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [`a-${i}`, i]);
      }),
    );
    await aHolds;
    const bSaw = b.transact(async (tx) => {
      const seen = (
        await tx.all<{ name: string }>(`SELECT name FROM counters WHERE name GLOB 'a-*' ORDER BY value`)
      ).map((r) => r.name);
      await tx.run(`INSERT INTO counters (name, value) VALUES ('b-0', 0)`);
      return seen;
    });
    await Promise.all(aCommits);
    const seen = await bSaw;
    // B committed under the lock after A's commits that it saw were durable, in commit order.
    assert.ok(seen.length >= 1, 'B waited for the commit that held the lock when it asked');
    assert.deepEqual(
      seen,
      Array.from({ length: seen.length }, (_, i) => `a-${i}`),
    );
    const all = Array.from({ length: n }, (_, i) => `a-${i}`);
    assert.deepEqual(await namesLike(b, 'a'), all);
    assert.deepEqual(await namesLike(a, 'b'), ['b-0']);
    await a.close();
    await b.close();
    opened.splice(0);
    const reopened = await open();
    assert.deepEqual(await namesLike(reopened, 'a'), all);
    assert.deepEqual(await namesLike(reopened, 'b'), ['b-0']);
  });

  it('returns a read issued while commits are being flushed only once what it saw is durable', async () => {
    const store = await open();
    // Per journal file (by inode): how many bytes a completed flush covers. A flush covers
    // what was written to the file when it started.
    const durable = new Map<number, number>();
    const credit = (fd: number, size: number): void => {
      const ino = fstatSync(fd).ino;
      durable.set(ino, Math.max(durable.get(ino) ?? 0, size));
    };
    patch('fdatasync', (original) => (fd: number, callback: (err: NodeJS.ErrnoException | null) => void) => {
      const size = fstatSync(fd).size;
      return original(fd, (err: NodeJS.ErrnoException | null) => {
        if (!err) credit(fd, size);
        callback(err);
      });
    });
    patch('fdatasyncSync', (original) => (fd: number) => {
      const size = fstatSync(fd).size;
      original(fd);
      credit(fd, size);
    });
    const n = 30;
    const commits = Array.from({ length: n }, (_, i) => insert(store, `r-${i}`, i));
    const seen = await store.read((r) =>
      r.all<{ name: string }>(`SELECT name FROM counters WHERE name GLOB 'r-*' ORDER BY value`),
    );
    // Right when the read resolves: which of the rows it saw are in flushed bytes?
    const path = lastSegment(tmp.path);
    const durableBytes = durable.get(statSync(path).ino) ?? 0;
    const onDisk = insertedNames(readFileSync(path).subarray(0, durableBytes));
    await Promise.all(commits);
    unpatch();
    assert.equal(segments(tmp.path).length, 1, 'one journal segment (no snapshot in between)');
    assert.deepEqual(
      seen.map((r) => r.name),
      Array.from({ length: n }, (_, i) => `r-${i}`),
      'the read ran after every commit issued before it',
    );
    const notDurable = seen.map((r) => r.name).filter((name) => !onDisk.has(name));
    assert.deepEqual(notDurable, [], 'every row the read returned was durable when it returned');
  });

  /** A commits x-0, x-1, x-2 and B applies them; returns the segment and its size after x-0 (where a cut-back goes). */
  async function threeLinesAppliedByB(): Promise<{ a: FileStore; b: FileStore; path: string; sizeAfterFirst: number }> {
    const a = await open();
    const b = await open();
    await insert(a, 'x-0', 0);
    const path = lastSegment(tmp.path);
    const sizeAfterFirst = statSync(path).size;
    await insert(a, 'x-1', 1);
    await insert(a, 'x-2', 2);
    assert.deepEqual(await namesLike(b, 'x'), ['x-0', 'x-1', 'x-2'], 'B applied all three lines');
    return { a, b, path, sizeAfterFirst };
  }

  it('makes a store whose applied journal lines were cut back by another process reload, without throwing', async () => {
    const { a, b, path, sizeAfterFirst } = await threeLinesAppliedByB();
    const sequenceBefore = b.sequence;

    // As A's recovery from a failed flush would do: the last two lines are cut off (A is idle).
    assert.equal(segments(tmp.path).length, 1);
    truncateSync(path, sizeAfterFirst);

    assert.deepEqual(await namesLike(b, 'x'), ['x-0'], 'B reloaded from disk');
    assert.equal(b.sequence, sequenceBefore - 2);
    assert.match(b.recovery.notices.join('\n'), /cut back/);
    // B can commit on top of the cut journal; A (which also had the cut lines) follows.
    await insert(b, 'y-0', 10);
    assert.deepEqual(await namesLike(a, 'x'), ['x-0'], 'A reloaded too');
    assert.deepEqual(await namesLike(a, 'y'), ['y-0']);
    await insert(a, 'y-1', 11);
    assert.deepEqual(await namesLike(b, 'y'), ['y-0', 'y-1']);
    await a.close();
    await b.close();
    opened.splice(0);
    const reopened = await open();
    assert.deepEqual(await namesLike(reopened, 'x'), ['x-0']);
    assert.deepEqual(await namesLike(reopened, 'y'), ['y-0', 'y-1']);
    const integrity = await reopened.read((r) => r.get<{ integrity_check: string }>('PRAGMA integrity_check'));
    assert.equal(integrity?.integrity_check, 'ok');
  });

  // A cut-back the writer has already written past: the segment is not shorter than the
  // reader's offset, so only the check that the file still holds the last line the reader
  // applied (JournalSegment.stillHoldsLastLine) tells. Without it the reader starts mid-line
  // (store.journal-corrupt) or, with lines of the same length, keeps rows never committed.
  for (const [variant, name] of [
    ['lines of another length', (i: number) => `z-${i}-longer`],
    ['lines of the same length', (i: number) => `z-${i}`],
  ] as const) {
    it(`makes a store reload when lines it applied were cut back and the journal grew back past them (${variant})`, async () => {
      const { a, b, path, sizeAfterFirst } = await threeLinesAppliedByB();
      truncateSync(path, sizeAfterFirst);
      // A finds the cut on its next commit, reloads, and writes new lines with the cut seqs.
      for (let i = 1; i <= 3; i++) await insert(a, name(i), i);
      assert.deepEqual(await namesLike(a, 'x'), ['x-0']);
      assert.deepEqual(await namesLike(b, 'x'), ['x-0'], 'B dropped the cut rows');
      assert.deepEqual(await namesLike(b, 'z'), [1, 2, 3].map(name), 'B has every new row');
      await insert(b, 'y-0', 10);
      assert.deepEqual(await namesLike(a, 'y'), ['y-0']);
    });
  }
});
