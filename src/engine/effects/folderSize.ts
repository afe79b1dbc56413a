import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes of the files under a folder (symlinks counted as themselves, not followed); 0 when it does not exist. */
export function folderSize(path: string): number {
  let bytes = 0;
  try {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      bytes += entry.isDirectory() ? folderSize(full) : lstatSync(full).size;
    }
  } catch {
    // no folder (yet), or it went away while we counted
  }
  return bytes;
}
