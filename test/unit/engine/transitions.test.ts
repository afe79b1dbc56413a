import assert from 'node:assert/strict';
import { BatonError } from '../../../src/engine/domain/errors';
import { canHeartbeat, deriveRuntimeStatus } from '../../../src/engine/domain/transitions';
import {
  DELEGATION_STATUSES,
  TASK_STATUSES,
  type DelegationStatus,
  type TaskStatus,
} from '../../../src/engine/domain/types';
import { setTaskStatus } from '../../../src/engine/operations/tasks/setTaskStatus';
import { enqueueDelegation } from '../../../src/engine/operations/delegations/enqueueDelegation';
import { getDelegation } from '../../../src/engine/queries/delegations';
import { transitionDelegation } from '../../../src/engine/operations/delegations/transitionDelegation';
import { FileStore } from '../../../src/engine/store/fileStore';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/**
 * The delegation state machine as docs/architecture.md draws it, written out here and not
 * read from src/engine/domain/transitions.ts, so a change to the code's table fails these tests:
 *
 *   PENDING ─► RUNNING ─► COMPLETED | FAILED | STALE | CANCELLED
 *      │          └─────► BLOCKED ─► COMPLETED | FAILED | CANCELLED
 *      └─► CANCELLED
 */
const DOCUMENTED_MOVES: Record<DelegationStatus, DelegationStatus[]> = {
  PENDING: ['RUNNING', 'CANCELLED'],
  RUNNING: ['COMPLETED', 'FAILED', 'STALE', 'CANCELLED', 'BLOCKED'],
  BLOCKED: ['COMPLETED', 'FAILED', 'CANCELLED'],
  COMPLETED: [],
  FAILED: [],
  CANCELLED: [],
  STALE: [],
};

/** The legal path from PENDING to each status. */
const PATH_TO: Record<DelegationStatus, DelegationStatus[]> = {
  PENDING: [],
  RUNNING: ['RUNNING'],
  COMPLETED: ['RUNNING', 'COMPLETED'],
  FAILED: ['RUNNING', 'FAILED'],
  BLOCKED: ['RUNNING', 'BLOCKED'],
  CANCELLED: ['CANCELLED'],
  STALE: ['RUNNING', 'STALE'],
};

describe('delegation transitions', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = new EngineFixture()));
  afterEach(() => fixture.dispose());

  for (const from of DELEGATION_STATUSES) {
    const legal = DOCUMENTED_MOVES[from];
    it(`from ${from}: allows exactly ${legal.join(', ') || 'nothing (terminal: a retry is a new delegation)'}, in the store`, async () => {
      fixture.write('plan.md', DEMO_PLAN);
      const engine = await fixture.open();
      const run = await engine.startRun('plan.md');
      await engine.close();
      const store = await FileStore.open(`${fixture.workspace}/.baton/store`);
      try {
        for (const to of DELEGATION_STATUSES) {
          // A fresh delegation per target status, walked to `from` along legal moves.
          const id = await store.transact(async (tx) => {
            await tx.run(`DELETE FROM delegations WHERE run_id = ? AND task_id = 'T5'`, [run.id]);
            let d = await enqueueDelegation(tx, { runId: run.id, taskId: 'T5' }, 0);
            for (const step of PATH_TO[from]) d = await transitionDelegation(tx, d, step, {}, 0);
            return d.id;
          });
          const attempt = store.transact(async (tx) =>
            transitionDelegation(tx, (await getDelegation(tx, run.id, id))!, to, { reason: 'test' }, 1),
          );
          if (legal.includes(to)) {
            assert.equal((await attempt).status, to, `${from} → ${to} is legal`);
          } else {
            await assert.rejects(
              attempt,
              (err) => BatonError.is(err, 'delegation.illegal-transition'),
              `${from} → ${to} is illegal`,
            );
            const still = await store.read((r) =>
              r.get<{ status: string }>(`SELECT status FROM delegations WHERE run_id = ? AND id = ?`, [run.id, id]),
            );
            assert.equal(still?.status, from, 'a refused transition writes nothing');
          }
        }
      } finally {
        await store.close();
      }
    });
  }

  it('refuses a transition from a status the delegation no longer has (compare-and-set)', async () => {
    fixture.write('plan.md', DEMO_PLAN);
    const engine = await fixture.open();
    const run = await engine.startRun('plan.md');
    await engine.close();
    const store = await FileStore.open(`${fixture.workspace}/.baton/store`);
    try {
      const seen = await store.transact(async (tx) => enqueueDelegation(tx, { runId: run.id, taskId: 'T5' }, 0));
      await store.transact(async (tx) => transitionDelegation(tx, seen, 'CANCELLED', {}, 1));
      await assert.rejects(
        store.transact(async (tx) => transitionDelegation(tx, seen, 'RUNNING', {}, 2)),
        (err) => BatonError.is(err, 'delegation.changed-meanwhile'),
      );
    } finally {
      await store.close();
    }
  });
});

describe('gate transitions', () => {
  it('deciding a gate that does not exist is refused as gate.unknown and writes nothing', async () => {
    const fixture = new EngineFixture();
    try {
      fixture.write('plan.md', DEMO_PLAN);
      const engine = await fixture.open();
      const run = await engine.startRun('plan.md');
      const before = await engine.listEvents(run.id);
      await assert.rejects(
        engine.decideGate({ gateId: 'G-99', decision: 'approved', by: 'ann' }),
        (err) => BatonError.is(err, 'gate.unknown') && /There is no gate G-99/.test(err.message),
      );
      assert.deepEqual(await engine.listEvents(run.id), before);
      assert.deepEqual(
        (await engine.listGates({ runId: run.id })).map((g) => `${g.id}:${g.status}`),
        ['G-1:open'],
      );
    } finally {
      await fixture.dispose();
    }
  });

  for (const first of ['approved', 'rejected'] as const) {
    for (const second of ['approved', 'rejected'] as const) {
      it(`${first} then ${second}: ${first === second ? 'a no-op that reports the first decision' : 'refused with a mismatch'}`, async () => {
        const fixture = new EngineFixture();
        try {
          fixture.write('plan.md', DEMO_PLAN);
          const engine = await fixture.open();
          const run = await engine.startRun('plan.md');
          const [gate] = await engine.listGates({ runId: run.id });
          await engine.decideGate({ gateId: gate!.id, decision: first, by: 'ann', note: 'first' });
          const attempt = engine.decideGate({ gateId: gate!.id, decision: second, by: 'bob', note: 'second' });
          if (first === second) {
            const outcome = await attempt;
            assert.equal(outcome.alreadyDecided, true);
            assert.equal(outcome.gate.decidedBy, 'ann');
          } else {
            await assert.rejects(
              attempt,
              (err) => BatonError.is(err, 'gate.already-decided') && err.kind === 'mismatch' && /ann/.test(err.message),
            );
          }
          const [after] = await engine.listGates({ runId: run.id });
          assert.equal(after!.status, first);
          assert.equal(after!.note, 'first');
        } finally {
          await fixture.dispose();
        }
      });
    }
  }
});

describe('runtime status (derived)', () => {
  const base = { heartbeatCount: 0, leaseExpiresAt: 1000 };
  const cases: Array<[string, Parameters<typeof deriveRuntimeStatus>[0], number, string]> = [
    ['claimed: running, no beat yet, lease live', { ...base, delegationStatus: 'RUNNING' }, 500, 'claimed'],
    [
      'active: running, beating, lease live',
      { ...base, heartbeatCount: 3, delegationStatus: 'RUNNING' },
      500,
      'active',
    ],
    ['stale: running, lease ran out', { ...base, heartbeatCount: 3, delegationStatus: 'RUNNING' }, 1000, 'stale'],
    ['blocked: the delegation waits at a gate', { ...base, delegationStatus: 'BLOCKED' }, 5000, 'blocked'],
    ['terminal: the delegation completed', { ...base, delegationStatus: 'COMPLETED' }, 500, 'terminal'],
    ['terminal: the delegation went stale officially', { ...base, delegationStatus: 'STALE' }, 5000, 'terminal'],
    ['terminal: the runtime ended', { ...base, delegationStatus: 'RUNNING', endedAt: 400 }, 500, 'terminal'],
  ];
  for (const [name, facts, now, expected] of cases) {
    it(name, () => assert.equal(deriveRuntimeStatus(facts, now), expected));
  }

  it('only a claimed or active runtime may heartbeat', () => {
    assert.deepEqual((['claimed', 'active', 'stale', 'terminal', 'blocked'] as const).filter(canHeartbeat), [
      'claimed',
      'active',
    ]);
  });
});

/**
 * The task state machine of docs/architecture.md ("Tasks and the run"), written out here and
 * not read from TASK_TRANSITIONS: ends are final; a replan carries completion to a task that
 * never ran; a same-status move changes only the reason.
 */
const TASK_MOVES: Record<TaskStatus, TaskStatus[]> = {
  pending: ['pending', 'ready', 'gated', 'running', 'completed', 'blocked', 'cancelled'],
  ready: ['ready', 'pending', 'gated', 'running', 'completed', 'failed', 'blocked', 'cancelled'],
  gated: ['gated', 'ready', 'pending', 'running', 'verifying', 'completed', 'failed', 'blocked', 'cancelled'],
  running: ['running', 'ready', 'gated', 'verifying', 'completed', 'failed', 'cancelled'],
  verifying: ['verifying', 'ready', 'gated', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  blocked: [],
  skipped: [],
  cancelled: [],
};

describe('task transitions', () => {
  let fixture: EngineFixture;
  beforeEach(() => (fixture = new EngineFixture()));
  afterEach(() => fixture.dispose());

  it('setTaskStatus allows exactly the documented moves, compare-and-set in the store, and writes nothing for the others', async () => {
    fixture.write('plan.md', DEMO_PLAN);
    const engine = await fixture.open();
    const run = await engine.startRun('plan.md');
    await engine.close();
    const store = await FileStore.open(`${fixture.workspace}/.baton/store`);
    const wrong: string[] = [];
    try {
      for (const from of TASK_STATUSES) {
        for (const to of TASK_STATUSES) {
          // Put T5 in `from` directly (the row, not a move), then ask for the move.
          const outcome = await store
            .transact(async (tx) => {
              await tx.run(`UPDATE tasks SET status = ?, status_reason = 'set up' WHERE run_id = ? AND id = 'T5'`, [
                from,
                run.id,
              ]);
              await setTaskStatus(tx, run.id, 'T5', to, `to ${to}`, 0);
              return 'moved';
            })
            .catch((err: unknown) => (BatonError.is(err, 'task.illegal-transition') ? 'refused' : String(err)));
          const expected = TASK_MOVES[from].includes(to) ? 'moved' : 'refused';
          if (outcome !== expected) wrong.push(`${from} → ${to}: ${outcome}, expected ${expected}`);
        }
      }
      // A refused move writes nothing: a completed task stays completed, with its reason.
      await store.transact((tx) =>
        tx.run(`UPDATE tasks SET status = 'completed', status_reason = 'done' WHERE run_id = ? AND id = 'T5'`, [
          run.id,
        ]),
      );
      await assert.rejects(
        store.transact((tx) => setTaskStatus(tx, run.id, 'T5', 'ready', 'again', 0)),
        (err: unknown) => BatonError.is(err, 'task.illegal-transition'),
      );
      const after = await store.read((r) =>
        r.get<{ status: string; status_reason: string }>(
          `SELECT status, status_reason FROM tasks WHERE run_id = ? AND id = 'T5'`,
          [run.id],
        ),
      );
      assert.deepEqual(after, { status: 'completed', status_reason: 'done' });
    } finally {
      await store.close();
    }
    assert.deepEqual(wrong, []);
  });
});
