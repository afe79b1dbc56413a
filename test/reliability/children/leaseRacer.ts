/**
 * Child of the lease-race row (docs/reliability.md, row 5). Races for a run's coordinator
 * lease `rounds` times; each time it holds it, it writes a row under its epoch (refused in
 * the same transaction if the epoch is not current) and lets go. At the end it tries one
 * more write under the first epoch it held, long superseded: that must be refused.
 * Prints `held <epoch> <pid>`, `wrote <epoch>`, and `stale refused|ACCEPTED <epoch>`.
 *
 *   node leaseRacer.js <storeDir> <runId> <rounds>
 */
import { takeCoordinatorLease } from '../../../src/engine/usecases/coordinatorLiveness';
import {
  assertCoordinatorEpoch,
  releaseCoordinatorLease,
} from '../../../src/engine/operations/coordinatorLease/coordinatorLease';
import { BatonError } from '../../../src/engine/domain/errors';
import { selfIdentity } from '../../../src/engine/effects/processes/processes';
import { FileStore } from '../../../src/engine/store/fileStore';

async function main(): Promise<void> {
  const [storeDir, runId, rounds] = process.argv.slice(2) as [string, string, string];
  const store = await FileStore.open(storeDir);
  const identity = selfIdentity();
  const holder = `racer:${process.pid}`;
  let firstEpoch: number | undefined;
  try {
    for (let round = 0; round < Number(rounds); round++) {
      const outcome = await takeCoordinatorLease(
        store,
        { now: () => Date.now() },
        { runId, holder, identity, leaseMs: 5000 },
      );
      if (outcome.acquired) {
        firstEpoch ??= outcome.epoch;
        process.stdout.write(`held ${outcome.epoch} ${process.pid}\n`);
        await store.transact(async (tx) => {
          await assertCoordinatorEpoch(tx, runId, outcome.epoch);
          await tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [
            `epoch-${outcome.epoch}-${process.pid}`,
            outcome.epoch,
          ]);
        });
        process.stdout.write(`wrote ${outcome.epoch}\n`);
        await store.transact((tx) => releaseCoordinatorLease(tx, { runId, epoch: outcome.epoch }, Date.now()));
      }
      await new Promise((r) => setTimeout(r, Math.random() * 3));
    }
    if (firstEpoch !== undefined) {
      try {
        await store.transact(async (tx) => {
          await assertCoordinatorEpoch(tx, runId, firstEpoch!);
          await tx.run(`INSERT INTO counters (name, value) VALUES (?, ?)`, [
            `stale-${firstEpoch}-${process.pid}`,
            firstEpoch!,
          ]);
        });
        process.stdout.write(`stale ACCEPTED ${firstEpoch}\n`);
      } catch (err) {
        if (!BatonError.is(err, 'coordinator.superseded')) throw err;
        process.stdout.write(`stale refused ${firstEpoch}\n`);
      }
    }
  } finally {
    await store.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
