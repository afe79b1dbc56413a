import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summarizeProfile } from './schedProfile';
import { prepareBaton } from './storeBench';

/**
 * Where a Baton store commit's time goes (row 1 of the store benchmark):
 *
 *   node --import tsx test/bench/storeProfile.ts [size] [cycles] [chains] [out.cpuprofile]
 *
 * Seeds a store of `size` delegations exactly as the benchmark does, then profiles only the
 * timed claim → heartbeat → ingest cycles, run by `chains` callers at once (the V8 profiler is
 * started around them), and prints the summary of schedProfile.ts.
 */
async function main(argv: string[]): Promise<void> {
  const size = Number(argv[0] ?? 1000);
  const cycles = Number(argv[1] ?? 2000);
  const chains = Number(argv[2] ?? 1);
  const out = argv[3];
  const dir = mkdtempSync(join(tmpdir(), 'baton-store-profile-'));
  try {
    const baton = await prepareBaton(dir, size, {
      sizes: [size],
      reps: 2,
      cyclesAt: () => cycles,
      warmupCycles: 20,
      sqlJsCyclesAt: () => 0,
      history: 'minimal',
    });
    await baton.rep(Math.min(cycles, 200), 20, chains); // warm up: JIT, prepared statements, page cache
    const session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    const rep = await baton.rep(cycles, 0, chains);
    const { profile } = await session.post('Profiler.stop');
    session.disconnect();
    if (out) writeFileSync(out, JSON.stringify(profile));
    process.stdout.write(
      `${rep.rate.toFixed(0)} commits/s; per commit ${rep.flushMsPerCommit.toFixed(3)} ms in fdatasync, ${rep.otherMsPerCommit.toFixed(3)} ms outside\n\n`,
    );
    process.stdout.write(`${summarizeProfile(profile as never, 30)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
