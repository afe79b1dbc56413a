import assert from 'node:assert/strict';
import { runCrashRounds } from '../../reliability/crashRounds';
import { sharedPostgresCluster } from '../../support/postgresCluster';

describe('store under SIGKILL', () => {
  it('keeps every acknowledged transition and passes integrity_check over 40 kill-and-reopen rounds', async function () {
    // A hang detector: each round starts a process that opens the store; on a machine at load 10 a round takes seconds.
    this.timeout(900_000);
    // 40 rounds here, 1000 in `npm run test:crash`: each round is a process that opens the store (about a CPU-second),
    // and this file was the longest of the system tier at 100.
    const result = await runCrashRounds({ rounds: 40 });
    assert.deepEqual(result.failures, []);
    // Each round is killed after 1–12 acknowledged transitions (startup rounds after none).
    assert.ok(
      result.acknowledged >= 160,
      `the child got real work done between kills (${result.acknowledged} acknowledged transitions)`,
    );
  });
});

describe('PostgreSQL store under SIGKILL', () => {
  it('keeps every acknowledged transition over 20 kill-and-reopen rounds of clients killed mid-transaction', async function () {
    this.timeout(600_000);
    const cluster = await sharedPostgresCluster();
    const result = await runCrashRounds({ rounds: 20, postgresUrl: cluster.url });
    assert.deepEqual(result.failures, []);
    assert.ok(result.acknowledged >= 60, `the child got real work done between kills (${result.acknowledged})`);
  });
});
