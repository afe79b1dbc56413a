import assert from 'node:assert/strict';
import { withVerifyProcesses } from '../../../../src/engine/domain/stops';

describe('withVerifyProcesses: a stop entry with what ending its verify commands found', () => {
  const entry = { delegationId: 'D-1', processes: [10], confirmed: true, survivors: [] };

  it('adds the processes and survivors of the same attempt, confirmed only if all were', () => {
    assert.deepEqual(
      withVerifyProcesses(entry, [
        { delegationId: 'D-1', processes: [11, 12], confirmed: false, survivors: [12] },
        { delegationId: 'D-2', processes: [20], confirmed: true, survivors: [] },
      ]),
      { delegationId: 'D-1', processes: [10, 11, 12], confirmed: false, survivors: [12] },
    );
  });

  it('leaves the entry as it is when no verify command of its attempt was ended', () => {
    assert.equal(
      withVerifyProcesses(entry, [{ delegationId: 'D-2', processes: [20], confirmed: false, survivors: [20] }]),
      entry,
    );
  });
});
