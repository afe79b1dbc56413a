import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { BatonError } from '../../domain/errors';
import { BATON_DIR } from '../workspaceLayout';
import { openedPath } from './safeWrite';

/** The end of a file: its last bytes, and whether the file holds more before them. */
export interface FileTail {
  text: string;
  cut: boolean;
}

/**
 * The last `maxBytes` of a file Baton wrote under `<workspace>/.baton/` (a verify log), for a text Baton hands to a
 * worker. A worker could have put a link there to a file it may not read otherwise (a key, another user's file it
 * reaches through the user's rights) and have its content told to it in its next prompt, so the read is fenced like
 * safeWrite's writes: no link from `.baton/` down to the file, the file opened with O_NOFOLLOW|O_NONBLOCK, a regular
 * file with one link, and on Linux the descriptor's real path the expected one. Undefined when the file is not there;
 * `workspace.link-refused` when it is not Baton's.
 */
export function readBatonFileTail(workspace: string, path: string, maxBytes: number): FileTail | undefined {
  const batonDir = join(workspace, BATON_DIR);
  const inside = relative(batonDir, path);
  if (inside === '' || inside.startsWith('..') || inside.startsWith(sep) || /^[a-zA-Z]:/.test(inside))
    throw refused(path, `is not under ${batonDir}`);
  const target = join(batonDir, inside);
  for (let folder = dirname(target); ; folder = dirname(folder)) {
    let stat;
    try {
      stat = lstatSync(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    if (stat.isSymbolicLink() || !stat.isDirectory()) throw refused(folder, 'is a link or not a folder');
    if (folder === batonDir) break;
  }
  let fd: number;
  try {
    fd = openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') throw refused(path, 'is a link');
    throw err;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refused(path, 'is not a regular file');
    if (stat.nlink > 1) throw refused(path, 'has another hard link');
    const opened = openedPath(fd);
    if (opened !== undefined && opened !== join(realpathSync(batonDir), inside))
      throw refused(path, `resolves to ${opened}`);
    const start = Math.max(0, stat.size - maxBytes);
    const buffer = Buffer.alloc(stat.size - start);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    return { text: buffer.subarray(0, read).toString('utf8'), cut: start > 0 };
  } finally {
    closeSync(fd);
  }
}

function refused(path: string, why: string): BatonError {
  return new BatonError(
    'workspace.link-refused',
    `Refused to read ${path}: it ${why}. Something in the workspace replaced part of .baton/ (a worker?); nothing was read.`,
  );
}
