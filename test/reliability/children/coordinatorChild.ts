/**
 * Child of the coordinator resume tests: a coordinator in its own process, so the parent can
 * SIGKILL or SIGSTOP it while its workers run. Prints one JSON line per thing that happened:
 *   {"taken": {...}}  or  {"held": {...}}   — the lease outcome
 *   {"log": "..."}                           — a coordinator log line
 *   {"outcome": {...}}                       — what run() returned
 *
 *   node coordinatorChild.js <workspace> <runId> <options json: {leaseMs?, maxConcurrency?, holdMs?}>
 */
import { Engine } from '../../../src/engine/index';

async function main(): Promise<void> {
  const [workspace, runId, optionsJson] = process.argv.slice(2) as [string, string, string];
  const options = JSON.parse(optionsJson || '{}') as { leaseMs?: number; maxConcurrency?: number; holdMs?: number };
  const say = (value: unknown): void => {
    process.stdout.write(`${JSON.stringify(value)}\n`);
  };
  const engine = await Engine.open({ workspace, follow: true });
  const taken = await engine.coordinate({
    runId,
    ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
    ...(options.maxConcurrency ? { maxConcurrency: options.maxConcurrency } : {}),
    log: (line) => say({ log: line }),
  });
  if ('heldBy' in taken) {
    say({ held: { holder: taken.heldBy.holder, epoch: taken.heldBy.epoch, why: taken.why } });
    await engine.close();
    return;
  }
  say({ taken: { epoch: taken.coordinator.leaseEpoch, reconcile: taken.reconcile.entries } });
  // Hold the lease a while before driving, so that a rival started at the same time meets it.
  if (options.holdMs) await new Promise((resolve) => setTimeout(resolve, options.holdMs));
  const outcome = await taken.coordinator.run();
  say({ outcome });
  await engine.close();
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
