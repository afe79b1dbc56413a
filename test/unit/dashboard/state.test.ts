import assert from 'node:assert/strict';
import {
  applyBeats,
  hostNow,
  initialState,
  MAX_EVENTS,
  reduce,
  reduceUi,
  visibleTasks,
} from '../../../webview-ui/src/state';
import { gate, runtime, snapshot, task } from './fixtures';

describe('dashboard state reducer (webview-ui/src/state.ts)', () => {
  it('a snapshot replaces everything and connects; a delta before any snapshot changes nothing', () => {
    const empty = initialState();
    assert.equal(reduce(empty, { type: 'delta', now: 5, tasks: [task('X')] }, 0), empty);
    assert.equal(reduce(empty, { type: 'heartbeats', now: 5, beats: [] }, 0), empty);
    const s = reduce(empty, snapshot(), 10);
    assert.equal(s.connected, true);
    assert.equal(s.run?.id, 'R-1');
    assert.deepEqual(
      s.tasks.map((t) => t.id),
      ['T1', 'T2'],
    );
    assert.equal(s.now, 100_000);
    assert.equal(hostNow(s), 100_000, 'times are shown as of the host clock of the last message');
  });

  it("the host's clock ticks move the shown time on, and never back (beats applied a frame later keep a later tick)", () => {
    const s = reduce(initialState(), snapshot({ runtimes: [runtime('T1')] }), 0);
    const empty = initialState();
    assert.equal(reduce(empty, { type: 'clock', now: 101_000 }, 0), empty, 'a tick before the snapshot means nothing');
    const ticked = reduce(s, { type: 'clock', now: 101_000 }, 1000);
    assert.equal(hostNow(ticked), 101_000);
    assert.equal(ticked.runtimes, s.runtimes, 'a tick changes nothing but the clock');
    const beat = applyBeats(
      ticked,
      [{ runtimeId: 'T1', heartbeatCount: 2, lastHeartbeatAt: 100_500, leaseExpiresAt: 130_500 }],
      100_500,
      1001,
    );
    assert.equal(beat.runtimes[0]!.heartbeatCount, 2);
    assert.equal(hostNow(beat), 101_000, 'the beats came with an older clock than the tick after them');
  });

  it('a delta upserts tasks, runtimes and gates by id, removes runtimes, prepends events — and keeps untouched parts identical', () => {
    const s = reduce(initialState(), snapshot(), 0);
    const next = reduce(
      s,
      {
        type: 'delta',
        now: 101_000,
        tasks: [task('T2', { status: 'gated' }), task('T3')],
        gates: [gate('G-1')],
        events: [{ seq: 3, at: 3, type: 'gate:opened', text: 'G-1' }],
      },
      1,
    );
    assert.deepEqual(
      next.tasks.map((t) => `${t.id}:${t.status}`),
      ['T1:running', 'T2:gated', 'T3:ready'],
      'order kept, new ones appended',
    );
    assert.deepEqual(
      next.gates.map((g) => g.id),
      ['G-1'],
    );
    assert.deepEqual(
      next.events.map((e) => e.seq),
      [3, 2],
      'newest first',
    );
    assert.equal(next.runtimes, s.runtimes, 'runtimes untouched: same array');
    assert.equal(next.issues, s.issues);
    assert.equal(next.series, s.series);
    const removed = reduce(next, { type: 'delta', now: 102_000, removedRuntimes: ['T1'] }, 2);
    assert.deepEqual(removed.runtimes, []);
    assert.equal(removed.tasks, next.tasks);
  });

  it('keeps at most MAX_EVENTS events, the newest', () => {
    let s = reduce(initialState(), snapshot({ events: [] }), 0);
    const events = Array.from({ length: MAX_EVENTS + 50 }, (_, i) => ({
      seq: i + 1,
      at: i,
      type: 'task:status',
      text: `e${i + 1}`,
    })).reverse();
    s = reduce(s, { type: 'delta', now: 1, events }, 0);
    assert.equal(s.events.length, MAX_EVENTS);
    assert.equal(s.events[0]!.seq, MAX_EVENTS + 50);
  });

  it('heartbeats change only the runtimes that beat; an older beat arriving late is ignored; no beat → the same state', () => {
    const s = reduce(initialState(), snapshot({ runtimes: [runtime('T1'), runtime('T2', { heartbeatCount: 5 })] }), 0);
    const beat = applyBeats(
      s,
      [{ runtimeId: 'T1', heartbeatCount: 2, lastHeartbeatAt: 102_000, leaseExpiresAt: 132_000, progress: 'step 2' }],
      102_000,
      5,
    );
    assert.equal(beat.runtimes[0]!.heartbeatCount, 2);
    assert.equal(beat.runtimes[0]!.progress, 'step 2');
    assert.equal(beat.runtimes[1], s.runtimes[1], 'the other runtime object is untouched');
    assert.equal(beat.tasks, s.tasks);
    const late = applyBeats(s, [{ runtimeId: 'T2', heartbeatCount: 4, lastHeartbeatAt: 1, leaseExpiresAt: 2 }], 1, 1);
    assert.equal(late, s);
    assert.equal(applyBeats(s, [], 1, 1), s);
  });

  it('task details land only for the selected task; selecting another clears them; notices can be dismissed', () => {
    let s = reduce(initialState(), snapshot(), 0);
    const details = {
      type: 'taskDetails' as const,
      taskId: 'T1',
      delegations: [],
      receipts: [],
      logTail: '',
      issues: [],
    };
    assert.equal(reduce(s, details, 0), s, 'not selected: ignored');
    s = reduceUi(s, { type: 'select', taskId: 'T1' });
    s = reduce(s, details, 0);
    assert.equal(s.details?.taskId, 'T1');
    s = reduceUi(s, { type: 'select', taskId: 'T2' });
    assert.equal(s.details, undefined);
    s = reduce(s, { type: 'notice', level: 'error', message: 'no' }, 0);
    assert.equal(s.notice?.message, 'no');
    assert.equal(reduceUi(s, { type: 'dismissNotice' }).notice, undefined);
  });

  it('filters by status; an unknown filter is refused; UI state restored from saved state is checked', () => {
    let s = reduce(initialState(), snapshot(), 0);
    assert.equal(visibleTasks(s), s.tasks, 'all: the same array');
    s = reduceUi(s, { type: 'filter', filter: 'running' });
    assert.deepEqual(
      visibleTasks(s).map((t) => t.id),
      ['T1'],
    );
    assert.equal(reduceUi(s, { type: 'filter', filter: '<img>' }), s);
    assert.deepEqual(initialState({ filter: 'gated', selectedTask: 'T2' }).ui, { filter: 'gated', selectedTask: 'T2' });
    assert.deepEqual(initialState({ filter: 'bogus' as string, selectedTask: 7 as unknown as string }).ui, {
      filter: 'all',
    });
  });

  it('a new snapshot keeps the selection when the task is still there, and drops it when not', () => {
    let s = reduceUi(reduce(initialState(), snapshot(), 0), { type: 'select', taskId: 'T2' });
    s = reduce(s, snapshot(), 1);
    assert.equal(s.ui.selectedTask, 'T2');
    s = reduce(s, snapshot({ tasks: [task('T1')] }), 2);
    assert.equal(s.ui.selectedTask, undefined);
  });
});
