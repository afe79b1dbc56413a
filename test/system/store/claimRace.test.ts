import assert from 'node:assert/strict';
import { runClaimRace } from '../../reliability/claimRace';

describe('claims racing across processes', () => {
  it('lets exactly one of four processes claim a task, every round of 50, with one run and one delegation', async function () {
    this.timeout(120_000);
    const result = await runClaimRace({ rounds: 50, racers: 4 });
    assert.deepEqual(result.failures, []);
  });
});
