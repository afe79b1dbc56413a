/**
 * The two-machine row of the PostgreSQL section (issue 26, "Every machine works"): one run of N short tasks driven by
 * one `baton start`, against the same run driven by a `baton start` and a second machine's `baton resume` that joins
 * it — two workspaces told apart by BATON_HOST_ID, the built CLI, on the bench's own cluster. Each task is a worker
 * process that sleeps `taskMs` and exits 0 (`"result": "exit-code"`), so the figure is how the run's work spreads over
 * the machines, not how fast this machine's two cores start processes.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { PostgresCluster } from '../support/postgresCluster';
import { makeTempDir } from '../support/tempDir';
import { summarize, type Summary } from './stats';

export interface TwoHostsOptions {
  /** Tasks of the run (0 skips the row). */
  tasks: number;
  taskMs: number;
  /** Each machine's maxConcurrency. */
  concurrency: number;
  reps: number;
}

export interface TwoHostsResult {
  options: TwoHostsOptions;
  /** Wall seconds from the first `baton start` to the last coordinator's exit, one per repetition. */
  oneHost: number[];
  twoHosts: number[];
  oneHostSummary: Summary;
  twoHostsSummary: Summary;
  /** Tasks the second machine ran, per repetition. */
  joinedTasks: number[];
}

const CLI = resolve(__dirname, '../../dist/cli.js');

/** A workspace of the run: its config (the store in `schema`), its plan of `tasks` independent tasks. */
function workspace(root: string, name: string, schema: string, options: TwoHostsOptions): string {
  const dir = join(root, name);
  mkdirSync(join(dir, '.baton'), { recursive: true });
  writeFileSync(
    join(dir, '.baton', 'config.json'),
    JSON.stringify({
      store: { kind: 'postgres', schema },
      isolation: 'none',
      maxConcurrency: options.concurrency,
      defaultWorker: 'sleep',
      workers: {
        sleep: {
          type: 'process',
          command: process.execPath,
          args: ['-e', `setTimeout(() => {}, ${options.taskMs})`],
          result: 'exit-code',
        },
      },
    }),
  );
  const blocks = Array.from(
    { length: options.tasks },
    (_, i) => `\`\`\`baton-task\nid: T${i + 1}\ntitle: Task ${i + 1}\nagent: coder\n\`\`\`\n\nStep ${i + 1}.\n`,
  );
  writeFileSync(join(dir, 'plan.md'), `# Plan\n\n${blocks.join('\n')}`);
  return dir;
}

/** Runs the CLI in `cwd`; resolves with its exit code and output once it exits. */
function baton(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  onOutput?: (text: string) => void,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const gather = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
      onOutput?.(output);
    };
    child.stdout.on('data', gather);
    child.stderr.on('data', gather);
    child.on('exit', (code) => resolveRun({ code, output }));
  });
}

export async function runTwoHosts(
  cluster: PostgresCluster,
  options: TwoHostsOptions,
  log: (line: string) => void = () => undefined,
): Promise<TwoHostsResult> {
  const root = makeTempDir('baton-bench-team-');
  const base = { ...process.env, BATON_STORE_URL: cluster.url, NO_COLOR: '1' };
  const oneHost: number[] = [];
  const twoHosts: number[] = [];
  const joinedTasks: number[] = [];
  try {
    for (let rep = 0; rep < options.reps; rep++) {
      // One machine.
      {
        const a = workspace(root, `one-${rep}`, `bench_team_one_${rep}`, options);
        const started = Date.now();
        const run = await baton(['start', 'plan.md'], a, { ...base, BATON_HOST_ID: 'bench-a' });
        if (run.code !== 0) throw new Error(`one machine's run did not complete (exit ${run.code}):\n${run.output}`);
        oneHost.push((Date.now() - started) / 1000);
      }
      // Two machines: B joins as soon as A's run exists.
      {
        const schema = `bench_team_two_${rep}`;
        const a = workspace(root, `two-a-${rep}`, schema, options);
        const b = workspace(root, `two-b-${rep}`, schema, options);
        const started = Date.now();
        let joined: Promise<{ code: number | null; output: string }> | undefined;
        const first = baton(['start', 'plan.md'], a, { ...base, BATON_HOST_ID: 'bench-a' }, (text) => {
          if (!joined && /delegation:claimed/.test(text))
            joined = baton(['resume'], b, { ...base, BATON_HOST_ID: 'bench-b' });
        });
        const runA = await first;
        const runB = joined ? await joined : { code: null, output: 'never started' };
        if (runA.code !== 0 || runB.code !== 0)
          throw new Error(`the two machines' run did not complete (exits ${runA.code}, ${runB.code}):\n${runB.output}`);
        twoHosts.push((Date.now() - started) / 1000);
        joinedTasks.push((runB.output.match(/runtime:started .* on bench-b/g) ?? []).length);
      }
      log(`two hosts rep ${rep + 1}: one ${oneHost.at(-1)!.toFixed(1)} s, two ${twoHosts.at(-1)!.toFixed(1)} s`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return {
    options,
    oneHost,
    twoHosts,
    oneHostSummary: summarize(oneHost),
    twoHostsSummary: summarize(twoHosts),
    joinedTasks,
  };
}
