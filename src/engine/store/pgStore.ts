import { createHash, randomUUID } from 'node:crypto';
import pg from 'pg';
import { STORE_SCHEMA_NAME } from '../domain/config';
import { BatonError } from '../domain/errors';
import { Emitter, type Disposable } from '../domain/emitter';
import { displayUrl, redactCredentials } from '../domain/credentials';
import { MIGRATIONS, SCHEMA_VERSION } from './migrations';
import { Mutex } from './mutex';
import type { Row, SqlValue, StorePort, StoreReader, StoreRecovery, StoreTx, WriteScope } from './port';
import { postgresDdl, toPostgres } from './postgresDialect';

export interface PgStoreOptions {
  /** A postgres:// URL; its password (if any) is never shown (credentials.ts). */
  url: string;
  /** The PostgreSQL schema that holds this store's tables: several stores can share one database. */
  schema?: string;
  /** Hear other processes' commits (LISTEN on the store's channel). */
  follow?: boolean;
  /** Connections this process keeps at most: one writes at a time (see `transact`), the others read. */
  poolSize?: number;
  /** How long opening a connection may take. */
  connectTimeoutMs?: number;
  /** How long a commit waits for another process's commit before giving up (`store.busy`). */
  lockTimeoutMs?: number;
  /**
   * A transaction left idle this long (its process stopped by a signal, or cut off) is ended by
   * the server, which releases the store's lock; the stopped process's commit then fails.
   */
  idleInTransactionMs?: number;
  /** The password, when it is not in the URL nor left to the environment (PGPASSWORD) and ~/.pgpass. */
  password?: string;
  /** Secrets beside the URL that must never be shown either (e.g. PGPASSWORD). */
  secrets?: readonly string[];
}

export const DEFAULT_PG_SCHEMA = 'baton';
/**
 * The store's advisory lock is the pair ("BATN", the store's schema); a run's is one 64-bit key (runLockKey).
 * PostgreSQL keeps the one-bigint and the two-int4 forms apart, so a run's key never collides with a store's.
 */
const LOCK_CLASS = 0x4241544e;
/** What a run id a write may be scoped to looks like (it goes into a SET LOCAL literal); any other runs unscoped. */
const SCOPABLE_RUN_ID = /^[A-Za-z0-9_.:-]{1,200}$/;
/** The SQLSTATE of migration 18's guard: a write scoped to a run changed a row of another. */
const WRITE_SCOPE_GUARD = 'BATN0';
/** How often a scoped transaction the server chose as a deadlock's victim is run again before the error stands. */
const DEADLOCK_RETRIES = 5;
const OID = { bool: 16, int8: 20, numeric: 1700 } as const;

/**
 * What comes back is what sql.js gives: BIGINT and NUMERIC as numbers (every integer Baton
 * stores — milliseconds, counts, sums — is far below 2^53), booleans as 1/0 (SQLite has no
 * boolean: `EXISTS (…)` and `a = b` are 1 or 0 there, and the engine reads them so).
 */
const TYPES = {
  getTypeParser(oid: number, format?: string) {
    if (oid === OID.int8 || oid === OID.numeric) return (value: string) => Number(value);
    if (oid === OID.bool) return (value: string) => (value === 't' ? 1 : 0);
    return (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format);
  },
} as unknown as pg.CustomTypesConfig;

/** pg's and Node's codes for a server that cannot be reached or will not let us in. */
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  '28000', // invalid_authorization_specification
  '28P01', // invalid_password
  '3D000', // invalid_catalog_name: no such database
  '25P03', // idle_in_transaction_session_timeout: the server ended a transaction left idle
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

/**
 * The store port on PostgreSQL (issue #17, docs/team.md): the same tables, the same
 * migrations (translated by postgresDialect.ts) and the same SQL as the file store, in a
 * schema of a database that several machines share.
 *
 * Concurrency, the port's compare-and-set promise (docs/team.md, "Concurrency"): every
 * `transact` is one READ COMMITTED transaction that first takes its locks, held until it ends
 * (commit, rollback, or the server ending a dead or stopped session):
 * - unscoped: the store's advisory lock, exclusive. It runs alone, as under the file store's
 *   process lock; each of its statements sees every commit before it.
 * - scoped to a run (WriteScope): the store's lock shared, then the run's lock exclusive. It runs
 *   alone among that run's writers and beside other runs' (and never beside an unscoped one), so
 *   what it reads of its run holds until it commits. `baton.write_scope` names the run for the
 *   guard triggers (migration 18), which refuse a row of any other run.
 * Reads take no lock: one REPEATABLE READ, READ ONLY transaction each, a consistent snapshot.
 *
 * `watch`: a transaction that wrote anything sends `pg_notify(<channel>, <this opening>)`
 * before COMMIT. PostgreSQL delivers a notification only once its transaction committed, so
 * an observer hears it after the commit is visible; with `follow` each opening listens on a
 * connection of its own, and skips its own notifications (it tells its own watchers itself).
 */
/** How old a measure of the server's clock may be before the next use measures it again. */
const CLOCK_REMEASURE_MS = 5 * 60_000;

function monotonicMs(): number {
  return Number(process.hrtime.bigint() / 1_000_000n);
}

export class PgStore implements StorePort {
  readonly recovery: StoreRecovery = { notices: [] };
  readonly schema: string;
  private readonly pool: pg.Pool;
  private readonly writers = new Mutex();
  private readonly changed = new Emitter<void>();
  /** This opening, as named in its notifications. */
  private readonly instance = randomUUID().replace(/-/g, '');
  private readonly channel: string;
  private readonly lockKey: number;
  private listener: pg.Client | undefined;
  private relistenTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly guarded = new WeakSet<pg.PoolClient>();
  /** The server's wall clock minus this machine's (ms), and when (monotonic ms) it was measured. */
  private offset = { ms: 0, measuredAt: -Infinity };
  /** Scoped writes the guard found touching another run, run again unscoped (see transact). */
  writesRunAgainAlone = 0;
  private measuring: Promise<void> | undefined;

  private constructor(private readonly options: PgStoreOptions) {
    this.schema = options.schema ?? DEFAULT_PG_SCHEMA;
    this.channel = `baton_${this.schema}`;
    this.lockKey = hash32(this.schema);
    // Idle connections do not keep the process alive (a safety net: every command closes its engine).
    this.pool = new pg.Pool({ ...this.connectionConfig(), max: options.poolSize ?? 4, allowExitOnIdle: true });
    // An idle connection the server dropped (a restart, a network cut) is an event, not a crash:
    // the pool forgets it and the next call opens a new one.
    this.pool.on('error', () => undefined);
  }

  static async open(options: PgStoreOptions): Promise<PgStore> {
    const schema = options.schema ?? DEFAULT_PG_SCHEMA;
    if (!STORE_SCHEMA_NAME.test(schema)) {
      throw new BatonError(
        'config.invalid',
        `The store schema "${schema}" is not a plain PostgreSQL name: use lower-case letters, digits and _ (at most 40).`,
      );
    }
    const store = new PgStore(options);
    try {
      await store.prepareSchema();
      await store.measureClock();
      if (options.follow) await store.listen();
    } catch (err) {
      await store.pool.end().catch(() => undefined);
      throw store.scrub(err);
    }
    return store;
  }

  /** Where this store is, fit to show (the URL's password replaced by ***). */
  get location(): string {
    return `${displayUrl(this.options.url)} (schema ${this.schema})`;
  }

  // ── the port ────────────────────────────────────────────────────────────

  /**
   * The server's wall clock minus this machine's (docs/team.md, "One clock"): measured at open, and again in the
   * background once the last measure is older than CLOCK_REMEASURE_MS (clocks drift, a host's clock may be set).
   */
  clockOffsetMs(): number {
    if (!this.closed && !this.measuring && monotonicMs() - this.offset.measuredAt > CLOCK_REMEASURE_MS)
      this.measuring = this.measureClock()
        .catch(() => undefined) // the server out of reach: the last measure holds
        .finally(() => (this.measuring = undefined));
    return this.offset.ms;
  }

  /**
   * Asks the server its time three times and keeps the answer of the quickest round trip, taken as read at its middle
   * (NTP's estimate; the error is at most half that round trip, a millisecond or so on a LAN).
   */
  private async measureClock(): Promise<void> {
    let best: { roundTrip: number; ms: number } | undefined;
    for (let sample = 0; sample < 3; sample++) {
      const sentMono = monotonicMs();
      const sent = Date.now();
      const { rows } = await this.pool.query<{ at: number }>(
        'SELECT (extract(epoch from clock_timestamp()) * 1000)::float8 AS at',
      );
      const roundTrip = monotonicMs() - sentMono;
      const ms = Number(rows[0]!.at) - (sent + roundTrip / 2);
      if (!best || roundTrip < best.roundTrip) best = { roundTrip, ms };
    }
    this.offset = { ms: Math.round(best!.ms), measuredAt: monotonicMs() };
  }

  async transact<T>(work: (tx: StoreTx) => Promise<T>, scope?: WriteScope): Promise<T> {
    this.assertOpen();
    // One writer per process at a time: a queue here keeps the other pooled connections free for reads meanwhile.
    const { result, wrote } = await this.writers.run(async () => {
      for (let attempt = 1, narrowed = scope; ; attempt++) {
        try {
          return await this.commit(work, narrowed);
        } catch (err) {
          if (narrowed && err instanceof WriteScopeExceeded) {
            // It touched another run after all: the guard rolled it back before anything was written, and it runs
            // again alone — as every write did before scopes. Correct either way; counted, since it costs a retry.
            this.writesRunAgainAlone++;
            narrowed = undefined;
            continue;
          }
          // Scoped writers take row locks in no common order (counters, artifacts): the server ends one of two that
          // wait on each other, before either committed, and that one runs again.
          if (attempt > DEADLOCK_RETRIES || errorCode(err) !== '40P01') throw err;
        }
      }
    });
    if (wrote) this.changed.fire();
    return result;
  }

  async read<T>(work: (reader: StoreReader) => Promise<T>): Promise<T> {
    this.assertOpen();
    const client = await this.begin('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    let live = true;
    let broken: unknown;
    try {
      const result = await work(this.reader(client, () => live));
      live = false;
      await client.query('COMMIT');
      return result;
    } catch (err) {
      live = false;
      broken = await this.rollback(client, err);
      throw this.scrub(err);
    } finally {
      client.release(broken as Error | undefined);
    }
  }

  /** Nothing to catch up with (every read sees the latest commit); watchers are told to look. */
  async refresh(): Promise<void> {
    this.assertOpen();
    this.changed.fire();
  }

  watch(listener: () => void): Disposable {
    return this.changed.event(listener);
  }

  /**
   * An identity column's sequence does not see values written into it explicitly: it is set to
   * continue after the largest one (in the caller's transaction; a sequence move is not undone
   * by a rollback, which only leaves a gap in the ids). Names come from the store catalog.
   */
  async continueNumbering(tx: StoreTx, columns: ReadonlyArray<{ table: string; column: string }>): Promise<void> {
    for (const { table, column } of columns) {
      if (!/^[a-z_][a-z0-9_]*$/.test(table) || !/^[a-z_][a-z0-9_]*$/.test(column)) {
        throw new Error(`not a plain table or column name: ${table}.${column}`);
      }
      await tx.get(
        `SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT MAX(${column}) FROM ${table}), 0) + 1, false)`,
        [table, column],
      );
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Commits already queued finish first.
    await this.writers.run(async () => undefined);
    this.closed = true;
    if (this.relistenTimer) clearTimeout(this.relistenTimer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
    this.changed.dispose();
  }

  // ── transactions ────────────────────────────────────────────────────────

  private async commit<T>(
    work: (tx: StoreTx) => Promise<T>,
    scope: WriteScope | undefined,
  ): Promise<{ result: T; wrote: boolean }> {
    this.assertOpen();
    // One round trip: the transaction and its locks (held until COMMIT or ROLLBACK).
    const client = await this.begin(this.beginWrite(scope));
    let live = true;
    let wrote = false;
    let guardTripped = false;
    let broken: unknown;
    try {
      const inTurn = oneAtATime();
      const reader = this.reader(client, () => live, inTurn);
      const write = async (sql: string, params: readonly SqlValue[]): Promise<pg.QueryResult<Row>> => {
        if (!live) throw new Error('transaction is over');
        wrote = true;
        try {
          return await inTurn(() => client.query<Row>(prepared(sql, params)));
        } catch (err) {
          if (errorCode(err) === WRITE_SCOPE_GUARD) guardTripped = true;
          throw err;
        }
      };
      const tx: StoreTx = {
        get: reader.get,
        all: reader.all,
        run: async (sql, params = []) => (await write(sql, params)).rowCount ?? 0,
        runReturning: async <R>(sql: string, params: readonly SqlValue[] = []) =>
          (await write(sql, params)).rows as R[],
      };
      const result = await work(tx);
      live = false;
      // Delivered only if and once the commit is visible; the payload lets this opening skip its own.
      await client.query(wrote ? `SELECT pg_notify('${this.channel}', '${this.instance}'); COMMIT` : 'COMMIT');
      // A work that swallowed the guard's error ended an aborted transaction, which COMMIT rolls back without a word.
      if (guardTripped) throw new Error('the write scope guard rolled the transaction back');
      return { result, wrote };
    } catch (err) {
      live = false;
      broken = await this.rollback(client, err);
      // Whatever the work made of the guard's error (caught, or followed by "transaction aborted"), it is the cause.
      if (guardTripped) throw new WriteScopeExceeded(this.redact(err instanceof Error ? err.message : String(err)));
      throw this.scrub(err);
    } finally {
      client.release(broken as Error | undefined);
    }
  }

  /** BEGIN and the locks of a write transaction of `scope` (see the class comment). */
  private beginWrite(scope: WriteScope | undefined): string {
    const store = `${LOCK_CLASS}, ${this.lockKey}`;
    if (!scope || !SCOPABLE_RUN_ID.test(scope.runId)) return `BEGIN; SELECT pg_advisory_xact_lock(${store})`;
    return (
      `BEGIN; SELECT pg_advisory_xact_lock_shared(${store}); ` +
      `SELECT pg_advisory_xact_lock(${runLockKey(this.schema, scope.runId)}); ` +
      `SET LOCAL baton.write_scope = '${scope.runId}'`
    );
  }

  private reader(client: pg.PoolClient, live: () => boolean, inTurn = oneAtATime()): StoreReader {
    const query = async (sql: string, params: readonly SqlValue[] = []): Promise<Row[]> => {
      if (!live()) throw new Error('transaction is over');
      return (await inTurn(() => client.query<Row>(prepared(sql, params)))).rows;
    };
    return {
      get: async <T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined> =>
        (await query(sql, params))[0] as T | undefined,
      all: async <T = Row>(sql: string, params?: readonly SqlValue[]): Promise<T[]> =>
        (await query(sql, params)) as T[],
    };
  }

  /** Ends a failed transaction; returns the error to discard the connection with when it is no longer usable. */
  private async rollback(client: pg.PoolClient, err: unknown): Promise<unknown> {
    if (isUnreachable(err)) return err;
    try {
      await client.query('ROLLBACK');
      return undefined;
    } catch (rollbackError) {
      return rollbackError;
    }
  }

  /**
   * A pooled connection with `statement` (the BEGIN) run on it. A connection the server dropped
   * while it sat in the pool (a restart, a network cut) fails here, before any of the work ran:
   * it is discarded and one fresh connection is tried, so a restart the pool has not noticed yet
   * does not fail the next transaction.
   */
  private async begin(statement: string): Promise<pg.PoolClient> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.connect();
      try {
        await client.query(statement);
        return client;
      } catch (err) {
        client.release((await this.rollback(client, err)) as Error | undefined);
        if (attempt >= 2 || !isUnreachable(err)) throw this.scrub(err);
      }
    }
  }

  private async connect(): Promise<pg.PoolClient> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw this.scrub(err);
    }
    // A connection the server ends while it is checked out (a restart, a transaction left idle too
    // long) reports it as an event: without a listener that would crash the process. The statement
    // in flight, or the next one, fails instead, and the pool discards the connection on release.
    if (!this.guarded.has(client)) {
      client.on('error', () => undefined);
      this.guarded.add(client);
    }
    return client;
  }

  // ── schema and migrations ───────────────────────────────────────────────

  /**
   * Creates the schema when it is missing, refuses one a newer Baton wrote, and applies the
   * migrations it lacks — all in one transaction under the store's lock, so two processes
   * opening a new store at once neither race nor half-migrate it (PostgreSQL's DDL is
   * transactional). A store already at this Baton's version is only looked at: every short
   * command (a worker's `baton heartbeat`, `status`) opens the store, and none of them should
   * wait for the store's writers.
   */
  private async prepareSchema(): Promise<void> {
    const client = await this.connect();
    let broken: unknown;
    try {
      if (this.checkVersion(await this.storedVersion(client)) === SCHEMA_VERSION) return;
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${LOCK_CLASS}, ${this.lockKey})`);
      // Looked up first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when it exists.
      const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [this.schema]);
      if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${this.schema}`);
      await client.query(`SET LOCAL search_path TO ${this.schema}`);
      const version = this.checkVersion(await this.storedVersion(client));
      for (const migration of MIGRATIONS) {
        if (migration.version <= version) continue;
        for (const sql of migration.postgres ?? migration.statements) await client.query(postgresDdl(sql));
        await client.query(
          `INSERT INTO store_meta (key, value) VALUES ('schema_version', $1)
           ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          [String(migration.version)],
        );
      }
      await client.query(version < SCHEMA_VERSION ? `SELECT pg_notify('${this.channel}', ''); COMMIT` : 'COMMIT');
    } catch (err) {
      broken = await this.rollback(client, err);
      throw err;
    } finally {
      client.release(broken as Error | undefined);
    }
  }

  /** The schema version the store's meta table records; 0 when the schema or the table is not there yet. */
  private async storedVersion(client: pg.PoolClient): Promise<number> {
    const meta = await client.query<{ present: boolean }>(`SELECT (to_regclass('store_meta') IS NOT NULL) AS present`);
    if (!meta.rows[0]?.present) return 0;
    const row = (await client.query<{ value: string }>(`SELECT value FROM store_meta WHERE key = 'schema_version'`))
      .rows[0];
    return Number(row?.value ?? 0);
  }

  /** A store a newer Baton wrote is refused, untouched. */
  private checkVersion(version: number): number {
    if (version > SCHEMA_VERSION) {
      throw new BatonError(
        'store.schema-too-new',
        `The Baton store at ${this.location} was written by a newer Baton (schema ${version}; this one knows up to ${SCHEMA_VERSION}). Update Baton; the store was left untouched.`,
      );
    }
    return version;
  }

  // ── following other processes ───────────────────────────────────────────

  private async listen(): Promise<void> {
    const client = new pg.Client(this.connectionConfig());
    client.on('notification', (message) => {
      if (message.channel === this.channel && message.payload !== this.instance) this.changed.fire();
    });
    const lost = (): void => this.relisten(client);
    client.on('error', lost);
    client.on('end', lost);
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      client.removeListener('end', lost);
      await client.end().catch(() => undefined);
      throw err;
    }
    this.listener = client;
  }

  /**
   * The listening connection was lost (a restart, a network cut): listen again, backing off,
   * and once listening tell the watchers to look — what was committed meanwhile was not heard.
   */
  private relisten(failed: pg.Client): void {
    if (this.closed || this.listener !== failed) return;
    this.listener = undefined;
    failed.end().catch(() => undefined);
    const attempt = (delayMs: number): void => {
      this.relistenTimer = setTimeout(() => {
        if (this.closed) return;
        this.listen().then(
          () => this.changed.fire(),
          () => attempt(Math.min(delayMs * 2, 5000)),
        );
      }, delayMs);
      this.relistenTimer.unref();
    };
    attempt(100);
  }

  // ── helpers ─────────────────────────────────────────────────────────────

  private connectionConfig(): pg.ClientConfig {
    const settings = [
      `search_path=${this.schema}`,
      `lock_timeout=${this.options.lockTimeoutMs ?? 30_000}`,
      `idle_in_transaction_session_timeout=${this.options.idleInTransactionMs ?? 10_000}`,
    ];
    return {
      connectionString: withLibpqSslModes(this.options.url),
      connectionTimeoutMillis: this.options.connectTimeoutMs ?? 10_000,
      application_name: 'baton',
      ...(this.options.password !== undefined ? { password: this.options.password } : {}),
      options: settings.map((s) => `-c ${s}`).join(' '),
      types: TYPES,
    };
  }

  private redact(text: string): string {
    return redactCredentials(text, [this.options.url, ...(this.options.secrets ?? [])]);
  }

  /**
   * What leaves this store when something fails: the engine's own errors as they are; a server
   * out of reach or refusing us as `store.unreachable` (exit 1); a lock wait that ran out as
   * `store.busy`; anything else with its message redacted. Never the password.
   */
  private scrub(err: unknown): unknown {
    if (BatonError.is(err)) return err;
    const message = this.redact(err instanceof Error ? err.message : String(err));
    const tls = tlsRefusal(err, this.options.url);
    if (tls) {
      return new BatonError(
        'store.unreachable',
        `Cannot use the Baton store at ${this.location}: ${this.redact(tls)}. Check the TLS parameters of the URL (BATON_STORE_URL: sslmode, sslrootcert); nothing was written.`,
      );
    }
    if (isUnreachable(err)) {
      return new BatonError(
        'store.unreachable',
        `Cannot use the Baton store at ${this.location}: ${message || 'the connection failed'}. Check that the server runs and the URL (BATON_STORE_URL) is right; nothing was written.`,
      );
    }
    if (errorCode(err) === '55P03') {
      return new BatonError(
        'store.busy',
        `Another process held the Baton store's lock for too long (${message}); nothing was written. Try again.`,
      );
    }
    if (err instanceof Error) {
      err.message = message;
      if (err.stack) err.stack = this.redact(err.stack);
      return err;
    }
    return new Error(message);
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the store is closed');
  }
}

/**
 * Parameters as PostgreSQL takes them. Its text cannot hold U+0000, which SQLite stores: a NUL
 * that a worker's output carried into a progress line or an agent's activity becomes U+FFFD
 * instead of failing the heartbeat that records it.
 */
/**
 * Runs a connection's queries one after the other: a read or transaction whose work asks several at once
 * (`Promise.all`) would otherwise hand `pg` a query while its connection runs one — which `pg` queues today, with a
 * deprecation warning printed on the user's terminal, and refuses from pg 9.
 */
function oneAtATime(): <T>(query: () => Promise<T>) => Promise<T> {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(query: () => Promise<T>): Promise<T> => {
    const next = last.then(query, query);
    last = next.catch(() => undefined);
    return next;
  };
}

/** Each statement the engine runs, as PostgreSQL's text and the name it is prepared under. */
const statements = new Map<string, { name: string; text: string }>();

/**
 * A statement of the engine as a named prepared statement (issue 26): each connection parses and plans it once and
 * then only binds and executes it — the server spent more time planning the engine's statements than running them.
 * The name is a digest of the text, so one text has one name in every connection and process; the engine's statements
 * are a fixed set of shapes (an `IN (?, ?, …)` list adds one per length), so the connections' caches stay small.
 */
function prepared(sql: string, params: readonly SqlValue[]): pg.QueryConfig<SqlValue[]> {
  let statement = statements.get(sql);
  if (!statement) {
    const text = toPostgres(sql);
    // A text that carried a value would make a new statement each time: past the cap, statements run unnamed.
    if (statements.size >= MAX_PREPARED) return { text, values: bind(params) };
    statement = { name: `baton_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`, text };
    statements.set(sql, statement);
  }
  return { name: statement.name, text: statement.text, values: bind(params) };
}

/** More distinct statements than the engine has shapes: a cap on what each connection keeps prepared. */
const MAX_PREPARED = 2000;

function bind(params: readonly SqlValue[]): SqlValue[] {
  return params.map((value) => {
    if (value === undefined) return null;
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`cannot store the number ${value}`);
    if (typeof value === 'string' && value.includes('\u0000')) return value.split('\u0000').join('\ufffd');
    return value;
  });
}

/**
 * The URL as libpq reads it (docs/team.md, "TLS"): `sslmode=require` encrypts without checking
 * the certificate unless `sslrootcert` names a CA (then as verify-ca), `verify-ca` checks the CA
 * only, `verify-full` the CA and the host name. The `pg` client would otherwise read every mode
 * as verify-full and print a multi-line deprecation warning on each command's stderr; a URL
 * that says `uselibpqcompat` itself is left as it is.
 */
export function withLibpqSslModes(url: string): string {
  if (!/[?&]sslmode=/i.test(url) || /[?&]uselibpqcompat=/i.test(url)) return url;
  const hash = url.indexOf('#');
  const [body, fragment] = hash < 0 ? [url, ''] : [url.slice(0, hash), url.slice(hash)];
  return `${body}&uselibpqcompat=true${fragment}`;
}

/** Node's codes for a server certificate that TLS did not accept. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * Why TLS refused the connection, in one line, or undefined when it is no TLS failure: a
 * certificate not trusted, a server without TLS that the URL requires it of, a certificate or
 * key file of the URL that cannot be read.
 */
function tlsRefusal(err: unknown, url: string): string | undefined {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  if (code && CERTIFICATE_CODES.has(code)) return `the server's TLS certificate was not accepted (${message})`;
  if (/^The server does not support SSL connections$/.test(message)) {
    const mode = /[?&]sslmode=([^&#]*)/i.exec(url)?.[1];
    return `the server does not offer TLS, which the URL requires${mode ? ` (sslmode=${mode})` : ''}`;
  }
  const path = (err as { path?: unknown } | undefined)?.path;
  if (typeof path === 'string' && code && /^(ENOENT|EACCES|EISDIR|EPERM)$/.test(code)) {
    for (const parameter of ['sslrootcert', 'sslcert', 'sslkey']) {
      const value = new RegExp(`[?&]${parameter}=([^&#]*)`, 'i').exec(url)?.[1];
      if (value !== undefined && (value === path || safeDecode(value) === path))
        return `${parameter} ${path} cannot be read (${code})`;
    }
  }
  return undefined;
}

function safeDecode(text: string): string | undefined {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isUnreachable(err: unknown): boolean {
  const code = errorCode(err);
  if (code && UNREACHABLE_CODES.has(code)) return true;
  const message = err instanceof Error ? err.message : '';
  // pg's own words for a connection that ended or never came up (it gives these no code).
  return /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection/i.test(
    message,
  );
}

/** A transaction scoped to a run wrote a row of another run (migration 18's guard refused it; nothing was kept). */
class WriteScopeExceeded extends Error {}

/** A run's advisory lock key in a store: the first 8 bytes of a SHA-256, as a signed 64-bit integer (an int8). */
export function runLockKey(schema: string, runId: string): string {
  const digest = createHash('sha256').update(`${schema}\0${runId}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/** FNV-1a, as a signed 32-bit integer (an int4 lock key). */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    h ^= byte;
    h = Math.imul(h, 0x01000193);
  }
  return h | 0;
}
