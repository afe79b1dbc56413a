import { createHash } from 'node:crypto';
import { closeSync, constants, fdatasync, fdatasyncSync, fstatSync, ftruncateSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { BatonError } from '../domain/errors';
import { createFenced, openFenced } from '../platform/fencedFiles';
import type { SqlValue } from './port';

/** One SQL statement of a committed transaction, with its parameters. */
export type JournalStatement = [sql: string, params: SqlValue[]];

export interface JournalEntry {
  seq: number;
  /** Schema version the transaction was written against; a newer one is refused. */
  schema: number;
  statements: JournalStatement[];
  /**
   * Set only on the line written after a loss of acknowledged lines: the line it follows
   * (`seq` - 1 otherwise). The lost numbers are skipped, never reused (see `JournalMark`).
   */
  after?: number;
}

/**
 * Line format: `<16 hex of sha256(json)> <json>\n`, json = {"q":seq,"v":schema,"s":[[sql,[params]],…]}.
 * The checksum covers exactly the bytes after the space, so a torn or garbled line is
 * detected without trusting JSON.parse.
 */
export function encodeJournalLine(entry: JournalEntry): Buffer {
  // The same JSON as JSON.stringify({ q, v, s }); a statement's SQL text is encoded once per process.
  const statements = entry.statements.map(([sql, params]) => `[${sqlJson(sql)},${JSON.stringify(params)}]`).join(',');
  const after = entry.after === undefined ? '' : `,"a":${entry.after}`;
  const json = `{"q":${entry.seq},"v":${entry.schema},"s":[${statements}]${after}}`;
  // Encoded once, straight into the line: the checksum is taken over those bytes (what sha256 of the string hashes).
  const bytes = Buffer.byteLength(json, 'utf8');
  const line = Buffer.allocUnsafe(CHECKSUM_HEX + 1 + bytes + 1);
  line.write(json, CHECKSUM_HEX + 1, bytes, 'utf8');
  line.write(checksum(line.subarray(CHECKSUM_HEX + 1, CHECKSUM_HEX + 1 + bytes)), 0, CHECKSUM_HEX, 'latin1');
  line[CHECKSUM_HEX] = 32;
  line[line.length - 1] = 10;
  return line;
}

/** Hex digits of a line's checksum, before the space that separates it from the json. */
const CHECKSUM_HEX = 16;

const encodedSql = new Map<string, string>();

function sqlJson(sql: string): string {
  let json = encodedSql.get(sql);
  if (json === undefined) {
    json = JSON.stringify(sql);
    // Statements come from a fixed set in the code; a bound keeps a pathological caller from growing it forever.
    if (encodedSql.size < 1024) encodedSql.set(sql, json);
  }
  return json;
}

function checksum(json: string | Buffer): string {
  return createHash('sha256').update(json).digest('hex').slice(0, 16);
}

export interface DecodedChunk {
  /** Each with where its line starts and ends in the buffer. */
  entries: Array<JournalEntry & { start: number; end: number }>;
  /** Bytes of `buffer` covered by good, complete lines. */
  goodBytes: number;
  /**
   * Why decoding stopped before the end of the buffer, if it did. `linesAfter`: whole,
   * checksum-valid lines after the damage — when there are none, the damage is a torn or
   * garbage tail (nothing intact follows it); when there are, it is in the middle.
   */
  stop?: { offset: number; reason: 'incomplete-line' | 'bad-checksum'; linesAfter: number };
}

export function decodeJournalChunk(buffer: Buffer): DecodedChunk {
  const entries: DecodedChunk['entries'] = [];
  let offset = 0;
  while (offset < buffer.length) {
    const newline = buffer.indexOf(10, offset);
    if (newline < 0) return { entries, goodBytes: offset, stop: { offset, reason: 'incomplete-line', linesAfter: 0 } };
    const entry = decodeLine(buffer.subarray(offset, newline));
    if (!entry) {
      return {
        entries,
        goodBytes: offset,
        stop: { offset, reason: 'bad-checksum', linesAfter: countValidLines(buffer, newline + 1) },
      };
    }
    entries.push({ ...entry, start: offset, end: newline + 1 });
    offset = newline + 1;
  }
  return { entries, goodBytes: offset };
}

function countValidLines(buffer: Buffer, from: number): number {
  let n = 0;
  let start = from;
  for (let i = buffer.indexOf(10, from); i >= 0; i = buffer.indexOf(10, i + 1)) {
    if (decodeLine(buffer.subarray(start, i))) n++;
    start = i + 1;
  }
  return n;
}

function decodeLine(line: Buffer): JournalEntry | undefined {
  if (line.length < 18 || line[16] !== 32) return undefined;
  const json = line.subarray(17);
  if (checksum(json) !== line.subarray(0, 16).toString('latin1')) return undefined;
  try {
    const parsed = JSON.parse(json.toString('utf8')) as { q: unknown; v: unknown; s: unknown; a?: unknown };
    if (!Number.isSafeInteger(parsed.q) || !Number.isSafeInteger(parsed.v) || !Array.isArray(parsed.s))
      return undefined;
    const entry: JournalEntry = {
      seq: parsed.q as number,
      schema: parsed.v as number,
      statements: parsed.s as JournalStatement[],
    };
    if (Number.isSafeInteger(parsed.a)) entry.after = parsed.a as number;
    return entry;
  } catch {
    return undefined;
  }
}

/**
 * One journal segment, open for reading and (when it is the last one) appending. Appends
 * happen only under the process lock, at the end of the file.
 */
export class JournalSegment {
  /** Bytes of complete lines this process has consumed (applied, skipped or written). */
  offset = 0;
  /** Lines added by commits of this process, not yet written: see `add`. */
  private unwritten: Buffer[] = [];
  /** Where the last line this process consumed starts, and its checksum: see `stillHoldsLastLine`. */
  private lastLine: { start: number; checksum: Buffer } | undefined;

  private constructor(
    readonly start: number,
    readonly path: string,
    private readonly fd: number,
  ) {}

  /** Opens an existing segment; undefined when it is gone (pruned by another process). */
  static open(start: number, path: string): JournalSegment | undefined {
    try {
      return new JournalSegment(start, path, openSegment(path, 0));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  static create(start: number, path: string): JournalSegment {
    try {
      return new JournalSegment(start, path, openSegment(path, constants.O_CREAT | constants.O_EXCL));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      return new JournalSegment(start, path, openSegment(path, 0));
    }
  }

  /** Remembers `line`, which starts at byte `start` of the file, as the last one consumed. */
  noteLastLine(start: number, line: Buffer): void {
    this.lastLine = { start, checksum: Buffer.from(line.subarray(0, 16)) };
  }

  /**
   * Whether the file still holds, where it was, the last line this process consumed. A
   * writer whose flush failed cuts its unacknowledged lines off and writes on; a process that
   * had applied them must notice even when the file has grown back past where it stopped.
   */
  stillHoldsLastLine(): boolean {
    if (!this.lastLine) return true;
    const now = Buffer.alloc(16);
    const n = readSync(this.fd, now, 0, 16, this.lastLine.start);
    return n === 16 && now.equals(this.lastLine.checksum);
  }

  /** Size on disk, and whether the file was deleted (pruned) since it was opened. */
  stat(): { size: number; unlinked: boolean } {
    const s = fstatSync(this.fd);
    return { size: s.size, unlinked: s.nlink === 0 };
  }

  /** The bytes after `offset` up to `size`. */
  readNew(size: number): Buffer {
    if (size <= this.offset) return Buffer.alloc(0);
    const buffer = Buffer.allocUnsafe(size - this.offset);
    let read = 0;
    while (read < buffer.length) {
      const n = readSync(this.fd, buffer, read, buffer.length - read, this.offset + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  }

  /**
   * Adds one line at the end. It reaches the file with the next `flushNow` or `flush` (one
   * write for every line added since), and is durable once that flush completes. The caller
   * holds the lock and has caught up, so `offset` is the end of the file.
   */
  add(line: Buffer): void {
    this.unwritten.push(line);
  }

  /** Writes and forces to disk every line added so far, here and now. */
  flushNow(): void {
    this.writeUnwritten();
    fdatasyncSync(this.fd);
  }

  /** Writes every line added so far, then forces them to disk on libuv's thread pool (the event loop keeps running). */
  flush(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.writeUnwritten();
      fdatasync(this.fd, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Where the file ends once every added line is written. */
  get end(): number {
    return this.offset + this.unwritten.reduce((n, line) => n + line.length, 0);
  }

  /** When the write fails, the file is cut back to where it was: no partial line stays behind. */
  private writeUnwritten(): void {
    if (this.unwritten.length === 0) return;
    const last = this.unwritten[this.unwritten.length - 1]!;
    const lines = this.unwritten.length === 1 ? last : Buffer.concat(this.unwritten);
    this.unwritten = [];
    const before = this.offset;
    try {
      let written = 0;
      while (written < lines.length)
        written += writeSync(this.fd, lines, written, lines.length - written, before + written);
    } catch (err) {
      try {
        ftruncateSync(this.fd, before);
      } catch {
        // The next locked catch-up cuts a torn tail anyway.
      }
      throw err;
    }
    this.offset = before + lines.length;
    this.noteLastLine(this.offset - last.length, last);
  }

  /** Lines added but not written (dropped when a flush failed). */
  discardUnwritten(): void {
    this.unwritten = [];
  }

  truncate(length: number): void {
    ftruncateSync(this.fd, length);
    fdatasyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * The journal mark: the newest journal line known acknowledged (durable before its commit
 * returned), kept in its own small file apart from the segments. A segment deleted or cut
 * back, or a damaged last line, leaves the journal ending before the mark: that is a loss of
 * acknowledged commits, which the store reports instead of opening silently. The mark is
 * rewritten in place after each flush (no fsync of its own: a power cut can only leave it
 * behind, which weakens detection and never claims a loss that did not happen) and fsynced
 * with each snapshot. Format: `<seq, 12 digits> <16 hex of sha256(seq)>\n`.
 */
export class JournalMark {
  private constructor(
    readonly path: string,
    private readonly fd: number,
    /** The mark as this process last read or wrote it. */
    private seq: number,
  ) {}

  /** Opens (creating if missing) the mark file. `found`: what it says, or why it says nothing. */
  static open(path: string): { mark: JournalMark; found: number | 'missing' | 'damaged' } {
    let fd: number;
    let found: number | 'missing' | 'damaged';
    try {
      fd = openFenced(dirname(path), path, constants.O_RDWR, { purpose: 'write' });
      found = JournalMark.readFd(fd);
    } catch (err) {
      // Missing: created. A link, FIFO or hard link in its place (a worker's): never followed; the mark is damaged,
      // replaced by a file of the store's own and reset like any damaged mark (the caller reports it).
      const refused = err instanceof BatonError && err.code === 'workspace.link-refused';
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && !refused) throw err;
      fd = createFenced(dirname(path), path, constants.O_RDWR);
      found = refused ? 'damaged' : 'missing';
    }
    return { mark: new JournalMark(path, fd, typeof found === 'number' ? found : 0), found };
  }

  private static readFd(fd: number): number | 'damaged' {
    const buffer = Buffer.alloc(MARK_LENGTH);
    const n = readSync(fd, buffer, 0, MARK_LENGTH, 0);
    const match = /^(\d{12}) ([0-9a-f]{16})\n$/.exec(buffer.subarray(0, n).toString('latin1'));
    if (!match || checksum(match[1]!) !== match[2]) return 'damaged';
    return Number(match[1]);
  }

  /** What the file says now (another process may have advanced it). */
  read(): number | 'damaged' {
    return JournalMark.readFd(this.fd);
  }

  /** Records `seq` as acknowledged when it is beyond the mark. The caller holds the process lock. */
  advance(seq: number): void {
    if (seq <= this.seq) return;
    this.set(seq);
  }

  /** Sets the mark to `seq` (also backwards: only when the loss before it has been recorded). */
  set(seq: number): void {
    const digits = String(seq).padStart(12, '0');
    writeSync(this.fd, Buffer.from(`${digits} ${checksum(digits)}\n`, 'latin1'), 0, MARK_LENGTH, 0);
    this.seq = seq;
  }

  sync(): void {
    fdatasyncSync(this.fd);
  }

  close(): void {
    closeSync(this.fd);
  }
}

const MARK_LENGTH = 30;

/** A journal segment, read and appended to through the fence: a link in its place is refused, never followed. */
function openSegment(path: string, create: number): number {
  return openFenced(dirname(path), path, constants.O_RDWR | create, { purpose: 'write' });
}
