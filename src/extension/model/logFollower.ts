import { watch, type FSWatcher } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { systemClock, type Clock, type Disposable } from '../../engine/index';

export interface LogFollowerOptions {
  /** A look at the file's size this often, in case a change notification is missed. */
  pollMs?: number;
  /** The poll's clock (the engine's `Clock`; tests move a fake one). */
  clock?: Clock;
  /** Of a longer log, only the last this many bytes are shown at the start (what was left out is said). */
  maxBacklogBytes?: number;
}

const READ_CHUNK = 64 * 1024;

/**
 * Follows a worker's log file like `tail -f` (no vscode: the unit tests drive it on a real
 * file). It reads the log once from the start (its last `maxBacklogBytes`), then only what was
 * appended since: each read starts where the last one ended, so nothing is read — or shown —
 * twice however often the file changes. Woken by a file watch, with a slow poll as a safety
 * net; a file that does not exist yet is waited for; one that shrank (rotated, rewritten) is
 * read again from its start, and that is said.
 */
export class LogFollower implements Disposable {
  private offset = 0;
  private readonly decoder = new StringDecoder('utf8');
  private watcher: FSWatcher | undefined;
  private cancelPoll: (() => void) | undefined;
  private reading: Promise<void> = Promise.resolve();
  private queued = false;
  private stopped = false;
  /** Every byte read from the file, for the tests: proves nothing is read twice. */
  bytesRead = 0;

  constructor(
    readonly path: string,
    private readonly onText: (text: string) => void,
    private readonly options: LogFollowerOptions = {},
  ) {}

  /** Shows what the log holds now, then follows it. */
  start(): Promise<void> {
    this.watchFile();
    this.schedulePoll();
    return this.wake(true);
  }

  /** Resolves once the reads asked for so far (by the watch, the poll, a call) have ended. */
  settled(): Promise<void> {
    return this.reading;
  }

  /** Reads what is left (the writer ended) and stops following. */
  async finish(): Promise<void> {
    await this.wake();
    this.dispose();
  }

  dispose(): void {
    this.stopped = true;
    this.watcher?.close();
    this.watcher = undefined;
    this.cancelPoll?.();
    this.cancelPoll = undefined;
  }

  private schedulePoll(): void {
    if (this.stopped) return;
    this.cancelPoll = (this.options.clock ?? systemClock).setTimer(this.options.pollMs ?? 500, () => {
      this.cancelPoll = undefined;
      void this.wake();
      this.schedulePoll();
    });
  }

  /** One read at a time; a wake during a read asks for one more after it. */
  private wake(first = false): Promise<void> {
    if (this.queued) return this.reading;
    this.queued = true;
    this.reading = this.reading.then(async () => {
      this.queued = false;
      if (this.stopped && !first) return;
      await this.readNew(first).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') this.onText(`\n[Baton: cannot read ${this.path}: ${err.message}]\n`);
      });
    });
    return this.reading;
  }

  private async readNew(first: boolean): Promise<void> {
    const size = (await stat(this.path)).size;
    if (size < this.offset) {
      this.onText(`\n[Baton: ${basename(this.path)} was truncated; showing it again from its start]\n`);
      this.offset = 0;
    }
    if (first) {
      const backlog = this.options.maxBacklogBytes ?? 2 * 1024 * 1024;
      if (size > backlog) {
        this.offset = size - backlog;
        this.onText(`[Baton: the first ${this.offset} bytes of the log are left out here; Open Log shows them]\n`);
      }
    }
    if (size === this.offset) return;
    if (!this.watcher && !this.stopped) this.watchFile();
    const file = await open(this.path, 'r');
    try {
      const buffer = Buffer.alloc(READ_CHUNK);
      while (this.offset < size) {
        const { bytesRead } = await file.read(buffer, 0, Math.min(READ_CHUNK, size - this.offset), this.offset);
        if (bytesRead === 0) break;
        this.offset += bytesRead;
        this.bytesRead += bytesRead;
        const text = this.decoder.write(buffer.subarray(0, bytesRead));
        if (text) this.onText(text);
      }
    } finally {
      await file.close();
    }
  }

  /** The file itself once it exists, else its folder (the log appears when the worker starts). */
  private watchFile(): void {
    try {
      this.watcher = watch(this.path, () => void this.wake());
    } catch {
      try {
        this.watcher = watch(dirname(this.path), (_event, name) => {
          if (name === basename(this.path)) {
            this.watcher?.close();
            this.watcher = undefined;
            void this.wake();
          }
        });
      } catch {
        // No folder yet either: the poll finds the file when it appears.
      }
    }
    this.watcher?.on('error', () => {
      this.watcher?.close();
      this.watcher = undefined;
    });
  }
}
