/**
 * Child of the two-writers row (docs/reliability.md, row 7): commits `count` rows named
 * `<prefix>-<i>` through its own store instance, as fast as it can, while another process
 * does the same. Prints `done <count>`.
 *
 *   node unionWriter.js <storeDir> <prefix> <count>
 */
import { FileStore } from '../../../src/engine/store/fileStore';

async function main(): Promise<void> {
  const [storeDir, prefix, count] = process.argv.slice(2) as [string, string, string];
  const store = await FileStore.open(storeDir, { snapshotAfterBytes: 8 * 1024 });
  try {
    for (let i = 0; i < Number(count); i++) {
      await store.transact((tx) => tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [`${prefix}-${i}`, i]));
    }
  } finally {
    await store.close();
  }
  process.stdout.write(`done ${count}\n`);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
