import { closeSync, constants, fstatSync, openSync, readSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { leftOverByFastForward, type ForwardedPath } from '../domain/isolation';
import type { Git } from '../effects/git/git';

/**
 * After a fast-forward of the working tree at `treePath` from `from` to `to` failed with the
 * branch still at `from`: puts back, as at `from`, every path the move changes that is left
 * over from an interrupted fast-forward (domain/isolation.ts, `leftOverByFastForward`) —
 * half-written new files removed, tracked files restored from the index. Resolves with the
 * paths put back, or undefined (nothing touched) when any change in the way is a person's.
 */
export async function putBackFastForwardLeftovers(
  there: Git,
  treePath: string,
  from: string,
  to: string,
): Promise<string[] | undefined> {
  const moving = new Set(await there.changedFiles(from, to));
  const inTheWay = (await there.dirtyPaths()).filter((path) => moving.has(path));
  const facts: Array<ForwardedPath & { tracked: boolean }> = [];
  for (const path of inTheWay) {
    const blob = await there.attempt(['cat-file', 'blob', `${to}:${path}`]);
    const incoming = blob.exitCode === 0 ? blob.stdout : undefined;
    const bound = incoming === undefined ? 0 : Buffer.byteLength(incoming) + 4;
    const tracked = (await there.attempt(['cat-file', '-e', `${from}:${path}`])).exitCode === 0;
    facts.push({ path, incoming, tracked, ...readPlainFile(join(treePath, path), bound) });
  }
  if (!leftOverByFastForward(facts)) return undefined;
  for (const fact of facts) {
    if (fact.tracked) await there.run(['checkout', '--', fact.path]);
    else unlinkSync(join(treePath, fact.path));
  }
  return inTheWay;
}

/**
 * A working-tree file's content, read without following a link and without blocking (a FIFO or
 * a device is not a plain file), up to `bound` bytes: anything larger is not what git wrote.
 */
function readPlainFile(path: string, bound: number): { present: string | undefined; absent: boolean } {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    return { present: undefined, absent: (err as NodeJS.ErrnoException).code === 'ENOENT' };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > bound) return { present: undefined, absent: false };
    const buffer = Buffer.alloc(stat.size);
    const read = stat.size === 0 ? 0 : readSync(fd, buffer, 0, stat.size, 0);
    return { present: buffer.subarray(0, read).toString('utf8'), absent: false };
  } finally {
    closeSync(fd);
  }
}
