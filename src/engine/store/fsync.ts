import { closeSync, constants, fsyncSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { createFenced } from '../platform/fencedFiles';

/** Makes a rename or a create in `dir` durable. Windows cannot open folders; NTFS journals the rename itself. */
export function fsyncDirectory(dir: string): void {
  if (process.platform === 'win32') return;
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a whole new file and forces it to disk before returning. `written`: called between the write and the fsync.
 * Whatever is at `path` — a leftover temp file, or a link or FIFO a worker planted there — is replaced, never written
 * through (platform/fencedFiles.ts, createFenced).
 */
export function writeFileDurably(path: string, data: Uint8Array, written?: () => void): void {
  const fd = createFenced(dirname(path), path, constants.O_WRONLY);
  try {
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    written?.();
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
