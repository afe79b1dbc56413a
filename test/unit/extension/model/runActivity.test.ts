import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import type { CoordinatorState, Gate, Run, RunOverview } from '../../../../src/engine/index';
import { runActivity } from '../../../../src/extension/model/viewRows';

// The shown state of a run, from plain facts: the invariant every surface relies on is that a
// run says "running" (or "stopping") only while a live coordinator holds its lease.

const NOW = 1_000_000;

function run(status: Run['status'], extra: Partial<Run> = {}): Run {
  return { id: 'R-1', planPath: 'plan.md', planDigest: 'sha256:x', status, createdAt: 0, updatedAt: 0, ...extra };
}

function lease(extra: Partial<CoordinatorState> = {}): CoordinatorState {
  return {
    runId: 'R-1',
    holder: 'box:4242',
    identity: { pid: 4242, startTime: '1', host: 'box' },
    epoch: 3,
    expiresAt: NOW + 20_000,
    ...extra,
  };
}

function gate(status: Gate['status'] = 'open'): Gate {
  return {
    id: 'G-1',
    runId: 'R-1',
    kind: 'isolation',
    status,
    reason: 'the working tree has uncommitted changes',
    details: {},
    openedAt: 0,
  } as Gate;
}

function view(r: Run, facts: { lease?: CoordinatorState; gates?: Gate[] } = {}): RunOverview {
  return {
    run: r,
    tasks: [],
    delegations: [],
    runtimes: [],
    gates: facts.gates ?? [],
    usage: [],
    ...(facts.lease ? { coordinatorLease: facts.lease } : {}),
  };
}

describe('the shown state of a run (viewRows.runActivity)', () => {
  it('says running only while a live coordinator holds the lease', () => {
    const running = run('running');
    const shown = runActivity(running, view(running, { lease: lease() }), NOW);
    assert.deepEqual([shown.kind, shown.label, shown.action], ['running', 'running', undefined]);
    assert.equal(shown.detail, 'Driven by box:4242.');
    const here = lease({ identity: { pid: process.pid, startTime: '1', host: hostname() } });
    assert.equal(runActivity(running, view(running, { lease: here }), NOW).detail, 'Driven by this window.');
  });

  it('says a run with work to do and a lease that ran out is waiting for a coordinator, how long ago, and offers Resume', () => {
    const running = run('running');
    const shown = runActivity(running, view(running, { lease: lease({ expiresAt: NOW - 5_000 }) }), NOW);
    assert.deepEqual(
      [shown.kind, shown.label, shown.action],
      ['waiting-coordinator', 'waiting for a coordinator', 'resume'],
    );
    assert.match(shown.detail, /the lease of its coordinator \(box:4242\) ran out 5s ago\. Resume continues it/);
    // The same facts a moment earlier: the lease still held.
    assert.equal(
      runActivity(running, view(running, { lease: lease({ expiresAt: NOW - 5_000 }) }), NOW - 6_000).kind,
      'running',
    );
  });

  it('names why nothing drives it: never driven, let go, handed over, holder gone or stopped', () => {
    const running = run('running');
    const why = (l?: CoordinatorState): string =>
      runActivity(running, view(running, l ? { lease: l } : {}), NOW).detail;
    assert.match(why(), /no coordinator has taken it yet/);
    assert.match(why(lease({ releasedAt: NOW - 1 })), /its coordinator \(box:4242\) let go/);
    assert.match(
      why(lease({ releasedAt: NOW - 1, handedOver: { workers: 2 } })),
      /Its window closed with 2 workers left running, for the next window to adopt/,
    );
    assert.match(why(lease({ holderProcess: 'gone' })), /its coordinator \(box:4242\) is gone/);
    assert.match(why(lease({ holderProcess: 'stopped' })), /is stopped \(Ctrl-Z or a debugger\)/);
    for (const l of [
      undefined,
      lease({ releasedAt: NOW - 1 }),
      lease({ holderProcess: 'gone' }),
      lease({ holderProcess: 'stopped' }),
    ])
      assert.equal(runActivity(running, view(running, l ? { lease: l } : {}), NOW).kind, 'waiting-coordinator');
  });

  it('says a paused run with open gates waits for a decision, with their number', () => {
    const paused = run('paused');
    const shown = runActivity(
      paused,
      view(paused, { gates: [gate(), { ...gate(), id: 'G-2' }, gate('approved')] }),
      NOW,
    );
    assert.deepEqual(
      [shown.kind, shown.label, shown.action, shown.gates],
      ['waiting-decision', 'waiting for a decision (2 gates)', 'decide', 2],
    );
  });

  it('says a stopped run is stopped and offers Resume, gates or not', () => {
    const stopped = run('paused', { stopMode: 'immediate' });
    for (const gates of [[], [gate()]]) {
      const shown = runActivity(stopped, view(stopped, { gates }), NOW);
      assert.deepEqual([shown.kind, shown.label, shown.action], ['stopped', 'stopped', 'resume']);
    }
  });

  it('says stopping only while a coordinator applies the stop; without one it waits for a coordinator', () => {
    const stopping = run('stopping', { stopMode: 'graceful' });
    assert.equal(runActivity(stopping, view(stopping, { lease: lease() }), NOW).kind, 'stopping');
    const undriven = runActivity(stopping, view(stopping, { lease: lease({ expiresAt: NOW - 1 }) }), NOW);
    assert.equal(undriven.kind, 'waiting-coordinator');
    assert.match(undriven.detail, /^A graceful stop is in force and no coordinator applies it\./);
  });

  it('says an ended run ended, whoever held it last', () => {
    for (const status of ['completed', 'failed', 'blocked', 'cancelled', 'superseded'] as const) {
      const ended = run(status);
      const shown = runActivity(ended, view(ended, { lease: lease({ expiresAt: NOW - 1 }) }), NOW);
      assert.deepEqual([shown.kind, shown.label, shown.action], ['ended', status, undefined]);
    }
  });

  it('says a cancelled run was cancelled — not that it waits for a coordinator — with or without a lease', () => {
    const cancelled = run('cancelled', { stopMode: 'immediate' });
    for (const facts of [{}, { lease: lease({ releasedAt: NOW - 1 }) }, { lease: lease() }]) {
      const shown = runActivity(cancelled, view(cancelled, facts), NOW);
      assert.deepEqual([shown.kind, shown.label, shown.action], ['ended', 'cancelled', undefined]);
      assert.match(shown.detail, /^It was cancelled/);
    }
  });
});
