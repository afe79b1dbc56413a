/**
 * Crash rounds (issue: "Crash"): a child commits transitions and prints each acknowledged
 * one; the parent SIGKILLs it at a random moment, reopens the store, and checks that every
 * acknowledged transition is there and that SQLite's integrity_check passes.
 *
 *   npm run test:crash                      # 1000 rounds
 *   BATON_CRASH_ROUNDS=5000 npm run test:crash
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileStore } from '../../src/engine/store/fileStore';
import { PgStore } from '../../src/engine/store/pgStore';
import type { StorePort } from '../../src/engine/store/port';
import { bundleScript } from '../support/bundleScript';
import { schemaFor } from '../support/postgresCluster';
import { makeTempDir } from '../support/tempDir';

export interface CrashRoundsResult {
  rounds: number;
  /** Rounds whose child died by SIGKILL (the parent's, or its own at the fault point). */
  killed: number;
  acknowledged: number;
  failures: string[];
  recoveryNotices: number;
}

interface Ack {
  kind: 'claim' | 'beat' | 'ingest';
  runId: string;
  id: string;
  count?: number;
}

function writePlan(path: string, tasks: number): void {
  const blocks: string[] = ['# Crash test plan\n'];
  for (let i = 1; i <= tasks; i++) blocks.push(`\`\`\`baton-task\nid: T${i}\nagent: coder\n\`\`\`\nTask ${i}.\n`);
  writeFileSync(path, blocks.join('\n'));
}

/**
 * Kills the child after it acknowledged `killAfterAcks` transitions, plus a random few
 * milliseconds, so the kill lands anywhere: mid-commit, mid-snapshot, between commits.
 */
function runChildUntilKilled(
  script: string,
  workspace: string,
  plan: string,
  from: number,
  killAfterAcks: number,
  killDelayMs: number,
  env: Record<string, string> = {},
): Promise<Ack[] & { killed?: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, workspace, plan, String(from)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env },
    });
    const acks: Ack[] = [];
    let buffered = '';
    let stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      buffered += chunk;
      let newline: number;
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const [tag, kind, runId, id, count] = line.split(' ');
        if (tag === 'ack')
          acks.push({ kind: kind as Ack['kind'], runId: runId!, id: id!, ...(count ? { count: Number(count) } : {}) });
        if ((line === 'ready' && killAfterAcks === 0) || (tag === 'ack' && acks.length === killAfterAcks))
          setTimeout(() => child.kill('SIGKILL'), killDelayMs);
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' || code === 0) resolve(Object.assign(acks, { killed: signal === 'SIGKILL' }));
      else reject(new Error(`crash child exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/** Where a lane's store is: its folder (the file store), or its schema on a PostgreSQL server. */
type LaneStore = { kind: 'file'; dir: string } | { kind: 'postgres'; url: string; schema: string };

async function verify(where: LaneStore, acks: readonly Ack[]): Promise<{ failures: string[]; notices: number }> {
  const store: StorePort =
    where.kind === 'file'
      ? await FileStore.open(where.dir)
      : await PgStore.open({ url: where.url, schema: where.schema });
  const failures: string[] = [];
  try {
    // SQLite's own check of the file store's pages; PostgreSQL keeps its own (a killed client cannot damage it).
    if (where.kind === 'file') {
      const integrity = await store.read((r) => r.get<{ integrity_check: string }>('PRAGMA integrity_check'));
      if (integrity?.integrity_check !== 'ok') failures.push(`integrity_check: ${JSON.stringify(integrity)}`);
    }
    const delegations = new Map(
      (
        await store.read((r) =>
          r.all<{ run_id: string; id: string; status: string }>(`SELECT run_id, id, status FROM delegations`),
        )
      ).map((d) => [`${d.run_id}/${d.id}`, d.status]),
    );
    const beats = new Map(
      (
        await store.read((r) =>
          r.all<{ run_id: string; id: string; heartbeat_count: number }>(
            `SELECT run_id, id, heartbeat_count FROM runtimes`,
          ),
        )
      ).map((r) => [`${r.run_id}/${r.id}`, r.heartbeat_count]),
    );
    for (const ack of acks) {
      const key = `${ack.runId}/${ack.id}`;
      if (ack.kind === 'claim' && !['RUNNING', 'COMPLETED', 'STALE'].includes(delegations.get(key) ?? ''))
        failures.push(`acknowledged claim ${key} is ${delegations.get(key) ?? 'missing'}`);
      if (ack.kind === 'beat' && (beats.get(key) ?? 0) < ack.count!)
        failures.push(`acknowledged heartbeat ${ack.count} of ${key} is missing (has ${beats.get(key) ?? 0})`);
      if (ack.kind === 'ingest' && delegations.get(key) !== 'COMPLETED')
        failures.push(`acknowledged ingestion of ${key} left it ${delegations.get(key) ?? 'missing'}`);
    }
    return { failures, notices: store.recovery.notices.length };
  } finally {
    await store.close();
  }
}

/**
 * Runs `rounds` kill-and-reopen rounds, split over independent lanes (one workspace and one
 * child at a time per lane) so that both cores of a small machine are busy.
 */
export async function runCrashRounds(options: {
  rounds: number;
  lanes?: number;
  /** Instead of a kill at a random moment, the child kills itself at this fault point (e.g. `snapshot:renamed`). */
  faultPoint?: string;
  /** Run on this PostgreSQL server (each lane a schema of its own) instead of the file store. */
  postgresUrl?: string;
  onRound?: (round: number, acks: number) => void;
}): Promise<CrashRoundsResult> {
  const lanes = Math.max(1, Math.min(options.lanes ?? 2, options.rounds));
  const perLane = Array.from(
    { length: lanes },
    (_, i) => Math.floor(options.rounds / lanes) + (i < options.rounds % lanes ? 1 : 0),
  );
  let done = 0;
  let acks = 0;
  const results = await Promise.all(
    perLane.map((rounds) =>
      runLane({
        rounds,
        ...(options.faultPoint ? { faultPoint: options.faultPoint } : {}),
        ...(options.postgresUrl ? { postgresUrl: options.postgresUrl } : {}),
        onRound: (_round, _laneAcks, newAcks) => {
          acks += newAcks;
          options.onRound?.(++done, acks);
        },
      }),
    ),
  );
  return {
    rounds: options.rounds,
    killed: results.reduce((n, r) => n + r.killed, 0),
    acknowledged: results.reduce((n, r) => n + r.acknowledged, 0),
    failures: results.flatMap((r) => r.failures),
    recoveryNotices: results.reduce((n, r) => n + r.recoveryNotices, 0),
  };
}

async function runLane(options: {
  rounds: number;
  faultPoint?: string;
  postgresUrl?: string;
  onRound?: (round: number, acks: number, newAcks: number) => void;
}): Promise<CrashRoundsResult> {
  const script = bundleScript('test/reliability/children/crashWriter.ts');
  const workspace = makeTempDir('baton-crash-');
  const plan = join(workspace, 'plan.md');
  writePlan(plan, Math.max(200, options.rounds * 40));
  mkdirSync(join(workspace, '.baton'), { recursive: true });
  // A killed child leaves its claim running until its lease runs out; the next child claims the next task meanwhile.
  // Claims obey maxConcurrency: the run gets every slot there is.
  const storeDir = join(workspace, '.baton', 'store');
  const where: LaneStore = options.postgresUrl
    ? { kind: 'postgres', url: options.postgresUrl, schema: schemaFor(workspace) }
    : { kind: 'file', dir: storeDir };
  const storeEnv: Record<string, string> = {};
  writeFileSync(
    join(workspace, '.baton', 'config.json'),
    JSON.stringify({
      maxConcurrency: 256,
      ...(where.kind === 'postgres' ? { store: { kind: 'postgres', schema: where.schema } } : {}),
    }),
  );
  if (where.kind === 'postgres') storeEnv.BATON_STORE_URL = where.url;
  const acknowledged: Ack[] = [];
  const failures: string[] = [];
  let recoveryNotices = 0;
  let killed = 0;
  try {
    for (let round = 1; round <= options.rounds; round++) {
      // One round in five kills during startup (opening, migrating, starting the run); with a fault point the child
      // dies there by itself.
      const killAfterAcks = options.faultPoint
        ? Number.POSITIVE_INFINITY
        : round % 5 === 0
          ? 0
          : 1 + Math.floor(Math.random() * 12);
      const killDelayMs = Math.floor(Math.random() * (killAfterAcks === 0 ? 30 : 4));
      const from = acknowledged.filter((a) => a.kind === 'claim').length + round;
      // At the fault point: its first pass in this process, or one of the next few (snapshots come every few cycles).
      const faultEnv: Record<string, string> = options.faultPoint
        ? {
            ...storeEnv,
            BATON_FAULT_POINT: options.faultPoint,
            BATON_FAULT_SKIP: String(Math.floor(Math.random() * 4)),
          }
        : storeEnv;
      const acks = await runChildUntilKilled(script, workspace, plan, from, killAfterAcks, killDelayMs, faultEnv);
      acknowledged.push(...acks);
      if (acks.killed) killed++;
      const stray = (): string[] =>
        where.kind === 'file' ? readdirSync(storeDir).filter((n) => n.endsWith('.tmp')) : [];
      const strayBefore = stray();
      const checked = await verify(where, acknowledged);
      // Open cleans a snapshot that was being written when the process died.
      const strayAfter = stray();
      if (strayAfter.length > 0)
        checked.failures.push(
          `stray temp files after open: ${strayAfter.join(', ')} (before: ${strayBefore.join(', ')})`,
        );
      recoveryNotices += checked.notices;
      failures.push(...checked.failures.map((f) => `round ${round}: ${f}`));
      options.onRound?.(round, acknowledged.length, acks.length);
      if (failures.length > 0) break;
    }
    return { rounds: options.rounds, killed, acknowledged: acknowledged.length, failures, recoveryNotices };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

if (require.main === module) {
  const rounds = Number(process.env.BATON_CRASH_ROUNDS ?? 1000);
  const started = Date.now();
  runCrashRounds({
    rounds,
    onRound: (round, acks) => {
      if (round % 50 === 0)
        process.stdout.write(`round ${round}/${rounds}: ${acks} acknowledged transitions checked\n`);
    },
  }).then((result) => {
    process.stdout.write(
      `${result.rounds} rounds, ${result.acknowledged} acknowledged transitions, ${result.recoveryNotices} recoveries, ${result.failures.length} failures, ${Math.round((Date.now() - started) / 1000)} s\n`,
    );
    for (const f of result.failures) process.stdout.write(`FAIL ${f}\n`);
    process.exitCode = result.failures.length === 0 ? 0 : 1;
  });
}
