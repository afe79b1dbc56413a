// What Baton says about a live worker (src/protocol/liveness.ts), and that the Workers view and
// `baton status` say it with the same words (the dashboard's Workers list calls the same
// function; the e2e test reads it there).
import assert from 'node:assert/strict';
import { runtimeTable } from '../../../src/cli/commands/status';
import type { WorkerRuntime } from '../../../src/engine/index';
import type { RunStateCache } from '../../../src/extension/model/runState';
import { workerRows } from '../../../src/extension/model/viewRows';
import { describeLiveness } from '../../../src/protocol/liveness';

const NOW = 1_800_000_000_000;
const S = 1000;

function runtime(extra: Partial<WorkerRuntime>): WorkerRuntime {
  return {
    id: 'W-1',
    runId: 'R-1',
    delegationId: 'D-T1-coder-001',
    epoch: 1,
    leaseMs: 120 * S,
    leaseExpiresAt: NOW + 100 * S,
    claimedAt: NOW - 126 * S,
    heartbeatCount: 0,
    status: 'claimed',
    ...extra,
  };
}

/** A worker Baton started that never sends a beat of its own; its coordinator renewed the lease 3 times. */
const SUPERVISED = runtime({
  pid: 4242,
  processStartedAt: NOW - 125 * S,
  heartbeatCount: 3,
  lastHeartbeatAt: NOW - 20 * S,
  status: 'active',
});

describe('liveness: what the Workers view, the dashboard and `baton status` say of a worker', () => {
  it('a supervised worker with no beats of its own is alive, with its pid and for how long — not "no beat yet"', () => {
    const live = describeLiveness(SUPERVISED, NOW);
    assert.equal(live.state, 'alive');
    assert.equal(live.summary, 'alive 2m 05s · pid 4242');
    assert.equal(live.lease, 'lease 1m 40s');
    assert.match(live.explanation, /^Baton supervises its process 4242 \(for 2m 05s\) and renews its lease/);
  });

  it('the coordinator’s renewals are not the worker’s beats: a worker that beats itself shows its own last beat', () => {
    const live = describeLiveness({ ...SUPERVISED, workerBeatAt: NOW - 3 * S }, NOW);
    assert.equal(live.state, 'active');
    assert.equal(live.summary, 'beat 3s ago');
  });

  it('a claim with neither a process nor a beat says so; a person’s hand-off says who it waits for', () => {
    assert.equal(describeLiveness(runtime({}), NOW).summary, 'no beat yet');
    assert.equal(describeLiveness(runtime({ holder: 'a person (manual)' }), NOW).summary, 'waiting for a person');
  });

  it('stale only once the lease ran out — by the shared clock, before any read says so', () => {
    const lapsed = { ...SUPERVISED, leaseExpiresAt: NOW - 5 * S };
    const live = describeLiveness(lapsed, NOW);
    assert.equal(live.state, 'stale');
    assert.equal(live.summary, 'STALE');
    assert.equal(live.lease, 'lease expired 5s ago');
    assert.equal(describeLiveness({ ...SUPERVISED, leaseExpiresAt: NOW + 1 }, NOW).state, 'alive', 'one ms left');
    assert.equal(describeLiveness(runtime({ status: 'stale', leaseExpiresAt: NOW + 5 * S }), NOW).state, 'stale');
  });

  it('the Workers view row and `baton status` agree, word for word', () => {
    const cache = {
      now: NOW,
      liveRuntimes: () => [{ ...SUPERVISED, taskId: 'T1' }],
      overview: () => undefined, // no agent: nothing spent to show
    } as unknown as RunStateCache;
    const [row] = workerRows(cache);
    assert.equal(row!.row.label, 'T1  D-T1-coder-001');
    assert.equal(row!.row.description, 'alive 2m 05s · pid 4242 · lease 1m 40s');
    assert.match(row!.row.tooltip ?? '', /- alive: Baton supervises its process 4242 \(for 2m 05s\)/);
    const table = runtimeTable(
      { workspace: '/w', output: { json: false, color: false, out() {}, err() {} } },
      [SUPERVISED],
      NOW,
    );
    const line = table.split('\n')[1]!;
    assert.match(line, /^W-1\s+D-T1-coder-001\s+alive\s+alive 2m 05s · pid 4242\s+1m 40s$/);
  });

  it('a process a look found gone is never called alive: "ended", until a coordinator settles its attempt', () => {
    const gone = { ...SUPERVISED, processGone: true as const };
    const live = describeLiveness(gone, NOW);
    assert.equal(live.state, 'gone');
    assert.equal(live.summary, 'ended · pid 4242');
    assert.match(live.explanation, /exit record/);
    assert.equal(describeLiveness({ ...gone, workerBeatAt: NOW - S }, NOW).state, 'gone', 'whatever its beats say');
    const line = runtimeTable(
      { workspace: '/w', output: { json: false, color: false, out() {}, err() {} } },
      [gone],
      NOW,
    ).split('\n')[1]!;
    assert.doesNotMatch(line, /alive/);
    assert.match(line, /^W-1\s+D-T1-coder-001\s+gone\s+ended · pid 4242\s+1m 40s$/);
  });
});
