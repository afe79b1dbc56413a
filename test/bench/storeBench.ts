import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import {
  closeSync,
  fdatasyncSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { availableParallelism, cpus, release, tmpdir, totalmem } from 'node:os';
import { syncBuiltinESMExports } from 'node:module';
import { join } from 'node:path';
import { DEFAULT_CONFIG, Engine, storeDirOf } from '../../src/engine';
import { delegationId, runSettingsFrom } from '../../src/engine/domain/runSettings';
import { FileStore, type FileStoreOptions } from '../../src/engine/store/fileStore';
import type { SqlValue } from '../../src/engine/store/port';
import { loadSqlJs } from '../../src/engine/store/sqljs';
import type { BetterSqlite, LoadedBetterSqlite } from './betterSqlite';
import { nowMs, summarize, type Summary } from './stats';

/**
 * Durable-commit throughput of the Baton store (DESIGN §3) next to three references:
 * the disk's own append+fdatasync limit, better-sqlite3 in WAL mode, and the naive
 * "export the whole sql.js database on every commit". Nothing here asserts: it measures.
 */

/** What the seeded history holds per completed delegation. */
export type SeedHistory = 'minimal' | 'full';

export interface StoreBenchOptions {
  /** Delegations already in the store (and rows in the reference tables). */
  sizes: number[];
  /** Repetitions per figure (the figure is their median). */
  reps: number;
  /** claim → heartbeat → ingest cycles timed per repetition at a size. */
  cyclesAt: (size: number) => number;
  /** Untimed cycles per repetition before the timed ones (JIT, prepared statements, page cache). */
  warmupCycles: number;
  /** Cycles (3 commits each) per repetition of the sql.js whole-export reference. */
  sqlJsCyclesAt: (size: number) => number;
  /**
   * minimal: runs, tasks, task_dependencies, delegations (what the brief asks for).
   * full: also the runtimes, ingestions and event-log rows a completed delegation leaves behind.
   */
  history: SeedHistory;
  /**
   * Row 1b: callers running cycles at once against the same engine, as a coordinator driving
   * that many workers does (default CONCURRENT_CALLERS; 0 skips the row).
   */
  concurrentCallers?: number;
  /** Parent of the temporary folder every row works in (default: os.tmpdir()). */
  tmpRoot?: string;
  /**
   * Row 3's library (test/bench/betterSqlite.ts: not a dependency of Baton, loaded when it can be had); absent or
   * missing leaves row 3 out, and the report says why.
   */
  betterSqlite?: LoadedBetterSqlite;
  log?: (line: string) => void;
}

export interface BatonResult {
  size: number;
  cyclesPerRep: number;
  /** Durable commits per second, 3 per cycle. */
  commitsPerSecond: Summary;
  /** Wall time per commit spent inside fdatasync/fsync calls the store made. */
  flushMsPerCommit: Summary;
  /**
   * Wall time per commit outside them: the store's own work (sql.js, journal encoding, file-system calls, lock),
   * whatever the disk does.
   */
  otherMsPerCommit: Summary;
  /** fdatasync/fsync calls per timed commit (1 when each commit is one flushed journal line). */
  flushesPerCommit: number;
  /** Average bytes of the journal lines the timed cycles appended. */
  avgLineBytes: number;
  /** Journal lines appended per timed cycle (3 when every engine call is one commit). */
  linesPerCycle: number;
  /** Engine.open (load snapshot + replay journal) per repetition, ms. */
  openMs: Summary;
  seedMs: number;
  snapshotBytes: number;
  /** store.snapshot() after seeding (export, write, fsync, rename, fsync folder), ms. */
  snapshotMs: number;
  /** Rows inserted by the bulk seed (all tables). */
  storeRows: number;
}

export interface SizeResult {
  size: number;
  baton: BatonResult;
  /**
   * Row 1b: the same cycles by `callers` callers at once; commits/s, and journal lines per fdatasync (commits sharing a
   * flush).
   */
  batonConcurrent?: { callers: number; commitsPerSecond: Summary; commitsPerFlush: number };
  /** Reference A: lines/s of append + fdatasync, same line size as Baton's journal. */
  rawAppend: Summary & { lineBytes: number; linesPerRep: number };
  /** Reference B: better-sqlite3 WAL synchronous=FULL, commits/s; absent when better-sqlite3 could not be had. */
  sqlite?: Summary & { commitsPerRep: number };
  /** Reference C: sql.js export + write + fsync of the whole database per commit, commits/s. */
  sqlJsExport: Summary & { commitsPerRep: number; fileBytes: number };
}

export interface MachineInfo {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  platform: string;
  disk: string;
  date: string;
}

export interface StoreBenchResult {
  options: Omit<StoreBenchOptions, 'log' | 'cyclesAt' | 'sqlJsCyclesAt'> & {
    cycles: Record<number, number>;
    sqlJsCycles: Record<number, number>;
  };
  machine: MachineInfo;
  /** True when every row's temporary folder was on the same device. */
  sameDevice: boolean;
  sizes: SizeResult[];
  /** Why row 3 (better-sqlite3) was not measured, when it was not. */
  sqliteMissing?: string;
  durationMs: number;
}

const AGENT = 'coder';
const PLAN_FILE = 'bench.plan.md';
const RESULTS_DIR = 'bench-results';
export const SEED_RUN_TASKS = 1000;
/** Row 1b's callers: a coordinator at the scheduling rows' highest concurrency. */
export const CONCURRENT_CALLERS = 8;
export const SEED_ROWS_PER_TX = 2000;
const DAY_MS = 86_400_000;

export async function runStoreBench(options: StoreBenchOptions): Promise<StoreBenchResult> {
  const log = options.log ?? (() => undefined);
  const started = nowMs();
  const root = mkdtempSync(join(options.tmpRoot ?? tmpdir(), 'baton-bench-'));
  const devices = new Set<number>();
  const folder = (name: string): string => {
    const dir = mkdtempSync(join(root, `${name}-`));
    devices.add(statSync(dir).dev);
    return dir;
  };
  const prepared: PreparedSize[] = [];
  const betterSqlite = options.betterSqlite ?? { missing: 'not loaded' };
  const Database = 'Database' in betterSqlite ? betterSqlite.Database : undefined;
  const sqliteMissing = 'missing' in betterSqlite ? betterSqlite.missing : undefined;
  if (sqliteMissing) log(`row 3 left out: better-sqlite3 ${sqliteMissing}`);
  try {
    devices.add(statSync(root).dev);
    const machine = describeMachine(root);
    for (const size of options.sizes) {
      const setupStart = nowMs();
      const baton = await prepareBaton(folder(`baton-${size}`), size, options);
      log(
        `size ${size}: seeded ${baton.storeRows} rows in ${(baton.seedMs / 1000).toFixed(1)} s; snapshot ${(baton.snapshotBytes / 1e6).toFixed(1)} MB in ${baton.snapshotMs.toFixed(0)} ms`,
      );
      const sqlite = Database ? prepareBetterSqlite(Database, folder(`sqlite-${size}`), size) : undefined;
      const sqlJs = await prepareSqlJsExport(folder(`sqljs-${size}`), size);
      prepared.push({
        size,
        baton,
        appendDir: folder(`append-${size}`),
        sqlite,
        sqlJs,
        samples: { baton: [], batonConcurrent: [], append: [], sqlite: [], sqlJs: [] },
      });
      log(`size ${size}: ready in ${((nowMs() - setupStart) / 1000).toFixed(1)} s`);
    }

    // Rounds: one repetition of every row at every size, sizes in rotating order, so
    // that the disk's drift (fsync latency on shared disks moves a lot) hits every row alike.
    for (let rep = 0; rep < options.reps; rep++) {
      for (let j = 0; j < prepared.length; j++) {
        const p = prepared[(rep + j) % prepared.length]!;
        const cycles = options.cyclesAt(p.size);
        const b = await p.baton.rep(cycles, options.warmupCycles);
        p.samples.baton.push(b);
        const callers = callersOf(options);
        if (callers > 0) p.samples.batonConcurrent.push(await p.baton.rep(cycles, options.warmupCycles, callers));
        const lineBytes = Math.max(1, Math.round(b.journalBytes / Math.max(1, b.lines)));
        p.samples.append.push(benchRawAppend(p.appendDir, lineBytes, 3 * cycles));
        if (p.sqlite) p.samples.sqlite.push(p.sqlite.rep(cycles, options.warmupCycles));
        p.samples.sqlJs.push(p.sqlJs.rep(options.sqlJsCyclesAt(p.size)));
        const last = <T>(xs: T[]): T => xs[xs.length - 1]!;
        log(
          `rep ${rep + 1}/${options.reps} size ${p.size}: Baton ${b.rate.toFixed(0)} commits/s (open ${b.openMs.toFixed(0)} ms)${p.samples.batonConcurrent.length > 0 ? `, ${callersOf(options)} callers ${last(p.samples.batonConcurrent).rate.toFixed(0)} commits/s` : ''}, ` +
            `append ${last(p.samples.append).toFixed(0)} lines/s, ${p.sqlite ? `better-sqlite3 ${last(p.samples.sqlite).toFixed(0)}/s, ` : ''}sql.js export ${last(p.samples.sqlJs).toFixed(1)}/s`,
        );
      }
    }

    const sizes: SizeResult[] = prepared.map((p) => {
      const cycles = options.cyclesAt(p.size);
      const lines = p.samples.baton.reduce((n, b) => n + b.lines, 0);
      const bytes = p.samples.baton.reduce((n, b) => n + b.journalBytes, 0);
      const avgLineBytes = lines > 0 ? bytes / lines : 0;
      return {
        size: p.size,
        baton: {
          size: p.size,
          cyclesPerRep: cycles,
          commitsPerSecond: summarize(p.samples.baton.map((b) => b.rate)),
          flushMsPerCommit: summarize(p.samples.baton.map((b) => b.flushMsPerCommit)),
          otherMsPerCommit: summarize(p.samples.baton.map((b) => b.otherMsPerCommit)),
          flushesPerCommit: p.samples.baton.reduce((n, b) => n + b.flushes, 0) / (3 * cycles * options.reps),
          avgLineBytes,
          linesPerCycle: lines / (cycles * options.reps),
          openMs: summarize(p.samples.baton.map((b) => b.openMs)),
          seedMs: p.baton.seedMs,
          snapshotBytes: p.baton.snapshotBytes,
          snapshotMs: p.baton.snapshotMs,
          storeRows: p.baton.storeRows,
        },
        ...(p.samples.batonConcurrent.length > 0
          ? {
              batonConcurrent: {
                callers: callersOf(options),
                commitsPerSecond: summarize(p.samples.batonConcurrent.map((b) => b.rate)),
                commitsPerFlush:
                  p.samples.batonConcurrent.reduce((n, b) => n + b.lines, 0) /
                  Math.max(
                    1,
                    p.samples.batonConcurrent.reduce((n, b) => n + b.flushes, 0),
                  ),
              },
            }
          : {}),
        rawAppend: { ...summarize(p.samples.append), lineBytes: Math.round(avgLineBytes), linesPerRep: 3 * cycles },
        ...(p.sqlite ? { sqlite: { ...summarize(p.samples.sqlite), commitsPerRep: 3 * cycles } } : {}),
        sqlJsExport: {
          ...summarize(p.samples.sqlJs),
          commitsPerRep: 3 * options.sqlJsCyclesAt(p.size),
          fileBytes: p.sqlJs.fileBytes(),
        },
      };
    });
    const { log: _log, cyclesAt: _c, sqlJsCyclesAt: _s, betterSqlite: _b, ...plain } = options;
    return {
      options: {
        ...plain,
        cycles: Object.fromEntries(options.sizes.map((s) => [s, options.cyclesAt(s)])),
        sqlJsCycles: Object.fromEntries(options.sizes.map((s) => [s, options.sqlJsCyclesAt(s)])),
      },
      machine,
      sameDevice: devices.size === 1,
      sizes,
      ...(sqliteMissing ? { sqliteMissing } : {}),
      durationMs: nowMs() - started,
    };
  } finally {
    for (const p of prepared) p.sqlJs.close();
    rmSync(root, { recursive: true, force: true });
  }
}

interface PreparedSize {
  size: number;
  baton: PreparedBaton;
  appendDir: string;
  sqlite: PreparedReference | undefined;
  sqlJs: PreparedReference & { fileBytes(): number; close(): void };
  samples: { baton: BatonRep[]; batonConcurrent: BatonRep[]; append: number[]; sqlite: number[]; sqlJs: number[] };
}

interface BatonRep {
  rate: number;
  flushMsPerCommit: number;
  otherMsPerCommit: number;
  flushes: number;
  openMs: number;
  /** Journal lines and bytes the timed cycles appended. */
  lines: number;
  journalBytes: number;
}

interface PreparedBaton {
  seedMs: number;
  snapshotBytes: number;
  snapshotMs: number;
  storeRows: number;
  /**
   * `chains` callers at once, each running its share of the cycles one after another (a coordinator at that
   * concurrency).
   */
  rep(cycles: number, warmupCycles: number, chains?: number): Promise<BatonRep>;
}

interface PreparedReference {
  /** One timed repetition; returns commits/s. */
  rep(cycles: number, warmupCycles?: number): number;
}

// ── row 1: the Baton store ─────────────────────────────────────────────────

/**
 * A workspace whose store holds `size` completed delegations (seeded in bulk through the
 * store port) and one run, started through the engine, with enough ready tasks for every
 * timed cycle; snapshotted and closed, as a real store is between sessions.
 */
export async function prepareBaton(
  workspace: string,
  size: number,
  options: StoreBenchOptions,
): Promise<PreparedBaton> {
  const repsPerRound = callersOf(options) > 0 ? 2 : 1;
  const tasksNeeded = repsPerRound * options.reps * (options.cyclesAt(size) + options.warmupCycles);
  const taskIds = Array.from({ length: tasksNeeded }, (_, i) => `B${i + 1}`);
  writeFileSync(join(workspace, PLAN_FILE), planText(taskIds, 'Benchmark task'));
  mkdirSync(join(workspace, RESULTS_DIR));
  // The 8-caller row holds 8 claims at once; claims obey maxConcurrency (docs/cli.md, baton claim).
  mkdirSync(join(workspace, '.baton'), { recursive: true });
  writeFileSync(join(workspace, '.baton', 'config.json'), JSON.stringify({ maxConcurrency: 256 }));
  for (const taskId of taskIds) writeFileSync(join(workspace, RESULTS_DIR, `${taskId}.md`), resultArtifact(taskId));
  const storeDir = storeDirOf(workspace);

  // Setup sessions never snapshot on close, so that the snapshot timed below is a real one.
  const noCloseSnapshot = { closeSnapshotMinBytes: Number.POSITIVE_INFINITY };
  // Migrations run on the first open.
  await (await Engine.open({ workspace, store: noCloseSnapshot })).close();

  const seedStart = nowMs();
  const storeRows = await seedHistory(storeDir, size, options.history, noCloseSnapshot);
  const seedMs = nowMs() - seedStart;

  // The run the timed cycles claim from, created the ordinary way.
  const setup = await Engine.open({ workspace, store: noCloseSnapshot });
  const run = await setup.startRun(PLAN_FILE);
  await setup.close();

  // No snapshot of its own on the line below: the one timed here must have something to write.
  const store = await FileStore.open(storeDir, { snapshotAfterBytes: Number.POSITIVE_INFINITY });
  // One journal line first: when the store happened to snapshot on its own at the last commit, snapshot() has nothing
  // to do.
  await store.transact((tx) => tx.run(`UPDATE counters SET value = value WHERE name = 'run'`));
  const snapStart = nowMs();
  await store.snapshot();
  const snapshotMs = nowMs() - snapStart;
  await store.close();
  const snapshotBytes = newestSnapshotBytes(storeDir);

  let next = 0;
  const rep = async (cycles: number, warmupCycles: number, chains = 1): Promise<BatonRep> => {
    const openStart = nowMs();
    const engine = await Engine.open({ workspace });
    const openMs = nowMs() - openStart;
    try {
      const cycle = async (): Promise<void> => {
        const taskId = taskIds[next++];
        if (!taskId) throw new Error('benchmark setup is wrong: the bench run has no ready task left');
        const claim = await engine.claimTask({ runId: run.id, taskId, leaseSeconds: 600 });
        await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: 'halfway there' });
        const outcome = await engine.ingest({
          delegationId: claim.delegation.id,
          token: claim.token,
          runId: run.id,
          artifactPath: `${RESULTS_DIR}/${taskId}.md`,
        });
        if (!outcome.record.accepted || outcome.delegation.status !== 'COMPLETED') {
          throw new Error(
            `benchmark setup is wrong: the result for ${taskId} was not accepted (${JSON.stringify(outcome.record.issues)})`,
          );
        }
      };
      const chain = async (n: number): Promise<void> => {
        for (let i = 0; i < n; i++) await cycle();
      };
      const inChains = (n: number): Promise<unknown> =>
        Promise.all(Array.from({ length: chains }, (_, c) => chain(Math.floor(n / chains) + (c < n % chains ? 1 : 0))));
      await inChains(warmupCycles);
      const marks = journalMarks(storeDir);
      const flushes = timeFlushes();
      const t0 = nowMs();
      try {
        await inChains(cycles);
      } finally {
        flushes.stop();
      }
      const elapsed = nowMs() - t0;
      const commits = 3 * cycles;
      const grown = journalGrowth(storeDir, marks);
      return {
        rate: commits / (elapsed / 1000),
        flushMsPerCommit: flushes.ms / commits,
        otherMsPerCommit: (elapsed - flushes.ms) / commits,
        flushes: flushes.calls,
        openMs,
        lines: grown.lines,
        journalBytes: grown.bytes,
      };
    } finally {
      await engine.close();
    }
  };
  return { seedMs, snapshotBytes, snapshotMs, storeRows, rep };
}

/**
 * Seeds `count` COMPLETED delegations, in runs of up to SEED_RUN_TASKS tasks, with bulk
 * transactions of ~SEED_ROWS_PER_TX rows through the store port. Values follow what
 * createRun / claimDelegation / recordIngestion write. Returns the number of rows.
 */
export async function seedHistory(
  storeDir: string,
  count: number,
  history: SeedHistory,
  storeOptions: FileStoreOptions,
  extraEventsPerDelegation = 0,
): Promise<number> {
  const store = await FileStore.open(storeDir, storeOptions);
  let rows = 0;
  try {
    const counters = await store.read(async (r) => {
      const all = await r.all<{ name: string; value: number }>(`SELECT name, value FROM counters`);
      return new Map(all.map((c) => [c.name, c.value]));
    });
    let runOrdinal = counters.get('run') ?? 0;
    let ingestion = counters.get('ingestion') ?? 0;
    let epoch = counters.get('lease_epoch') ?? 0;
    const settings = JSON.stringify(runSettingsFrom(DEFAULT_CONFIG));
    const start = Date.now() - 30 * DAY_MS;

    let batch: Array<[string, SqlValue[]]> = [];
    const flush = async (): Promise<void> => {
      if (batch.length === 0) return;
      const work = batch;
      batch = [];
      await store.transact(async (tx) => {
        for (const [sql, params] of work) await tx.run(sql, params);
      });
    };
    const add = async (sql: string, params: SqlValue[]): Promise<void> => {
      batch.push([sql, params]);
      rows++;
      if (batch.length >= SEED_ROWS_PER_TX) await flush();
    };

    for (let first = 0, runIndex = 0; first < count; first += SEED_RUN_TASKS, runIndex++) {
      const n = Math.min(SEED_RUN_TASKS, count - first);
      const runId = `R-seed-${String(runIndex + 1).padStart(5, '0')}`;
      const taskIds = Array.from({ length: n }, (_, i) => `T${i + 1}`);
      const text = planText(taskIds, 'Seeded task');
      const created = start + runIndex * 60_000;
      runOrdinal++;
      let seq = 0;
      const event = async (type: string, at: number, data: Record<string, unknown>): Promise<void> => {
        if (history === 'full')
          await add(`INSERT INTO events (run_id, seq, type, at, data_json) VALUES (?, ?, ?, ?, ?)`, [
            runId,
            ++seq,
            type,
            at,
            JSON.stringify(data),
          ]);
      };
      await add(
        `INSERT INTO runs (id, ordinal, plan_path, plan_digest, plan_text, status, config_json, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'completed', ?, ?, ?)`,
        [
          runId,
          runOrdinal,
          `plans/seed-${runIndex + 1}.plan.md`,
          `sha256:${sha256(text)}`,
          text,
          settings,
          created,
          created + n * 1000,
        ],
      );
      await event('run:created', created, {
        planPath: `plans/seed-${runIndex + 1}.plan.md`,
        planDigest: `sha256:${sha256(text)}`,
        tasks: n,
      });
      for (const [i, taskId] of taskIds.entries()) {
        const depends = i % 10 === 0 ? [] : [taskIds[i - 1]!];
        const did = delegationId(taskId, AGENT, 1);
        const runtimeId = `W-seed${String(first + i).padStart(7, '0')}`;
        const t = created + i * 1000;
        const artifact = `.baton/runs/${runId}/artifacts/${taskId}.md`;
        await add(
          `INSERT INTO tasks (run_id, id, ordinal, title, agent, worker, depends_json, risk_json, files_json, verify_json, instructions, line, status, status_reason, updated_at)
           VALUES (?, ?, ?, ?, ?, NULL, ?, '[]', ?, '[]', ?, ?, 'completed', ?, ?)`,
          [
            runId,
            taskId,
            i,
            `Seeded task ${taskId}`,
            AGENT,
            JSON.stringify(depends),
            JSON.stringify([`src/area${i % 17}/**`]),
            taskInstructions(taskId),
            1 + i * 8,
            `${did} passed`,
            t + 900,
          ],
        );
        for (const dependency of depends)
          await add(`INSERT INTO task_dependencies (run_id, task_id, depends_on) VALUES (?, ?, ?)`, [
            runId,
            taskId,
            dependency,
          ]);
        await add(
          `INSERT INTO delegations (run_id, id, task_id, agent, attempt, status, reason, runtime_id, result_status, artifact_path, created_at, updated_at, started_at, finished_at)
           VALUES (?, ?, ?, ?, 1, 'COMPLETED', 'result PASS', ?, 'PASS', ?, ?, ?, ?, ?)`,
          [runId, did, taskId, AGENT, runtimeId, artifact, t, t + 900, t + 10, t + 900],
        );
        if (history === 'full') {
          epoch++;
          ingestion++;
          await add(
            `INSERT INTO runtimes (id, run_id, delegation_id, token_hash, epoch, lease_ms, lease_expires_at, claimed_at, last_heartbeat_at, heartbeat_count, progress, holder, ended_at, end_reason)
             VALUES (?, ?, ?, ?, ?, 600000, ?, ?, ?, 1, 'halfway there', 'bench-host', ?, 'result PASS')`,
            [runtimeId, runId, did, sha256(runtimeId), epoch, t + 600_500, t + 10, t + 500, t + 900],
          );
          await add(
            `INSERT INTO ingestions (id, run_id, delegation_id, artifact_path, digest, accepted, result_status, issues_json, created_at) VALUES (?, ?, ?, ?, ?, 1, 'PASS', '[]', ?)`,
            [`I-${ingestion}`, runId, did, artifact, `sha256:${sha256(artifact)}`, t + 900],
          );
          await event('delegation:created', t, { delegationId: did, taskId, agent: AGENT, attempt: 1 });
          await event('delegation:claimed', t + 10, {
            delegationId: did,
            taskId,
            runtimeId,
            epoch,
            leaseExpiresAt: t + 600_010,
            holder: 'bench-host',
          });
          await event('task:status', t + 10, { taskId, from: 'ready', to: 'running', reason: `attempt 1: ${did}` });
          await event('ingestion:recorded', t + 900, {
            ingestionId: `I-${ingestion}`,
            delegationId: did,
            taskId,
            accepted: true,
            resultStatus: 'PASS',
            issues: 0,
          });
          await event('delegation:status', t + 900, {
            delegationId: did,
            taskId,
            from: 'RUNNING',
            to: 'COMPLETED',
            reason: 'result PASS',
          });
          await event('task:status', t + 900, { taskId, from: 'running', to: 'completed', reason: `${did} passed` });
          for (let k = 0; k < extraEventsPerDelegation; k++)
            await event('worker:progress', t + 100 + k, { delegationId: did, taskId, progress: `step ${k + 1}` });
        }
      }
      await event('run:status', created + n * 1000, { from: 'running', to: 'completed' });
    }
    await add(`UPDATE counters SET value = ? WHERE name = 'run'`, [runOrdinal]);
    await add(`UPDATE counters SET value = ? WHERE name = 'ingestion'`, [ingestion]);
    await add(`UPDATE counters SET value = ? WHERE name = 'lease_epoch'`, [epoch]);
    await flush();
  } finally {
    await store.close();
  }
  return rows;
}

function planText(taskIds: readonly string[], title: string): string {
  const parts = ['# Benchmark plan', '', 'Independent tasks: no dependencies, no risk tags.', ''];
  for (const taskId of taskIds) {
    parts.push(
      '```baton-task',
      `id: ${taskId}`,
      `title: ${title} ${taskId}`,
      `agent: ${AGENT}`,
      '```',
      taskInstructions(taskId),
      '',
    );
  }
  return parts.join('\n');
}

function taskInstructions(taskId: string): string {
  return `Implement step ${taskId} of the feature and keep the tests green.`;
}

function resultArtifact(taskId: string): string {
  return [
    `# ${taskId} result`,
    '',
    'Done.',
    '',
    '```baton-result',
    'contract: baton-result-v1',
    `task: ${taskId}`,
    `agent: ${AGENT}`,
    'status: PASS',
    `summary: Finished ${taskId}.`,
    'artifacts: []',
    '```',
    '',
  ].join('\n');
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function newestSnapshotBytes(storeDir: string): number {
  const snapshots = readdirSync(storeDir)
    .filter((n) => /^snapshot-\d{12}\.sqlite$/.test(n))
    .sort();
  const newest = snapshots[snapshots.length - 1];
  return newest ? statSync(join(storeDir, newest)).size : 0;
}

/**
 * Times the fdatasync/fsync calls made while it is on. The store calls them through the
 * node:fs module object, so wrapping its properties sees them (syncBuiltinESMExports
 * carries the wrapper to ES-module importers too). Reads 0 calls if the store ever flushes
 * another way; the report then shows no split.
 */
export function timeFlushes(): { calls: number; ms: number; stop(): void } {
  type Flush = (fd: number, callback?: (err: NodeJS.ErrnoException | null) => void) => void;
  const mutable = fs as unknown as Record<'fdatasyncSync' | 'fsyncSync' | 'fdatasync', Flush>;
  const originals = {
    fdatasyncSync: mutable.fdatasyncSync,
    fsyncSync: mutable.fsyncSync,
    fdatasync: mutable.fdatasync,
  };
  const tally = {
    calls: 0,
    ms: 0,
    stop(): void {
      Object.assign(mutable, originals);
      syncBuiltinESMExports();
    },
  };
  for (const name of ['fdatasyncSync', 'fsyncSync'] as const) {
    const original = originals[name];
    mutable[name] = (fd: number): void => {
      const t0 = nowMs();
      try {
        original(fd);
      } finally {
        tally.calls++;
        tally.ms += nowMs() - t0;
      }
    };
  }
  // The store's group commit flushes on the thread pool while the event loop runs on; that
  // time is counted as "in fdatasync" too, though other commits' work overlaps it.
  mutable.fdatasync = (fd, callback) => {
    const t0 = nowMs();
    originals.fdatasync(fd, (err) => {
      tally.calls++;
      tally.ms += nowMs() - t0;
      callback?.(err);
    });
  };
  syncBuiltinESMExports();
  return tally;
}

/** Size of every journal segment now, to count what is appended after. */
function journalMarks(storeDir: string): Map<string, number> {
  const marks = new Map<string, number>();
  for (const name of readdirSync(storeDir))
    if (/^journal-\d{12}\.log$/.test(name)) marks.set(name, statSync(join(storeDir, name)).size);
  return marks;
}

function journalGrowth(storeDir: string, marks: Map<string, number>): { lines: number; bytes: number } {
  let lines = 0;
  let bytes = 0;
  for (const name of readdirSync(storeDir)) {
    if (!/^journal-\d{12}\.log$/.test(name)) continue;
    const chunk = readFileSync(join(storeDir, name)).subarray(marks.get(name) ?? 0);
    bytes += chunk.length;
    for (let i = chunk.indexOf(10); i >= 0; i = chunk.indexOf(10, i + 1)) lines++;
  }
  return { lines, bytes };
}

// ── reference A: the disk's append + fdatasync limit ───────────────────────

/** One repetition: `lines` appends of `lineBytes` bytes, each followed by fdatasync; lines/s. */
export function benchRawAppend(dir: string, lineBytes: number, lines: number): number {
  const line = Buffer.alloc(Math.max(1, lineBytes), 'x'.charCodeAt(0));
  line[line.length - 1] = 10;
  const path = join(dir, 'append.log');
  const fd = openSync(path, 'a');
  try {
    const append = (): void => {
      let written = 0;
      while (written < line.length) written += writeSync(fd, line, written, line.length - written);
      fdatasyncSync(fd);
    };
    for (let i = 0; i < 5; i++) append();
    const t0 = nowMs();
    for (let i = 0; i < lines; i++) append();
    return lines / ((nowMs() - t0) / 1000);
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
}

// ── references B and C: a delegations-like schema ──────────────────────────

const REF_SCHEMA = [
  `CREATE TABLE delegations (
    run_id TEXT NOT NULL, id TEXT NOT NULL, task_id TEXT NOT NULL, agent TEXT NOT NULL, attempt INTEGER NOT NULL,
    status TEXT NOT NULL, reason TEXT, runtime_id TEXT, result_status TEXT, artifact_path TEXT,
    created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, started_at INTEGER, finished_at INTEGER,
    PRIMARY KEY (run_id, id), UNIQUE (run_id, task_id, attempt))`,
  `CREATE INDEX delegations_by_status ON delegations (run_id, status)`,
  `CREATE TABLE runtimes (
    id TEXT PRIMARY KEY, run_id TEXT NOT NULL, delegation_id TEXT NOT NULL, token_hash TEXT NOT NULL, epoch INTEGER NOT NULL,
    lease_ms INTEGER NOT NULL, lease_expires_at INTEGER NOT NULL, claimed_at INTEGER NOT NULL, last_heartbeat_at INTEGER,
    heartbeat_count INTEGER NOT NULL DEFAULT 0, progress TEXT, holder TEXT, ended_at INTEGER, end_reason TEXT)`,
  `CREATE INDEX runtimes_live ON runtimes (ended_at, lease_expires_at)`,
];

const REF_INSERT_DELEGATION = `INSERT INTO delegations (run_id, id, task_id, agent, attempt, status, reason, runtime_id, result_status, artifact_path, created_at, updated_at, started_at, finished_at)
  VALUES (?, ?, ?, 'coder', 1, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const REF_INSERT_RUNTIME = `INSERT INTO runtimes (id, run_id, delegation_id, token_hash, epoch, lease_ms, lease_expires_at, claimed_at, heartbeat_count, holder, ended_at, end_reason)
  VALUES (?, ?, ?, ?, ?, 600000, ?, ?, 0, 'bench-host', ?, ?)`;
const REF_HEARTBEAT = `UPDATE runtimes SET last_heartbeat_at = ?, heartbeat_count = heartbeat_count + 1, progress = COALESCE(?, progress), lease_expires_at = ? WHERE id = ? AND ended_at IS NULL`;
const REF_COMPLETE = `UPDATE delegations SET status = 'COMPLETED', reason = 'result PASS', result_status = 'PASS', artifact_path = ?, updated_at = ?, finished_at = ? WHERE run_id = ? AND id = ? AND status = 'RUNNING'`;
const REF_END_RUNTIME = `UPDATE runtimes SET ended_at = ?, end_reason = 'result PASS' WHERE id = ? AND ended_at IS NULL`;

/** Parameters of seeded row `i` (a completed delegation and its ended runtime). */
function refSeedRows(i: number): { delegation: SqlValue[]; runtime: SqlValue[] } {
  const runId = `R-seed-${String(Math.floor(i / SEED_RUN_TASKS) + 1).padStart(5, '0')}`;
  const taskId = `T${(i % SEED_RUN_TASKS) + 1}`;
  const did = delegationId(taskId, AGENT, 1);
  const runtimeId = `W-seed${String(i).padStart(7, '0')}`;
  const t = Date.now() - 30 * DAY_MS + i * 1000;
  return {
    delegation: [
      runId,
      did,
      taskId,
      'COMPLETED',
      'result PASS',
      runtimeId,
      'PASS',
      `.baton/runs/${runId}/artifacts/${taskId}.md`,
      t,
      t + 900,
      t + 10,
      t + 900,
    ],
    runtime: [runtimeId, runId, did, sha256(runtimeId), i + 1, t + 600_010, t + 10, t + 900, 'result PASS'],
  };
}

/** The three writes of one claim → heartbeat → ingest cycle, for task number `k` of the bench run. */
function refCycle(k: number): Array<Array<[string, SqlValue[]]>> {
  const runId = 'R-bench';
  const taskId = `B${k}`;
  const did = delegationId(taskId, AGENT, 1);
  const runtimeId = `W-bench${k}`;
  const now = Date.now();
  return [
    [
      [REF_INSERT_DELEGATION, [runId, did, taskId, 'RUNNING', null, runtimeId, null, null, now, now, now, null]],
      [REF_INSERT_RUNTIME, [runtimeId, runId, did, sha256(runtimeId), 1_000_000 + k, now + 600_000, now, null, null]],
    ],
    [[REF_HEARTBEAT, [now, 'halfway there', now + 600_000, runtimeId]]],
    [
      [REF_COMPLETE, [`${RESULTS_DIR}/${taskId}.md`, now, now, runId, did]],
      [REF_END_RUNTIME, [now, runtimeId]],
    ],
  ];
}

/** Reference B: a WAL database with `size` completed delegations; each repetition reopens it. */
export function prepareBetterSqlite(Database: BetterSqlite, dir: string, size: number): PreparedReference {
  const path = join(dir, 'reference.sqlite');
  const setup = new Database(path);
  setup.pragma('journal_mode = WAL');
  for (const sql of REF_SCHEMA) setup.exec(sql);
  const insertDelegation = setup.prepare(REF_INSERT_DELEGATION);
  const insertRuntime = setup.prepare(REF_INSERT_RUNTIME);
  const seed = setup.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      const rows = refSeedRows(i);
      insertDelegation.run(rows.delegation);
      insertRuntime.run(rows.runtime);
    }
  });
  for (let from = 0; from < size; from += SEED_ROWS_PER_TX / 2) seed(from, Math.min(size, from + SEED_ROWS_PER_TX / 2));
  setup.pragma('wal_checkpoint(TRUNCATE)');
  setup.close();

  let k = 0;
  return {
    rep(cycles: number, warmupCycles = 0): number {
      const db = new Database(path);
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        const statements = new Map<string, ReturnType<typeof db.prepare>>();
        const prepared = (sql: string): ReturnType<typeof db.prepare> => {
          let statement = statements.get(sql);
          if (!statement) statements.set(sql, (statement = db.prepare(sql)));
          return statement;
        };
        const commit = db.transaction((writes: Array<[string, SqlValue[]]>) => {
          for (const [sql, params] of writes) prepared(sql).run(params);
        });
        const cycle = (): void => {
          for (const writes of refCycle(++k)) commit(writes);
        };
        for (let i = 0; i < warmupCycles; i++) cycle();
        const t0 = nowMs();
        for (let i = 0; i < cycles; i++) cycle();
        return (3 * cycles) / ((nowMs() - t0) / 1000);
      } finally {
        db.close();
      }
    },
  };
}

/** Reference C: a sql.js database with `size` completed delegations, exported whole and fsynced on every commit. */
export async function prepareSqlJsExport(
  dir: string,
  size: number,
): Promise<PreparedReference & { fileBytes(): number; close(): void }> {
  const SQL = await loadSqlJs();
  const db = new SQL.Database();
  const path = join(dir, 'whole.sqlite');
  let fileBytes = 0;
  const persist = (): void => {
    const bytes = db.export();
    fileBytes = bytes.length;
    const fd = openSync(path, 'w');
    try {
      let written = 0;
      while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  };
  for (const sql of REF_SCHEMA) db.run(sql);
  db.run('BEGIN');
  for (let i = 0; i < size; i++) {
    const rows = refSeedRows(i);
    db.run(REF_INSERT_DELEGATION, rows.delegation);
    db.run(REF_INSERT_RUNTIME, rows.runtime);
  }
  db.run('COMMIT');
  persist();
  let k = 0;
  let closed = false;
  return {
    rep(cycles: number): number {
      const t0 = nowMs();
      for (let i = 0; i < cycles; i++) {
        for (const writes of refCycle(++k)) {
          db.run('BEGIN');
          for (const [sql, params] of writes) db.run(sql, params);
          db.run('COMMIT');
          persist();
        }
      }
      return (3 * cycles) / ((nowMs() - t0) / 1000);
    },
    fileBytes: () => fileBytes,
    close(): void {
      if (closed) return;
      closed = true;
      db.close();
    },
  };
}

// ── the machine ────────────────────────────────────────────────────────────

export function describeMachine(dir: string): MachineInfo {
  let disk = 'unknown';
  try {
    const lines = execFileSync('df', ['-PT', dir], { encoding: 'utf8' }).trim().split('\n');
    const fields = lines[lines.length - 1]!.split(/\s+/);
    // Filesystem Type 1024-blocks Used Available Capacity Mounted-on
    disk = `${fields[0]} (${fields[1]}, ${(Number(fields[2]) / 1024 / 1024).toFixed(0)} GiB, mounted on ${fields[6]})`;
  } catch {
    // df is missing (Windows): leave it unknown.
  }
  return {
    cpus: availableParallelism(),
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version,
    platform: `${process.platform} ${release()}`,
    disk,
    date: new Date().toISOString(),
  };
}

function callersOf(options: StoreBenchOptions): number {
  return options.concurrentCallers ?? CONCURRENT_CALLERS;
}
