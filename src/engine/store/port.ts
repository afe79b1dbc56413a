import type { Disposable } from '../domain/emitter';

/** A bound parameter. Booleans are stored as 0/1 by the caller; nothing else crosses the journal. */
export type SqlValue = string | number | null;
export type Row = Record<string, SqlValue>;

/** Read access inside a transaction or a read. */
export interface StoreReader {
  get<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  all<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
}

/** A write transaction: every `run` is part of one atomic, durable commit. */
export interface StoreTx extends StoreReader {
  /** Resolves to the number of rows changed. */
  run(sql: string, params?: readonly SqlValue[]): Promise<number>;
  /**
   * A write that answers with the rows it wrote (`… RETURNING …`), part of the transaction as `run` is: one statement
   * where a write and a read of what it wrote would be two.
   */
  runReturning<T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
}

export interface StoreRecovery {
  /** What open found and repaired, for the user to read (torn journal tail, moved-aside snapshot, …). */
  notices: string[];
}

/**
 * What a write transaction touches, so that a shared store can run writers that touch different things side by side
 * (docs/team.md, "Concurrency"). Absent: anything — the transaction runs alone, as every transaction of the file
 * store does. `{ runId }`: only rows of that run (and the store-wide counters and the content-addressed artifacts,
 * which take row locks of their own); it runs alone among that run's writers and beside other runs'. PostgreSQL
 * refuses, with an error that rolls the transaction back, a row of another run written under it.
 */
export interface WriteScope {
  runId: string;
}

/**
 * The store port (DESIGN §3). The engine talks only to this interface; every backend
 * must pass test/unit/store/storeConformance.ts.
 *
 * Guarantees:
 * - `transact` runs `work` against the latest committed state of every process (it
 *   catches up first), so a precondition checked inside it is a compare-and-set: no other
 *   writer of what its scope covers (WriteScope) commits while it runs.
 * - When `transact` resolves, the transaction is durable. When `work` throws, nothing
 *   of it is visible, in this process or any other.
 * - `work` is asynchronous so that a networked backend can implement the port, but it
 *   must not wait on anything but the transaction: do file and process I/O before it.
 * - `watch` listeners hear about every commit, local or from another process, after it
 *   is visible to `read`.
 */
export interface StorePort {
  transact<T>(work: (tx: StoreTx) => Promise<T>, scope?: WriteScope): Promise<T>;
  read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T>;
  /** Catch up with commits of other processes now (a watch does it by itself). */
  refresh(): Promise<void>;
  watch(listener: () => void): Disposable;
  /**
   * After rows were written with explicit values in columns the backend numbers itself
   * (`INTEGER PRIMARY KEY`, e.g. events.id — only a store import does that), make the numbering
   * continue past the largest value, so the next row gets a new id. SQLite's rowid does so by
   * itself; PostgreSQL's identity sequence must be moved (setval).
   */
  continueNumbering(tx: StoreTx, columns: ReadonlyArray<{ table: string; column: string }>): Promise<void>;
  readonly recovery: StoreRecovery;
  /**
   * A shared store's server clock minus this machine's wall clock (ms), as last measured: the engine's clock is the
   * server's (domain/clock.ts, `databaseClock`). Absent for a store on this machine.
   */
  clockOffsetMs?(): number;
  close(): Promise<void>;
}
