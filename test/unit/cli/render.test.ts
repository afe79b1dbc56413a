import assert from 'node:assert/strict';
import { duration } from '../../../src/cli/render';
import { formatDuration } from '../../../src/protocol/time';

/** Issue 24, fix 2 ("durations agree everywhere"): the CLI writes a span of time as the editor's views do. */
describe('the CLI writes durations as the editor does', () => {
  it('3m 04s, not 3m 4s; floored as a stopwatch shows them', () => {
    for (const ms of [0, 999, 12_400, 184_000, 184_900, 3_599_999, 7_380_000])
      assert.equal(duration(ms), formatDuration(ms), `${ms} ms`);
    assert.equal(duration(184_000), '3m 04s');
    assert.equal(duration(7_380_000), '2h 03m');
  });
});
