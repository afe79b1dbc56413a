import assert from 'node:assert/strict';
import { runClaimRace, runRunClaimRace } from '../../reliability/claimRace';
import { sharedPostgresCluster } from '../../support/postgresCluster';

describe('claims racing across processes', () => {
  it('lets exactly one of four processes claim a task, every round of 50, with one run and one delegation', async function () {
    this.timeout(120_000);
    const result = await runClaimRace({ rounds: 50, racers: 4 });
    assert.deepEqual(result.failures, []);
  });
});

describe('claims racing across processes on PostgreSQL', () => {
  it('lets exactly one of four processes claim a task, every round of 20, with one run and one delegation', async function () {
    this.timeout(180_000);
    const cluster = await sharedPostgresCluster();
    const result = await runClaimRace({ rounds: 20, racers: 4, postgresUrl: cluster.url });
    assert.deepEqual(result.failures, []);
  });
});

describe('claims of one run racing across processes on PostgreSQL (claims scoped to the run)', () => {
  it('lets exactly one of four processes claim each task, every round of 200, each task with one attempt', async function () {
    this.timeout(300_000);
    const cluster = await sharedPostgresCluster();
    const result = await runRunClaimRace({ rounds: 200, racers: 4, postgresUrl: cluster.url });
    assert.deepEqual(result.failures, []);
  });
});
