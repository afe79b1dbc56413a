import { readdirSync } from 'node:fs';
import type { FileStore } from '../../src/engine/store/fileStore';

/** Files of a store folder whose names match, sorted (journal segments, snapshots, sidecars). */
export const storeFiles = (dir: string, pattern: RegExp): string[] =>
  readdirSync(dir)
    .filter((n) => pattern.test(n))
    .sort();

/** Commits counters k<from>..k<to-1>, one transaction each (one journal line each). */
export async function insertCounters(store: FileStore, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++) {
    await store.transact(async (tx) => {
      await tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [`k${i}`, i]);
    });
  }
}

/** The counters insertCounters wrote, in order. */
export async function counterNames(store: FileStore): Promise<string[]> {
  return (
    await store.read((r) => r.all<{ name: string }>(`SELECT name FROM counters WHERE name LIKE 'k%' ORDER BY value`))
  ).map((r) => r.name);
}
