import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  writeSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { BatonError } from '../../domain/errors';
import { BATON_DIR } from '../workspaceLayout';

/**
 * The one way Baton writes a file under `.baton/` (prompts, logs, artifact copies, verify
 * logs; the store keeps its own files). Workers run with the user's rights inside the
 * workspace, so anything in `.baton/` may have been planted by one. The invariant: Baton
 * never writes through a link there (docs/architecture.md, "Trust model for .baton/").
 *
 * - every folder from `.baton/` down to the file must be a real folder (lstat), created
 *   one level at a time when missing — never `mkdir -p` through a planted link;
 * - the file itself is opened with O_NOFOLLOW (a link there is ELOOP) and O_NONBLOCK (a
 *   planted FIFO does not hang the coordinator), and must then be a regular file with one
 *   link (a hard link to a file outside would be written through);
 * - on Linux, the opened descriptor's real path (`/proc/self/fd/N`) must be the expected
 *   one: a folder swapped for a link between the checks and the open is caught before a
 *   single byte is written, because the file is truncated only after this check.
 *
 * A refusal is `workspace.link-refused`, naming the path; nothing is written.
 */
export type BatonFileMode = 'write' | 'append';

/** Opens `path` (under `<workspace>/.baton/`) for writing or appending; returns its descriptor. */
export function openBatonFile(workspace: string, path: string, mode: BatonFileMode): number {
  const batonDir = join(workspace, BATON_DIR);
  ensureBatonFolder(workspace, dirname(path));
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_NOFOLLOW |
    constants.O_NONBLOCK |
    (mode === 'append' ? constants.O_APPEND : 0);
  let fd: number;
  try {
    fd = openSync(path, flags, 0o644);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ELOOP: the final component is a link; ENXIO: a FIFO nobody reads.
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR') throw refused(path, 'is a link or not a file');
    throw err;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refused(path, 'is not a regular file');
    if (stat.nlink > 1) throw refused(path, 'has another hard link');
    const opened = openedPath(fd);
    const expected = join(realpathSync(batonDir), relative(batonDir, path));
    if (opened !== undefined && opened !== expected) throw refused(path, `resolves to ${opened}`);
    if (mode === 'write') ftruncateSync(fd, 0);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/** Writes `data` as the whole content of `path` under `.baton/` (see openBatonFile). */
export function writeBatonFile(workspace: string, path: string, data: string | Buffer): void {
  writeThrough(openBatonFile(workspace, path, 'write'), data);
}

/** Appends `data` to `path` under `.baton/` (see openBatonFile). */
export function appendBatonFile(workspace: string, path: string, data: string | Buffer): void {
  writeThrough(openBatonFile(workspace, path, 'append'), data);
}

/**
 * Makes sure `folder` (under `<workspace>/.baton/`, or `.baton/` itself) exists and that it
 * and every folder between it and `.baton/` is a real folder, not a link.
 */
export function ensureBatonFolder(workspace: string, folder: string): void {
  const batonDir = join(workspace, BATON_DIR);
  const inside = relative(batonDir, folder);
  if (inside.startsWith('..') || inside.startsWith(sep) || /^[a-zA-Z]:/.test(inside)) {
    throw refused(folder, `is not under ${batonDir}`);
  }
  let current = batonDir;
  for (const part of ['', ...inside.split(sep).filter((p) => p !== '')]) {
    current = part === '' ? current : join(current, part);
    let stat;
    try {
      stat = lstatSync(current);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      try {
        mkdirSync(current);
      } catch (made) {
        if ((made as NodeJS.ErrnoException).code !== 'EEXIST') throw made;
      }
      stat = lstatSync(current);
    }
    if (stat.isSymbolicLink()) throw refused(current, 'is a link');
    if (!stat.isDirectory()) throw refused(current, 'is not a folder');
  }
}

function writeThrough(fd: number, data: string | Buffer): void {
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
  } finally {
    closeSync(fd);
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

function refused(path: string, why: string): BatonError {
  return new BatonError(
    'workspace.link-refused',
    `Refused to write ${path}: it ${why}. Something in the workspace replaced part of .baton/ (a worker?); nothing was written. Remove it and run again.`,
  );
}
