import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { readExitRecordText, type ExitRecordOwner } from '../../domain/exitRecord';
import type { WorkerExit } from './spawnSupervised';

/** A record is three short lines; anything longer is not one. */
const MAX_RECORD_BYTES = 4096;

/** How a worker ended, as its exit record says — when it says so of this attempt. */
export interface ExitEvidence {
  exit: WorkerExit;
  endedAt: number;
}

/** Why a record is no evidence: `not-ended` is a worker let go whose end is not written (yet). */
export type NoExitEvidence = { none: 'missing' | 'another-attempt' | 'never-started' | 'not-ended' | 'unreadable' };

/**
 * Reads an attempt's exit record (domain/exitRecord.ts, written by spawnSupervised's exit
 * waiter): its exit, or why there is none for this attempt — no file, another attempt's, a
 * worker never let go, no end written (yet). The file lies where workers write, so it
 * is read as nothing else there is trusted: never through a link, never a FIFO or a device
 * (O_NONBLOCK, a regular file only), and at most a few KiB.
 */
export function readExitRecord(path: string, owner: ExitRecordOwner): ExitEvidence | NoExitEvidence {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    // None, or a link planted there.
    return { none: (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'unreadable' };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > MAX_RECORD_BYTES) return { none: 'unreadable' };
    const bytes = Buffer.alloc(MAX_RECORD_BYTES);
    const length = readSync(fd, bytes, 0, MAX_RECORD_BYTES, 0);
    const read = readExitRecordText(bytes.subarray(0, length).toString('utf8'), owner);
    if (!('exit' in read)) return read;
    const { exitCode, signalNumber } = read.exit;
    // The waiter's `ended` line is the record's last write: its time is the worker's end.
    const endedAt = Math.floor(stat.mtimeMs);
    return { exit: { exitCode, signal: signalNumber === null ? null : signalName(signalNumber) }, endedAt };
  } finally {
    closeSync(fd);
  }
}

/** `SIGKILL` for 9, as a child's exit reports it; a number this system does not name stays a number. */
function signalName(n: number): string {
  const named = Object.entries(osConstants.signals).find(([, value]) => value === n);
  return named ? named[0] : `signal ${n}`;
}
