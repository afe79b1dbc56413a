/**
 * The fault matrix (docs/reliability.md): each row injects one fault into real processes
 * and real files, many times, and checks one guarantee. `npm run test:reliability` runs
 * every row at full size and rewrites docs/reliability.md; `npm test` runs every row with a
 * few trials (test/system/reliability.test.ts) so that none of them can rot.
 *
 *   npm run test:reliability                 # full trials, writes docs/reliability.md
 *   npm run test:reliability -- --rows 2,3   # some rows, prints only
 *   BATON_RELIABILITY_SCALE=0.1 npm run test:reliability   # a tenth of the trials
 */
import { spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import fc from 'fast-check';
import { parseConfig } from '../../src/engine/domain/config';
import { Engine } from '../../src/engine/index';
import { checkArtifactPaths } from '../../src/engine/usecases/artifactPaths';
import { parseResultArtifact } from '../../src/engine/domain/result/parseResult';
import { parsePlan } from '../../src/engine/domain/plan/parsePlan';
import { FileStore } from '../../src/engine/store/fileStore';
import { parseWebviewMessage } from '../../src/protocol/messages';
import { bundleScript } from '../support/bundleScript';
import { FakeClock } from '../support/fakeClock';
import { makeTempDir } from '../support/tempDir';
import { runScript } from '../support/runScript';
import {
  configTampered,
  fifoWhileRunningRow,
  forgedIngest,
  hostileDaemonRow,
  hostileRepositoryRow,
  plantedLinks,
  plantedStoreLinksRow,
  replacedLogsRow,
  stolenTokenRow,
} from './boundaryRows';
import { runClaimRace, runSlotRace } from './claimRace';
import { runCrashRounds } from './crashRounds';
import { seedHistory } from '../bench/storeBench';
import {
  crashDuringResume,
  drivenClockJump,
  lateResult,
  pausedHolder,
  processTrees,
  keptWork,
  workerKilled,
} from './executionRows';
import { claimAnswerLostRow, finishedDuringOutageRow, forgedDeadlineRow, launchCutByOutageRow } from './outageRows';
import { fencedSideEffects, lockHolderStopped } from './fencingRows';
import { targetTampering, undeclaredFiles } from './tamperRows';
import { cherryPickCrash, diskFullFastForward } from './integrationRows';

export interface RowOutcome {
  trials: number;
  failures: string[];
  /** What else the run saw (kills that landed, recoveries, cases generated). */
  note?: string;
}

export interface MatrixRow {
  id: string;
  fault: string;
  guarantee: string;
  injection: string;
  /**
   * Trials at full size (`npm run test:reliability`) and in `npm test`. Smoke 0: `npm test` runs the row's scenario
   * as a system test of its own (named in `injection`), not again here — CI's time is counted.
   */
  full: number;
  smoke: number;
  run(trials: number): Promise<RowOutcome>;
}

const ROOT = resolve(__dirname, '../..');

// ── row 1 and 2: SIGKILL at random points; at each step of a snapshot ─────────────────

const SNAPSHOT_STEPS = [
  'snapshot:temp-written',
  'snapshot:temp-fsynced',
  'snapshot:renamed',
  'snapshot:folder-fsynced',
];

async function crashRandom(trials: number): Promise<RowOutcome> {
  const r = await runCrashRounds({ rounds: trials });
  return {
    trials: r.rounds,
    failures: r.failures,
    note: `${r.acknowledged} acknowledged transitions checked, ${r.killed} kills, ${r.recoveryNotices} recoveries reported`,
  };
}

async function crashSnapshotSteps(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const notes: string[] = [];
  let total = 0;
  for (const step of SNAPSHOT_STEPS) {
    const rounds = Math.max(1, Math.round(trials / SNAPSHOT_STEPS.length));
    const r = await runCrashRounds({ rounds, lanes: 1, faultPoint: step });
    total += r.rounds;
    failures.push(...r.failures.map((f) => `${step}: ${f}`));
    if (r.killed === 0) failures.push(`${step}: no round reached the fault point (nothing was tested)`);
    notes.push(`${step.replace('snapshot:', '')} ${r.killed}/${r.rounds} killed there`);
  }
  return { trials: total, failures, note: notes.join('; ') };
}

// ── row 3: torn or garbage journal tail, truncated or bit-flipped snapshot ────────────

type Damage = 'torn-tail' | 'garbage-tail' | 'truncated-snapshot' | 'flipped-snapshot';
const DAMAGES: Damage[] = ['torn-tail', 'garbage-tail', 'truncated-snapshot', 'flipped-snapshot'];

async function insertRows(store: FileStore, from: number, to: number): Promise<void> {
  for (let i = from; i < to; i++)
    await store.transact((tx) => tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [`r${i}`, i]));
}

async function damagedFiles(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const seen = new Map<Damage, number>();
  for (let trial = 0; trial < trials; trial++) {
    const damage = DAMAGES[trial % DAMAGES.length]!;
    seen.set(damage, (seen.get(damage) ?? 0) + 1);
    const dir = makeTempDir('baton-damage-');
    try {
      const store = await FileStore.open(dir);
      await insertRows(store, 0, 5);
      await store.snapshot();
      await insertRows(store, 5, 10);
      await store.snapshot();
      await insertRows(store, 10, 15);
      await store.close();
      const names = readdirSync(dir);
      const segment = join(
        dir,
        names
          .filter((n) => n.startsWith('journal-'))
          .sort()
          .pop()!,
      );
      const snapshot = join(
        dir,
        names
          .filter((n) => /^snapshot-\d+\.sqlite$/.test(n))
          .sort()
          .pop()!,
      );
      let expectAtLeast = 15;
      if (damage === 'torn-tail') {
        // Cut inside the last line: that commit's line was never whole.
        const text = readFileSync(segment, 'utf8');
        const lastStart = text.lastIndexOf('\n', text.length - 2) + 1;
        truncateSync(segment, lastStart + 1 + Math.floor(Math.random() * (text.length - lastStart - 2)));
        expectAtLeast = 14;
      } else if (damage === 'garbage-tail') {
        writeFileSync(
          segment,
          Buffer.concat([
            readFileSync(segment),
            Buffer.from(
              Array.from({ length: 1 + Math.floor(Math.random() * 200) }, () => Math.floor(Math.random() * 256)),
            ),
          ]),
        );
      } else if (damage === 'truncated-snapshot') {
        truncateSync(snapshot, Math.floor(Math.random() * statSync(snapshot).size));
      } else {
        const bytes = readFileSync(snapshot);
        const at = Math.floor(Math.random() * bytes.length);
        bytes[at] = bytes[at]! ^ (1 << Math.floor(Math.random() * 8));
        writeFileSync(snapshot, bytes);
      }
      const before = new Set(readdirSync(dir));
      const reopened = await FileStore.open(dir);
      try {
        const rows = (
          await reopened.read((r) =>
            r.all<{ name: string }>(`SELECT name FROM counters WHERE name GLOB 'r[0-9]*' ORDER BY value`),
          )
        ).map((r) => r.name);
        const want = Array.from({ length: expectAtLeast }, (_, i) => `r${i}`);
        if (rows.slice(0, expectAtLeast).join() !== want.join())
          failures.push(`trial ${trial} (${damage}): rows ${rows.join(',')} (want at least r0..r${expectAtLeast - 1})`);
        const integrity = await reopened.read((r) => r.get<{ integrity_check: string }>('PRAGMA integrity_check'));
        if (integrity?.integrity_check !== 'ok')
          failures.push(`trial ${trial} (${damage}): integrity ${JSON.stringify(integrity)}`);
        if (damage !== 'garbage-tail' && reopened.recovery.notices.length === 0 && damage !== 'flipped-snapshot')
          failures.push(`trial ${trial} (${damage}): nobody was told`);
        if (damage === 'flipped-snapshot' && reopened.recovery.notices.length === 0) {
          // A flip in a byte SQLite never reads (free space) changes nothing: the checksum must still catch it.
          failures.push(`trial ${trial} (${damage}): the flipped snapshot was not detected`);
        }
      } finally {
        await reopened.close();
      }
      // Nothing preserved is deleted: every file is still there, or renamed *.corrupt.
      const after = new Set(readdirSync(dir));
      for (const name of before) {
        if (name.endsWith('.tmp')) continue;
        const aside = name.endsWith('.sha256')
          ? `${name.slice(0, -'.sha256'.length)}.corrupt.sha256`
          : `${name}.corrupt`;
        if (!after.has(name) && !after.has(aside) && !/^journal-/.test(name))
          failures.push(`trial ${trial} (${damage}): ${name} disappeared`);
      }
    } catch (err) {
      failures.push(`trial ${trial} (${damage}): ${(err as Error).message}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { trials, failures, note: [...seen].map(([d, n]) => `${d} ×${n}`).join(', ') };
}

// ── row 3b: journal loss detection ──────────────────────────────────────────────────

const LOSSES = [
  'newest-segment-deleted',
  'cut-at-line-end',
  'bit-flipped-in-last-line',
  'snapshot-lost-and-bit-flipped',
  'sidecar-removed-and-value-changed',
] as const;

/** Every journal line's number, in file order across the segments. */
function journalLineNumbers(dir: string): number[] {
  return readdirSync(dir)
    .filter((n) => /^journal-\d+\.log$/.test(n))
    .sort()
    .flatMap((n) =>
      readFileSync(join(dir, n), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line.slice(17)) as { q: number }).q),
    );
}

async function journalLoss(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const seen = new Map<string, number>();
  const rowsOf = async (store: FileStore): Promise<string[]> =>
    (
      await store.read((r) =>
        r.all<{ name: string }>(`SELECT name FROM counters WHERE name GLOB 'r[0-9]*' ORDER BY value`),
      )
    ).map((r) => r.name);
  for (let trial = 0; trial < trials; trial++) {
    const loss = LOSSES[trial % LOSSES.length]!;
    seen.set(loss, (seen.get(loss) ?? 0) + 1);
    const dir = makeTempDir('baton-loss-');
    try {
      const a = 2 + Math.floor(Math.random() * 4);
      const b = a + 2 + Math.floor(Math.random() * 4);
      const c = b + 2 + Math.floor(Math.random() * 4);
      const store = await FileStore.open(dir);
      await insertRows(store, 0, a);
      await store.snapshot();
      await insertRows(store, a, b);
      await store.snapshot();
      await insertRows(store, b, c);
      await store.close();
      const acknowledged = Array.from({ length: c }, (_, i) => `r${i}`);
      const list = (re: RegExp): string[] =>
        readdirSync(dir)
          .filter((n) => re.test(n))
          .sort()
          .map((n) => join(dir, n));
      const newestSegment = list(/^journal-\d+\.log$/).pop()!;
      const newestSnapshot = list(/^snapshot-\d+\.sqlite$/).pop()!;
      const flipLast = (): void => {
        const lines = readFileSync(newestSegment, 'utf8').split('\n');
        lines[lines.length - 2] = lines[lines.length - 2]!.replace(`"r${c - 1}"`, '"rX"');
        writeFileSync(newestSegment, lines.join('\n'));
      };
      let lossExpected = true;
      if (loss === 'newest-segment-deleted') rmSync(newestSegment);
      else if (loss === 'cut-at-line-end') {
        const text = readFileSync(newestSegment, 'utf8');
        const lines = text.split('\n').filter(Boolean);
        const drop = 1 + Math.floor(Math.random() * Math.min(2, lines.length));
        const keep = text.length - lines.slice(-drop).reduce((n, l) => n + l.length + 1, 0);
        writeFileSync(newestSegment, text.slice(0, keep));
      } else if (loss === 'bit-flipped-in-last-line') flipLast();
      else if (loss === 'snapshot-lost-and-bit-flipped') {
        rmSync(newestSnapshot);
        rmSync(`${newestSnapshot}.sha256`);
        flipLast();
      } else {
        lossExpected = false;
        rmSync(`${newestSnapshot}.sha256`);
        const bytes = readFileSync(newestSnapshot);
        const at = bytes.indexOf(Buffer.from(`r${a}`));
        bytes[at + 1] = bytes[at + 1]! ^ 0x01;
        writeFileSync(newestSnapshot, bytes);
      }
      const reopened = await FileStore.open(dir);
      const rows = await rowsOf(reopened);
      const notices = reopened.recovery.notices.join('\n');
      if (rows.join() !== acknowledged.slice(0, rows.length).join())
        failures.push(`trial ${trial} (${loss}): not a prefix of the acknowledged history: ${rows.join()}`);
      if (lossExpected && !/Acknowledged commits were lost: the journal ends at line \d+/.test(notices))
        failures.push(`trial ${trial} (${loss}): the loss was not reported: ${notices || '(no notice)'}`);
      if (lossExpected && rows.length >= c) failures.push(`trial ${trial} (${loss}): nothing was lost?`);
      if (!lossExpected && (rows.length !== c || !/checksum file is missing/.test(notices)))
        failures.push(`trial ${trial} (${loss}): the changed snapshot was served (${rows.join()}; ${notices})`);
      if (/interrupted before it was acknowledged/.test(notices))
        failures.push(`trial ${trial} (${loss}): acknowledged damage called a torn write`);
      await insertRows(reopened, 100, 102);
      await reopened.close();
      const again = await FileStore.open(dir);
      const after = await rowsOf(again);
      if (after.join() !== [...rows, 'r100', 'r101'].join())
        failures.push(`trial ${trial} (${loss}): reopened to ${after.join()}, expected ${rows.join()},r100,r101`);
      if (again.recovery.notices.length > 0)
        failures.push(
          `trial ${trial} (${loss}): a recorded loss reported again: ${again.recovery.notices.join(' | ')}`,
        );
      await again.close();
      const numbers = journalLineNumbers(dir);
      if (new Set(numbers).size !== numbers.length || numbers.some((n, i) => i > 0 && n <= numbers[i - 1]!))
        failures.push(`trial ${trial} (${loss}): journal line numbers reused or out of order: ${numbers.join(',')}`);
    } catch (err) {
      failures.push(`trial ${trial} (${loss}): ${(err as Error).message}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return { trials, failures, note: [...seen].map(([d, n]) => `${d} ×${n}`).join(', ') };
}

// ── row R1: refusals write nothing ──────────────────────────────────────────────────

/** `exit`: 2 for an unknown worker (bad input), 4 for a run or runtime the workspace does not hold (docs/cli.md). */
const REFUSALS: Array<{ args: string[]; withStore: boolean; stopped?: boolean; exit: 2 | 4 }> = [
  { args: ['start', 'plan.md', '--worker', 'nope'], withStore: false, exit: 2 },
  { args: ['start', 'plan.md', '--worker', 'nope'], withStore: true, exit: 2 },
  { args: ['start', 'plan.md', '--new', '--worker', 'nope'], withStore: true, exit: 2 },
  { args: ['resume', '--worker', 'nope'], withStore: true, stopped: true, exit: 2 },
  { args: ['resume'], withStore: false, exit: 4 },
  { args: ['stop'], withStore: false, exit: 4 },
  { args: ['reconcile'], withStore: false, exit: 4 },
  { args: ['cleanup'], withStore: false, exit: 4 },
  { args: ['diagnose'], withStore: false, exit: 4 },
  { args: ['heartbeat', '--runtime', 'RT-1', '--token', 'x'], withStore: false, exit: 4 },
  { args: ['claim', '--run', 'R-1', '--task', 'T1'], withStore: false, exit: 4 },
  { args: ['events', '--follow'], withStore: false, exit: 4 },
];

async function refusalsWriteNothing(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const cli = join(ROOT, 'dist', 'cli.js');
  const run = (cwd: string, args: string[]): Promise<{ code: number | null; stderr: string }> =>
    new Promise((done) => {
      const child = spawn(process.execPath, [cli, ...args], {
        cwd,
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        done({ code, stderr });
      });
    });
  for (let trial = 0; trial < trials; trial++) {
    const refusal = REFUSALS[trial % REFUSALS.length]!;
    const workspace = makeTempDir('baton-refusal-');
    try {
      writeFileSync(join(workspace, 'plan.md'), '```baton-task\nid: T1\nagent: coder\n```\nDo it.\n');
      if (refusal.withStore) await run(workspace, ['claim', '--plan', 'plan.md', '--task', 'T1']);
      if (refusal.stopped) await run(workspace, ['stop']);
      const before = fingerprintTree(join(workspace, '.baton'));
      const r = await run(workspace, refusal.args);
      const what = `trial ${trial} (${refusal.args.join(' ')}${refusal.withStore ? ', with a run' : ', no store'})`;
      if (r.code !== refusal.exit) failures.push(`${what}: exit ${r.code}, not ${refusal.exit}: ${r.stderr.trim()}`);
      if (/^\s+at /m.test(r.stderr)) failures.push(`${what}: a stack trace`);
      if (JSON.stringify(fingerprintTree(join(workspace, '.baton'))) !== JSON.stringify(before))
        failures.push(`${what}: .baton changed`);
    } catch (err) {
      failures.push(`trial ${trial}: ${(err as Error).message}`);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  }
  return { trials, failures, note: `${REFUSALS.length} refused commands in turn, each in a fresh workspace` };
}

/** Every file under `dir` (recursively) with its bytes' length and content; {} when `dir` does not exist. */
function fingerprintTree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!existsSync(dir)) return out;
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else out[path] = readFileSync(path).toString('base64');
    }
  };
  walk(dir);
  return out;
}

// ── row 4: I/O errors at the Nth file operation ─────────────────────────────────────

/** The file operations the store makes, and the error each fails with when injected. */
const INJECTED: Record<string, string[]> = {
  writeSync: ['ENOSPC', 'EIO'],
  fdatasyncSync: ['EIO', 'ENOSPC'],
  // The group-commit flush on the thread pool (callback API): the wrapper throws before it is queued.
  fdatasync: ['EIO', 'ENOSPC'],
  fsyncSync: ['EIO'],
  openSync: ['EACCES', 'ENOSPC'],
  renameSync: ['EBUSY', 'EPERM'],
  unlinkSync: ['EBUSY', 'EPERM'],
};

/**
 * Replaces the store's file operations (node:fs is looked up at call time by the compiled
 * modules) with counting wrappers; the `failAt`-th call fails with an errno error. Returns
 * the number of calls seen and a restore function.
 */
function injectFileErrors(
  failAt: number,
  pick: number,
): { calls: () => number; failed: () => string | undefined; restore: () => void } {
  // The module object itself (an import would give a copy): the store's compiled modules call through it.
  const fs = createRequire(__filename)('node:fs') as Record<string, (...args: unknown[]) => unknown>;
  const originals = new Map<string, (...args: unknown[]) => unknown>();
  let calls = 0;
  let failed: string | undefined;
  for (const [name, codes] of Object.entries(INJECTED)) {
    const original = fs[name]!;
    originals.set(name, original);
    fs[name] = (...args: unknown[]) => {
      calls++;
      if (calls === failAt && !failed) {
        const code = codes[pick % codes.length]!;
        failed = `${name} → ${code}`;
        throw Object.assign(new Error(`${code}: injected failure, ${name}`), { code, syscall: name });
      }
      return original(...args);
    };
  }
  return { calls: () => calls, failed: () => failed, restore: () => originals.forEach((fn, name) => (fs[name] = fn)) };
}

async function ioErrors(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const kinds = new Map<string, number>();
  let swept = 0;
  for (let trial = 0; trial < trials; trial++) {
    const dir = makeTempDir('baton-io-');
    const acknowledged: number[] = [];
    const refused: number[] = [];
    try {
      const store = await FileStore.open(dir, { snapshotAfterBytes: 600 });
      // Sweep N over the file operations of 12 commits (with snapshots among them).
      const injection = injectFileErrors(1 + (trial % 90), trial);
      try {
        // One at a time (flushed in place) and three at once (a group sharing a flush on the thread pool).
        const commit = async (i: number): Promise<void> => {
          try {
            await store.transact((tx) => tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [`io${i}`, i]));
            acknowledged.push(i);
          } catch (err) {
            refused.push(i);
            const message = (err as Error).message;
            if (!/Baton journal|nothing was committed/.test(message))
              failures.push(`trial ${trial}: commit ${i} failed without a clear error: ${message}`);
          }
        };
        for (let i = 0; i < 6; i++) await commit(i);
        for (let i = 6; i < 12; i += 3) await Promise.all([commit(i), commit(i + 1), commit(i + 2)]);
      } finally {
        injection.restore();
      }
      const failed = injection.failed();
      if (failed) {
        swept++;
        kinds.set(failed, (kinds.get(failed) ?? 0) + 1);
      }
      // Usable afterwards: one more commit goes through.
      await store.transact((tx) => tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, ['after', 1]));
      await store.close();
      const reopened = await FileStore.open(dir);
      try {
        const names = new Set(
          (
            await reopened.read((r) =>
              r.all<{ name: string }>(`SELECT name FROM counters WHERE name GLOB 'io*' OR name = 'after'`),
            )
          ).map((r) => r.name),
        );
        for (const i of acknowledged)
          if (!names.has(`io${i}`))
            failures.push(`trial ${trial} (${failed}): acknowledged commit ${i} is missing after reopen`);
        for (const i of refused)
          if (names.has(`io${i}`))
            failures.push(`trial ${trial} (${failed}): commit ${i} was refused but is there after reopen`);
        if (!names.has('after')) failures.push(`trial ${trial} (${failed}): the commit after the error is missing`);
        const integrity = await reopened.read((r) => r.get<{ integrity_check: string }>('PRAGMA integrity_check'));
        if (integrity?.integrity_check !== 'ok')
          failures.push(`trial ${trial}: integrity ${JSON.stringify(integrity)}`);
      } finally {
        await reopened.close();
      }
    } catch (err) {
      failures.push(`trial ${trial}: ${(err as Error).message}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const top = [...kinds]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k} ×${n}`)
    .join(', ');
  return {
    trials,
    failures: failures.slice(0, 30),
    note: `${swept} trials hit an injected error (${top}); N swept over 1–90`,
  };
}

// ── row 5: K processes racing for the coordinator lease ──────────────────────────────

async function newRun(workspace: string): Promise<string> {
  writeFileSync(join(workspace, 'plan.md'), '```baton-task\nid: T1\nagent: coder\n```\nDo it.\n');
  const engine = await Engine.open({ workspace });
  try {
    return (await engine.startRun(join(workspace, 'plan.md'))).id;
  } finally {
    await engine.close();
  }
}

async function leaseRace(trials: number): Promise<RowOutcome> {
  const script = bundleScript('test/reliability/children/leaseRacer.ts');
  const racers = 4;
  const roundsEach = Math.max(1, Math.ceil(trials / racers));
  const workspace = makeTempDir('baton-lease-race-');
  try {
    const runId = await newRun(workspace);
    const storeDir = join(workspace, '.baton', 'store');
    const outputs = await Promise.all(
      Array.from({ length: racers }, () => runScript(script, [storeDir, runId, String(roundsEach)])),
    );
    const failures: string[] = [];
    const holders = new Map<number, string>();
    let held = 0;
    for (const lines of outputs) {
      for (const line of lines) {
        const [what, a, b] = line.split(' ');
        if (what === 'held') {
          held++;
          const epoch = Number(a);
          if (holders.has(epoch)) failures.push(`epoch ${epoch} held by ${holders.get(epoch)} and ${b}`);
          holders.set(epoch, b!);
        }
        if (what === 'stale' && a === 'ACCEPTED') failures.push(`a write under superseded epoch ${b} was accepted`);
      }
    }
    // Every write made under an epoch is that epoch's holder's, and there is no stale write.
    const store = await FileStore.open(storeDir);
    try {
      const rows = await store.read((r) =>
        r.all<{ name: string }>(`SELECT name FROM counters WHERE name LIKE 'epoch-%' OR name LIKE 'stale-%'`),
      );
      for (const { name } of rows) {
        if (name.startsWith('stale-')) failures.push(`stored a stale write: ${name}`);
        const [, epoch, pid] = name.split('-');
        if (holders.get(Number(epoch)) !== pid)
          failures.push(`${name} was written by a process that did not hold epoch ${epoch}`);
      }
    } finally {
      await store.close();
    }
    const refused = outputs.flat().filter((l) => l.startsWith('stale refused')).length;
    return {
      trials: racers * roundsEach,
      failures,
      note: `${racers} processes × ${roundsEach} attempts: ${held} leases held (epochs unique), ${refused} stale-epoch writes refused`,
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

// ── row 7: two processes writing at once ─────────────────────────────────────────────

async function twoWriters(trials: number): Promise<RowOutcome> {
  const script = bundleScript('test/reliability/children/unionWriter.ts');
  const failures: string[] = [];
  const perRound = 100;
  const rounds = Math.max(1, Math.round(trials / (2 * perRound)));
  for (let round = 0; round < rounds; round++) {
    const dir = makeTempDir('baton-union-');
    try {
      (await FileStore.open(dir)).close();
      await Promise.all(['a', 'b'].map((prefix) => runScript(script, [dir, prefix, String(perRound)])));
      const store = await FileStore.open(dir);
      try {
        const names = new Set(
          (
            await store.read((r) =>
              r.all<{ name: string }>(`SELECT name FROM counters WHERE name LIKE 'a-%' OR name LIKE 'b-%'`),
            )
          ).map((r) => r.name),
        );
        for (const prefix of ['a', 'b'])
          for (let i = 0; i < perRound; i++)
            if (!names.has(`${prefix}-${i}`)) failures.push(`round ${round}: ${prefix}-${i} lost`);
      } finally {
        await store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return {
    trials: rounds * 2 * perRound,
    failures,
    note: `${rounds} round(s) of two processes × ${perRound} commits, snapshots every 8 KiB of journal`,
  };
}

// ── row 10: ingestion replayed ──────────────────────────────────────────────────────

async function ingestionReplay(trials: number): Promise<RowOutcome> {
  const workspace = makeTempDir('baton-replay-');
  const failures: string[] = [];
  try {
    writeFileSync(join(workspace, 'plan.md'), '```baton-task\nid: T1\nagent: coder\n```\nDo it.\n');
    mkdirSync(join(workspace, 'results'), { recursive: true });
    const artifact = join(workspace, 'results', 'T1.md');
    writeFileSync(
      artifact,
      '```baton-result\ncontract: baton-result-v1\ntask: T1\nagent: coder\nstatus: PASS\nsummary: done\nartifacts: []\n```\n',
    );
    const engines = await Promise.all([Engine.open({ workspace }), Engine.open({ workspace })]);
    try {
      const claim = await engines[0]!.claimTask({ planPath: join(workspace, 'plan.md'), taskId: 'T1' });
      // Replayed from two processes' engines at once, and again and again.
      const replays = Array.from({ length: trials }, (_, i) =>
        engines[i % 2]!.ingest({
          runId: claim.runId,
          delegationId: claim.delegation.id,
          token: claim.token,
          artifactPath: artifact,
        }).catch((err: Error) => err),
      );
      const outcomes = await Promise.all(replays);
      const errors = outcomes.filter((o) => o instanceof Error) as Error[];
      if (errors.length > 0) failures.push(`${errors.length} replays failed: ${errors[0]!.message}`);
      const engine = engines[0]!;
      await engine.refresh();
      const records = await engine.listIngestions(claim.runId);
      if (records.length !== 1) failures.push(`${records.length} ingestion records (want 1)`);
      const completions = (await engine.listEvents(claim.runId)).filter(
        (e) => e.type === 'delegation:status' && e.data.to === 'COMPLETED',
      );
      if (completions.length !== 1) failures.push(`${completions.length} completions (want 1)`);
    } finally {
      for (const e of engines) await e.close();
    }
    return {
      trials,
      failures,
      note: 'the same artifact ingested for one attempt by two engines at once; one record, one completion',
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

// ── row 13: wall-clock jumps ─────────────────────────────────────────────────────────

async function wallClockJumps(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  let driven = 0;
  for (let trial = 0; trial < trials; trial++) {
    // Even trials: a worker the coordinator drives (real process), wall clock forward or back.
    if (trial % 2 === 0) {
      failures.push(...(await drivenClockJump(trial / 2)));
      driven++;
      continue;
    }
    // Odd trials: an external claim (`baton claim`) and a jump back: it never expires early; the next heartbeat renews
    // from the new wall time.
    const workspace = makeTempDir('baton-clock-');
    try {
      writeFileSync(join(workspace, 'plan.md'), '```baton-task\nid: T1\nagent: coder\n```\nDo it.\n');
      const clock = new FakeClock();
      const engine = await Engine.open({ workspace, clock });
      try {
        const claim = await engine.claimTask({ planPath: join(workspace, 'plan.md'), taskId: 'T1', leaseSeconds: 60 });
        const back = -(1 + Math.floor(Math.random() * 10)) * 60_000;
        clock.jumpWall(back);
        const expired = await engine.expireStaleRuntimes();
        if (expired.length > 0) failures.push(`trial ${trial}: a jump back of ${back / 60000} min expired the lease`);
        clock.advance(30_000);
        const beat = await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token });
        if (beat.leaseExpiresAt !== clock.now() + 60_000)
          failures.push(`trial ${trial}: the renewed lease runs to ${beat.leaseExpiresAt}, not now + 60 s`);
      } finally {
        await engine.close();
      }
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  }
  return {
    trials,
    failures,
    note: `${driven} driven workers (real processes) with jumps of ±1–30 min; ${trials - driven} external claims with jumps back of 1–10 min`,
  };
}

// ── row 14: a large store ────────────────────────────────────────────────────────────

/**
 * Budgets (docs/benchmarks.md): store open + recovery ≤ 1 s; a claim → heartbeat → ingest cycle within 1.5× of the same
 * on an empty store.
 */
export const BIG_STORE_BUDGET = { openMs: 1000, cycleRatio: 1.5 };

interface Measured {
  openMs: number;
  cycleMs: number;
  rssMiB: number;
}

/** A fresh process opens the store and commits 30 cycles (a new 30-task run each time). */
async function measureCycles(workspace: string, round: number): Promise<Measured> {
  const cycles = 30;
  const plan = join(workspace, `cycles-${round}.md`);
  writeFileSync(
    plan,
    Array.from(
      { length: cycles },
      (_, i) => `\`\`\`baton-task\nid: C${i + 1}\nagent: coder\n\`\`\`\nCycle ${i + 1}.\n`,
    ).join('\n'),
  );
  const [line] = await runScript(bundleScript('test/reliability/children/bigStoreOpen.ts'), [
    workspace,
    plan,
    String(cycles),
  ]);
  const m = JSON.parse(line!) as { openMs: number; cycleMs: number[]; rssMiB: number };
  // The first few cycles warm the JIT up: the median of the rest.
  const rest = m.cycleMs.slice(5).sort((a, b) => a - b);
  return { openMs: m.openMs, cycleMs: rest[Math.floor(rest.length / 2)]!, rssMiB: m.rssMiB };
}

async function bigStore(trials: number, delegations = 100_000): Promise<RowOutcome> {
  const failures: string[] = [];
  const notes: string[] = [];
  for (let trial = 0; trial < trials; trial++) {
    const workspace = makeTempDir('baton-big-');
    try {
      const storeDir = join(workspace, '.baton', 'store');
      const noCloseSnapshot = { closeSnapshotMinBytes: Number.POSITIVE_INFINITY };
      await (await Engine.open({ workspace, store: noCloseSnapshot })).close();
      // 6 events per delegation from its history, plus 4 progress events: 10 per delegation.
      const seedStart = Date.now();
      await seedHistory(storeDir, delegations, 'full', noCloseSnapshot, 4);
      const seedS = (Date.now() - seedStart) / 1000;
      // No snapshot of its own on the line below: the one timed here must have something to write.
      const store = await FileStore.open(storeDir, {
        ...noCloseSnapshot,
        snapshotAfterBytes: Number.POSITIVE_INFINITY,
      });
      const counts = await store.read(async (r) => ({
        events: (await r.get<{ n: number }>('SELECT COUNT(*) AS n FROM events'))!.n,
        delegations: (await r.get<{ n: number }>('SELECT COUNT(*) AS n FROM delegations'))!.n,
      }));
      // One journal line first: when the store snapshotted on its own at the last seeding commit, snapshot() has
      // nothing to do.
      await store.transact((tx) => tx.run(`UPDATE counters SET value = value WHERE name = 'run'`));
      const snapStart = Date.now();
      await store.snapshot();
      const snapshotMs = Date.now() - snapStart;
      await store.close();
      const snapshotBytes =
        readdirSync(storeDir)
          .filter((n) => /^snapshot-\d+\.sqlite$/.test(n))
          .map((n) => statSync(join(storeDir, n)).size)
          .sort((a, b) => b - a)[0] ?? 0;
      // The same 30 cycles on an empty store in the same run are the reference (these machines are noisy: a ratio,
      // medians of 3).
      const reference = makeTempDir('baton-big-ref-');
      try {
        await (await Engine.open({ workspace: reference })).close();
        const big: Measured[] = [];
        const small: Measured[] = [];
        for (let round = 0; round < 3; round++) {
          small.push(await measureCycles(reference, round));
          big.push(await measureCycles(workspace, round));
        }
        const med = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
        const openMs = med(big.map((m) => m.openMs));
        const cycle = med(big.map((m) => m.cycleMs));
        const refCycle = med(small.map((m) => m.cycleMs));
        const rss = Math.max(...big.map((m) => m.rssMiB));
        if (counts.delegations < delegations)
          failures.push(`seeded ${counts.delegations} delegations, wanted ${delegations}`);
        // Timing budgets hold the full run (`npm run test:reliability`) to account; `npm test` runs this row at smoke
        // size
        // on a busy machine, where a timing is noise, not a finding: there the figures are only reported.
        const timed = (failure: string): void => {
          if (smokeScale) notes.push(`(smoke size, not judged: ${failure})`);
          else failures.push(failure);
        };
        if (openMs > BIG_STORE_BUDGET.openMs)
          timed(`open took ${openMs.toFixed(0)} ms (budget ${BIG_STORE_BUDGET.openMs} ms)`);
        if (cycle > refCycle * BIG_STORE_BUDGET.cycleRatio)
          timed(
            `a cycle took ${cycle.toFixed(1)} ms, ${(cycle / refCycle).toFixed(2)}× the empty store's ${refCycle.toFixed(1)} ms (budget ${BIG_STORE_BUDGET.cycleRatio}×)`,
          );
        notes.push(
          `${counts.delegations.toLocaleString('en-US')} delegations, ${counts.events.toLocaleString('en-US')} events (seeded in ${seedS.toFixed(0)} s); snapshot ${(snapshotBytes / 2 ** 20).toFixed(0)} MiB written in ${snapshotMs} ms; open ${openMs.toFixed(0)} ms; a claim → heartbeat → ingest cycle ${cycle.toFixed(1)} ms vs ${refCycle.toFixed(1)} ms on an empty store (${(cycle / refCycle).toFixed(2)}×); RSS ${rss.toFixed(0)} MiB`,
        );
      } finally {
        rmSync(reference, { recursive: true, force: true });
      }
    } catch (err) {
      failures.push(`trial ${trial}: ${(err as Error).message}`);
    } finally {
      rmSync(workspace, { recursive: true, force: true });
    }
  }
  return { trials, failures, note: notes.join(' | ') };
}

// ── hostile input ────────────────────────────────────────────────────────────────────

async function fuzzParsers(trials: number): Promise<RowOutcome> {
  const failures: string[] = [];
  const yamlish = fc.array(
    fc.oneof(
      fc.constantFrom(
        'id: T1',
        'id:',
        'depends: [T1, T2]',
        'verify:',
        '  - npm test; rm -rf /',
        'risk: database',
        'files: ../../etc/passwd',
        'isolation: worktree',
        '- [',
        '{',
        '"',
        ': :',
        'agent: "two words"',
      ),
      fc.string(),
    ),
    { maxLength: 8 },
  );
  const plan = fc
    .array(fc.tuple(fc.constantFrom('```baton-task', '```baton-task ', '```', '~~~baton-task'), yamlish, fc.string()), {
      maxLength: 4,
    })
    .map((blocks) => blocks.map(([fence, lines, text]) => `${fence}\n${lines.join('\n')}\n\`\`\`\n${text}`).join('\n'));
  const result = fc
    .tuple(fc.constantFrom('```baton-result', '```sdd-result', '```'), yamlish)
    .map(([fence, lines]) => `# r\n${fence}\ncontract: baton-result-v1\n${lines.join('\n')}\n\`\`\`\n`);
  const config = fc.oneof(
    fc.json(),
    fc.string(),
    fc.constantFrom(
      '{"workers": {"x": {"type": "process", "command": "sh", "args": ["-c", "{prompt}"]}}}',
      '{"maxConcurrency": -1}',
      '{"leaseSeconds": 1e308}',
    ),
  );
  let cases = 0;
  const check = (what: string, fn: () => unknown): void => {
    cases++;
    try {
      fn();
    } catch (err) {
      failures.push(`${what} threw: ${(err as Error).message}`);
    }
  };
  const each = Math.max(1, Math.round(trials / 4));
  fc.assert(
    fc.property(plan, (p) => check('parsePlan', () => parsePlan(p))),
    { numRuns: each },
  );
  fc.assert(
    fc.property(result, (r) =>
      check('parseResultArtifact', () => parseResultArtifact(r, { taskId: 'T1', agent: 'coder' })),
    ),
    { numRuns: each },
  );
  fc.assert(
    fc.property(config, (c) => check('parseConfig', () => parseConfig(c))),
    { numRuns: each },
  );
  fc.assert(
    fc.property(fc.anything(), (m) => check('parseWebviewMessage', () => parseWebviewMessage(m))),
    { numRuns: each },
  );
  return {
    trials: cases,
    failures: failures.slice(0, 20),
    note: 'plans, result artifacts, configs and webview messages from fast-check: issues or a parsed value, never a throw',
  };
}

async function hostilePaths(trials: number): Promise<RowOutcome> {
  const workspace = makeTempDir('baton-paths-');
  const failures: string[] = [];
  try {
    mkdirSync(join(workspace, 'inside'), { recursive: true });
    writeFileSync(join(workspace, 'inside', 'ok.txt'), 'ok');
    symlinkSync('/etc', join(workspace, 'inside', 'escape'));
    const bad = [
      '../outside.txt',
      '/etc/passwd',
      'C:\\Windows\\win.ini',
      'inside/\0nul.txt',
      `inside/${'x'.repeat(5000)}.txt`,
      'inside/escape/passwd',
      'inside/../../x',
      '~/.ssh/id_rsa',
    ];
    let cases = 0;
    for (let i = 0; i < trials; i++) {
      const path = bad[i % bad.length]!;
      cases++;
      const issues = checkArtifactPaths(workspace, { artifacts: [path], artifactRanges: [] } as never);
      if (!issues.some((x) => x.severity === 'error'))
        failures.push(`artifact path ${JSON.stringify(path.slice(0, 60))} was accepted`);
    }
    const good = checkArtifactPaths(workspace, { artifacts: ['inside/ok.txt'], artifactRanges: [] } as never);
    if (good.length > 0) failures.push(`a good path was refused: ${good[0]!.message}`);
    // The same kinds as files: globs of a plan (a symlink is a path on disk, not a glob: left out).
    for (const path of bad.filter((p) => !p.includes('escape'))) {
      cases++;
      const parsed = parsePlan(`\`\`\`baton-task\nid: T1\nfiles: [${JSON.stringify(path)}]\n\`\`\`\nDo it.\n`);
      if (!parsed.issues.some((x) => x.severity === 'error' && x.field === 'files'))
        failures.push(`files: glob ${JSON.stringify(path.slice(0, 60))} was accepted`);
      if (parsed.tasks[0]?.files.length) failures.push(`files: glob ${JSON.stringify(path.slice(0, 60))} was kept`);
    }
    return {
      trials: cases,
      failures,
      note: `${bad.length} kinds in artifacts (.., absolute, drive letter, NUL, 5,000 characters, a symlink out of the workspace, ~) and the same as files: globs`,
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * CLI arguments from fast-check: every run exits with a documented code, prints no stack trace, and writes nothing when
 * it refuses.
 */
async function fuzzCliArguments(trials: number): Promise<RowOutcome> {
  const workspace = makeTempDir('baton-cli-fuzz-');
  const failures: string[] = [];
  const cli = join(ROOT, 'dist', 'cli.js');
  try {
    writeFileSync(join(workspace, 'plan.md'), '```baton-task\nid: T1\nagent: coder\n```\nDo it.\n');
    const engine = await Engine.open({ workspace });
    await engine.startRun(join(workspace, 'plan.md'));
    await engine.close();
    const words = fc.oneof(
      fc.constantFrom(
        'status',
        'queue',
        'claim',
        'heartbeat',
        'ingest',
        'approve',
        'reject',
        'stop',
        'events',
        'gates',
        'diagnose',
        'replan',
        'cleanup',
        'validate',
        'message',
        '--json',
        '--run',
        '--task',
        '--plan',
        '--mode',
        '--note',
        '--artifact',
        '--delegation',
        'G-1',
        'T1',
        'plan.md',
        '-C',
        '--',
        '--max-concurrency',
        '-1',
        '0',
        '1e9',
      ),
      fc.string({ maxLength: 12 }),
    );
    const samples = fc.sample(fc.array(words, { minLength: 1, maxLength: 5 }), trials);
    const documented = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    const storeFiles = (): string =>
      readdirSync(join(workspace, '.baton', 'store'))
        .map((n) => `${n}:${statSync(join(workspace, '.baton', 'store', n)).size}`)
        .sort()
        .join();
    for (const args of samples) {
      // Commands that would drive or wait are left out: the row is about parsing and refusing.
      if (args.some((a) => a === 'start' || a === 'resume' || a === 'events' || a === 'heartbeat')) continue;
      const before = storeFiles();
      const r = await new Promise<{ code: number | null; err: string }>((done) => {
        const child = spawn(process.execPath, [cli, ...args], {
          cwd: workspace,
          stdio: ['ignore', 'ignore', 'pipe'],
          env: { PATH: process.env.PATH ?? '', NO_COLOR: '1' },
        });
        let err = '';
        child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
        const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.on('exit', (code) => {
          clearTimeout(timer);
          done({ code, err });
        });
      });
      const shown = JSON.stringify(args);
      if (r.code === null || !documented.has(r.code)) failures.push(`${shown}: exit ${r.code}`);
      if (/^\s+at .+\(.+:\d+:\d+\)/m.test(r.err)) failures.push(`${shown}: a stack trace`);
      if (r.code !== 0 && storeFiles() !== before)
        failures.push(`${shown}: refused (exit ${r.code}) but the store changed`);
    }
    return {
      trials: samples.length,
      failures: failures.slice(0, 20),
      note: 'argument lists of 1–5 words (commands, options, ids, random strings) run as real CLI processes',
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

async function shellMetacharacters(trials: number): Promise<RowOutcome> {
  const workspace = makeTempDir('baton-shell-');
  const failures: string[] = [];
  try {
    const payloads = [
      '; touch pwned1',
      '$(touch pwned2)',
      '`touch pwned3`',
      '&& touch pwned4',
      '| touch pwned5',
      "'; touch pwned6; '",
      '\n touch pwned7',
    ];
    const tasks = Array.from({ length: Math.max(1, Math.min(trials, payloads.length)) }, (_, i) => i);
    writeFileSync(
      join(workspace, 'plan.md'),
      tasks
        .map(
          (i) =>
            `\`\`\`baton-task\nid: T${i + 1}\ntitle: "x ${payloads[i % payloads.length]!.replace(/"/g, '\\"').replace(/\n/g, ' ')}"\nagent: coder\n\`\`\`\n${payloads[i % payloads.length]}\n`,
        )
        .join('\n'),
    );
    mkdirSync(join(workspace, '.baton'), { recursive: true });
    // The worker echoes its arguments (task id, title placeholder through argv) and writes no result: each attempt
    // fails, harmlessly.
    writeFileSync(
      join(workspace, '.baton', 'config.json'),
      JSON.stringify({
        defaultWorker: 'echo',
        maxAttempts: 1,
        workers: {
          echo: {
            type: 'process',
            command: '/bin/echo',
            args: ['{taskId}', '{prompt}', '; touch pwned0', '$(touch pwned8)'],
          },
        },
      }),
    );
    const engine = await Engine.open({ workspace });
    try {
      const { run } = await engine.runForPlan(join(workspace, 'plan.md'));
      const taken = await engine.coordinate({ runId: run.id });
      if (!('coordinator' in taken)) throw new Error('no coordinator');
      await taken.coordinator.run();
    } finally {
      await engine.close();
    }
    const pwned = readdirSync(workspace).filter((n) => n.startsWith('pwned'));
    if (pwned.length > 0) failures.push(`a shell ran: ${pwned.join(', ')}`);
    // And the workers did run: their logs hold the metacharacters, printed as text.
    const logsDir = join(workspace, '.baton', 'runs');
    const logs = readdirSync(logsDir).flatMap((run) =>
      readdirSync(join(logsDir, run, 'logs')).map((f) => readFileSync(join(logsDir, run, 'logs', f), 'utf8')),
    );
    if (!logs.some((log) => log.includes('; touch pwned0 $(touch pwned8)')))
      failures.push('no worker printed its arguments: the row tested nothing');
    return {
      trials: tasks.length,
      failures,
      note: 'task text and worker arguments with ; $( ) ` && | quotes and newlines reach /bin/echo as argv; no file appears',
    };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

export const ROWS: MatrixRow[] = [
  {
    id: '1',
    fault: 'Coordinator process SIGKILLed at a random moment during transitions and snapshots',
    guarantee: 'every acknowledged transition is present after reopen; `integrity_check` ok',
    injection:
      'a child drives claim → heartbeat → ingest and prints each acknowledged one; the parent SIGKILLs it after a random number of acks plus 0–4 ms (one round in five during startup), reopens and checks',
    full: 500,
    smoke: 6,
    run: crashRandom,
  },
  {
    id: '2',
    fault: 'Crash at each step of a snapshot: temp written, temp fsynced, renamed, folder fsynced',
    guarantee:
      'the store opens to the old or the new state with every acknowledged transition; stray temp files are removed',
    injection:
      'fault points in FileStore.writeSnapshot (`BATON_FAULT_POINT`, `BATON_FAULT_SKIP`): the child SIGKILLs itself there',
    full: 200,
    smoke: 4,
    run: crashSnapshotSteps,
  },
  {
    id: '3',
    fault: 'Torn or garbage journal tail; truncated or bit-flipped snapshot',
    guarantee:
      'detected; recovered from what is intact; nothing preserved is deleted (moved aside as *.corrupt); the user is told (recovery notices)',
    injection:
      'a store with two snapshots and journal after them; then one of: cut inside the last journal line, append random bytes, truncate the newest snapshot at a random length, flip a random bit in it',
    full: 400,
    smoke: 8,
    run: damagedFiles,
  },
  {
    id: '3b',
    fault:
      'Journal loss: the newest segment deleted; cut exactly at a line end; a bit flipped in the last acknowledged line; the newest snapshot lost plus a flipped bit; a snapshot checksum file removed plus a value changed',
    guarantee:
      'detected and reported (which acknowledged lines were lost, from which line the store continues); damaged bytes moved aside; no line number reused; no history spliced on reopen; a changed snapshot is not served',
    injection:
      'a store with two snapshots and 2–5 commits between them, then one of the five faults; reopen, commit two more, reopen again and read every journal line number',
    full: 250,
    smoke: 5,
    run: journalLoss,
  },
  {
    id: '4',
    fault: 'I/O errors (ENOSPC, EACCES, EIO; EBUSY/EPERM on rename and unlink) at the Nth file operation, swept over N',
    guarantee:
      'no transition acknowledged that was not durable, none refused that is there after reopen; the error says so clearly; the store stays usable afterwards',
    injection:
      "the store's node:fs calls (write, fdatasync, fsync, open, rename, unlink) wrapped in-process; the Nth one throws; 12 commits with snapshots every 600 bytes of journal, then one more, then reopen",
    full: 450,
    smoke: 20,
    run: ioErrors,
  },
  {
    id: '5',
    fault: 'K processes racing for the coordinator lease, many rounds',
    guarantee: 'never two holders in one epoch; a write under a superseded epoch is refused in its transaction',
    injection:
      '4 processes each try to take the lease N times, write a row under their epoch, let go; finally each writes under its first (superseded) epoch',
    full: 400,
    smoke: 8,
    run: leaseRace,
  },
  {
    id: '5b',
    fault: 'K processes claiming the same task of a fresh plan at the same moment',
    guarantee: 'exactly one winner, one run and one delegation per round; the others get a conflict',
    injection: '4 long-lived processes, released together each round',
    full: 300,
    smoke: 5,
    run: async (trials) => {
      const r = await runClaimRace({ rounds: trials, racers: 4 });
      return { trials: r.rounds, failures: r.failures, note: '4 processes per round' };
    },
  },
  {
    id: '5c',
    fault: 'K external workers (`baton claim`) claiming K different tasks at the same moment, with maxConcurrency 2',
    guarantee:
      'exactly two winners and two RUNNING attempts per round; the others are refused with `claim.max-concurrency` (the limit is checked in the claim’s transaction)',
    injection: '4 long-lived processes, released together each round, each claiming its own task',
    full: 100,
    smoke: 5,
    run: async (trials) => {
      const r = await runSlotRace({ rounds: trials, racers: 4 });
      return { trials: r.rounds, failures: r.failures, note: '4 processes per round, 2 slots' };
    },
  },
  {
    id: '6',
    fault: 'Lease holder paused past its lease (SIGSTOP, then SIGCONT)',
    guarantee:
      'a successor takes the run; on waking, the old coordinator notices before its next write and steps down; the result is ingested once',
    injection:
      'a coordinator in a child process is SIGSTOPped (at a moment it holds no store lock) past its 600 ms lease; a new one takes over; then SIGCONT',
    full: 20,
    smoke: 1,
    run: pausedHolder,
  },
  {
    id: '7',
    fault: 'Two processes (windows) writing through the store at once',
    guarantee: 'the union of all writes is present; none lost',
    injection: 'two processes each commit 100 rows as fast as they can, snapshots every 8 KiB of journal',
    full: 2000,
    smoke: 200,
    run: twoWriters,
  },
  {
    id: '8',
    fault: 'Worker SIGKILLed mid-task',
    guarantee:
      'the attempt fails with the reason, is retried as a new attempt, and the task is terminal at the attempt limit (dependents blocked); nothing is shown running afterwards',
    injection: 'a hanging worker, SIGKILLed at each of its two attempts',
    full: 40,
    smoke: 2,
    run: workerKilled,
  },
  {
    id: '9',
    fault: 'A slow worker returns after its attempt was declared stale and retried',
    guarantee: 'its late result is refused; the stale attempt has exactly one terminal transition; the retry completes',
    injection: 'a claim whose lease runs out (fake clock), a new attempt, then the first one hands in a PASS',
    full: 100,
    smoke: 3,
    run: lateResult,
  },
  {
    id: '10',
    fault: "Ingestion replayed many times, concurrently from two processes' engines",
    guarantee:
      'the effect happens exactly once: one ingestion record, one completion (applying and recording are one transaction, so a crash leaves neither)',
    injection: 'the same artifact ingested N times for one attempt through two engines at once',
    full: 200,
    smoke: 10,
    run: ingestionReplay,
  },
  {
    id: '11',
    fault:
      'Stop immediate on process trees (grandchildren, a detached child, a setsid descendant); the coordinator killed outright',
    guarantee:
      'nothing survives past the grace period (checked in /proc); after the coordinator is killed, reconcile finds and ends the survivors (pid + start time, never a reused pid)',
    injection:
      'two workers that each leave a child, a grandchild and a setsid process; even trials: baton stop immediate; odd trials: SIGKILL the coordinator process, let its lease run out, reconcile',
    full: 20,
    smoke: 2,
    run: processTrees,
  },
  {
    id: '12',
    fault: 'Crash during reconcile / resume itself, repeatedly',
    guarantee:
      'it converges: every task completes exactly once, one accepted result each, no two attempts of a task at once',
    injection:
      'coordinators in child processes SIGKILLed 50–650 ms after they start (during takeover, reconcile or the run), again and again, then one that finishes',
    full: 40,
    smoke: 3,
    run: crashDuringResume,
  },
  {
    id: '13',
    fault: 'Wall-clock jumps forward and back by minutes',
    guarantee:
      'no lease expires early: the coordinator judges the workers it drives on the monotonic clock; a renewal runs from the new wall time',
    injection:
      'FakeClock.jumpWall(±1…30 min) while the coordinator drives a real worker; and jumps back after an external claim, then expire and heartbeat',
    full: 60,
    smoke: 4,
    run: wallClockJumps,
  },
  {
    id: '14',
    fault: 'A large store: 100,000 delegations and 1,000,000 events',
    guarantee: `opens in ≤ ${BIG_STORE_BUDGET.openMs} ms, snapshots, and commits a claim → heartbeat → ingest cycle within ${BIG_STORE_BUDGET.cycleRatio}× of the same on an empty store (medians); memory stated`,
    injection:
      'seeded through the store port (full history: runtimes, ingestions, 10 events per delegation), snapshotted; then 3 rounds of a fresh process that opens it and commits 30 cycles, beside the same on an empty store',
    full: 1,
    smoke: 1,
    run: (trials) =>
      bigStore(
        trials,
        process.env.BATON_RELIABILITY_BIG
          ? Number(process.env.BATON_RELIABILITY_BIG)
          : trials > 0 && smokeScale
            ? 2_000
            : 100_000,
      ),
  },
  {
    id: '15',
    fault:
      'Coordinator stopped (SIGSTOP, Ctrl-Z) or killed between its epoch check and its side effect: a worker spawn, a worker let go, a verify command',
    guarantee:
      'the work is done exactly once, by the successor: a late predecessor never runs the attempt its successor retried, nor a verification twice; nothing is left running',
    injection:
      'fault points between the fence and the effect (BATON_FAULT_POINT, BATON_FAULT_SIGNAL=SIGSTOP) in a child coordinator with a 600 ms lease; a successor takes over; then SIGCONT',
    full: 20,
    smoke: 2,
    run: fencedSideEffects,
  },
  {
    id: '16',
    fault: 'Coordinator stopped (SIGSTOP, Ctrl-Z) inside a commit, holding the store lock',
    guarantee:
      'readers still answer from what is committed and are told who holds the lock; a writer is refused at once (store.holder-stopped, with the pid and what to do) and writes nothing; continued, the holder finishes its run',
    injection:
      'fault point `commit:locked` with BATON_FAULT_SIGNAL=SIGSTOP at a random one of the first 12 commits of a child coordinator',
    full: 20,
    smoke: 2,
    run: lockHolderStopped,
  },
  {
    id: '17',
    fault:
      'Coordinator SIGKILLed (an editor window closed) while plain-command workers (`"result": "exit-code"`) run; they end with nobody watching',
    guarantee:
      'no view calls them alive; the next coordinator settles each from its exit record exactly as a watching one would have (exit 0 completed, exit 1 or a signal failed), no attempt 2, no retry used; a second reconcile settles nothing',
    injection:
      'two workers wait for a file the trial writes after SIGKILLing the child coordinator; A exits 0, B exits 1 (even trials) or kills itself with SIGKILL (odd ones); then a new coordinator takes over, runs, and reconcile runs again',
    full: 20,
    smoke: 2,
    run: keptWork,
  },
  {
    id: '18',
    fault:
      'Coordinator SIGKILLed right after it moved the target branch for an integration by cherry-pick (the copy is on the target, not recorded)',
    guarantee:
      'the next coordinator recognises the copy (same patch-id) and records the integration once (`alreadyOnTarget`): no second copy, no `integration_conflict` gate, a clean tree',
    injection:
      'two parallel tasks in worktrees (cherry-pick); `BATON_FAULT_POINT=integration:after-advance` with `BATON_FAULT_SKIP=1` in a child coordinator; then a new coordinator resumes',
    full: 10,
    smoke: 1,
    run: cherryPickCrash,
  },
  {
    id: '19',
    fault: 'The disk fills while the fast-forward of an integration writes the task’s files into the working tree',
    guarantee:
      'what it wrote is put back and the integration waits for space (no gate blaming local changes); a half-written copy found in the way later is put back too; with space again it integrates once and the tree is clean',
    injection:
      'the workspace on a 64 MiB tmpfs; the worker writes a 16 MiB file and fills the disk leaving 8 MiB (the commit fits, the fast-forward does not); odd trials plant a half-written copy of the file; then the space is freed (not in `npm test`: under load the disk was seen full already at the commit, so a trial may miss the fast-forward; `npm test` has the unit tests of the leftovers rule, test/unit/isolation/fastForwardLeftovers.test.ts)',
    full: 10,
    smoke: 0,
    run: diskFullFastForward,
  },
  {
    id: '20',
    fault:
      'The PostgreSQL server goes down between a claim’s commit and its worker’s start (issue 26: a 333 ms restart caught the launch in 4 of 4 trials), and comes back',
    guarantee:
      'no attempt is lost: the worker held at its gate never runs; once the server answers the claim is released (CANCELLED, not counted against maxAttempts) and the task runs at once as the next attempt — not after the lease (60 s), and with maxAttempts 1 it still completes',
    injection:
      'the coordinator stopped at fault point `launch:after-fence` (SIGSTOP), the server stopped (`pg_ctl stop -m fast`), the coordinator continued; the server started again once the held worker was ended (in `npm test`: test/system/cli/postgresRestart.test.ts)',
    full: 10,
    smoke: 0,
    run: launchCutByOutageRow,
  },
  {
    id: '21',
    fault:
      'The PostgreSQL server down for longer than the worker leases while the workers finish (issue 25, item 4.4: ~17 s just before the first renewal made a task run twice)',
    guarantee:
      'nothing finished is lost and nothing runs twice: a worker that ended within its lease keeps its result — its coordinator spares its lease from expiry while the result waits for the store, and records it once the server is back; every task completes with attempt 1',
    injection:
      'two tasks of 8 s at once with 20 s leases; the server stopped (`pg_ctl stop -m fast`) once both workers started and started again 24 s later; the workers’ trace shows both ended during the outage (in `npm test`: test/system/cli/postgresRestart.test.ts, in a run of four with an observer)',
    full: 10,
    smoke: 0,
    run: finishedDuringOutageRow,
  },
  {
    id: '22',
    fault:
      'The connection to PostgreSQL is cut after a claim’s COMMIT reached the server and before its answer came back (the claim landed; the coordinator cannot know), and connections are refused for 400 ms',
    guarantee:
      'no attempt is lost: once the store answers, the coordinator finds the claim it made (its holder, no worker recorded, not one it supervises) and releases it (CANCELLED, not counted) and the task runs at once as the next attempt — not after the lease (60 s), and with maxAttempts 1 it still completes',
    injection:
      'a TCP proxy between the coordinator and the server (test/support/commitCut.ts) passes the COMMIT of the transaction that inserted the claim’s runtime, then drops the server’s answer with both connections and refuses new ones for 400 ms (in `npm test`: test/system/cli/postgresRestart.test.ts)',
    full: 10,
    smoke: 0,
    run: claimAnswerLostRow,
  },
  {
    id: 'H1',
    fault: 'Hostile and broken input: plans, result artifacts, configs, webview messages (fuzz)',
    guarantee: 'never a crash or a stack trace: issues, a parsed value, or a rejection',
    injection: 'fast-check generators, shrunk on failure',
    full: 20_000,
    smoke: 400,
    run: fuzzParsers,
  },
  {
    id: 'H4',
    fault: 'Hostile and broken CLI arguments (fuzz)',
    guarantee:
      'a documented exit code (0–8), one readable line and no stack trace; a refused command writes nothing to the store',
    injection: 'fast-check argument lists run through the built CLI as real processes, against a workspace with a run',
    full: 200,
    smoke: 6,
    run: fuzzCliArguments,
  },
  {
    id: 'H2',
    fault:
      'Hostile paths in artifacts and `files:` globs: `..`, absolute, drive letter, NUL, very long, a symlink out of the workspace',
    guarantee: 'refused with an issue',
    injection: 'checkArtifactPaths on each kind',
    full: 800,
    smoke: 8,
    run: hostilePaths,
  },
  {
    id: 'H3',
    fault: 'Shell metacharacters in task text and worker arguments',
    guarantee: 'they reach workers only as argv elements, never through a shell',
    injection:
      'a run whose tasks and worker args carry `; touch pwned`, `$(…)`, backticks, `&&`, `|`, quotes, newlines; the worker is /bin/echo',
    full: 7,
    smoke: 3,
    run: shellMetacharacters,
  },
  {
    id: 'H5',
    fault:
      'A worker plants links under `.baton/runs/<run>/` where Baton writes the next task’s prompt, log, artifact copy or verify log (symlink to a file or folder outside, hard link, FIFO)',
    guarantee:
      'Baton writes nothing through them: the write is refused (`workspace.link-refused`, naming the path), the attempt fails with that reason, nothing outside the workspace changes',
    injection:
      'task T1’s worker plants one trap (cycling through 8 kinds), then the coordinator starts T2; the files outside are compared',
    full: 40,
    smoke: 8,
    run: plantedLinks,
  },
  {
    id: 'H6',
    fault:
      'A result handed in for another task’s running attempt (no token, another attempt’s token), or after its lease ran out',
    guarantee:
      'refused (`ingest.token-required`, `runtime.wrong-token`, `runtime.lease-expired`), nothing recorded; a late one makes the expiry official (STALE)',
    injection:
      'two claims; a forged PASS for A without a token, with B’s token, then with A’s token after its lease ran out (fake clock)',
    full: 100,
    smoke: 5,
    run: forgedIngest,
  },
  {
    id: 'H7',
    fault:
      'The target branch moved under a run: rewound by a worker through the refs its worktree shares (`update-ref refs/heads/main main~2`), reset sideways to an unrelated commit, or moved forward by the user committing on it',
    guarantee:
      'backwards or sideways: nothing is integrated, the branch is left where the fault put it, a `target_moved` gate names the expected and found heads and the way back; put back and approved, every commit is on the branch; forward: no gate, the user’s commit stays',
    injection:
      'two tasks in worktrees (merge); A integrated, then B’s worker moves main (or the test commits on it) before B integrates; cycling through the 3 faults',
    full: 12,
    smoke: 3,
    run: targetTampering,
  },
  {
    id: 'H8',
    fault:
      'A task with `files: [src/**]` changes a file outside its declaration: edits docs/guide.md, deletes README.md, or renames src/keep.ts out of src/',
    guarantee:
      'nothing is integrated; an `undeclared_files` gate lists exactly the files outside (a rename: its new name)',
    injection: 'the worker edits, `git rm`s or `git mv`s in its worktree; cycling through the 3 faults',
    full: 12,
    smoke: 3,
    run: undeclaredFiles,
  },
  {
    id: 'H9',
    fault:
      'Config tampered by a worker: a task’s worker rewrites `.baton/config.json` so that a later worker runs another command (command, arguments, environment, a new default worker)',
    guarantee:
      'the changed command never runs before a person decides: a `config_changed` gate names the change (env keys, never values) and the run pauses; approve runs it, reject keeps the frozen definition; asked once',
    injection:
      'T1’s worker rewrites the config (cycling through 4 kinds), then the coordinator’s next pass; the gate is approved or rejected (alternating every 4 trials) and the run resumed; a marker file tells whether the new command ran',
    full: 24,
    smoke: 4,
    run: configTampered,
  },
  {
    id: 'H10',
    fault:
      'A hostile shared `.git` (issue 25, items 2.5, 2.6, 2.8): hooks of every kind in `.git/hooks`, and, set by a worker from its worktree, `core.fsmonitor` naming a program and `core.worktree` naming a folder outside',
    guarantee:
      'Baton’s git (tree snapshot, commit, fast-forward, worktree add, ref updates) runs none of them and writes the run’s files into the repository’s own working tree, never the folder `core.worktree` names; both tasks integrate',
    injection:
      'hooks planted before the run, T1’s worker runs `git config core.fsmonitor …` and `git config core.worktree …` in its worktree; T2 depends on T1; marker files and the outside folder checked before the test’s own git runs (in `npm test`: test/system/executor/plantedLinks.test.ts)',
    full: 10,
    smoke: 0,
    run: hostileRepositoryRow,
  },
  {
    id: 'H11',
    fault:
      'Links planted where Baton writes under `.baton/store/` and `.git/info/`, and at `.baton/worktrees/<run>` (issue 25, items 2.1–2.4): snapshot `.tmp` and `.sha256` names, `journal.mark`, `info/exclude` linked to a file outside; the run’s worktree folder linked to a folder outside',
    guarantee:
      'nothing outside changes: the snapshot’s temp file and checksum replace the links (never written through), the mark is reset like a damaged one and told, the exclude file is refused and told (the command goes on), reconcile lists nothing through the worktree link and cleanup deletes nothing through it',
    injection:
      'a store with a run; links planted (the temp names while the store is open), then a commit, reconcile, cleanup and close with a snapshot; the outside file and folder compared (in `npm test`: test/system/executor/plantedLinks.test.ts)',
    full: 20,
    smoke: 0,
    run: plantedStoreLinksRow,
  },
  {
    id: 'H12',
    fault:
      'A worker replaces its own log with a FIFO, or with a link to /dev/zero, prints its result and exits (issue 25, items 3.1, 3.2)',
    guarantee:
      'the coordinator neither blocks nor grows: a FIFO is never opened blocking, a device never read (every read of a file a worker can touch goes through platform/fencedFiles.ts); both attempts fail without a result and the run ends; the coordinator grows by less than 256 MiB',
    injection:
      'two independent tasks, each worker plants its trap at its own log path and prints a PASS; the coordinator runs in this process, its RSS compared before and after (in `npm test`: test/system/executor/plantedLinks.test.ts)',
    full: 20,
    smoke: 0,
    run: replacedLogsRow,
  },
  {
    id: 'H13',
    fault:
      'A worker reads another running worker’s `BATON_RUNTIME_TOKEN` from `/proc/<pid>/environ` — or, where its PID namespace’s own /proc shows no other worker, takes it from a file the other worker leaked it into — and hands in a forged PASS for that task with `baton ingest --token` (issue 25, item 2.7)',
    guarantee:
      'refused (`runtime.not-its-worker`, exit 3, nothing recorded): a running attempt’s token counts only from a process that runs under its worker; the owner’s own hand-in with the same token is taken and the task completes with it',
    injection:
      'two tasks at once; T2’s worker leaks its token into a file; T1’s worker looks for T2’s worker in /proc (in a PID namespace it sees none) and takes the token from there or from the leak, and hands in `forged.md`; then T2’s worker hands in its own result the same way (in `npm test`: test/system/executor/plantedLinks.test.ts; the MCP path in test/system/mcp/mcpServer.test.ts)',
    full: 20,
    smoke: 0,
    run: stolenTokenRow,
  },
  {
    id: 'H14',
    fault:
      'On a PostgreSQL store, a worker rewrites its lease watchdog’s deadline file a day ahead every 100 ms (unsigned, and with the last signature it saw); its coordinator is SIGKILLed and another host takes the run over (issue 25, item 4.3)',
    guarantee:
      'the watchdog takes only deadlines signed with the attempt’s key (kept in the store, which workers cannot reach, and handed to the watchdog on its stdin): it ends the worker when the last real lease runs out, before the other host starts the task again',
    injection:
      'two workspaces as two machines (BATON_HOST_ID), 5 s leases; A’s first worker forges, A’s coordinator SIGKILLed once it started, B runs `baton resume`; the workers’ trace orders A’s SIGTERM before B’s start (in `npm test`: test/system/cli/postgresFailover.test.ts)',
    full: 10,
    smoke: 0,
    run: forgedDeadlineRow,
  },
  {
    id: 'H15',
    fault:
      'A worker’s daemon drops everything it can change about itself: a double fork, `setsid`, `env -i`, and its soft `RLIMIT_RTTIME` (the marker’s tag) reset; then `stop --mode immediate` (issue 25, item 3.5)',
    guarantee:
      'the stop ends the daemon and is confirmed only then: the worker runs in a PID namespace of its own, which no process can leave, and everything in it descends from the namespace’s init, which Baton started (docs/workers.md, "Process identity")',
    injection:
      'one worker whose daemon resets `--rttime`, `setsid env -i`, its launcher exiting at once; even trials: stop immediate while the coordinator drives; odd trials: the coordinator’s process SIGKILLed first, the stop applied without it; the daemon (pid and start time) checked in /proc (in `npm test`: test/system/executor/stop.test.ts)',
    full: 20,
    smoke: 0,
    run: hostileDaemonRow,
  },
  {
    id: 'H16',
    fault:
      'While its worker runs, a file the coordinator follows is replaced with a FIFO nobody writes: a Claude Code worker’s log (the stream the agent stream follower reads), or on PostgreSQL the worker’s heartbeat relay file (issue 25, items 3.3, 3.4)',
    guarantee:
      'the coordinator never blocks: the follower and the relay open the file `O_NONBLOCK` through platform/fencedFiles.ts and read a FIFO as no lines; `baton start` ends the run within 90 s — the stream’s attempt fails without a result (its answer went to the log it unlinked; exit 5), the relay’s completes (exit 0) — and the FIFO is still there',
    injection:
      'one task; the stand-in Claude replaces its log right after its first line, or a worker its `relay/<delegation>.ndjson`, then works on 3 s and hands in; the coordinator is `baton start` as a process of its own, given 90 s (in `npm test`: test/system/executor/plantedLinks.test.ts, the stream; test/system/cli/postgresStore.test.ts, the relay)',
    full: 20,
    smoke: 0,
    run: fifoWhileRunningRow,
  },
  {
    id: 'R1',
    fault:
      'Refused commands: start/resume with an unknown worker (resume after a stop), commands about runs in a workspace without one',
    guarantee:
      'exit 2 (unknown worker) or 4 (no such run), one line, no stack trace; every file under .baton byte-identical (no run, no journal line, the stop stays), or no .baton created',
    injection:
      'each refused command run as a real CLI process in a fresh workspace, with a run (and a stop) or with none',
    full: 36,
    smoke: 3,
    run: refusalsWriteNothing,
  },
];

export interface MatrixResult extends RowOutcome {
  row: MatrixRow;
  durationMs: number;
}

/** Row 14 seeds 2,000 delegations instead of 100,000 at smoke scale. */
let smokeScale = false;

export async function runMatrix(options: {
  scale: 'full' | 'smoke';
  factor?: number;
  rows?: string[];
  log?: (line: string) => void;
}): Promise<MatrixResult[]> {
  smokeScale = options.scale === 'smoke';
  const results: MatrixResult[] = [];
  for (const row of ROWS) {
    if (options.rows && !options.rows.includes(row.id)) continue;
    const trials = Math.max(1, Math.round((options.scale === 'full' ? row.full : row.smoke) * (options.factor ?? 1)));
    const started = Date.now();
    options.log?.(`row ${row.id}: ${trials} trials…`);
    let outcome: RowOutcome;
    try {
      outcome = await row.run(trials);
    } catch (err) {
      outcome = { trials: 0, failures: [`the row itself failed: ${(err as Error).stack ?? (err as Error).message}`] };
    }
    results.push({ ...outcome, row, durationMs: Date.now() - started });
    options.log?.(
      `row ${row.id}: ${outcome.trials} trials, ${outcome.failures.length} failures (${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
  }
  return results;
}

/** The rules rows 15 and 16 hold the engine to, and what a person does (docs/architecture.md, "Execution"). */
const KEPT_WORK = `## Work that ended while no coordinator watched

Workers outlive their coordinator by design (a closed editor window, a SIGKILLed \`baton
start\`), and only a process's parent learns how it ended. So every worker runs under a
\`sh\` exit waiter that leaves its end in the attempt's exit record
(\`.baton/runs/<run>/exits/<delegation>.exit\`: status — exit code or signal — and end time,
fsynced, fenced by delegation and runtime; docs/workers.md, "The exit record"). Then:

- **nothing calls it alive**: \`baton status\` and \`baton diagnose\` look at the recorded process
  (pid and start time, one function: \`usecases/workerProcesses.ts\`) and say \`ended · pid N\`
  once it is gone, until a coordinator settles the attempt; so do the editor's Workers view and
  the dashboard whenever they read the run (*not yet:* they do not read it again on a timer
  while no coordinator drives it, so a row can say alive until the next change);
- **the next coordinator settles it as the watching one would have** (\`baton resume\`, a
  takeover, \`baton reconcile\`): a plain command's exit status is its result, a result on disk
  is ingested, else it fails saying how the worker ended — no new attempt, no retry used; a
  \`runtime:exited\` event tells how and when it ended (row 17;
  \`test/system/cli/keptWork.test.ts\` does the same through the CLI);
- **once**: an attempt that is no longer RUNNING is never settled again, so a second resume, a
  reconcile or a second coordinator find nothing to do;
- **STALE means unknown**: only an attempt whose process is gone with no exit record and no
  result on disk (a machine that crashed before the record's fsync, a worker started by an
  older Baton, another OS) goes STALE.

`;

const FENCING_AND_LOCK_HOLDERS = `## Side effects outside the store: the fencing rule

A transaction is fenced by the coordinator's epoch, but a process, a kill or a verify command
is not a row: a check a millisecond before it does not cover a coordinator stopped (Ctrl-Z,
SIGSTOP, a debugger, a laptop lid) between the check and the effect. So every side effect is
made so that the **store decides it, under the epoch, and the effect follows the decision**:

- **Spawning** (a worker, a verify command): the process starts held at a gate (\`baton-gate\`,
  a shell reading one line from a pipe) and runs nothing of its command until the store has
  recorded it — through the fenced store, and only while the attempt is still RUNNING (or
  still verifying). A coordinator stopped before that commit can never run it later: its
  successor's epoch refuses the record, the gate is aborted (or closes when the coordinator
  dies), and a successor that finds a process still at its gate ends it and retries the
  attempt ("claimed, never started").
- **Killing** (a task timeout, a stop, an attempt decided elsewhere): the decision is in the
  store first — the attempt FAILED by a fenced write for a timeout, the stop request a person
  recorded for a stop — and only then are its processes ended. A coordinator woken after its
  lease was taken has its decision refused and kills nothing; one stopped between decision
  and kill leaves a decision its successor carries out: at takeover, every attempt ended since
  the chain of takeovers began (\`coordinator_leases.chain_since\`) is looked over in /proc and
  whatever still runs is ended.
- **Verify commands** are recorded (\`verify_processes\`: pid, start time, marker) and ended
  like workers — by a stop, by a takeover, and before the attempt is verified again — so no
  verification runs twice at once, and none is orphaned.
- **An identity the worker cannot change**: a worker and a verify command run in a PID
  namespace of their own (\`unshare --pid\`, with \`--user --map-current-user\` where Baton runs
  unprivileged) whose init is Baton's exit waiter, their parent. No process can leave its PID
  namespace, and one whose parent dies is handed to that init, so everything a worker starts —
  double-forked, \`setsid\`, \`env -i\`, its limits reset — descends from the init, and when the
  init ends the kernel kills every member. A stop, a sweep or a watchdog ends the init and all
  below it, and calls the end confirmed only once the init (pid and start time) is gone (row
  H15). The marker — in the environment and, set through \`prlimit\`, as a soft real-time CPU
  limit (RLIMIT_RTTIME) every descendant inherits — still finds a worker whose pid was never
  recorded (it is held at its gate until it is), and is all there is where PID namespaces are
  not available (not Linux, no \`unshare\`, user namespaces turned off, \`BATON_PID_NAMESPACE=off\`;
  \`baton doctor\` says which): there a daemon that resets its limit and clears its environment
  escapes. Without \`prlimit\` either, such a daemon is found only through the process tree while
  its parent lives.
- **A stopped coordinator is not a live one**: a stop asked for while the coordinator is
  stopped is applied by whoever asks, and wins over the worker leases that run out meanwhile
  (CANCELLED, not STALE, every attempt in the report); a stop recorded but never applied is
  applied by the next coordinator before it reconciles.

## A lock holder stopped (Ctrl-Z at the wrong moment)

The store's lock is held for one commit (microseconds). A coordinator stopped *during* a
commit keeps it until it is continued or ended; the kernel releases it only when the process
dies. Then:

- \`baton status\`, \`diagnose\` and \`events\` still answer, from the newest snapshot and every
  complete journal line, and say on stderr which process holds the lock;
- every command that writes is refused at once with exit 3 (\`store.holder-stopped\`), writes
  nothing, and says what to do, for example: *The Baton store at … is locked by pid 4242
  (node …/baton start plan.md), which is stopped (Ctrl-Z or a debugger). Continue it (fg in
  its terminal, or kill -CONT 4242), or end it (kill -KILL 4242) and run baton resume to take
  its run over.*
- **What a person does:** \`fg\` (or \`kill -CONT <pid>\`) lets it go on as if nothing happened.
  To take over instead, \`kill -KILL <pid>\`, then \`baton resume\`: it waits for the dead
  coordinator's lease to run out (at most its length, 30 s for the CLI), adopts its live
  workers and goes on. \`baton start\` / \`resume\` started while a coordinator holds the lease
  observe and take over the same way as soon as the holder lets go or is proven gone.
`;

/** What row H9 holds the engine to (docs/architecture.md, "Trust model for .baton/ and the config"). */
const CONFIG_TAMPERED = `## A config a worker rewrote

\`.baton/config.json\` lies in the workspace, where every worker writes. A run freezes its
worker definitions (and the default worker) when it is created, and every worker it starts
runs a frozen definition, never the file's. The run's coordinator looks at the file at every
pass: a change is told once in the run's event log (\`config:changed\`), and a change of a
worker the run still uses — a command, its arguments, its environment, a new worker or
another default — opens a \`config_changed\` gate that names it (command lines before and
after, env keys, never their values) and pauses the run before anything new starts. Approve
adopts the file's definitions as the gate showed them (\`gate.config-moved\` if the file
changed again); reject keeps the frozen ones and is not asked again (row H9). A run started
before this freezes its definitions from the file at its first resume, without a gate.
`;

export function renderReliability(results: MatrixResult[]): string {
  const date = new Date().toISOString().replace('T', ' ').slice(0, 16);
  const rows = results
    .map(
      (r) =>
        `| ${r.row.id} | ${r.row.fault} | ${r.row.guarantee} | ${r.row.injection} | ${r.trials.toLocaleString('en-US')} | **${r.failures.length}** | ${r.note ?? ''} |`,
    )
    .join('\n');
  const failing = results.filter((r) => r.failures.length > 0);
  return `# Reliability: the fault matrix

<!-- Generated by \`npm run test:reliability\` (test/reliability/matrix.ts). Every run rewrites this file. -->

What Baton acknowledged survives, every state it shows has something real behind it, and a
stopped worker is gone. Each row below injects one fault into real processes and real files,
many times, and checks one guarantee. \`npm test\` runs every row with a few trials
(test/system/reliability.test.ts), so that none of them can rot.

- Run: ${date} UTC, ${cpus().length} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${process.platform}
- Reproduce: \`npm run test:reliability\` (all rows, full trials; rewrites this file),
  \`npm run test:reliability -- --rows 2,3\` (some rows, prints only),
  \`BATON_RELIABILITY_SCALE=0.1 npm run test:reliability\` (a tenth of the trials).

| row | fault | guarantee | how it is injected | trials | failures | seen |
|---|---|---|---|--:|--:|---|
${rows}

${failing.length === 0 ? 'Every row: 0 failures.' : `Failing rows:\n\n${failing.map((r) => `- ${r.row.id}: ${r.failures.slice(0, 5).join('; ')}`).join('\n')}`}

${FENCING_AND_LOCK_HOLDERS}
${KEPT_WORK}${CONFIG_TAMPERED}
## What a damaged store reports

Every repair is a recovery notice (stderr, \`baton:\` …; \`store.recovery.notices\`) and keeps the damaged bytes aside as \`*.corrupt\`; Baton never deletes them (docs/architecture.md, "Journal damage is never silent"):

- a torn or garbage journal tail that was never acknowledged: "Cut off a torn last journal line (… bytes, incomplete | bad checksum) in …: a commit that was interrupted before it was acknowledged. Its bytes are kept in ….";
- a damaged line the journal mark says was acknowledged: "Journal line n in … is damaged (…), though it was acknowledged: moved the damaged bytes aside to …";
- acknowledged lines missing (the newest segment deleted, the journal cut at a line end, a damaged acknowledged line, a lost snapshot plus damage): "Acknowledged commits were lost: the journal ends at line n, but line m was acknowledged (journal lines n+1–m are missing or damaged; moved aside …). The store continues from line n, as it was then; the next line is m+2, no number is reused." — reported once; the gap is recorded in the journal, so no line number is reused and no old line is spliced onto the new history;
- a snapshot whose checksum does not match, or whose checksum file is missing in a store with a journal mark: "Snapshot … would not open (…); moved it aside to … and recovered from the previous snapshot | the journal.";
- damage in the middle of the journal (valid lines after it): refused, \`store.journal-corrupt\` (exit 1), nothing changed; nothing left that can rebuild the store: \`store.unrecoverable\`, naming every preserved file;
- a snapshot that could not be written on close (disk full): "A snapshot on close could not be written (…); nothing was lost: every commit is in the journal, and the next open replays it." — the command's exit code and output stand.

## Covered elsewhere, not yet rows of this runner

These faults are tested in \`npm test\` by the suites named, with a few trials each; they
are not yet rows here with their own counts (issue 7 is open until they are):

| fault | where it is tested now |
|---|---|
| Webview: HTML/JS in artifacts and progress text | test/e2e/dashboard.test.ts; protocol fuzz in test/unit/dashboard/protocol.test.ts |
| Workspace trust: nothing starts in an untrusted workspace | test/integration/trust.untrusted.test.ts |
| Coordinator SIGKILLed while verifying a merged tree, after its commands passed and before the target moved (\`BATON_FAULT_POINT=integration:merged-verified\`): the successor removes the scratch worktree, reuses the receipts on the same tree (the command is not run again), integrates once | test/system/isolation/mergeQueue.test.ts |
| Coordinator SIGKILLed after a merge-queue batch moved the target and before it recorded the batch's tasks (\`BATON_FAULT_POINT=integration:batch-advanced\`, \`integrationBatch: 2\`): the successor finds each task's work on the target and records each once (\`alreadyOnTarget\`); nothing is integrated or verified again | test/system/isolation/mergeQueue.test.ts |
`;
}

async function main(): Promise<void> {
  const rowsAt = process.argv.indexOf('--rows');
  const rows = rowsAt >= 0 ? process.argv[rowsAt + 1]!.split(',') : undefined;
  const factor = Number(process.env.BATON_RELIABILITY_SCALE ?? 1);
  const started = Date.now();
  const results = await runMatrix({
    scale: 'full',
    factor,
    ...(rows ? { rows } : {}),
    log: (l) => process.stderr.write(`[reliability] ${l}\n`),
  });
  const markdown = renderReliability(results);
  process.stdout.write(
    `${results.map((r) => `${r.row.id.padEnd(3)} ${String(r.trials).padStart(6)} trials  ${r.failures.length} failures  ${r.note ?? ''}`).join('\n')}\n`,
  );
  if (!rows && factor === 1) {
    writeFileSync(join(ROOT, 'docs', 'reliability.md'), markdown);
    process.stdout.write(`Wrote docs/reliability.md (${Math.round((Date.now() - started) / 1000)} s)\n`);
  }
  const failures = results.reduce((n, r) => n + r.failures.length, 0);
  for (const r of results) for (const f of r.failures.slice(0, 5)) process.stdout.write(`FAIL row ${r.row.id}: ${f}\n`);
  process.exitCode = failures === 0 ? 0 : 1;
}

if (require.main === module) void main();
