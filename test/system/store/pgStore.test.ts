// What the PostgreSQL store does beyond the conformance suite: its schema and migrations, what
// its values come back as, its refusals, and that a password never leaves it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { BatonError } from '../../../src/engine/domain/errors';
import { FileStore } from '../../../src/engine/store/fileStore';
import { SCHEMA_VERSION } from '../../../src/engine/store/migrations';
import { PgStore } from '../../../src/engine/store/pgStore';
import { sharedPostgresCluster, type PostgresCluster } from '../../support/postgresCluster';
import { useTempDir } from '../../support/tempDir';

async function until(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let schemas = 0;
const freshSchema = (): string => `s_${process.pid}_${++schemas}`;

describe('PostgreSQL store', () => {
  let cluster: PostgresCluster;
  const opened: PgStore[] = [];
  const open = async (options: Partial<Parameters<typeof PgStore.open>[0]> = {}): Promise<PgStore> => {
    const store = await PgStore.open({ url: cluster.url, ...options });
    opened.push(store);
    return store;
  };
  /** A plain connection, for looking at (and tampering with) the database behind the store's back. */
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: cluster.url });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };

  before(async function () {
    this.timeout(120_000);
    cluster = await sharedPostgresCluster();
  });
  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
  });

  describe('schema and migrations', () => {
    const tmp = useTempDir('baton-pg-columns-');

    it('creates the same tables with the same columns as the file store, from the same migrations', async () => {
      const schema = freshSchema();
      await open({ schema });
      const onPostgres = await admin(async (client) =>
        (
          await client.query<{ t: string; c: string }>(
            `SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = $1 ORDER BY 1, ordinal_position`,
            [schema],
          )
        ).rows.map((r) => `${r.t}.${r.c}`),
      );
      const files = await FileStore.open(tmp.path);
      try {
        const tables = await files.read((r) =>
          r.all<{ name: string }>(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`),
        );
        const onFiles: string[] = [];
        for (const { name } of tables) {
          const columns = await files.read((r) =>
            r.all<{ name: string }>(`SELECT name FROM pragma_table_info(?)`, [name]),
          );
          onFiles.push(...columns.map((c) => `${name}.${c.name}`));
        }
        assert.ok(onFiles.length > 100, `${onFiles.length} columns`);
        assert.deepEqual(onPostgres, onFiles);
      } finally {
        await files.close();
      }
    });

    it('migrates a new store once when several processes open it at the same moment', async function () {
      this.timeout(30_000);
      const schema = freshSchema();
      const stores = await Promise.all(Array.from({ length: 4 }, () => open({ schema })));
      const version = await stores[3]!.read((r) =>
        r.get<{ value: string }>(`SELECT value FROM store_meta WHERE key = 'schema_version'`),
      );
      assert.equal(Number(version?.value), SCHEMA_VERSION);
      // Migration 1's counters were inserted once, not once per opener.
      const counters = await stores[0]!.read((r) => r.all<{ name: string }>(`SELECT name FROM counters ORDER BY name`));
      assert.deepEqual(
        counters.map((c) => c.name),
        ['coordinator_epoch', 'follow_up', 'gate', 'ingestion', 'lease_epoch', 'run', 'stop'],
      );
    });

    it('refuses a database a newer Baton wrote (store.schema-too-new, exit 7) and leaves it untouched', async () => {
      const schema = freshSchema();
      await (await open({ schema })).close();
      opened.pop();
      await admin((client) =>
        client.query(`UPDATE ${schema}.store_meta SET value = $1 WHERE key = 'schema_version'`, [
          String(SCHEMA_VERSION + 1),
        ]),
      );
      await assert.rejects(open({ schema }), (err) => {
        assert.ok(BatonError.is(err, 'store.schema-too-new'), String(err));
        assert.equal(err.kind, 'not-qualified');
        assert.match(err.message, new RegExp(`schema ${SCHEMA_VERSION + 1}; this one knows up to ${SCHEMA_VERSION}`));
        return true;
      });
      const after = await admin(
        async (client) =>
          (await client.query(`SELECT value FROM ${schema}.store_meta WHERE key = 'schema_version'`)).rows[0].value,
      );
      assert.equal(after, String(SCHEMA_VERSION + 1));
    });
  });

  it('gives back what the file store gives: numbers for counts, sums and millisecond times, 1 and 0 for truth', async () => {
    const store = await open({ schema: freshSchema() });
    const at = 1_764_000_000_123; // past 2^31: a BIGINT column
    await store.transact(async (tx) => {
      await tx.run(
        `INSERT INTO agent_usage (run_id, delegation_id, task_id, agent, kind, permissions_json, input_tokens, output_tokens, cost_usd, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ['R-1', 'D-1', 'T1', 'coder', 'claude-code', '{}', 1200, 34, 0.0123456789, at],
      );
    });
    const row = await store.read((r) =>
      r.get(
        `SELECT COUNT(*) AS n, SUM(input_tokens + output_tokens) AS tokens, SUM(cost_usd) AS cost, MAX(updated_at) AS at,
           EXISTS (SELECT 1 FROM agent_usage WHERE run_id = ?) AS present, 'x' = ? AS same
         FROM agent_usage`,
        ['R-1', 'y'],
      ),
    );
    assert.deepEqual(row, { n: 1, tokens: 1234, cost: 0.0123456789, at, present: 1, same: 0 });
  });

  it('runs the queries a read or a transaction asks at once one after the other, each answered: pg warns of none', async () => {
    const store = await open({ schema: freshSchema() });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.message);
    process.on('warning', onWarning);
    try {
      const keys = ['a', 'b', 'c', 'd'];
      await store.transact(async (tx) => {
        await Promise.all(keys.map((k) => tx.run(`INSERT INTO store_meta (key, value) VALUES (?, ?)`, [k, `v-${k}`])));
        assert.equal((await tx.all(`SELECT key FROM store_meta WHERE key IN ('a', 'b', 'c', 'd')`)).length, 4);
      });
      const values = await store.read((r) =>
        Promise.all(keys.map((k) => r.get<{ value: string }>(`SELECT value FROM store_meta WHERE key = ?`, [k]))),
      );
      assert.deepEqual(
        values.map((v) => v?.value),
        keys.map((k) => `v-${k}`),
      );
      await new Promise((resolve) => setImmediate(resolve)); // a warning is emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    assert.deepEqual(
      warnings.filter((w) => /already executing a query/.test(w)),
      [],
    );
  });

  it('stores text holding U+0000 (which PostgreSQL text cannot hold) with U+FFFD in its place, instead of failing the write', async () => {
    const store = await open({ schema: freshSchema() });
    await store.transact(async (tx) => {
      await tx.run(`INSERT INTO store_meta (key, value) VALUES (?, ?)`, ['progress', 'step 1\u0000step 2']);
    });
    const row = await store.read((r) =>
      r.get<{ value: string }>(`SELECT value FROM store_meta WHERE key = ?`, ['progress']),
    );
    assert.equal(row?.value, 'step 1\ufffdstep 2');
  });

  describe('write scopes (docs/team.md, "Concurrency")', () => {
    /** A transaction of `store` in `scope` that writes an event row of `runId`, then waits until let go. */
    const holding = (store: PgStore, runId: string, scope?: string) => {
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let inside!: () => void;
      const entered = new Promise<void>((resolve) => (inside = resolve));
      const done = store.transact(
        async (tx) => {
          await tx.run(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES (?, 1, 'held', 1, '{}')`, [runId]);
          inside();
          await released;
        },
        scope !== undefined ? { runId: scope } : undefined,
      );
      return { entered, release, done };
    };
    const commitOrder: string[] = [];
    const writeEvent = (store: PgStore, runId: string, scope: string | undefined, seq: number): Promise<void> =>
      store
        .transact(
          (tx) =>
            tx.run(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES (?, ?, 'written', 1, '{}')`, [
              runId,
              seq,
            ]),
          scope !== undefined ? { runId: scope } : undefined,
        )
        .then(() => void commitOrder.push(`${runId}:${seq}`));
    beforeEach(() => commitOrder.splice(0));

    it("lets writers of two runs commit side by side: run B's commit does not wait for run A's open transaction", async function () {
      this.timeout(30_000);
      const schema = freshSchema();
      const [a, b] = [await open({ schema }), await open({ schema })];
      const held = holding(a, 'R-a', 'R-a');
      await held.entered;
      await writeEvent(b, 'R-b', 'R-b', 2);
      assert.deepEqual(commitOrder, ['R-b:2'], 'B committed while A held its run');
      held.release();
      await held.done;
    });

    it('runs the writers of one run one after the other, and an unscoped writer alone', async function () {
      this.timeout(30_000);
      const schema = freshSchema();
      const [a, b, c] = [await open({ schema }), await open({ schema }), await open({ schema })];
      const held = holding(a, 'R-a', 'R-a');
      await held.entered;
      const sameRun = writeEvent(b, 'R-a', 'R-a', 2);
      const unscoped = writeEvent(c, 'R-c', undefined, 3);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(commitOrder, [], 'neither committed while A held its run');
      held.release();
      await Promise.all([held.done, sameRun, unscoped]);
      assert.deepEqual(commitOrder.sort(), ['R-a:2', 'R-c:3']);
      // And the other way round: a scoped writer waits for an unscoped one.
      const whole = holding(c, 'R-c', undefined);
      await whole.entered;
      const scoped = writeEvent(b, 'R-b', 'R-b', 4);
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(commitOrder.slice(2), [], 'the scoped writer waited for the unscoped one');
      whole.release();
      await Promise.all([whole.done, scoped]);
      assert.deepEqual(commitOrder.slice(2), ['R-b:4']);
    });

    it("refuses a row of another run under a run's scope: the guard rolls it back, and it runs again alone", async () => {
      const schema = freshSchema();
      const store = await open({ schema });
      // The guard itself: a transaction that says it is scoped to R-mine cannot write R-other's row.
      await admin(async (client) => {
        await client.query(`SET search_path TO ${schema}`);
        await client.query(`BEGIN; SET LOCAL baton.write_scope = 'R-mine'`);
        await assert.rejects(
          client.query(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES ('R-other', 1, 'x', 1, '{}')`),
          (err: { code?: string; message: string }) =>
            err.code === 'BATN0' &&
            /a write scoped to run R-mine changed a row of run R-other in events/.test(err.message),
        );
        await client.query('ROLLBACK');
      });
      // Through the store, that transaction is not lost: it runs again unscoped (alone), and is counted.
      let tries = 0;
      await store.transact(
        async (tx) => {
          tries++;
          await tx.run(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES ('R-mine', 1, 'x', 1, '{}')`);
          await tx.run(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES ('R-other', 1, 'x', 1, '{}')`);
        },
        { runId: 'R-mine' },
      );
      assert.equal(tries, 2);
      assert.equal(store.writesRunAgainAlone, 1);
      // An update too, even one whose work swallows the error; the store's own counters are not a run's.
      await store.transact(
        async (tx) => {
          await tx.run(`UPDATE events SET type = 'y' WHERE run_id = 'R-other'`).catch(() => 0);
        },
        { runId: 'R-mine' },
      );
      await store.transact((tx) => tx.run(`UPDATE counters SET value = value + 1 WHERE name = 'gate'`), {
        runId: 'R-mine',
      });
      assert.equal(store.writesRunAgainAlone, 2);
      const rows = await store.read((r) =>
        r.all<{ run_id: string; type: string }>(`SELECT run_id, type FROM events ORDER BY run_id`),
      );
      assert.deepEqual(rows, [
        { run_id: 'R-mine', type: 'x' },
        { run_id: 'R-other', type: 'y' },
      ]);
    });
  });

  it('lets no other writer wait for ever behind a stopped one: the server ends its transaction, and nothing of it stays', async function () {
    this.timeout(30_000);
    const schema = freshSchema();
    const stopped = await open({ schema, idleInTransactionMs: 300 });
    const other = await open({ schema });
    let resume!: () => void;
    const held = new Promise<void>((resolve) => (resume = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    // A transaction whose process stopped (Ctrl-Z) between two statements, holding the store's lock.
    const stalled = stopped.transact(async (tx) => {
      await tx.run(`INSERT INTO counters (name, value) VALUES ('stopped', 1)`);
      inside();
      await held;
      await tx.run(`UPDATE counters SET value = 2 WHERE name = 'stopped'`);
    });
    const outcome = stalled.then(
      () => 'committed',
      (err: unknown) => (BatonError.is(err) ? err.code : (err as Error).message),
    );
    await entered;
    await other.transact(async (tx) => {
      await tx.run(`INSERT INTO counters (name, value) VALUES ('other', 1)`);
    });
    resume();
    assert.equal(await outcome, 'store.unreachable');
    const names = await other.read((r) =>
      r.all<{ name: string }>(`SELECT name FROM counters WHERE name IN ('stopped', 'other')`),
    );
    assert.deepEqual(names, [{ name: 'other' }]);
  });

  it('carries on after the server restarts: what was acknowledged is there, commits go on, a follower hears them again', async function () {
    this.timeout(120_000);
    const schema = freshSchema();
    const writer = await open({ schema });
    const follower = await open({ schema, follow: true });
    await writer.transact(async (tx) => {
      await tx.run(`INSERT INTO counters (name, value) VALUES ('before', 1)`);
    });
    // Connections left idle in both pools, which the restart cuts.
    await Promise.all([writer.read((r) => r.all(`SELECT 1 AS one`)), follower.read((r) => r.all(`SELECT 1 AS one`))]);
    let heard = 0;
    follower.watch(() => heard++);
    cluster.restart();
    // At once, before this process has seen its connections go: the commit takes a fresh one.
    await writer.transact(async (tx) => {
      await tx.run(`INSERT INTO counters (name, value) VALUES ('after', 1)`);
    });
    // Listening again, the follower tells its watchers to look (what was committed meanwhile was not heard)…
    await until(() => heard > 0, 'the follower to listen again', 30_000);
    heard = 0;
    // …and hears the next commit as it happens.
    await writer.transact(async (tx) => {
      await tx.run(`INSERT INTO counters (name, value) VALUES ('later', 1)`);
    });
    await until(() => heard > 0, 'the follower to hear a commit made after the restart', 10_000);
    const names = await follower.read((r) =>
      r.all<{ name: string }>(`SELECT name FROM counters WHERE name IN ('before', 'after', 'later') ORDER BY name`),
    );
    assert.deepEqual(
      names.map((n) => n.name),
      ['after', 'before', 'later'],
    );
  });

  it('works for a role with only the documented grants once the schema exists, and says why it cannot create one', async () => {
    const schema = freshSchema();
    await (await open({ schema })).close();
    opened.pop();
    const role = `baton_user_${process.pid}`;
    const password = randomBytes(8).toString('hex');
    // docs/team.md, "Setting it up": the grants of a role that uses a store someone else created.
    await admin(async (client) => {
      await client.query(`CREATE ROLE ${role} LOGIN PASSWORD '${password}'`);
      await client.query(`GRANT USAGE ON SCHEMA ${schema} TO ${role}`);
      await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schema} TO ${role}`);
      await client.query(`GRANT USAGE ON ALL SEQUENCES IN SCHEMA ${schema} TO ${role}`);
    });
    const url = cluster.url.replace(`//postgres:${cluster.password}@`, `//${role}:${password}@`);
    const store = await open({ url, schema, follow: true });
    await store.transact(async (tx) => {
      await tx.run(`UPDATE counters SET value = value + 1 WHERE name = 'run'`);
      await tx.run(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES ('R-1', 1, 'run:created', 1, '{}')`);
    });
    assert.equal((await store.read((r) => r.get<{ n: number }>(`SELECT MAX(id) AS n FROM events`)))?.n, 1);
    await assert.rejects(open({ url, schema: freshSchema() }), /permission denied for database postgres/);
  });

  describe('credentials', () => {
    it('never shows the password of a URL it could not connect with (wrong password, nothing listening)', async function () {
      this.timeout(30_000);
      const password = `Pw-${randomBytes(8).toString('hex')}@x`;
      const encoded = encodeURIComponent(password);
      const wrongPassword = cluster.url.replace(`:${cluster.password}@`, `:${encoded}@`);
      const closedPort = `postgres://postgres:${encoded}@127.0.0.1:1/postgres`;
      for (const url of [wrongPassword, closedPort]) {
        await assert.rejects(PgStore.open({ url, schema: freshSchema(), connectTimeoutMs: 5000 }), (err) => {
          assert.ok(BatonError.is(err, 'store.unreachable'), String(err));
          const shown = `${err.message}\n${err.stack ?? ''}\n${JSON.stringify(err)}`;
          for (const secret of [password, encoded, 'x@127']) assert.ok(!shown.includes(secret), shown);
          assert.match(err.message, /postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/postgres/);
          return true;
        });
      }
    });

    it('never shows the password in an error from a statement', async () => {
      const store = await open({ schema: freshSchema() });
      await assert.rejects(
        store.read((r) => r.get(`SELECT no_such_column FROM counters WHERE name = ?`, [cluster.password])),
        (err) => {
          assert.ok(!String((err as Error).message).includes(cluster.password), (err as Error).message);
          assert.match((err as Error).message, /no_such_column/);
          return true;
        },
      );
    });
  });
});
