import { closeSync, constants, readSync } from 'node:fs';
import { dirname } from 'node:path';
import { openFenced } from '../../platform/fencedFiles';

/** A line longer than this is cut (the rest up to its newline is skipped): a stream cannot make Baton hold it whole. */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;
const CHUNK_BYTES = 256 * 1024;
/** At most this much is read per call: a log that grows faster than it is read cannot hold the caller in one call. */
const MAX_READ_BYTES = 16 * 1024 * 1024;

/**
 * Reads what a process appended to its log since the last read, as complete lines. The log
 * is a file the process writes itself (it outlives its coordinator), so it is followed by
 * offset: a partial last line waits for its newline; `rest()` takes it when the process ended.
 */
export class LogTail {
  private offset = 0;
  private pending = Buffer.alloc(0);
  private skipping = false;

  constructor(private readonly path: string) {}

  /**
   * Complete lines appended since the last call (none when the file does not exist yet). The file is the worker's: it
   * is opened through the fence (platform/fencedFiles.ts), so a FIFO, a device or a link in its place reads as nothing
   * — never a blocked open, never an endless read.
   */
  lines(): string[] {
    let fd: number;
    try {
      fd = openFenced(dirname(this.path), this.path, constants.O_RDONLY, { purpose: 'read' });
    } catch {
      return [];
    }
    const lines: string[] = [];
    try {
      const chunk = Buffer.alloc(CHUNK_BYTES);
      for (let taken = 0; taken < MAX_READ_BYTES;) {
        const read = readSync(fd, chunk, 0, chunk.length, this.offset);
        if (read === 0) break;
        this.offset += read;
        taken += read;
        this.take(chunk.subarray(0, read), lines);
      }
    } finally {
      closeSync(fd);
    }
    return lines;
  }

  /** Everything left, the unterminated last line included: the process has exited. */
  rest(): string[] {
    const lines = this.lines();
    if (this.pending.length > 0 && !this.skipping) lines.push(this.pending.toString('utf8'));
    this.pending = Buffer.alloc(0);
    return lines;
  }

  private take(data: Buffer, lines: string[]): void {
    let start = 0;
    for (let nl = data.indexOf(10, start); nl !== -1; nl = data.indexOf(10, start)) {
      const part = data.subarray(start, nl);
      if (!this.skipping) {
        const line = this.pending.length ? Buffer.concat([this.pending, part]) : part;
        lines.push(line.subarray(0, MAX_LINE_BYTES).toString('utf8'));
      }
      this.pending = Buffer.alloc(0);
      this.skipping = false;
      start = nl + 1;
    }
    if (start < data.length && !this.skipping) {
      this.pending = Buffer.concat([this.pending, data.subarray(start)]);
      if (this.pending.length > MAX_LINE_BYTES) {
        // Keep what fits; drop the rest of this line as it arrives.
        lines.push(this.pending.subarray(0, MAX_LINE_BYTES).toString('utf8'));
        this.pending = Buffer.alloc(0);
        this.skipping = true;
      }
    }
  }
}
