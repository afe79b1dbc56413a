import { closeSync, constants, ftruncateSync, rmSync, symlinkSync, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ensureRealFolders, openFenced } from '../../platform/fencedFiles';
import { BATON_DIR } from '../workspaceLayout';

/**
 * The one way Baton writes a file under `.baton/` (prompts, logs, artifact copies, verify
 * logs; the store's own files go through the same fence, platform/fencedFiles.ts). Workers run
 * with the user's rights inside the workspace, so anything in `.baton/` may have been planted
 * by one. The invariant: Baton never writes through a link there (docs/architecture.md, "Trust
 * model for .baton/"): every folder from `.baton/` down is a real folder, the file is opened
 * with O_NOFOLLOW|O_NONBLOCK, is a regular file with one link, and its descriptor's real path
 * is the expected one before a byte is written (a file is truncated only after that check).
 *
 * A refusal is `workspace.link-refused`, naming the path; nothing is written.
 */
export type BatonFileMode = 'write' | 'append';

/** Opens `path` (under `<workspace>/.baton/`) for writing or appending; returns its descriptor. */
export function openBatonFile(workspace: string, path: string, mode: BatonFileMode): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | (mode === 'append' ? constants.O_APPEND : 0);
  const fd = openFenced(join(workspace, BATON_DIR), path, flags, { purpose: 'write', createFolders: true });
  try {
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
  ensureRealFolders(join(workspace, BATON_DIR), folder, { purpose: 'write', createFolders: true });
}

/** Writes all of `data` through `fd`, then closes it. */
export function writeThrough(fd: number, data: string | Buffer): void {
  try {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    let offset = 0;
    while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes `path` (under `<workspace>/.baton/`, its folders real ones) a symbolic link to `target`, replacing whatever
 * entry was there (an earlier attempt's link, or something a worker put there). Baton never reads through such a
 * link itself (reads under `.baton/` refuse links): it is for a CLI that reads the user's own files from a home of
 * the attempt's own (Gemini CLI's, docs/agents.md).
 */
export function linkBatonEntry(workspace: string, path: string, target: string): void {
  ensureBatonFolder(workspace, dirname(path));
  rmSync(path, { force: true, recursive: true });
  symlinkSync(target, path);
}
