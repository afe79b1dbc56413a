// The coordinator's dispatch decision is a pure function of a snapshot and its own state:
// tested here with plain objects (no store, no processes, no clock).
import assert from 'node:assert/strict';
import {
  passOutcome,
  planDispatch,
  type CoordinatorView,
  type DispatchSnapshot,
} from '../../../src/engine/executor/dispatchPass';
import { exitCodeFor } from '../../../src/cli/commands/drive';

const NOW = 1_000_000;

function snapshot(over: Partial<DispatchSnapshot> = {}): DispatchSnapshot {
  return {
    now: NOW,
    run: { status: 'running', stopMode: null },
    ready: [],
    verifying: [],
    openGates: 0,
    leased: [],
    ...over,
  };
}

function view(over: Partial<CoordinatorView> = {}): CoordinatorView {
  return {
    maxConcurrency: 2,
    busySlots: 0,
    tasksInFlight: new Set(),
    ownDelegations: new Set(),
    finishing: new Set(),
    cannotFinish: new Set(),
    halted: false,
    ...over,
  };
}

const ready = (...ids: string[]): DispatchSnapshot['ready'] => ids.map((id) => ({ id, notBefore: null }));

describe('dispatch pass (pure)', () => {
  describe('slots', () => {
    it('offers the ready tasks in plan order while a slot is free', () => {
      assert.deepEqual(planDispatch(snapshot({ ready: ready('A', 'B', 'C') }), view()).candidates, ['A', 'B', 'C']);
    });

    it('offers nothing when every slot is busy', () => {
      const plan = planDispatch(snapshot({ ready: ready('A', 'B') }), view({ maxConcurrency: 2, busySlots: 2 }));
      assert.deepEqual(plan.candidates, []);
    });

    it("counts external workers' claims against maxConcurrency (a person's hand-off holds no slot)", () => {
      const external = { delegationId: 'D-X-coder-001', taskId: 'X', leaseExpiresAt: NOW + 60_000 };
      const full = planDispatch(
        snapshot({ ready: ready('A', 'B'), leased: [external] }),
        view({ maxConcurrency: 2, busySlots: 1 }),
      );
      assert.deepEqual(full.candidates, [], 'one own worker and one external claim fill 2 slots');
      const handOff = planDispatch(
        snapshot({ ready: ready('A', 'B'), leased: [{ ...external, handOff: true }] }),
        view({ maxConcurrency: 2, busySlots: 1 }),
      );
      assert.deepEqual(handOff.candidates, ['A', 'B']);
    });

    it('skips a task that already has an attempt of this coordinator', () => {
      const plan = planDispatch(
        snapshot({ ready: ready('A', 'B') }),
        view({ tasksInFlight: new Set(['A']), busySlots: 1 }),
      );
      assert.deepEqual(plan.candidates, ['B']);
    });
  });

  describe('backoff', () => {
    it('holds a task back until its backoff ends and wakes at that moment', () => {
      const plan = planDispatch(
        snapshot({
          ready: [
            { id: 'A', notBefore: NOW + 5000 },
            { id: 'B', notBefore: null },
            { id: 'C', notBefore: NOW + 2000 },
          ],
        }),
        view(),
      );
      assert.deepEqual(plan.candidates, ['B']);
      assert.equal(plan.waitingForBackoff, true);
      assert.equal(plan.wakeAt, NOW + 2000, 'the earliest backoff');
    });

    it('dispatches a task whose backoff has ended', () => {
      const plan = planDispatch(snapshot({ ready: [{ id: 'A', notBefore: NOW }] }), view());
      assert.deepEqual(plan.candidates, ['A']);
      assert.equal(plan.waitingForBackoff, false);
      assert.equal(plan.wakeAt, undefined);
    });
  });

  describe('stops, supersession and gates', () => {
    for (const run of [
      { status: 'running' as const, stopMode: 'graceful' as const },
      { status: 'stopping' as const, stopMode: 'immediate' as const },
      { status: 'superseded' as const, stopMode: null },
      { status: 'cancelled' as const, stopMode: null },
    ]) {
      it(`starts nothing in a run that is ${run.status}${run.stopMode ? ` (${run.stopMode} stop)` : ''}`, () => {
        assert.deepEqual(planDispatch(snapshot({ run, ready: ready('A') }), view()).candidates, []);
      });
    }

    it('starts nothing while the coordinator is halted (shutting down or superseded)', () => {
      assert.deepEqual(planDispatch(snapshot({ ready: ready('A') }), view({ halted: true })).candidates, []);
    });

    it('with --task, offers only the selected tasks', () => {
      const plan = planDispatch(snapshot({ ready: ready('A', 'B', 'C') }), view({ selected: ['C'] }));
      assert.deepEqual(plan.candidates, ['C']);
    });
  });

  describe('attempts held elsewhere and verifications', () => {
    it('waits for an attempt an external worker holds and wakes when its lease runs out', () => {
      const plan = planDispatch(
        snapshot({
          leased: [
            { delegationId: 'D-A-coder-001', taskId: 'A', leaseExpiresAt: NOW + 9000 },
            { delegationId: 'D-B-coder-001', taskId: 'B', leaseExpiresAt: NOW + 3000 },
          ],
        }),
        view({ ownDelegations: new Set(['D-B-coder-001']) }),
      );
      assert.equal(plan.heldElsewhere, 1, 'its own attempt is not held elsewhere');
      assert.equal(plan.wakeAt, NOW + 9000);
    });

    it('waits for no person: a predecessor’s manual hand-off is counted apart and never waited for', () => {
      const plan = planDispatch(
        snapshot({
          leased: [
            { delegationId: 'D-A-coder-001', taskId: 'A', leaseExpiresAt: NOW + 7 * 86_400_000, handOff: true },
            { delegationId: 'D-B-coder-001', taskId: 'B', leaseExpiresAt: NOW + 9000, handOff: true },
          ],
        }),
        view({ ownDelegations: new Set(['D-B-coder-001']) }),
      );
      assert.equal(plan.heldElsewhere, 0);
      assert.equal(plan.handOffs, 1, 'its own hand-off is counted by the coordinator itself');
      assert.equal(plan.wakeAt, undefined, 'no wake for a week-long lease');
    });

    it('ignores attempts held elsewhere on tasks outside --task', () => {
      const plan = planDispatch(
        snapshot({ leased: [{ delegationId: 'D-A-coder-001', taskId: 'A', leaseExpiresAt: NOW + 9000 }] }),
        view({ selected: ['B'] }),
      );
      assert.equal(plan.heldElsewhere, 0);
      assert.equal(plan.wakeAt, undefined);
    });

    it('finishes verifying tasks that have no attempt of its own, once, and not those it could not finish', () => {
      const plan = planDispatch(
        snapshot({ verifying: ['A', 'B', 'C', 'D'] }),
        view({ tasksInFlight: new Set(['A']), finishing: new Set(['B']), cannotFinish: new Set(['C']) }),
      );
      assert.deepEqual(plan.finish, ['D']);
    });
  });

  describe('outcome of a pass', () => {
    const idle = { waitingForBackoff: false, heldElsewhere: 0 };
    const base = { inFlight: 0, plan: idle, openGates: 0, stopped: false, readyCount: 0 };

    it('goes on while anything is in flight, backing off, or held elsewhere', () => {
      assert.equal(passOutcome({ ...base, inFlight: 1, runStatus: 'completed' }), undefined);
      assert.equal(
        passOutcome({ ...base, plan: { ...idle, waitingForBackoff: true }, runStatus: 'failed' }),
        undefined,
      );
      assert.equal(passOutcome({ ...base, plan: { ...idle, heldElsewhere: 1 }, runStatus: 'paused' }), undefined);
    });

    it('reports a run that ended', () => {
      for (const status of ['completed', 'failed', 'blocked', 'cancelled', 'superseded'] as const) {
        assert.deepEqual(passOutcome({ ...base, runStatus: status }), { kind: 'finished', status });
      }
    });

    it('reports a run that waits on a person or a stop, with its open gates', () => {
      assert.deepEqual(passOutcome({ ...base, runStatus: 'paused', openGates: 2 }), {
        kind: 'paused',
        status: 'paused',
        openGates: 2,
        stopped: false,
      });
      assert.deepEqual(passOutcome({ ...base, runStatus: 'stopping', stopped: true }), {
        kind: 'paused',
        status: 'stopping',
        openGates: 0,
        stopped: true,
      });
    });

    it("says when the stop it paused on is a cancel's (start exits 0, not 8), and only for a stop", () => {
      const paused = passOutcome({ ...base, runStatus: 'stopping', stopped: true, cancelling: true });
      assert.deepEqual(paused, { kind: 'paused', status: 'stopping', openGates: 0, stopped: true, cancelling: true });
      assert.equal(exitCodeFor(paused!), 0);
      const byPerson = passOutcome({ ...base, runStatus: 'stopping', stopped: true });
      assert.equal(exitCodeFor(byPerson!), 8);
      assert.equal(passOutcome({ ...base, runStatus: 'paused', openGates: 1, cancelling: true })!.kind, 'paused');
      assert.equal(exitCodeFor(passOutcome({ ...base, runStatus: 'paused', openGates: 1, cancelling: true })!), 8);
    });

    it('pauses (exit 8) when only a person’s hand-offs are left, the run still running behind their gates', () => {
      const plan = { waitingForBackoff: false, heldElsewhere: 0, handOffs: 1 };
      assert.deepEqual(passOutcome({ ...base, plan, runStatus: 'running', openGates: 1 }), {
        kind: 'paused',
        status: 'running',
        openGates: 1,
        stopped: false,
        handOffs: 1,
      });
      assert.equal(passOutcome({ ...base, plan, runStatus: 'running', openGates: 1, readyCount: 1 }), undefined);
    });

    it('is idle when the run goes on but nothing it may dispatch is ready', () => {
      assert.deepEqual(passOutcome({ ...base, runStatus: 'running' }), {
        kind: 'idle',
        status: 'running',
        reason: 'nothing is ready to run',
      });
      assert.deepEqual(passOutcome({ ...base, runStatus: 'running', selected: ['T1'] }), {
        kind: 'idle',
        status: 'running',
        reason: 'the selected tasks are done or waiting',
      });
    });

    it('goes on when ready tasks remain (held back by overlap or isolation this pass)', () => {
      assert.equal(passOutcome({ ...base, runStatus: 'running', readyCount: 1 }), undefined);
    });
  });
});
