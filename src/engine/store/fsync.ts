import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';

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

/** Writes a whole file and forces it to disk before returning. `written`: called between the write and the fsync. */
export function writeFileDurably(path: string, data: Uint8Array, written?: () => void): void {
  const fd = openSync(path, 'w');
  try {
    let offset = 0;
    while (offset < data.length) offset += writeSync(fd, data, offset, data.length - offset);
    written?.();
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
