import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  watch,
  type FSWatcher,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { Database, SqlJsStatic, Statement } from 'sql.js';
import { BatonError } from '../domain/errors';
import { systemClock, type Clock } from '../domain/clock';
import { Emitter, type Disposable } from '../domain/emitter';
import { fsyncDirectory, writeFileDurably } from './fsync';
import { readFenced } from '../platform/fencedFiles';
import { faultPoint, registerLockProbe } from './faultPoint';
import { Mutex } from './mutex';
import {
  decodeJournalChunk,
  encodeJournalLine,
  JournalMark,
  JournalSegment,
  type JournalEntry,
  type JournalStatement,
} from './journal';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations';
import type { Row, SqlValue, StorePort, StoreReader, StoreRecovery, StoreTx, WriteScope } from './port';
import { acquireProcessLock, createProcessLock, type LockWait, type ProcessLock } from './processLock';
import { loadSqlJs } from './sqljs';
import { counted } from '../domain/plural';

export interface FileStoreOptions {
  clock?: Pick<Clock, 'monotonic'>;
  /** How long a commit waits for another process's commit before giving up. */
  lockTimeoutMs?: number;
  /**
   * Snapshot once this much journal piled up since the last snapshot. By default: as much
   * as the last snapshot's size, and at least 8 MiB, which keeps the amortized cost of
   * snapshots per commit flat in the size of the database. Tests set it low.
   */
  snapshotAfterBytes?: number;
  /** On close, snapshot only when at least this much journal has piled up (keeps short CLI calls cheap). */
  closeSnapshotMinBytes?: number;
  /** Follow other processes' commits with a file watch (and a slow poll as a safety net). */
  follow?: boolean;
  /**
   * For commands that only read (status, diagnose, events): when the process holding the
   * store's lock is stopped by a signal, open without the lock — the newest snapshot and every
   * complete journal line — instead of refusing. Such a store refuses every write with
   * `store.holder-stopped` and says so in its recovery notices.
   */
  readWhileHolderStopped?: boolean;
}

interface Segment {
  start: number;
  path: string;
}

interface Snapshot {
  seq: number;
  path: string;
}

const SEGMENT = /^journal-(\d{12})\.log$/;
const SNAPSHOT = /^snapshot-(\d{12})\.sqlite$/;
const SNAPSHOT_TMP = /^snapshot-\d{12}\.sqlite\.tmp$/;
const SNAPSHOT_SUM = /^(snapshot-\d{12}\.sqlite)\.sha256$/;
const PREPARED_CACHE_LIMIT = 256;
export const DEFAULT_SNAPSHOT_MIN_BYTES = 8 * 1024 * 1024;
/** At most this many journal lines between snapshots: bounds the replay on open. */
export const SNAPSHOT_MAX_LINES = 10_000;
/** A group of commits lets go of the process lock after this long, once its lines are durable. */
const MAX_GROUP_MS = 50;

const pad = (n: number): string => String(n).padStart(12, '0');

/**
 * The sql.js store of DESIGN §3: the database lives in memory; every commit is one
 * checksummed journal line, fsynced before `transact` resolves; snapshots are written
 * atomically and stamped (by file name and inside) with the journal sequence they hold.
 *
 * On disk, in the store folder:
 *   snapshot-<seq>.sqlite     the two newest snapshots (an older one is the fallback
 *                             when the newest will not open)
 *   journal-<start>.log       journal segments; a new one starts after each snapshot,
 *                             and a segment is dropped once the older kept snapshot covers it
 *   snapshot-<seq>.sqlite.sha256  its checksum, written durably before the snapshot takes its name
 *   *.corrupt                 files that failed to open, moved aside and never deleted
 *
 * Invariant: every journal line with seq > the newest readable snapshot's seq is present
 * in the segments, in order, without gaps. Commits and every repair (cutting a torn tail,
 * moving a snapshot aside, pruning) happen only while holding the process lock.
 */
export class FileStore implements StorePort {
  readonly recovery: StoreRecovery = { notices: [] };

  private db!: Database;
  private appliedSeq = 0;
  private schemaVersion = 0;
  /** The segment being tailed (and appended to, when it is the last), with how far this process got. */
  private segment: JournalSegment | undefined;
  /** The newest snapshot this process knows of, and the journal written since: the snapshot trigger. */
  private snapshotSeq = 0;
  private snapshotBytes = 0;
  private journalBytesSinceSnapshot = 0;
  private readonly prepared = new Map<string, Statement>();
  private readonly columns = new WeakMap<Statement, string[]>();
  private readonly mutex = new Mutex();
  private readonly changed = new Emitter<void>();
  private readonly lock: ProcessLock;
  private readonly clock: Pick<Clock, 'monotonic'>;
  /** The newest acknowledged line, kept apart from the segments: see `JournalMark` and `checkJournalMark`. */
  private mark: JournalMark | undefined;
  /** What the mark said when this process opened the store (undefined: no usable mark). */
  private markOnOpen: number | undefined;
  private watcher: FSWatcher | undefined;
  private pollTimer: NodeJS.Timeout | undefined;
  private refreshQueued = false;
  private closed = false;
  private readonly unregisterLockProbe: () => void;
  /** Opened without the lock, its holder stopped (`readWhileHolderStopped`): every write is refused with this. */
  private heldByStopped: BatonError | undefined;

  // Group commit: commits are written under the process lock and acknowledged once a
  // flush that started after their write completes. While flushes are in flight the next
  // transactions already run, and one fdatasync covers every line written before it.
  // Invariant: a line that is written but not yet durable ⇒ this process holds the lock
  // (nobody else appends, snapshots or prunes), and every read or commit that saw it waits
  // for it to be durable before returning.
  /** This process holds the process lock across commits (a group); see `holdLock`. */
  private lockHeld = false;
  private lockHeldSince = 0;
  /** The newest journal line known durable, and where it ends in the current segment. */
  private durableSeq = 0;
  private durableOffset = 0;
  private flushing: Promise<void> | undefined;
  private readonly durabilityWaiters: Array<{ seq: number; resolve: () => void; reject: (err: Error) => void }> = [];
  /** Set when a flush failed, until the store has cut the undurable lines and reloaded. */
  private flushFailure: BatonError | undefined;

  private constructor(
    readonly dir: string,
    private readonly SQL: SqlJsStatic,
    private readonly options: FileStoreOptions,
  ) {
    this.lock = createProcessLock(dir);
    this.clock = options.clock ?? systemClock;
    this.unregisterLockProbe = registerLockProbe(() => this.lockHeld);
  }

  static async open(dir: string, options: FileStoreOptions = {}): Promise<FileStore> {
    mkdirSync(dir, { recursive: true });
    const store = new FileStore(dir, await loadSqlJs(), options);
    try {
      await store.withProcessLock(async () => {
        store.removeStrayTempFiles();
        store.openJournalMark();
        store.loadNewestSnapshot();
        store.catchUp(true);
        store.refuseNewerSchema(store.schemaVersion);
        store.checkJournalMark();
      });
    } catch (err) {
      if (!(options.readWhileHolderStopped && BatonError.is(err, 'store.holder-stopped'))) {
        store.clearPrepared();
        store.db?.close();
        store.mark?.close();
        throw err;
      }
      store.openWithoutLock(err);
    }
    if (store.heldByStopped) {
      if (options.follow) store.startFollowing();
      return store;
    }
    if (store.schemaVersion < SCHEMA_VERSION) await store.migrate();
    if (options.follow) store.startFollowing();
    return store;
  }

  // ── the port ────────────────────────────────────────────────────────────

  /** Every transaction runs alone (the process lock): a write scope narrows nothing here. */
  async transact<T>(work: (tx: StoreTx) => Promise<T>, _scope?: WriteScope): Promise<T> {
    if (this.heldByStopped) throw this.heldByStopped;
    const before = this.appliedSeq;
    const { result, seen } = await this.mutex.run(() => this.commit(work));
    await this.whenDurable(seen);
    if (this.appliedSeq !== before) this.changed.fire();
    return result;
  }

  async read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T> {
    const before = this.appliedSeq;
    const { result, seen } = await this.mutex.run(async () => {
      this.assertOpen();
      // Holding the lock for a group of commits, nobody else can have written anything.
      if (!this.lockHeld) await this.catchUpLockFree();
      return { result: await work(this.reader()), seen: this.appliedSeq };
    });
    // What it read may include commits still being flushed: it returns once they are durable.
    await this.whenDurable(seen);
    if (this.appliedSeq !== before) this.changed.fire();
    return result;
  }

  async refresh(): Promise<void> {
    await this.read(async () => undefined);
  }

  watch(listener: () => void): Disposable {
    return this.changed.event(listener);
  }

  /** SQLite gives an `INTEGER PRIMARY KEY` one more than the largest rowid: nothing to move. */
  async continueNumbering(): Promise<void> {}

  /** The journal sequence this process has applied: a cheap way to tell whether anything changed. */
  get sequence(): number {
    return this.appliedSeq;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.stopFollowing();
    await this.mutex.run(async () => {
      if (this.closed) return;
      const minBytes = this.options.closeSnapshotMinBytes ?? 1024 * 1024;
      try {
        await this.drainFlushes();
        if (this.journalBytesSinceSnapshot >= minBytes && !this.flushFailure && !this.heldByStopped) {
          // Every commit is durable in the journal by now: a snapshot that fails here (disk full)
          // loses nothing, so it is a notice, never the failure of the command that is closing.
          try {
            await this.withProcessLock(async () => {
              this.catchUp(true);
              this.writeSnapshot();
            });
          } catch (err) {
            this.recovery.notices.push(
              `A snapshot on close could not be written (${(err as Error).message}); nothing was lost: every commit is in the journal, and the next open replays it.`,
            );
          }
        }
      } finally {
        this.releaseHeldLock();
        this.unregisterLockProbe();
        this.closed = true;
        this.closeSegment();
        this.mark?.close();
        this.clearPrepared();
        this.db.close();
        this.changed.dispose();
      }
    });
  }

  /** Writes a snapshot now (tests and benchmarks; the store does it by itself). */
  async snapshot(): Promise<void> {
    await this.mutex.run(async () => {
      await this.drainFlushes();
      if (this.flushFailure) throw this.flushFailure;
      await this.withProcessLock(async () => {
        this.catchUp(true);
        this.writeSnapshot();
      });
    });
  }

  // ── commit ──────────────────────────────────────────────────────────────

  /**
   * Runs `work` as one transaction and writes its journal line; the caller awaits
   * `whenDurable(seen)` before acknowledging it. Runs inside the mutex.
   */
  private async commit<T>(
    work: (tx: StoreTx) => Promise<T>,
    schemaAfter = this.schemaVersion,
  ): Promise<{ result: T; seen: number }> {
    this.assertOpen();
    if (this.flushFailure) await this.recoverFromFailedFlush();
    await this.holdLock();
    faultPoint('commit:locked'); // with BATON_FAULT_SIGNAL=SIGSTOP: a holder stopped with the lock (Ctrl-Z)
    const statements: JournalStatement[] = [];
    let live = true;
    const reader = this.reader();
    const tx: StoreTx = {
      get: (sql, params) => (live ? reader.get(sql, params) : Promise.reject(new Error('transaction is over'))),
      all: (sql, params) => (live ? reader.all(sql, params) : Promise.reject(new Error('transaction is over'))),
      run: async (sql, params = []) => {
        if (!live) throw new Error('transaction is over');
        const bound = params.map(journalSafe);
        this.statement(sql).run(bound);
        statements.push([sql, bound]);
        return this.db.getRowsModified();
      },
      runReturning: async <R>(sql: string, params: readonly SqlValue[] = []) => {
        if (!live) throw new Error('transaction is over');
        const bound = params.map(journalSafe);
        // SQLite makes every change of a RETURNING statement at its first step: replayed with `run`, it does the same.
        const rows = await reader.all<R>(sql, bound);
        statements.push([sql, bound]);
        return rows;
      },
    };
    this.statement('BEGIN').run();
    let result: T;
    try {
      result = await work(tx);
      live = false;
      // A flush failed while `work` ran: the state it saw is about to be rolled back.
      if (this.flushFailure) throw this.flushFailure;
      if (statements.length > 0) this.appendToJournal({ seq: this.appliedSeq + 1, schema: schemaAfter, statements });
    } catch (err) {
      live = false;
      this.statement('ROLLBACK').run();
      this.releaseLockIfAllDurable();
      throw err;
    }
    this.statement('COMMIT').run();
    if (statements.length > 0) {
      this.appliedSeq += 1;
      this.schemaVersion = schemaAfter;
      await this.maybeSnapshot();
    }
    this.releaseLockIfAllDurable();
    return { result, seen: this.appliedSeq };
  }

  /**
   * Caller holds the lock and has caught up, so the segment being tailed is the last one.
   * The line goes out with the next flush; `journal_seq` in store_meta is set only when a
   * snapshot is taken (it is the seq the snapshot holds), not on every commit.
   */
  private appendToJournal(entry: JournalEntry): void {
    if (!this.segment) {
      this.segment = JournalSegment.create(entry.seq, this.segmentPath(entry.seq));
      fsyncDirectory(this.dir);
      this.durableOffset = 0;
    }
    const line = encodeJournalLine(entry);
    this.segment.add(line);
    this.journalBytesSinceSnapshot += line.length;
  }

  // ── group commit: holding the lock, flushing, acknowledging ─────────────

  /**
   * Takes the process lock for this commit, or keeps the one held since earlier commits
   * whose lines are still being flushed (nobody else can have written since, so there is
   * nothing to catch up with). A group that has held the lock for MAX_GROUP_MS lets go
   * once its lines are durable, so that other processes' commits get their turn.
   */
  private async holdLock(): Promise<void> {
    if (this.lockHeld && this.clock.monotonic() - this.lockHeldSince > MAX_GROUP_MS) {
      await this.drainFlushes();
      if (this.flushFailure) await this.recoverFromFailedFlush();
      this.releaseHeldLock();
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    if (this.lockHeld) return;
    await acquireProcessLock(this.lock, this.lockWait(), this.dir);
    this.lockHeld = true;
    this.lockHeldSince = this.clock.monotonic();
    try {
      this.catchUp(true);
    } catch (err) {
      this.releaseHeldLock();
      throw err;
    }
    this.durableSeq = this.appliedSeq;
    this.durableOffset = this.segment?.offset ?? 0;
  }

  private releaseHeldLock(): void {
    if (!this.lockHeld) return;
    this.lockHeld = false;
    this.lock.release();
  }

  /** Inside the mutex: nothing written is waiting for a flush, so the lock can go. */
  private releaseLockIfAllDurable(): void {
    if (this.durableSeq >= this.appliedSeq && !this.flushing && !this.flushFailure) this.releaseHeldLock();
  }

  /**
   * Resolves once journal line `seq` (and so every line before it) is on disk. When no
   * other transaction is waiting and no flush is in flight, there is nothing to overlap the
   * flush with: it is done right here, without the round trip through libuv's thread pool.
   */
  private whenDurable(seq: number): Promise<void> {
    if (seq <= this.durableSeq) return Promise.resolve();
    if (!this.flushFailure && !this.flushing && this.mutex.idle && this.segment) {
      const segment = this.segment;
      const target = { seq: this.appliedSeq, offset: segment.end };
      try {
        segment.flushNow();
      } catch (err) {
        this.flushFailed(err);
        return this.whenDurable(seq);
      }
      // No section is running or waiting (checked above, nothing awaited since): the lock goes here and now, without
      // a round through the mutex.
      this.flushed(target, true);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      this.durabilityWaiters.push({ seq, resolve, reject });
      // After a failed flush the recovery rejects this waiter (again, if the last recovery itself failed).
      if (this.flushFailure) void this.mutex.run(() => this.recoverFromFailedFlush());
      else this.startFlush();
    });
  }

  /** One flush at a time on the thread pool; it covers every line written before it starts. */
  private startFlush(): void {
    if (this.flushing || this.flushFailure || !this.segment) return;
    const target = { seq: this.appliedSeq, offset: this.segment.end };
    this.flushing = this.segment.flush().then(
      () => {
        this.flushing = undefined;
        this.flushed(target);
      },
      (err: unknown) => {
        this.flushing = undefined;
        this.flushFailed(err);
      },
    );
  }

  private flushed(target: { seq: number; offset: number }, mutexIdle = false): void {
    if (target.seq > this.durableSeq) {
      this.durableSeq = target.seq;
      this.durableOffset = target.offset;
      // Still under the lock (lines not yet durable ⇒ lock held): the mark only moves forward here.
      try {
        this.mark?.advance(target.seq);
      } catch {
        // The lines are durable; a mark that lags only weakens loss detection.
      }
    }
    const waiting = this.durabilityWaiters.splice(0);
    for (const waiter of waiting) {
      if (waiter.seq <= this.durableSeq) waiter.resolve();
      else this.durabilityWaiters.push(waiter);
    }
    if (this.durabilityWaiters.length > 0) this.startFlush();
    else if (this.durableSeq >= this.appliedSeq && this.lockHeld) {
      if (mutexIdle) this.releaseLockIfAllDurable();
      else void this.mutex.run(async () => this.releaseLockIfAllDurable());
    }
  }

  private flushFailed(err: unknown): void {
    this.flushFailure ??= new BatonError(
      'store.commit-failed',
      `Could not write the Baton journal (${(err as Error).message}); nothing was committed of the transactions waiting for it.`,
    );
    void this.mutex.run(() => this.recoverFromFailedFlush());
  }

  /** Inside the mutex: waits until every line written so far is durable (or a flush failed). */
  private async drainFlushes(): Promise<void> {
    while (!this.flushFailure && (this.flushing || this.durableSeq < this.appliedSeq)) {
      if (!this.flushing) this.startFlush();
      await this.flushing;
    }
  }

  /**
   * Inside the mutex, still holding the lock: a flush failed, so the lines after the last
   * durable one may or may not be on disk. They are cut off, their commits (and every
   * commit or read that saw them) fail, and the in-memory database is rebuilt from disk.
   */
  private async recoverFromFailedFlush(): Promise<void> {
    const failure = this.flushFailure;
    if (!failure) return;
    for (const waiter of this.durabilityWaiters.splice(0)) waiter.reject(failure);
    try {
      if (this.segment) {
        this.segment.discardUnwritten();
        this.segment.truncate(this.durableOffset);
      }
      this.loadNewestSnapshot();
      this.catchUp(true);
      this.durableSeq = this.appliedSeq;
      this.durableOffset = this.segment?.offset ?? 0;
      this.flushFailure = undefined;
      this.recovery.notices.push(
        `${failure.message} The journal was cut back to line ${this.appliedSeq} and the store reloaded.`,
      );
    } finally {
      if (!this.flushFailure) this.releaseHeldLock();
    }
    this.changed.fire();
  }

  private lockWait(): LockWait {
    return {
      timeoutMs: this.options.lockTimeoutMs ?? 10_000,
      monotonic: () => this.clock.monotonic(),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    };
  }

  private async migrate(): Promise<void> {
    for (const migration of MIGRATIONS) {
      if (migration.version <= this.schemaVersion) continue;
      const { seen } = await this.mutex.run(() =>
        this.commit(async (tx) => {
          // Another process may have migrated while we waited for the lock.
          if (this.schemaVersion >= migration.version) return;
          for (const sql of migration.statements) await tx.run(sql);
          await tx.run(`INSERT OR REPLACE INTO store_meta (key, value) VALUES ('schema_version', ?)`, [
            String(migration.version),
          ]);
        }, migration.version),
      );
      await this.whenDurable(seen);
    }
  }

  // ── catching up with the journal ────────────────────────────────────────

  /**
   * Applies every complete journal line after `appliedSeq`. Under the lock nobody is
   * writing, so an incomplete or garbled last line is a torn write: it is cut off and
   * reported. Without the lock it may be a commit in progress: stop before it.
   * Returns false when lock-free reading hit something only a locked catch-up may decide.
   *
   * The steady state costs two system calls: segments are contiguous and a new one starts
   * right after a snapshot, so once the current segment is read to its end, the only
   * segment that can follow is journal-<appliedSeq + 1>.
   */
  private catchUp(underLock: boolean): boolean {
    for (let guard = 0; guard < 100_000; guard++) {
      if (!this.segment && !this.positionInJournal(underLock)) return false;
      const segment = this.segment;
      if (!segment) return true; // no journal yet
      const { size, unlinked } = segment.stat();
      if (unlinked) {
        // Pruned by another process's snapshot: find our place again.
        this.closeSegment();
        continue;
      }
      if (size < segment.offset || !segment.stillHoldsLastLine()) {
        // Cut back under us (and maybe written on since): another process's flush failed after
        // we applied lines it had written. Those commits were never acknowledged; rebuild from
        // what is on disk.
        if (!underLock) return false;
        this.loadNewestSnapshot();
        this.recovery.notices.push(
          `${segment.path} was cut back by a process whose flush failed; reloaded the store from disk.`,
        );
        continue;
      }
      const chunk = segment.readNew(size);
      if (chunk.length > 0) {
        const decoded = decodeJournalChunk(chunk);
        const chunkStart = segment.offset;
        for (const entry of decoded.entries) {
          if (entry.seq > this.appliedSeq) this.applyJournalEntry(entry, segment.path);
          segment.offset = chunkStart + entry.end;
        }
        const last = decoded.entries[decoded.entries.length - 1];
        if (last) segment.noteLastLine(chunkStart + last.start, chunk.subarray(last.start, last.end));
        this.journalBytesSinceSnapshot += decoded.goodBytes;
        if (decoded.stop) {
          if (!underLock) return false;
          if (decoded.stop.reason === 'bad-checksum' && decoded.stop.linesAfter > 0) {
            throw new BatonError(
              'store.journal-corrupt',
              `The Baton journal ${segment.path} is damaged at byte ${segment.offset}, with ${counted(decoded.stop.linesAfter, 'line')} after the damage. Nothing was changed; keep the file and report it.`,
            );
          }
          const cut = chunk.length - decoded.goodBytes;
          const aside = this.keepAside(segment.path, segment.offset, chunk.subarray(decoded.goodBytes));
          segment.truncate(segment.offset);
          const what = `${cut} byte${cut === 1 ? '' : 's'}, ${decoded.stop.reason === 'incomplete-line' ? 'incomplete' : 'bad checksum'}`;
          this.recovery.notices.push(
            this.markOnOpen !== undefined && this.markOnOpen > this.appliedSeq
              ? `Journal line ${this.appliedSeq + 1} in ${segment.path} is damaged (${what}), though it was acknowledged: moved the damaged bytes aside to ${aside}.`
              : `Cut off a torn last journal line (${what}) in ${segment.path}: a commit that was interrupted before it was acknowledged. Its bytes are kept in ${aside}.`,
          );
        }
      }
      if (segment.start > this.appliedSeq) return true; // an empty segment is always the last
      const nextPath = this.segmentPath(this.appliedSeq + 1);
      if (!existsSync(nextPath)) return true; // the common case; cheaper than a failed open
      const next = JournalSegment.open(this.appliedSeq + 1, nextPath);
      if (!next) return true;
      // Another process snapshotted at appliedSeq and started this segment.
      this.closeSegment();
      this.segment = next;
      this.noteSnapshotAt(this.appliedSeq);
    }
    throw new Error('journal catch-up did not settle');
  }

  /** Finds the segment holding the line after `appliedSeq` (a directory listing; rare). */
  private positionInJournal(underLock: boolean): boolean {
    for (;;) {
      const segments = this.listSegments();
      if (segments.length === 0) return true;
      const index = findLastIndex(segments, (s) => s.start <= this.appliedSeq + 1);
      if (index >= 0) {
        const found = segments[index]!;
        const segment = JournalSegment.open(found.start, found.path);
        if (!segment) continue; // pruned between the listing and the open
        this.segment = segment;
        return true;
      }
      // The lines right after ours were pruned: another process snapshotted past us.
      if (!underLock) return false;
      const before = this.appliedSeq;
      this.loadNewestSnapshot();
      if (this.appliedSeq === before || this.appliedSeq + 1 < segments[0]!.start) {
        throw this.unrecoverable(`journal lines ${this.appliedSeq + 1}–${segments[0]!.start - 1} are missing`);
      }
    }
  }

  private closeSegment(): void {
    this.segment?.close();
    this.segment = undefined;
  }

  private segmentPath(start: number): string {
    return join(this.dir, `journal-${pad(start)}.log`);
  }

  /** A snapshot at `seq` exists (ours, another process's, or loaded): journal since it starts from zero. */
  private noteSnapshotAt(seq: number, bytes?: number): void {
    this.snapshotSeq = seq;
    this.journalBytesSinceSnapshot = 0;
    if (bytes !== undefined) this.snapshotBytes = bytes;
    else {
      try {
        this.snapshotBytes = statSync(join(this.dir, `snapshot-${pad(seq)}.sqlite`)).size;
      } catch {
        // its writer crashed before the rename; the size only tunes the trigger
      }
    }
  }

  private async catchUpLockFree(): Promise<void> {
    // Without the lock (its holder stopped), a reader takes what is complete and leaves the rest.
    if (this.catchUp(false) || this.heldByStopped) return;
    await this.withProcessLock(async () => {
      this.catchUp(true);
    });
  }

  private applyJournalEntry(entry: JournalEntry, path: string): void {
    // A line written after a recorded loss follows the last line that survived, skipping the lost numbers.
    const follows = entry.after ?? entry.seq - 1;
    if (follows !== this.appliedSeq || entry.seq <= this.appliedSeq) {
      throw this.unrecoverable(`${path} jumps from line ${this.appliedSeq} to ${entry.seq}`);
    }
    this.refuseNewerSchema(entry.schema);
    this.statement('BEGIN').run();
    try {
      for (const [sql, params] of entry.statements) this.statement(sql).run(params);
    } catch (err) {
      this.statement('ROLLBACK').run();
      throw new BatonError(
        'store.journal-corrupt',
        `Journal line ${entry.seq} in ${path} does not apply (${(err as Error).message}).`,
      );
    }
    this.statement('COMMIT').run();
    // Lines read back from the journal are another process's (ours are never read back): durable to us.
    if (this.durableSeq === this.appliedSeq) this.durableSeq = entry.seq;
    this.appliedSeq = entry.seq;
    this.schemaVersion = Math.max(this.schemaVersion, entry.schema);
  }

  /** Stamps the database with the journal line it holds; done right before each snapshot, where it is read back. */
  private setJournalSeq(seq: number): void {
    this.statement(`INSERT OR REPLACE INTO store_meta (key, value) VALUES ('journal_seq', ?)`).run([String(seq)]);
  }

  // ── snapshots ───────────────────────────────────────────────────────────

  // ── the journal mark: loss of acknowledged lines is never silent ─────────

  private openJournalMark(): void {
    const { mark, found } = JournalMark.open(join(this.dir, 'journal.mark'));
    this.mark = mark;
    if (typeof found === 'number') this.markOnOpen = found;
    else if (found === 'damaged')
      this.recovery.notices.push(
        `The journal mark ${mark.path} is damaged; it is reset to the journal's last line, so a loss before now cannot be detected.`,
      );
  }

  /**
   * On open, under the lock, after catching up: the journal must reach the mark. When it does
   * not, acknowledged commits are gone (a segment deleted or cut back, a damaged line). That is
   * reported with what was lost and from which line the store continues; journal segments past
   * the gap are moved aside, never deleted; and a line numbered past the mark records the gap,
   * so that no lost number is ever reused and no old line can be spliced onto new history.
   */
  private checkJournalMark(): void {
    const mark = this.mark!;
    const acknowledged = this.markOnOpen;
    if (acknowledged === undefined || acknowledged <= this.appliedSeq) {
      // No mark yet (a new store, one from before marks, or the file was removed), or it lags: it starts here.
      if (acknowledged === undefined || acknowledged < this.appliedSeq) mark.set(this.appliedSeq);
      return;
    }
    const from = this.appliedSeq;
    const movedAside: string[] = [];
    for (const later of this.listSegments().filter((s) => s.start > from + 1)) {
      const aside = `${later.path}.corrupt`;
      renameSync(later.path, aside);
      movedAside.push(aside);
    }
    if (!this.segment) {
      // Named for the line after the last one that survived: segments stay contiguous by name.
      this.segment = JournalSegment.create(from + 1, this.segmentPath(from + 1));
      this.durableOffset = 0;
    }
    fsyncDirectory(this.dir);
    const entry: JournalEntry = { seq: acknowledged + 1, schema: this.schemaVersion, after: from, statements: [] };
    const line = encodeJournalLine(entry);
    this.segment.add(line);
    this.segment.flushNow();
    this.appliedSeq = entry.seq;
    this.durableSeq = entry.seq;
    this.durableOffset = this.segment.offset;
    this.journalBytesSinceSnapshot += line.length;
    mark.set(entry.seq);
    mark.sync();
    const lost = acknowledged === from + 1 ? `line ${acknowledged}` : `lines ${from + 1}–${acknowledged}`;
    this.recovery.notices.push(
      `Acknowledged commits were lost: the journal ends at line ${from}, but line ${acknowledged} was acknowledged (journal ${lost} ${acknowledged === from + 1 ? 'is' : 'are'} missing or damaged${movedAside.length ? `; moved aside ${movedAside.join(', ')}` : ''}). The store continues from line ${from}, as it was then; the next line is ${entry.seq + 1}, no number is reused.`,
    );
  }

  /** Copies damaged journal bytes to a file beside the segment before they are cut off; returns its path. */
  private keepAside(segmentPath: string, offset: number, bytes: Buffer): string {
    const aside = `${segmentPath}.${offset}.corrupt`;
    writeFileDurably(aside, bytes);
    fsyncDirectory(this.dir);
    return aside;
  }

  /**
   * Opened for reading while a stopped process holds the lock: nothing on disk is touched
   * (no stray file removed, no torn tail cut, no snapshot moved aside, no migration) —
   * the newest snapshot that opens and the complete journal lines after it.
   */
  private openWithoutLock(holderStopped: BatonError): void {
    this.heldByStopped = holderStopped;
    this.loadNewestSnapshot();
    this.catchUp(false);
    this.refuseNewerSchema(this.schemaVersion);
    if (this.schemaVersion < SCHEMA_VERSION) throw holderStopped; // the holder has not migrated it yet
    this.recovery.notices.push(`${holderStopped.message} Shown here: the state as of its last commit.`);
  }

  /** Loads the newest snapshot that opens; moves aside (never deletes) the ones that do not. */
  private loadNewestSnapshot(): void {
    this.clearPrepared();
    this.db?.close();
    const snapshots = this.listSnapshots();
    for (let i = snapshots.length - 1; i >= 0; i--) {
      const snapshot = snapshots[i]!;
      let db: Database | undefined;
      try {
        const bytes = readFenced(this.dir, snapshot.path, Number.MAX_SAFE_INTEGER)?.bytes;
        if (!bytes) throw new Error('it is gone');
        const sum = readChecksum(`${snapshot.path}.sha256`);
        // A store with a journal mark writes every snapshot's checksum before the snapshot takes
        // its name: one without it was tampered with, and SQLite's page scan cannot see a changed value.
        if (sum === undefined && this.markOnOpen !== undefined) throw new Error('its checksum file is missing');
        if (sum !== undefined && sum !== createHash('sha256').update(bytes).digest('hex'))
          throw new Error('its sha256 does not match the one written with it');
        db = new this.SQL.Database(bytes);
        // A matching checksum proves these are the bytes a healthy database exported; only a
        // snapshot without one (from before checksums) needs SQLite's own scan of every page.
        if (sum === undefined) {
          const check = db.exec('PRAGMA quick_check')[0]?.values[0]?.[0];
          if (check !== 'ok') throw new Error(`quick_check says ${String(check)}`);
        }
        const meta = readMeta(db);
        if (meta.journalSeq !== snapshot.seq)
          throw new Error(`it says it holds line ${meta.journalSeq}, its name says ${snapshot.seq}`);
        configureConnection(db);
        this.db = db;
        this.appliedSeq = snapshot.seq;
        this.durableSeq = snapshot.seq;
        this.schemaVersion = meta.schemaVersion;
        this.closeSegment();
        this.noteSnapshotAt(snapshot.seq);
        this.journalBytesSinceSnapshot = this.journalBytesAfter(snapshot.seq);
        return;
      } catch (err) {
        db?.close();
        if (BatonError.is(err)) throw err;
        // Without the lock nothing is moved: the holder, once continued, decides.
        if (this.heldByStopped) throw this.heldByStopped;
        const aside = `${snapshot.path}.corrupt`;
        renameSync(snapshot.path, aside);
        if (existsSync(`${snapshot.path}.sha256`)) renameSync(`${snapshot.path}.sha256`, `${aside}.sha256`);
        fsyncDirectory(this.dir);
        this.recovery.notices.push(
          `Snapshot ${snapshot.path} would not open (${(err as Error).message}); moved it aside to ${aside} and recovered from ${i > 0 ? 'the previous snapshot' : 'the journal'}.`,
        );
      }
    }
    const segments = this.listSegments();
    if (segments.length > 0 && segments[0]!.start > 1) {
      throw this.unrecoverable('no snapshot opens and the journal does not reach back to the start');
    }
    this.db = new this.SQL.Database();
    configureConnection(this.db);
    this.appliedSeq = 0;
    this.durableSeq = 0;
    this.schemaVersion = 0;
    this.closeSegment();
    this.snapshotSeq = 0;
    this.snapshotBytes = 0;
    this.journalBytesSinceSnapshot = 0;
  }

  /**
   * After a commit (already durable in the journal): a snapshot when enough journal piled up.
   * A snapshot that fails (disk full, I/O error) does not fail the commit it follows — that
   * commit is acknowledged and in the journal; the failure is noted, its temp file is cleaned
   * on the next open, and the next commit tries again.
   */
  private async maybeSnapshot(): Promise<void> {
    const threshold = this.options.snapshotAfterBytes ?? Math.max(DEFAULT_SNAPSHOT_MIN_BYTES, this.snapshotBytes);
    // The line cap bounds how long an open replays, whatever the size of the lines.
    if (this.journalBytesSinceSnapshot < threshold && this.appliedSeq - this.snapshotSeq < SNAPSHOT_MAX_LINES) return;
    // The segment is about to be closed and a new one started: its lines must be on disk first.
    await this.drainFlushes();
    if (this.flushFailure) return;
    try {
      this.writeSnapshot();
    } catch (err) {
      this.recovery.notices.push(
        `A snapshot at line ${this.appliedSeq} could not be written (${(err as Error).message}); the journal holds everything, the next commit tries again.`,
      );
    }
  }

  /** Journal bytes after line `seq` (segments are contiguous; a listing, on open only). */
  private journalBytesAfter(seq: number): number {
    const segments = this.listSegments();
    let bytes = 0;
    segments.forEach((segment, i) => {
      const next = segments[i + 1];
      if (!next || next.start - 1 > seq) bytes += statSync(segment.path).size;
    });
    return bytes;
  }

  /** Caller holds the lock and has caught up. Temp, fsync, rename, fsync the folder; then prune. */
  private writeSnapshot(): void {
    const seq = this.appliedSeq;
    const snapshots = this.listSnapshots();
    if (seq === 0 || snapshots[snapshots.length - 1]?.seq === seq) return;
    this.setJournalSeq(seq);
    const bytes = this.db.export(); // sql.js reopens the database: prepared statements and pragmas are gone
    this.prepared.clear();
    configureConnection(this.db);
    const path = join(this.dir, `snapshot-${pad(seq)}.sqlite`);
    // Each step is a fault point: the crash matrix (docs/reliability.md, row 2) kills the process at each.
    try {
      writeFileDurably(`${path}.tmp`, bytes, () => faultPoint('snapshot:temp-written'));
      faultPoint('snapshot:temp-fsynced');
      // Its checksum, durable before the snapshot takes its name: a flipped bit is found on open.
      writeFileDurably(`${path}.sha256`, Buffer.from(`${createHash('sha256').update(bytes).digest('hex')}\n`));
      renameSync(`${path}.tmp`, path);
    } catch (err) {
      // Disk full or an I/O error: a half-written temp file would only hold on to the space that ran out.
      for (const leftover of [`${path}.tmp`, `${path}.sha256`]) rmSync(leftover, { force: true });
      throw err;
    }
    faultPoint('snapshot:renamed');
    fsyncDirectory(this.dir);
    faultPoint('snapshot:folder-fsynced');
    // Rare and already paying for fsyncs: the mark is made durable here, not on every commit.
    this.mark?.advance(seq);
    this.mark?.sync();

    // Later lines go to a new segment, so that old ones can be dropped whole.
    if (this.segment && this.segment.offset > 0) {
      this.closeSegment();
      this.segment = JournalSegment.create(seq + 1, this.segmentPath(seq + 1));
      fsyncDirectory(this.dir);
      this.durableOffset = 0;
    }
    this.noteSnapshotAt(seq, bytes.length);
    this.pruneAfterSnapshot();
  }

  /** Keeps the two newest snapshots and every journal line the older of them needs. */
  private pruneAfterSnapshot(): void {
    const snapshots = this.listSnapshots();
    if (snapshots.length < 2) return;
    const olderKept = snapshots[snapshots.length - 2]!;
    for (const old of snapshots.slice(0, -2)) {
      unlinkSync(old.path);
      if (existsSync(`${old.path}.sha256`)) unlinkSync(`${old.path}.sha256`);
    }
    const segments = this.listSegments();
    segments.forEach((segment, i) => {
      const next = segments[i + 1];
      if (next && next.start - 1 <= olderKept.seq) unlinkSync(segment.path);
    });
    fsyncDirectory(this.dir);
  }

  private removeStrayTempFiles(): void {
    for (const name of readdirSync(this.dir)) {
      // A checksum whose snapshot never took its name (the process stopped in between).
      const sum = SNAPSHOT_SUM.exec(name);
      if (sum && !existsSync(join(this.dir, sum[1]!))) {
        unlinkSync(join(this.dir, name));
        continue;
      }
      if (!SNAPSHOT_TMP.test(name)) continue;
      unlinkSync(join(this.dir, name));
      this.recovery.notices.push(`Removed ${name}, a snapshot that was being written when a process stopped.`);
    }
  }

  // ── helpers ─────────────────────────────────────────────────────────────

  private reader(): StoreReader {
    return {
      get: async <T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> => {
        const statement = this.statement(sql);
        try {
          statement.bind(params as SqlValue[]);
          return statement.step() ? (this.rowOf(statement) as T) : undefined;
        } finally {
          statement.reset();
        }
      },
      all: async <T = Row>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> => {
        const statement = this.statement(sql);
        const rows: T[] = [];
        try {
          statement.bind(params as SqlValue[]);
          while (statement.step()) rows.push(this.rowOf(statement) as T);
        } finally {
          statement.reset();
        }
        return rows;
      },
    };
  }

  /** sql.js's getAsObject asks for the column names on every row; ask once per statement. */
  private rowOf(statement: Statement): Row {
    let columns = this.columns.get(statement);
    if (!columns) {
      columns = statement.getColumnNames();
      this.columns.set(statement, columns);
    }
    const values = statement.get();
    const row: Row = {};
    for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i] as SqlValue;
    return row;
  }

  private statement(sql: string): Statement {
    let statement = this.prepared.get(sql);
    if (!statement) {
      if (this.prepared.size >= PREPARED_CACHE_LIMIT) this.clearPrepared();
      statement = this.db.prepare(sql);
      this.prepared.set(sql, statement);
    }
    return statement;
  }

  private clearPrepared(): void {
    for (const statement of this.prepared.values()) {
      try {
        statement.free();
      } catch {
        // already freed by sql.js (export frees every statement)
      }
    }
    this.prepared.clear();
  }

  private listSegments(): Segment[] {
    return this.listFiles(SEGMENT).map(([n, path]) => ({ start: n, path }));
  }

  private listSnapshots(): Snapshot[] {
    return this.listFiles(SNAPSHOT).map(([n, path]) => ({ seq: n, path }));
  }

  private listFiles(pattern: RegExp): Array<[number, string]> {
    const found: Array<[number, string]> = [];
    for (const name of readdirSync(this.dir)) {
      const match = pattern.exec(name);
      if (match) found.push([Number(match[1]), join(this.dir, name)]);
    }
    return found.sort((a, b) => a[0] - b[0]);
  }

  /** Runs `section` under the process lock; inside a group that already holds it, as it is. */
  private async withProcessLock<T>(section: () => Promise<T>): Promise<T> {
    if (this.lockHeld) return section();
    await acquireProcessLock(this.lock, this.lockWait(), this.dir);
    try {
      return await section();
    } finally {
      this.lock.release();
    }
  }

  private refuseNewerSchema(version: number): void {
    if (version <= SCHEMA_VERSION) return;
    throw new BatonError(
      'store.schema-too-new',
      `The Baton store in ${this.dir} was written by a newer Baton (schema ${version}; this one knows up to ${SCHEMA_VERSION}). Update Baton; the store was left untouched.`,
    );
  }

  private unrecoverable(what: string): BatonError {
    const preserved = readdirSync(this.dir).filter((n) => SEGMENT.test(n) || n.includes('.sqlite'));
    return new BatonError(
      'store.unrecoverable',
      `The Baton store in ${this.dir} cannot be rebuilt: ${what}. Nothing was deleted; preserved files: ${preserved.join(', ') || 'none'}.`,
    );
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the store is closed');
  }

  // ── following other processes ───────────────────────────────────────────

  private startFollowing(): void {
    const queueRefresh = (): void => {
      if (this.refreshQueued || this.closed) return;
      this.refreshQueued = true;
      setImmediate(() => {
        this.refreshQueued = false;
        // A catch-up that fails (a line being written, a busy disk) is tried again by the next change or the poll.
        if (!this.closed) this.refresh().catch(() => undefined);
      });
    };
    try {
      this.watcher = watch(this.dir, { persistent: false }, queueRefresh);
      this.watcher.on('error', () => undefined);
    } catch {
      // No file watching here (some network file systems): the poll below still follows.
    }
    this.pollTimer = setInterval(queueRefresh, 1000);
    this.pollTimer.unref();
  }

  private stopFollowing(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.pollTimer) clearInterval(this.pollTimer);
    this.pollTimer = undefined;
  }
}

/**
 * The in-memory database's own rollback journal stays in memory: sql.js would otherwise
 * write it to its emulated file system on every transaction. Durability is the journal
 * file's job, not SQLite's. sql.js forgets pragmas on export, so this runs after each.
 */
function configureConnection(db: Database): void {
  db.run('PRAGMA journal_mode = MEMORY');
  db.run('PRAGMA synchronous = OFF');
  db.run('PRAGMA temp_store = MEMORY');
  // One connection owns the in-memory file: without this, every statement outside BEGIN
  // would take and drop SQLite's file lock and look for a hot journal in sql.js's file system.
  db.run('PRAGMA locking_mode = EXCLUSIVE');
}

/** Replay must bind exactly what the live commit bound, so only values JSON keeps intact are allowed. */
function journalSafe(value: SqlValue | undefined): SqlValue {
  if (value === undefined) return null;
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`cannot store the number ${value}`);
  return value;
}

function readMeta(db: Database): { journalSeq: number; schemaVersion: number } {
  const rows =
    db.exec(`SELECT key, value FROM store_meta WHERE key IN ('journal_seq', 'schema_version')`)[0]?.values ?? [];
  const meta = new Map(rows.map(([k, v]) => [String(k), Number(v)]));
  return { journalSeq: meta.get('journal_seq') ?? 0, schemaVersion: meta.get('schema_version') ?? 0 };
}

function findLastIndex<T>(items: readonly T[], predicate: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) return i;
  return -1;
}

export function storeExists(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).some((n) => SEGMENT.test(n) || SNAPSHOT.test(n));
}

/** The hex sha256 stored beside a snapshot, or undefined when there is none (a store from before checksums). */
function readChecksum(path: string): string | undefined {
  try {
    return readFenced(dirname(path), path, 256)?.bytes.toString('utf8').trim();
  } catch {
    return undefined; // a link or FIFO in its place: no checksum, which a store with a journal mark does not accept
  }
}
