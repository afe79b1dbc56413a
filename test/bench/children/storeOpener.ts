/**
 * Child of the store-open row: `open <storeDir>` opens the store (snapshot + journal replay)
 * and prints `<ms> <rss MiB>`; `read <storeDir>` reads the same files' bytes and prints `<ms>`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../../src/engine/store/fileStore';

async function main(): Promise<void> {
  const [mode, dir] = process.argv.slice(2) as [string, string];
  const t0 = performance.now();
  if (mode === 'read') {
    let bytes = 0;
    for (const name of readdirSync(dir)) bytes += readFileSync(join(dir, name)).length;
    process.stdout.write(`${performance.now() - t0} ${bytes}\n`);
    return;
  }
  const store = await FileStore.open(dir, { closeSnapshotMinBytes: Number.POSITIVE_INFINITY });
  const ms = performance.now() - t0;
  process.stdout.write(`${ms} ${process.memoryUsage().rss / 2 ** 20}\n`);
  await store.close();
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
