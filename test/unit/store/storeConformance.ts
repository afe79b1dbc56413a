import assert from 'node:assert/strict';
import type { StorePort } from '../../../src/engine/store/port';
import { makeTempDir } from '../../support/tempDir';
import { rmSync } from 'node:fs';

/**
 * The guarantees every store backend must keep (src/engine/store/port.ts). A backend
 * registers itself with a factory that opens a store on a location; opening the same
 * location twice must behave like two processes sharing it.
 */
export interface StoreBackend {
  name: string;
  open(location: string, options?: { follow?: boolean }): Promise<StorePort>;
}

const counter = async (store: StorePort, name: string): Promise<number | undefined> =>
  (await store.read((r) => r.get<{ value: number }>(`SELECT value FROM counters WHERE name = ?`, [name])))?.value;

/** Every counter as `name=value`, so an empty answer is never mistaken for a missing row. */
const counters = async (store: StorePort): Promise<string[]> =>
  (
    await store.read((r) => r.all<{ name: string; value: number }>(`SELECT name, value FROM counters ORDER BY name`))
  ).map((row) => `${row.name}=${row.value}`);

export function storeConformance(backend: StoreBackend): void {
  describe(`store conformance: ${backend.name}`, () => {
    let location: string;
    const opened: StorePort[] = [];
    const open = async (options?: { follow?: boolean }): Promise<StorePort> => {
      const store = await backend.open(location, options);
      opened.push(store);
      return store;
    };

    beforeEach(() => {
      location = makeTempDir('baton-conformance-');
    });
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close().catch(() => undefined);
      rmSync(location, { recursive: true, force: true });
    });

    it('makes a committed transaction visible to reads and keeps it across close and reopen', async () => {
      const store = await open();
      await store.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('a', 1)`);
        await tx.run(`UPDATE counters SET value = value + 41 WHERE name = 'a'`);
      });
      assert.equal(await counter(store, 'a'), 42);
      await store.close();
      opened.pop();
      assert.equal(await counter(await open(), 'a'), 42);
    });

    it('leaves nothing of a transaction whose work throws, in this process or after reopening', async () => {
      const store = await open();
      await store.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('a', 1)`);
      });
      const before = await counters(store);
      assert.ok(before.includes('a=1'), before.join(', '));
      await assert.rejects(
        store.transact(async (tx) => {
          await tx.run(`INSERT INTO counters (name, value) VALUES ('b', 1)`);
          await tx.run(`UPDATE counters SET value = 2 WHERE name = 'a'`);
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      assert.deepEqual(await counters(store), before);
      await store.close();
      opened.pop();
      assert.deepEqual(await counters(await open()), before);
    });

    it('returns the value of the work function', async () => {
      const store = await open();
      const value = await store.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('c', 7)`);
        return (await tx.get<{ value: number }>(`SELECT value FROM counters WHERE name = 'c'`))!.value * 2;
      });
      assert.equal(value, 14);
    });

    it('answers a write with the rows it wrote (RETURNING) and keeps that write like any other, in another opening and after reopening', async () => {
      const a = await open();
      const b = await open();
      await a.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('r', 10), ('s', 20)`);
      });
      const returned = await a.transact((tx) =>
        tx.runReturning<{ name: string; value: number }>(
          `UPDATE counters SET value = value + 1 WHERE name IN ('r', 's') RETURNING name, value`,
        ),
      );
      assert.deepEqual(returned.map((row) => `${row.name}=${row.value}`).sort(), ['r=11', 's=21']);
      // The other opening catches up with it (the file store replays the statement from its journal).
      assert.equal(await counter(b, 'r'), 11);
      assert.equal(await counter(b, 's'), 21);
      await assert.rejects(
        a.transact(async (tx) => {
          await tx.runReturning(`UPDATE counters SET value = 0 WHERE name = 'r' RETURNING value`);
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      for (const store of opened.splice(0)) await store.close();
      const reopened = await open();
      assert.equal(await counter(reopened, 'r'), 11);
      assert.equal(await counter(reopened, 's'), 21);
    });

    it('shows a commit made through one opening to a read through another (two processes)', async () => {
      const a = await open();
      const b = await open();
      await a.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('shared', 5)`);
      });
      assert.equal(await counter(b, 'shared'), 5);
    });

    it('loses no update when two openings increment the same row concurrently (compare-and-set on fresh state)', async () => {
      const a = await open();
      const b = await open();
      await a.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('n', 0)`);
      });
      const increment = (store: StorePort) =>
        store.transact(async (tx) => {
          const current = (await tx.get<{ value: number }>(`SELECT value FROM counters WHERE name = 'n'`))!.value;
          await new Promise((resolve) => setImmediate(resolve)); // give the other opening a chance to interleave
          await tx.run(`UPDATE counters SET value = ? WHERE name = 'n'`, [current + 1]);
        });
      await Promise.all(Array.from({ length: 40 }, (_, i) => increment(i % 2 === 0 ? a : b)));
      assert.equal(await counter(a, 'n'), 40);
      assert.equal(await counter(b, 'n'), 40);
    });

    it('lets exactly one of two openings win a claim guarded by a precondition', async () => {
      const a = await open();
      const b = await open();
      await a.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('slot', 0)`);
      });
      const claim = (store: StorePort, who: number) =>
        store.transact(async (tx) => {
          const slot = (await tx.get<{ value: number }>(`SELECT value FROM counters WHERE name = 'slot'`))!.value;
          if (slot !== 0) return false;
          await tx.run(`UPDATE counters SET value = ? WHERE name = 'slot'`, [who]);
          return true;
        });
      const results = await Promise.all([claim(a, 1), claim(b, 2), claim(a, 3), claim(b, 4)]);
      assert.equal(results.filter(Boolean).length, 1);
    });

    it('tells watchers about commits of another opening without being asked', async () => {
      const writer = await open();
      const follower = await open({ follow: true });
      const heard = new Promise<void>((resolve) => follower.watch(resolve));
      await writer.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('w', 1)`);
      });
      await heard;
      assert.equal(await counter(follower, 'w'), 1);
    });

    it('tells watchers about its own commits', async () => {
      const store = await open();
      let heard = 0;
      store.watch(() => heard++);
      await store.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('own', 1)`);
      });
      assert.equal(heard, 1);
    });

    it('refuses to use a transaction after it ended', async () => {
      const store = await open();
      let leaked: Parameters<Parameters<StorePort['transact']>[0]>[0] | undefined;
      await store.transact(async (tx) => {
        leaked = tx;
      });
      const before = await counters(store);
      await assert.rejects(leaked!.run(`INSERT INTO counters (name, value) VALUES ('late', 1)`));
      // The same statement in a live transaction succeeds: the refusal was about the ended one, and it wrote nothing.
      await store.transact(async (tx) => {
        await tx.run(`INSERT INTO counters (name, value) VALUES ('late', 2)`);
      });
      assert.deepEqual(await counters(store), [...before, 'late=2'].sort());
    });
  });
}
