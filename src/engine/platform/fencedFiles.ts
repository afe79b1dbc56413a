import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  unlinkSync,
} from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { BatonError } from '../domain/errors';

/**
 * The one fence for a file a worker can touch: everything under `.baton/` (the run's files and the store) and the
 * repository's `.git/info/exclude`. Workers run with the user's rights, so any of them may have been replaced by a
 * link out of the workspace, a hard link, a FIFO or a device (docs/architecture.md, "Trust model for .baton/"). Below
 * `root` — a folder Baton trusts as given, itself checked not to be a link:
 *
 * - every folder from `root` down to the file is a real folder (lstat), created one level at a time when asked —
 *   never `mkdir -p` through a planted link;
 * - the file is opened with O_NOFOLLOW (a link there is ELOOP) and O_NONBLOCK (a FIFO never blocks the open, nor a
 *   read), and must then be a regular file (no FIFO, no device: a link to /dev/zero cannot feed Baton forever) with
 *   one link (a hard link to a file outside would be written through);
 * - on Linux, the descriptor's real path (`/proc/self/fd/N`) must be the expected one: a folder swapped for a link
 *   between the checks and the open is caught before a byte is read or written (a writer truncates only after it).
 *
 * A refusal is `workspace.link-refused`, naming the path.
 */
export type FencePurpose = 'read' | 'write';

/** Opens `path` under `root` with `flags` (O_NOFOLLOW|O_NONBLOCK added); returns its descriptor. */
export function openFenced(
  root: string,
  path: string,
  flags: number,
  options: { purpose: FencePurpose; createFolders?: boolean },
): number {
  const inside = insideOf(root, path, options.purpose);
  ensureRealFolders(root, dirname(path), options);
  let fd: number;
  try {
    fd = openSync(path, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ELOOP: the final component is a link; ENXIO: a FIFO nobody reads (opened for writing).
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR')
      throw linkRefused(path, 'is a link or not a file', options.purpose, root);
    throw err;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw linkRefused(path, 'is not a regular file', options.purpose, root);
    if (stat.nlink > 1) throw linkRefused(path, 'has another hard link', options.purpose, root);
    const opened = openedPath(fd);
    if (opened !== undefined && opened !== join(realpathSync(root), inside))
      throw linkRefused(path, `resolves to ${opened}`, options.purpose, root);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Up to `maxBytes` of `path` under `root`, from byte `from` (the end of the file when `last`): never more, whatever
 * the file claims. Undefined when the file (or a folder above it) is not there.
 */
export function readFenced(
  root: string,
  path: string,
  maxBytes: number,
  at: { from?: number; last?: boolean } = {},
): { bytes: Buffer; size: number; start: number } | undefined {
  let fd: number;
  try {
    fd = openFenced(root, path, constants.O_RDONLY, { purpose: 'read' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const size = fstatSync(fd).size;
    const start = at.last ? Math.max(0, size - maxBytes) : Math.min(at.from ?? 0, size);
    const buffer = Buffer.alloc(Math.min(maxBytes, size - start));
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(fd, buffer, read, buffer.length - read, start + read);
      if (n === 0) break;
      read += n;
    }
    return { bytes: buffer.subarray(0, read), size, start };
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes room for a new file at `path` under `root`: whatever is there — a leftover of Baton's, or a link, FIFO or
 * hard link planted in its place — is unlinked (never followed), and the file is created afresh (O_EXCL). For files
 * only Baton writes and nobody else's content lives in (a snapshot's temp file and checksum, a reset journal mark).
 */
export function createFenced(root: string, path: string, flags: number): number {
  try {
    if (!lstatSync(path).isDirectory()) unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  return openFenced(root, path, flags | constants.O_CREAT | constants.O_EXCL, { purpose: 'write' });
}

/**
 * Makes sure `folder` (under `root`, or `root` itself) is a real folder, and so is every folder between: lstat each,
 * and when asked create a missing one, one level at a time. Throws ENOENT for a missing one otherwise.
 */
export function ensureRealFolders(
  root: string,
  folder: string,
  options: { purpose: FencePurpose; createFolders?: boolean },
): void {
  const inside = relative(root, folder);
  if (inside.startsWith('..') || inside.startsWith(sep) || /^[a-zA-Z]:/.test(inside))
    throw linkRefused(folder, `is not under ${root}`, options.purpose, root);
  let current = root;
  for (const part of ['', ...inside.split(sep).filter((p) => p !== '')]) {
    current = part === '' ? current : join(current, part);
    let stat;
    try {
      stat = lstatSync(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || !options.createFolders) throw err;
      try {
        mkdirSync(current);
      } catch (made) {
        if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made;
      }
      stat = lstatSync(current);
    }
    if (stat.isSymbolicLink()) throw linkRefused(current, 'is a link', options.purpose, root);
    if (!stat.isDirectory()) throw linkRefused(current, 'is not a folder', options.purpose, root);
  }
}

/** The real path of an open descriptor where the system tells it (Linux), else undefined. */
export function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined; // no /proc (macOS, Windows): the lstat checks and O_NOFOLLOW stand alone
  }
}

function insideOf(root: string, path: string, purpose: FencePurpose): string {
  const inside = relative(root, path);
  if (inside === '' || inside.startsWith('..') || inside.startsWith(sep) || /^[a-zA-Z]:/.test(inside))
    throw linkRefused(path, `is not under ${root}`, purpose, root);
  return inside;
}

/** `workspace.link-refused`: what was refused, and that nothing was read or written. */
export function linkRefused(path: string, why: string, purpose: FencePurpose, root: string): BatonError {
  const part = `${basename(root)}/`;
  return new BatonError(
    'workspace.link-refused',
    purpose === 'write'
      ? `Refused to write ${path}: it ${why}. Something in the workspace replaced part of ${part} (a worker?); nothing was written. Remove it and run again.`
      : `Refused to read ${path}: it ${why}. Something in the workspace replaced part of ${part} (a worker?); nothing was read.`,
  );
}
