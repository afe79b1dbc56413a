import { dirname, join, relative, sep } from 'node:path';
import { BatonError } from '../../domain/errors';
import { ensureRealFolders, readFenced } from '../../platform/fencedFiles';
import { BATON_DIR } from '../workspaceLayout';

/** The end of a file: its last bytes, and whether the file holds more before them. */
export interface FileTail {
  text: string;
  cut: boolean;
}

/**
 * The last `maxBytes` of a file under `<workspace>/.baton/` (a verify log, a worker's log), read through the fence
 * every file a worker can touch is read through (platform/fencedFiles.ts): no link from `.baton/` down, O_NOFOLLOW|
 * O_NONBLOCK (a FIFO never blocks), a regular file (no device) with one link, never more than `maxBytes`. A worker
 * could also have put a link there to a file it may not read otherwise and have its content told to it in its next
 * prompt. Undefined when the file is not there; `workspace.link-refused` when it is not Baton's.
 */
export function readBatonFileTail(workspace: string, path: string, maxBytes: number): FileTail | undefined {
  const read = readFenced(batonRoot(workspace, path), path, maxBytes, { last: true });
  return read && { text: read.bytes.toString('utf8'), cut: read.start > 0 };
}

/** Up to `maxBytes` of a file under `<workspace>/.baton/` from its start (see readBatonFileTail); `cut` when longer. */
export function readBatonFileHead(workspace: string, path: string, maxBytes: number): FileTail | undefined {
  const read = readFenced(batonRoot(workspace, path), path, maxBytes);
  return read && { text: read.bytes.toString('utf8'), cut: read.size > read.bytes.length };
}

function batonRoot(workspace: string, path: string): string {
  const batonDir = join(workspace, BATON_DIR);
  const inside = relative(batonDir, path);
  if (inside === '' || inside.startsWith('..') || inside.startsWith(sep) || /^[a-zA-Z]:/.test(inside))
    throw new BatonError(
      'workspace.link-refused',
      `Refused to read ${path}: it is not under ${batonDir}. Something in the workspace replaced part of .baton/ (a worker?); nothing was read.`,
    );
  return batonDir;
}

/**
 * Is `folder` (under `<workspace>/.baton/`) a real folder all the way from `.baton/`? `link` when it or a folder above
 * it is a link (or not a folder): Baton neither lists nor deletes anything through it.
 */
export function batonFolderState(workspace: string, folder: string): 'real' | 'missing' | 'link' {
  try {
    ensureRealFolders(join(workspace, BATON_DIR), folder, { purpose: 'read' });
    return 'real';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    if (err instanceof BatonError && err.code === 'workspace.link-refused') return 'link';
    throw err;
  }
}

/**
 * Up to the last `maxBytes` of a file a worker writes or can replace (its log, a result it printed), read through the
 * fence (platform/fencedFiles.ts): a FIFO never blocks, a device (a link to /dev/zero) is never read, never more than
 * `maxBytes`. Undefined when it is not there or not a regular file of its own — for the caller, no content.
 */
export function readWorkerFileTail(path: string, maxBytes: number): Buffer | undefined {
  try {
    return readFenced(dirname(path), path, maxBytes, { last: true })?.bytes;
  } catch (err) {
    if (err instanceof BatonError && err.code === 'workspace.link-refused') return undefined;
    throw err;
  }
}
