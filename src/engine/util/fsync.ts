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

/** Writes a whole file and forces it to disk before returning. */
export function writeFileDurably(path: string, data: Uint8Array): void {
  const fd = openSync(path, 'w');
  try {
    let written = 0;
    while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
