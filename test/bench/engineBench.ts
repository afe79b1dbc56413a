/**
 * Engine rows of `npm run bench` (issue "Performance"): how late an observer process hears a
 * heartbeat another process committed, how long a big store takes to open and recover, and
 * the extension bundle's size.
 *
 *   node --import tsx test/bench/engineBench.ts [--runtimes 200] [--seconds 10] [--delegations 100000] [--lines 10000]
 */
import { spawn, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Engine } from '../../src/engine/index';
import { FileStore, SNAPSHOT_MAX_LINES } from '../../src/engine/store/fileStore';
import { bundleScript } from '../support/bundleScript';
import { makeTempDir } from '../support/tempDir';
import { seedHistory } from './storeBench';
import { summarize, summarizeWithP95, type Summary } from './stats';
import { runScript } from '../support/runScript';

const ROOT = resolve(__dirname, '../..');

export interface EngineBenchOptions {
  runtimes: number;
  seconds: number;
  delegations: number;
  journalLines: number;
  openReps: number;
  log?: (line: string) => void;
}

export interface EngineBenchResult {
  options: EngineBenchOptions;
  heartbeat: {
    beats: number;
    /** Beats whose own count the observer announced (beats between two of its catch-ups are announced once). */
    heard: number;
    /** Runtimes that beat, and those whose last beat the observer announced: every one, on any machine. */
    runtimes: number;
    latestHeard: number;
    commitMs: Summary & { p95: number };
    aboveCommitMs: Summary & { p95: number };
  };
  /** linesAfterSnapshot: journal lines the open replays, counted on disk. */
  open: { openMs: Summary; readMs: Summary; rssMiB: number; bytes: number; linesAfterSnapshot: number };
  bundleBytes: number;
  /** CPU milliseconds (user + system) of `baton status` in an empty folder, a fresh process each. */
  cliStart: { cachedMs: Summary; uncachedMs: Summary; bareNodeMs: Summary };
  /** CPU milliseconds of `baton status` on a workspace with a run: as built, and the bundle on V8's default tiering. */
  cliStore: { builtMs: Summary; defaultTieringMs: Summary };
}

export const ENGINE_TARGETS = { heartbeatP95AboveCommitMs: 25, openMs: 1000, bundleBytes: 1024 * 1024 };

/**
 * The last beat of each runtime among `<runtimeId>/<heartbeatCount>` keys: what an observer announces whatever it
 * coalesced before it.
 */
export function lastBeats(keys: Iterable<string>): string[] {
  const latest = new Map<string, number>();
  for (const key of keys) {
    const [runtimeId, count] = key.split('/') as [string, string];
    latest.set(runtimeId, Math.max(latest.get(runtimeId) ?? 0, Number(count)));
  }
  return [...latest].map(([runtimeId, count]) => `${runtimeId}/${count}`);
}

/**
 * `runtimes` claimed attempts beat at 1 Hz each (spread evenly) from this process; an
 * observer process with its own engine following the store prints when each beat's event
 * fires. Latency above the commit = heard − committed (same host, same wall clock).
 *
 * Heartbeats are announced as state (docs/architecture.md, "heartbeats are not in the event
 * log"): an observer that catches up once after two beats of one runtime announces the later
 * count only. So on a loaded machine `heard` can be below `beats`, while the last beat of every
 * runtime is always heard (`latestHeard`).
 */
async function heartbeatLatency(options: EngineBenchOptions): Promise<EngineBenchResult['heartbeat']> {
  const workspace = makeTempDir('baton-bench-beat-');
  try {
    writeFileSync(
      join(workspace, 'plan.md'),
      Array.from(
        { length: options.runtimes },
        (_, i) => `\`\`\`baton-task\nid: H${i + 1}\nagent: coder\n\`\`\`\nBeat.\n`,
      ).join('\n'),
    );
    // Every runtime is claimed at once: the run's slots (maxConcurrency, at most 256) must hold them all.
    mkdirSync(join(workspace, '.baton'), { recursive: true });
    writeFileSync(join(workspace, '.baton', 'config.json'), JSON.stringify({ maxConcurrency: 256 }));
    const engine = await Engine.open({ workspace });
    try {
      const run = await engine.startRun(join(workspace, 'plan.md'));
      const claims = [];
      for (let i = 0; i < options.runtimes; i++)
        claims.push(await engine.claimTask({ runId: run.id, taskId: `H${i + 1}`, leaseSeconds: 600 }));
      const observer = spawn(process.execPath, [bundleScript('test/bench/children/beatObserver.ts'), workspace], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const heard = new Map<string, number>();
      let buffered = '';
      let ready = false;
      observer.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line === 'ready') ready = true;
          const [runtimeId, count, at] = line.split(' ');
          if (at) heard.set(`${runtimeId}/${count}`, Number(at));
        }
      });
      while (!ready) await new Promise((r) => setTimeout(r, 20));
      const committed = new Map<string, number>();
      const commitMs: number[] = [];
      const interval = 1000 / options.runtimes;
      const start = performance.timeOrigin + performance.now();
      let beats = 0;
      for (let i = 0; (Date.now() - start) / 1000 < options.seconds; i++) {
        const due = start + i * interval;
        const wait = due - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const claim = claims[i % claims.length]!;
        const t0 = Date.now();
        const beat = await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token });
        const t1 = Date.now();
        commitMs.push(t1 - t0);
        committed.set(`${beat.id}/${beat.heartbeatCount}`, t1);
        beats++;
      }
      const latestKeys = lastBeats(committed.keys());
      // Until the last beat of each runtime is heard (at most 60 s): the observer announces in order, so every beat it
      // will ever announce is heard by then; what it coalesced on a loaded machine, it never announces.
      const waitUntil = Date.now() + 60_000;
      while (latestKeys.some((key) => !heard.has(key)) && Date.now() < waitUntil)
        await new Promise((r) => setTimeout(r, 20));
      observer.kill('SIGTERM');
      const above: number[] = [];
      for (const [key, at] of committed) {
        const h = heard.get(key);
        if (h !== undefined) above.push(Math.max(0, h - at));
      }
      return {
        beats,
        heard: above.length,
        runtimes: latestKeys.length,
        latestHeard: latestKeys.filter((key) => heard.has(key)).length,
        commitMs: summarizeWithP95(commitMs),
        aboveCommitMs: summarizeWithP95(above),
      };
    } finally {
      await engine.close();
    }
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

/**
 * A store of `delegations` with `journalLines` after its snapshot, opened by fresh processes; beside it, reading the
 * same bytes.
 */
async function openAndRecover(options: EngineBenchOptions): Promise<EngineBenchResult['open']> {
  const workspace = makeTempDir('baton-bench-open-');
  try {
    const storeDir = join(workspace, '.baton', 'store');
    const quiet = { closeSnapshotMinBytes: Number.POSITIVE_INFINITY };
    await (await Engine.open({ workspace, store: quiet })).close();
    await seedHistory(storeDir, options.delegations, 'minimal', quiet);
    const store = await FileStore.open(storeDir, { ...quiet, snapshotAfterBytes: Number.POSITIVE_INFINITY });
    await store.transact((tx) => tx.run(`UPDATE counters SET value = value WHERE name = 'run'`));
    await store.snapshot();
    // The store snapshots by itself at SNAPSHOT_MAX_LINES lines: one fewer is the most an open ever replays.
    const lines = Math.min(options.journalLines, SNAPSHOT_MAX_LINES - 1);
    for (let i = 0; i < lines; i++)
      await store.transact((tx) => tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [`line-${i}`, i]));
    await store.close();
    const linesAfterSnapshot = journalLinesAfterNewestSnapshot(storeDir);
    const bytes = readdirSync(storeDir).reduce((n, f) => n + statSync(join(storeDir, f)).size, 0);
    const openMs: number[] = [];
    const readMs: number[] = [];
    let rssMiB = 0;
    const script = bundleScript('test/bench/children/storeOpener.ts');
    for (let rep = 0; rep < options.openReps; rep++) {
      const [read] = await runScript(script, ['read', storeDir]);
      readMs.push(Number(read!.split(' ')[0]));
      const [line] = await runScript(script, ['open', storeDir]);
      const [ms, rss] = line!.split(' ').map(Number);
      openMs.push(ms!);
      rssMiB = Math.max(rssMiB, rss!);
      options.log?.(
        `open rep ${rep + 1}: ${ms!.toFixed(0)} ms (reading the bytes: ${readMs.at(-1)!.toFixed(0)} ms), RSS ${rss!.toFixed(0)} MiB`,
      );
    }
    return { openMs: summarize(openMs), readMs: summarize(readMs), rssMiB, bytes, linesAfterSnapshot };
  } finally {
    rmSync(workspace, { recursive: true, force: true });
  }
}

export async function runEngineBench(options: EngineBenchOptions): Promise<EngineBenchResult> {
  const heartbeat = await heartbeatLatency(options);
  options.log?.(
    `heartbeats: ${heartbeat.heard}/${heartbeat.beats} heard; p95 ${heartbeat.aboveCommitMs.p95} ms above the commit`,
  );
  const open = await openAndRecover(options);
  const cliStart = measureCliStart(options.openReps * 4);
  options.log?.(
    `CLI start: ${cliStart.cachedMs.median} ms CPU from the code cache, ${cliStart.uncachedMs.median} ms without`,
  );
  const cliStore = await measureCliOnStore(options.openReps * 4);
  options.log?.(
    `CLI on a store: ${cliStore.builtMs.median} ms CPU as built, ${cliStore.defaultTieringMs.median} ms on V8's default tiering`,
  );
  return {
    options,
    heartbeat,
    open,
    bundleBytes: statSync(join(ROOT, 'dist', 'extension.js')).size,
    cliStart,
    cliStore,
  };
}

/** Prints the process's own CPU time (every thread's) as it exits: a --require, so the CLI itself is unchanged. */
function writeCpuProbe(dir: string): string {
  const probe = join(dir, 'cpu.cjs');
  writeFileSync(
    probe,
    `process.on('exit', () => { const u = process.cpuUsage(); require('node:fs').writeSync(2, '\\ncpu ' + (u.user + u.system) / 1000 + '\\n'); });\n`,
  );
  return probe;
}

function cpuMsOf(probe: string, cwd: string, args: string[]): number {
  const { stderr } = spawnSync(process.execPath, ['--require', probe, ...args], { cwd, encoding: 'utf8' });
  const cpu = /cpu ([0-9.]+)/.exec(stderr);
  if (!cpu) throw new Error(`node ${args.join(' ')} printed no CPU time:\n${stderr}`);
  return Number(cpu[1]);
}

/**
 * The CPU of a command that opens the store: `baton status` on a workspace with a run, as built (dist/cli.js keeps
 * sql.js on V8's baseline WebAssembly compiler: src/cli/bin.ts), and the same bundle started on V8's default
 * tiering, whose optimizing compiler also compiles sql.js's hot functions on background threads.
 */
async function measureCliOnStore(reps: number): Promise<EngineBenchResult['cliStore']> {
  const root = makeTempDir('baton-bench-cli-store-');
  try {
    const workspace = join(root, 'workspace');
    mkdirSync(workspace);
    const tasks = ['T1', 'T2', 'T3'].map((id) => `\`\`\`baton-task\nid: ${id}\nagent: coder\n\`\`\`\n\nDo ${id}.\n`);
    writeFileSync(join(workspace, 'plan.md'), `# Plan\n\n${tasks.join('\n')}`);
    const engine = await Engine.open({ workspace });
    try {
      await engine.startRun('plan.md');
    } finally {
      await engine.close();
    }
    const probe = writeCpuProbe(root);
    // The bundle as Node runs any script: no code cache, V8's flags as they are.
    const plainLauncher = join(root, 'default-tiering.cjs');
    writeFileSync(plainLauncher, `require(${JSON.stringify(join(ROOT, 'dist', 'baton-cli.js'))}).runAsProgram();\n`);
    const built: number[] = [];
    const defaultTiering: number[] = [];
    for (let rep = 0; rep < reps; rep++) {
      built.push(cpuMsOf(probe, workspace, [join(ROOT, 'dist', 'cli.js'), 'status']));
      defaultTiering.push(cpuMsOf(probe, workspace, [plainLauncher, 'status']));
    }
    return { builtMs: summarize(built), defaultTieringMs: summarize(defaultTiering) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * The CPU a command costs before it does anything: `baton status` in an empty folder as built (dist/cli.js runs the
 * bundle from V8's code cache), the same files without the cache, and Node starting with nothing to run. CPU, not
 * wall time, so that other work on the machine changes the figure little; the runs alternate.
 */
function measureCliStart(reps: number): EngineBenchResult['cliStart'] {
  const root = makeTempDir('baton-bench-cli-start-');
  try {
    const uncached = join(root, 'uncached');
    const empty = join(root, 'empty');
    mkdirSync(uncached);
    mkdirSync(empty);
    for (const file of ['cli.js', 'baton-cli.js', 'sql-wasm.wasm'])
      copyFileSync(join(ROOT, 'dist', file), join(uncached, file));
    const probe = writeCpuProbe(root);
    const cpuOf = (args: string[]): number => cpuMsOf(probe, empty, args);
    const cached: number[] = [];
    const plain: number[] = [];
    const bare: number[] = [];
    for (let rep = 0; rep < reps; rep++) {
      cached.push(cpuOf([join(ROOT, 'dist', 'cli.js'), 'status']));
      plain.push(cpuOf([join(uncached, 'cli.js'), 'status']));
      bare.push(cpuOf(['-e', '0']));
    }
    return { cachedMs: summarize(cached), uncachedMs: summarize(plain), bareNodeMs: summarize(bare) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

const fmt = (s: Summary): string => `${s.median.toFixed(1)} ms (${s.min.toFixed(1)}–${s.max.toFixed(1)})`;

export function engineSection(r: EngineBenchResult): string {
  const o = r.options;
  const hb = r.heartbeat;
  const holds = (ok: boolean): string => (ok ? '✓' : '✗');
  return `## Engine rows: heartbeat latency across processes, store open, bundle size

<!-- engine:start — generated by \`npm run bench\` (test/bench/engineBench.ts); \`npm run bench -- --only engine\` rewrites just this section. -->

| what | figure | reference (same run) | target | holds |
|---|---|---|---|---|
| cross-process heartbeat latency: ${o.runtimes} runtimes beating at 1 Hz for ${o.seconds} s (${hb.beats.toLocaleString('en-US')} beats, ${hb.heard.toLocaleString('en-US')} heard) — commit → an observer process's engine event | p95 ${hb.aboveCommitMs.p95.toFixed(0)} ms above the commit (median ${hb.aboveCommitMs.median.toFixed(0)}, max ${hb.aboveCommitMs.max.toFixed(0)}) | the commit itself: median ${hb.commitMs.median.toFixed(1)} ms, p95 ${hb.commitMs.p95.toFixed(1)} ms | p95 ≤ ${ENGINE_TARGETS.heartbeatP95AboveCommitMs} ms above the commit | ${holds(hb.aboveCommitMs.p95 <= ENGINE_TARGETS.heartbeatP95AboveCommitMs)} |
| store open + recovery: ${o.delegations.toLocaleString('en-US')} delegations, ${r.open.linesAfterSnapshot.toLocaleString('en-US')} journal lines after the snapshot (counted on disk) (${(r.open.bytes / 2 ** 20).toFixed(0)} MiB on disk), a fresh process | ${fmt(r.open.openMs)}; RSS ${r.open.rssMiB.toFixed(0)} MiB | reading the same bytes from disk: ${fmt(r.open.readMs)} (${(r.open.openMs.median / Math.max(0.1, r.open.readMs.median)).toFixed(1)}×) | ≤ ${ENGINE_TARGETS.openMs} ms | ${holds(r.open.openMs.median <= ENGINE_TARGETS.openMs)} |
| bundle size: \`dist/extension.js\` (minified, without the 0.6 MiB wasm) | ${(r.bundleBytes / 1024).toFixed(0)} KiB | — | ≤ 1 MiB | ${holds(r.bundleBytes <= ENGINE_TARGETS.bundleBytes)} |
| CLI start: \`baton status\` in an empty folder, a fresh process, CPU time (user + system) | ${fmt(r.cliStart.cachedMs)} from the code cache | the same bundle without its cache: ${fmt(r.cliStart.uncachedMs)} (${(r.cliStart.cachedMs.median / r.cliStart.uncachedMs.median).toFixed(2)}×); Node starting with nothing to run: ${fmt(r.cliStart.bareNodeMs)} | — | — |
| CLI on a store: \`baton status\` on a workspace with a run (the command opens the store), a fresh process, CPU time | ${fmt(r.cliStore.builtMs)} as built (sql.js on V8's baseline compiler) | the same bundle on V8's default tiering: ${fmt(r.cliStore.defaultTieringMs)} (${(r.cliStore.builtMs.median / r.cliStore.defaultTieringMs.median).toFixed(2)}×) | — | — |

The observer is a separate process with its own engine following the store (\`Engine.open({ follow: true })\`):
it hears another process's commit through a file-system watch on the store folder and reads the new journal
lines; the figure is the wall time from the writer's \`heartbeat()\` returning to the observer's event firing.
Open figures are medians of ${o.openReps} fresh processes; CLI figures of ${o.openReps * 4} (docs/architecture.md,
"How the CLI starts").

<!-- engine:end -->
`;
}

async function main(): Promise<void> {
  const arg = (name: string, fallback: number): number => {
    const at = process.argv.indexOf(name);
    return at >= 0 ? Number(process.argv[at + 1]) : fallback;
  };
  const result = await runEngineBench({
    runtimes: arg('--runtimes', 200),
    seconds: arg('--seconds', 10),
    delegations: arg('--delegations', 100_000),
    journalLines: arg('--lines', 10_000),
    openReps: arg('--reps', 5),
    log: (l) => process.stderr.write(`[bench] ${l}\n`),
  });
  process.stdout.write(engineSection(result));
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}

/** Journal lines after the newest snapshot: the lines of the segments that start after it. */
function journalLinesAfterNewestSnapshot(storeDir: string): number {
  const names = readdirSync(storeDir);
  const snapshotSeq = Math.max(
    0,
    ...names
      .map((n) => /^snapshot-(\d+)\.sqlite$/.exec(n))
      .filter((m) => m !== null)
      .map((m) => Number(m[1])),
  );
  let lines = 0;
  for (const name of names) {
    const start = /^journal-(\d+)\.log$/.exec(name);
    if (!start || Number(start[1]) <= snapshotSeq) continue;
    const bytes = readFileSync(join(storeDir, name));
    for (let i = bytes.indexOf(10); i >= 0; i = bytes.indexOf(10, i + 1)) lines++;
  }
  return lines;
}
