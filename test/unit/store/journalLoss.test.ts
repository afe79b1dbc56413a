// Damage to the journal is never silent (issue 15, item 14): each fault below loses
// acknowledged commits or changes a value; the store must say what was lost and from which
// acknowledged line it continues, keep the damaged bytes aside, never reuse a line number,
// and never splice old lines onto new history.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../../src/engine/store/fileStore';
import { counterNames, insertCounters, storeFiles } from '../../support/storeFiles';
import { useTempDir } from '../../support/tempDir';

const files = storeFiles;
const segments = (dir: string): string[] => files(dir, /^journal-\d+\.log$/).map((n) => join(dir, n));
const snapshots = (dir: string): string[] => files(dir, /^snapshot-\d+\.sqlite$/).map((n) => join(dir, n));

const names = (...ns: number[]): string[] => ns.map((n) => `k${n}`);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

/** Every journal line's number, in file order across the segments. */
function lineNumbers(dir: string): number[] {
  return segments(dir).flatMap((path) =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => (JSON.parse(line.slice(17)) as { q: number }).q),
  );
}

function flipInLastLine(path: string, from: string, to: string): void {
  const lines = readFileSync(path, 'utf8').split('\n');
  lines[lines.length - 2] = lines[lines.length - 2]!.replace(from, to);
  writeFileSync(path, lines.join('\n'));
}

describe('FileStore: journal damage is never silent', () => {
  const tmp = useTempDir('baton-journal-loss-');

  /** After a loss: new commits land, the store reopens to exactly `expected`, and no line number repeats. */
  async function continuesWithoutReuse(store: FileStore, expected: string[], next: number): Promise<void> {
    const markedBefore = Math.max(...lineNumbers(tmp.path));
    await insertCounters(store, next, next + 2);
    await store.close();
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), [...expected, ...names(next, next + 1)]);
    assert.deepEqual(reopened.recovery.notices, [], 'a recorded loss is reported once, not on every open');
    await reopened.close();
    const numbers = lineNumbers(tmp.path);
    assert.equal(new Set(numbers).size, numbers.length, `no journal line number is reused: ${numbers.join(',')}`);
    assert.deepEqual(
      [...numbers].sort((a, b) => a - b),
      numbers,
      'line numbers only grow',
    );
    assert.ok(numbers[numbers.length - 1]! > markedBefore);
  }

  it('the newest segment deleted: reports the lost acknowledged lines and the line it continues from', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.snapshot();
    await insertCounters(store, 3, 6);
    await store.close();
    const newest = segments(tmp.path).pop()!;
    rmSync(newest);
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), names(0, 1, 2));
    const notice = reopened.recovery.notices.join('\n');
    assert.match(
      notice,
      /Acknowledged commits were lost: the journal ends at line (\d+), but line \d+ was acknowledged/,
    );
    assert.match(notice, /lines \d+–\d+ are missing/);
    await continuesWithoutReuse(reopened, names(0, 1, 2), 10);
  });

  it('the journal cut exactly at a line end: the lost lines are named, nothing is cut as "torn"', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 5);
    await store.close();
    const path = segments(tmp.path).pop()!;
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n').filter(Boolean);
    const keep = text.length - lines[lines.length - 1]!.length - lines[lines.length - 2]!.length - 2;
    truncateSync(path, keep);
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), names(0, 1, 2));
    assert.equal(reopened.recovery.notices.length, 1, reopened.recovery.notices.join('\n'));
    assert.match(reopened.recovery.notices[0]!, /Acknowledged commits were lost: .*lines \d+–\d+ are missing/);
    assert.doesNotMatch(reopened.recovery.notices[0]!, /torn|interrupted/);
    await continuesWithoutReuse(reopened, names(0, 1, 2), 10);
  });

  it('a bit flipped in the last complete, acknowledged line: reported as damage, its bytes moved aside', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.close();
    const path = segments(tmp.path).pop()!;
    const damagedLine = readFileSync(path, 'utf8').split('\n').filter(Boolean).pop()!;
    flipInLastLine(path, '"k2"', '"kX"');
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), names(0, 1));
    const notice = reopened.recovery.notices.join('\n');
    assert.match(
      notice,
      /is damaged \(\d+ bytes, bad checksum\), though it was acknowledged: moved the damaged bytes aside/,
    );
    assert.match(notice, /Acknowledged commits were lost: .*line \d+ is missing or damaged/);
    assert.doesNotMatch(notice, /interrupted before it was acknowledged/, 'no false notice');
    const aside = files(tmp.path, /^journal-\d+\.log\.\d+\.corrupt$/);
    assert.equal(aside.length, 1);
    assert.equal(
      readFileSync(join(tmp.path, aside[0]!), 'utf8'),
      `${damagedLine.replace('"k2"', '"kX"')}\n`,
      'the damaged bytes are kept',
    );
    await continuesWithoutReuse(reopened, names(0, 1), 10);
  });

  it('a torn tail that was never acknowledged is still a torn tail (no loss claimed), its bytes kept', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.close();
    writeFileSync(segments(tmp.path).pop()!, '0123456789abcdef {"q":99', { flag: 'a' });
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), names(0, 1, 2));
    assert.equal(reopened.recovery.notices.length, 1);
    assert.match(reopened.recovery.notices[0]!, /torn last journal line .*interrupted before it was acknowledged/);
    assert.equal(files(tmp.path, /\.corrupt$/).length, 1);
    await reopened.close();
  });

  it('a double fault (newest snapshot lost, a bit flipped in the last line): no number reused, no splice on reopen', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.snapshot();
    await insertCounters(store, 3, 6);
    await store.snapshot();
    await insertCounters(store, 6, 9);
    await store.close();
    const newest = snapshots(tmp.path).pop()!;
    rmSync(newest);
    rmSync(`${newest}.sha256`);
    flipInLastLine(segments(tmp.path).pop()!, '"k8"', '"kX"');
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), names(...range(0, 8)));
    assert.match(reopened.recovery.notices.join('\n'), /Acknowledged commits were lost/);
    await continuesWithoutReuse(reopened, names(...range(0, 8)), 20);
    // And once more from the older snapshot alone (the newest lost again): the same history.
    for (const path of snapshots(tmp.path).slice(1)) {
      rmSync(path);
      rmSync(`${path}.sha256`, { force: true });
    }
    const again = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(again), [...names(...range(0, 8)), ...names(20, 21)]);
    await again.close();
  });

  it('a snapshot whose checksum file was removed and a value changed is not served: the true values come back', async () => {
    const store = await FileStore.open(tmp.path);
    await insertCounters(store, 0, 3);
    await store.snapshot();
    await insertCounters(store, 3, 6);
    await store.snapshot();
    await store.close();
    const newest = snapshots(tmp.path).pop()!;
    rmSync(`${newest}.sha256`);
    const bytes = readFileSync(newest);
    const at = bytes.indexOf(Buffer.from('k4'));
    bytes[at + 1] = bytes[at + 1]! ^ 0x01; // k4 → k5: SQLite's page checks see nothing wrong
    writeFileSync(newest, bytes);
    const reopened = await FileStore.open(tmp.path);
    assert.deepEqual(await counterNames(reopened), names(...range(0, 6)));
    assert.match(reopened.recovery.notices.join('\n'), /its checksum file is missing.*moved it aside/);
    assert.ok(existsSync(`${newest}.corrupt`), 'kept aside, not deleted');
    await reopened.close();
  });
});
