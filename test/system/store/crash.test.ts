import assert from 'node:assert/strict';
import { runCrashRounds } from '../../reliability/crashRounds';

describe('store under SIGKILL', () => {
  it('keeps every acknowledged transition and passes integrity_check over 100 kill-and-reopen rounds', async function () {
    this.timeout(240_000);
    const result = await runCrashRounds({ rounds: 100 });
    assert.deepEqual(result.failures, []);
    // Each round is killed after 1–12 acknowledged transitions (startup rounds after none).
    assert.ok(
      result.acknowledged >= 400,
      `the child got real work done between kills (${result.acknowledged} acknowledged transitions)`,
    );
  });
});
