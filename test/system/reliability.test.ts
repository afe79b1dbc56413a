import assert from 'node:assert/strict';
import { ROWS, runMatrix } from '../reliability/matrix';

/** Every row of the fault matrix, with a few trials: the figures come from `npm run test:reliability`. */
describe('fault matrix (docs/reliability.md), every row with a few trials', function () {
  this.timeout(180_000);
  // A row with smoke 0 runs as a system test of its own (its injection names it).
  for (const row of ROWS.filter((r) => r.smoke > 0)) {
    it(`row ${row.id}: ${row.fault} → ${row.guarantee}`, async () => {
      const [result] = await runMatrix({ scale: 'smoke', rows: [row.id] });
      assert.ok(result && result.trials > 0, `the row ran: ${result?.failures.join('\n') ?? 'no result'}`);
      assert.deepEqual(result.failures, [], result.note);
    });
  }
});
