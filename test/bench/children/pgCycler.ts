/**
 * Child of the PostgreSQL throughput row (test/bench/pgBench.ts): one worker process. It opens,
 * once, an engine on the PostgreSQL workspace, an engine on the file-store workspace and a bare
 * `pg` client, prints `ready`, then runs what each line on stdin asks (JSON) and answers with one
 * JSON line:
 *
 *   {"kind":"pg"|"file","runId":…,"tasks":[…],"startAt":<epoch ms>}  claim → heartbeat → ingest per task
 *   {"kind":"bare","cycles":n,"startAt":<epoch ms>}                   claim → update → complete, hand SQL
 *   {"kind":"booked","cycles":n,"startAt":<epoch ms>}                 the same, with Baton's bookkeeping
 *
 * Every child of a configuration is given the same `startAt` and waits for it, so they start
 * together. The Baton cycles go through the engine's operations, as `baton claim`, `baton
 * heartbeat` and `baton ingest` do; the bare loop is what a pg-boss user's worker does.
 *
 *   node pgCycler.js <pgWorkspace> <fileWorkspace> <bareSchema>    (BATON_STORE_URL: the cluster)
 */
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { Engine } from '../../../src/engine/index';

/**
 * Round trips to the server (every query a pg client sends; one string with several statements
 * counts once) and the transactions they make: a BEGIN … COMMIT, or a statement on its own.
 */
let roundTrips = 0;
let transactions = 0;
const inTransaction = new WeakSet<pg.Client>();
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  roundTrips++;
  const first = args[0];
  const text = typeof first === 'string' ? first : ((first as { text?: string } | undefined)?.text ?? '');
  if (/^\s*BEGIN\b/i.test(text)) inTransaction.add(this);
  if (/\b(COMMIT|ROLLBACK)\s*$/i.test(text) || !inTransaction.has(this)) {
    transactions++;
    inTransaction.delete(this);
  }
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

const BARE_CLAIM = `UPDATE bench_jobs SET state = 'active', worker = $1, started_at = now(), heartbeat_at = now()
  WHERE id = (SELECT id FROM bench_jobs WHERE state = 'created' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
  RETURNING id`;
const BARE_HEARTBEAT = `UPDATE bench_jobs SET heartbeat_at = now(), progress = $2 WHERE id = $1 AND state = 'active'`;
const BARE_COMPLETE = `UPDATE bench_jobs SET state = 'completed', completed_at = now(), output = $2
  WHERE id = $1 AND state = 'active'`;

/**
 * The bare loop with Baton's bookkeeping (issue 26's reference): the same three transactions, each one statement that
 * also appends the event rows Baton's operation appends (a claim: the attempt and the task's status; a beat: the beat;
 * a completion: the ingestion, the attempt's and the task's status) and keeps the result's content by its digest — what
 * a queue that kept Baton's history would write, with row locks only.
 */
const BOOKED_CLAIM = `WITH claimed AS (
    UPDATE bench_jobs SET state = 'active', worker = $1, started_at = now(), heartbeat_at = now()
    WHERE id = (SELECT id FROM bench_jobs WHERE state = 'created' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id),
  logged AS (INSERT INTO bench_events (job_id, type, data)
    SELECT claimed.id, e.type, e.data FROM claimed, (VALUES ('delegation:created', $2), ('task:status', $3)) AS e (type, data))
  SELECT id FROM claimed`;
const BOOKED_HEARTBEAT = `WITH beat AS (
    UPDATE bench_jobs SET heartbeat_at = now(), progress = $2 WHERE id = $1 AND state = 'active' RETURNING id)
  INSERT INTO bench_events (job_id, type, data) SELECT id, 'runtime:heartbeat', $3 FROM beat`;
const BOOKED_COMPLETE = `WITH kept AS (
    INSERT INTO bench_results (digest, content) VALUES ($2, $3) ON CONFLICT (digest) DO NOTHING),
  done AS (
    UPDATE bench_jobs SET state = 'completed', completed_at = now(), output = $2 WHERE id = $1 AND state = 'active'
    RETURNING id)
  INSERT INTO bench_events (job_id, type, data)
    SELECT done.id, e.type, e.data FROM done,
      (VALUES ('ingestion:recorded', $4), ('delegation:status', $5), ('task:status', $6)) AS e (type, data)`;

interface Command {
  kind: 'pg' | 'file' | 'bare' | 'booked';
  runId?: string;
  tasks?: string[];
  cycles?: number;
  startAt: number;
}

async function main(): Promise<void> {
  const [pgWorkspace, fileWorkspace, bareSchema] = process.argv.slice(2) as [string, string, string];
  const engines = {
    pg: await Engine.open({ workspace: pgWorkspace }),
    // The file store's process lock is taken by polling, not in turn: with 16 processes on a loaded machine one can
    // wait past the default 10 s and fail with store.busy. Here it waits: the longest cycle shows what it cost.
    file: await Engine.open({ workspace: fileWorkspace, store: { lockTimeoutMs: 120_000 } }),
  };
  const bare = new pg.Client({
    connectionString: process.env.BATON_STORE_URL,
    options: `-c search_path=${bareSchema}`,
    application_name: 'bench-bare',
  });
  await bare.connect();
  const worker = `w${process.pid}`;

  const cycleBaton = async (engine: Engine, runId: string, taskId: string): Promise<void> => {
    const claim = await engine.claimTask({ runId, taskId, leaseSeconds: 600 });
    await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'halfway there' });
    const outcome = await engine.ingest({
      delegationId: claim.delegation.id,
      token: claim.token,
      runId,
      artifactPath: `results/${taskId}.md`,
    });
    if (!outcome.record.accepted || outcome.delegation.status !== 'COMPLETED')
      throw new Error(`the result for ${taskId} was not accepted: ${JSON.stringify(outcome.record.issues)}`);
  };
  const cycleBare = async (): Promise<void> => {
    const claimed = await bare.query<{ id: string }>(BARE_CLAIM, [worker]);
    const id = claimed.rows[0]?.id;
    if (id === undefined) throw new Error('the bare queue is empty: the bench made too few jobs');
    await bare.query(BARE_HEARTBEAT, [id, 'halfway there']);
    const done = await bare.query(BARE_COMPLETE, [id, JSON.stringify({ status: 'PASS', summary: `Finished ${id}.` })]);
    if (done.rowCount !== 1) throw new Error(`job ${id} was not completed`);
  };

  const cycleBooked = async (): Promise<void> => {
    const event = (data: Record<string, unknown>): string => JSON.stringify({ worker, ...data });
    const claimed = await bare.query<{ id: string }>(BOOKED_CLAIM, [
      worker,
      event({ attempt: 1, agent: 'coder' }),
      event({ from: 'ready', to: 'running' }),
    ]);
    const id = claimed.rows[0]?.id;
    if (id === undefined) throw new Error('the bare queue is empty: the bench made too few jobs');
    const beat = await bare.query(BOOKED_HEARTBEAT, [id, 'halfway there', event({ progress: 'halfway there' })]);
    if (beat.rowCount !== 1) throw new Error(`job ${id} took no beat`);
    const content = `# Step ${id}\n\n\`\`\`baton-result\ncontract: baton-result-v1\ntask: T${id}\nagent: coder\nstatus: PASS\nsummary: Finished ${id}.\nartifacts: []\n\`\`\`\n`;
    const digest = createHash('sha256').update(content).digest('hex');
    const done = await bare.query(BOOKED_COMPLETE, [
      id,
      digest,
      content,
      event({ digest, accepted: true, status: 'PASS' }),
      event({ from: 'RUNNING', to: 'COMPLETED' }),
      event({ from: 'running', to: 'completed' }),
    ]);
    if (done.rowCount !== 3) throw new Error(`job ${id} was not completed`);
  };

  const perform = async (command: Command): Promise<Record<string, number>> => {
    const wait = command.startAt - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const cpu = process.cpuUsage();
    const trips = roundTrips;
    const committed = transactions;
    const start = Date.now();
    let cycles = 0;
    let longest = 0;
    const timed = async (cycle: () => Promise<void>): Promise<void> => {
      const t0 = Date.now();
      await cycle();
      longest = Math.max(longest, Date.now() - t0);
      cycles++;
    };
    if (command.kind === 'bare' || command.kind === 'booked') {
      const cycle = command.kind === 'bare' ? cycleBare : cycleBooked;
      while (cycles < (command.cycles ?? 0)) await timed(cycle);
    } else {
      const engine = engines[command.kind];
      for (const taskId of command.tasks ?? []) await timed(() => cycleBaton(engine, command.runId!, taskId));
    }
    const end = Date.now();
    const used = process.cpuUsage(cpu);
    return {
      cycles,
      start,
      end,
      longestMs: longest,
      cpuMs: (used.user + used.system) / 1000,
      roundTrips: roundTrips - trips,
      transactions: transactions - committed,
    };
  };

  let queue = Promise.resolve();
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    queue = queue.then(async () => {
      try {
        process.stdout.write(`${JSON.stringify(await perform(JSON.parse(line) as Command))}\n`);
      } catch (err) {
        process.stdout.write(`${JSON.stringify({ error: (err as Error).message })}\n`);
      }
    });
  });
  // The parent ends a child by closing its stdin.
  lines.on('close', () => {
    void queue.then(async () => {
      await Promise.all([engines.pg.close(), engines.file.close(), bare.end()]);
      process.exit(0);
    });
  });
  process.stdout.write('ready\n');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
