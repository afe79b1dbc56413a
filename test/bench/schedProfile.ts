import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { runSchedBench, type SchedWorkerKind } from './schedBench';

/**
 * Where the coordinator's time goes in the scheduling benchmark. Two modes:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx test/bench/schedProfile.ts run [shell|node] [tasks]
 * [concurrency] [baton|pool]
 *       runs one configuration of one side once (default: Baton), under the profiler of this process
 *   node --import tsx test/bench/schedProfile.ts summarize /tmp/prof/<file>.cpuprofile [top]
 *       self time by source file and by function, and inclusive time of the coordinator's steps
 *
 * The workers are separate processes: the profile is the coordinating process alone.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const REPO = resolve(__dirname, '../..');

function where(url: string): string {
  if (!url) return '(native / VM)';
  const path = url.startsWith('file://') ? url.slice('file://'.length) : url;
  if (path.includes('/node_modules/'))
    return `node_modules/${path
      .split('/node_modules/')
      .pop()!
      .split('/')
      .slice(0, path.includes('/node_modules/@') ? 2 : 1)
      .join('/')}`;
  if (path.startsWith('node:')) return path;
  return path.startsWith('/') ? relative(REPO, path) : path;
}

const FILE_CALLS =
  /^(open|close|read|write|writeBuffer|writeString|writeFileUtf8|readFileUtf8|fstat|stat|lstat|existsSync|mkdir|readdir|copyFile|rename|unlink|fsync|access|realpath)$/;

function categorize(fn: string, file: string): string {
  if (fn === 'fdatasync' || fn === 'fsync') return 'fdatasync / fsync (journal)';
  if (file === 'node:internal/child_process' || file === 'node:child_process')
    return 'spawning processes (fork + exec in ChildProcess.spawn)';
  if (file.startsWith('node_modules/execa')) return 'execa (options, stdio plumbing)';
  if (file.startsWith('wasm://') || file.startsWith('node_modules/sql.js'))
    return 'sql.js (SQLite in WebAssembly and its JS glue)';
  if (fn === 'rowOf' || fn === 'decode' || fn === 'decodeUTF8')
    return 'turning result rows into objects (rowOf, UTF-8 decoding)';
  if (file.startsWith('node_modules/yaml') || file.endsWith('yamlBlock.ts') || file.endsWith('parseResult.ts'))
    return 'parsing plans and result artifacts (yaml)';
  if (FILE_CALLS.test(fn)) return 'other file-system calls (prompt, artifact, log, journal)';
  if (fn === '(garbage collector)') return 'garbage collection';
  if (file.startsWith('src/engine/store/')) return 'store (journal, lock, catch-up) JS';
  if (file.startsWith('src/engine/')) return 'engine JS (coordinator, queue, ingest)';
  if (
    file.startsWith('node:internal/modules') ||
    file.startsWith('node_modules/tsx') ||
    file.startsWith('node_modules/esbuild')
  )
    return 'loading code (tsx, modules)';
  return 'other';
}

/** Self and inclusive milliseconds per profile node, from the samples. */
export function summarizeProfile(profile: CpuProfile, top = 25): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const totalUs = profile.endTime - profile.startTime;
  const idleUs = [...selfUs]
    .filter(([id]) => byId.get(id)!.callFrame.functionName === '(idle)')
    .reduce((s, [, us]) => s + us, 0);

  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const file = frame.functionName.startsWith('(') ? frame.functionName : where(frame.url);
    byFile.set(file, (byFile.get(file) ?? 0) + us);
    const fn = `${frame.functionName || '(anonymous)'} ${where(frame.url)}${frame.url ? `:${frame.lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  // Inclusive time of named engine functions (each counted once per sample, however deep the recursion).
  const inclusive = new Map<string, number>();
  profile.samples.forEach((leaf, i) => {
    const seen = new Set<string>();
    for (let id: number | undefined = leaf; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!.callFrame;
      if (!frame.url.includes('/src/engine/') || !frame.functionName) continue;
      const key = `${frame.functionName} ${where(frame.url)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0));
    }
  });
  // Self time in broad categories: what a scheduling pass is made of.
  const byCategory = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === '(idle)') continue;
    const category = categorize(frame.functionName, where(frame.url));
    byCategory.set(category, (byCategory.get(category) ?? 0) + us);
  }
  const ms = (us: number): string => (us / 1000).toFixed(0).padStart(7);
  const table = (title: string, m: Map<string, number>): string[] => [
    title,
    ...[...m]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${ms(us)} ms ${((100 * us) / (totalUs - idleUs)).toFixed(1).padStart(5)}%  ${k}`),
    '',
  ];
  return [
    `profile: ${ms(totalUs)} ms wall, ${ms(totalUs - idleUs)} ms busy (on the main thread), ${ms(idleUs)} ms idle`,
    '',
    ...table('self time by file (% of busy)', byFile),
    ...table('self time by function', byFunction),
    ...table('inclusive time of engine functions', inclusive),
    ...table('self time by category', byCategory),
  ].join('\n');
}

async function main(argv: string[]): Promise<void> {
  const [mode, ...rest] = argv;
  if (mode === 'summarize') {
    const [file, top] = rest;
    if (!file) throw new Error('summarize needs a .cpuprofile file');
    process.stdout.write(
      `${summarizeProfile(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, Number(top ?? 25))}\n`,
    );
    return;
  }
  if (mode !== 'run')
    throw new Error(
      'usage: schedProfile.ts run [shell|node] [tasks] [concurrency] [baton|pool] | summarize <file.cpuprofile> [top]',
    );
  const worker = (rest[0] ?? 'shell') as SchedWorkerKind;
  const tasks = Number(rest[1] ?? 500);
  const concurrency = Number(rest[2] ?? 1);
  const side = (rest[3] ?? 'baton') as 'baton' | 'pool';
  const result = await runSchedBench({
    tasks: worker === 'shell' ? tasks : 0,
    nodeTasks: worker === 'node' ? tasks : 0,
    concurrency: [concurrency],
    reps: 1,
    sides: [side],
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const config = result.configs[0]!;
  const rep = config[side][0]!;
  process.stderr.write(
    `${side} ${(rep.wallMs / 1000).toFixed(2)} s, ${rep.parentCpuMsPerTask.toFixed(2)} ms CPU per task in this process${rep.commitsPerTask !== undefined ? `, ${rep.commitsPerTask.toFixed(2)} commits per task` : ''}\n`,
  );
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
}
