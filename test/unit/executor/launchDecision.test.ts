// Launch by decision: each candidate's fate is a pure function of the pass's launch snapshot and
// the coordinator's view — tested here with plain objects (no store, no processes, no clock).
import assert from 'node:assert/strict';
import { DEFAULT_CONFIG, parseConfig } from '../../../src/engine/domain/config';
import { freezeWorkers } from '../../../src/engine/domain/frozenWorkers';
import {
  afterLaunch,
  decideLaunch,
  type LaunchCandidate,
  type LaunchSnapshot,
  type LaunchView,
} from '../../../src/engine/domain/launch';
import type { Task } from '../../../src/engine/domain/types';

const NOW = 1_000_000;

const config = parseConfig(
  JSON.stringify({
    defaultWorker: 'sh',
    workers: {
      sh: { type: 'process', command: 'sh', args: ['-c', 'true'] },
      agent: { type: 'claude-code' },
      person: { type: 'manual' },
    },
  }),
).config;

function task(id: string, over: Partial<Task> = {}): Task {
  return {
    runId: 'R',
    id,
    title: id,
    agent: 'coder',
    depends: [],
    risk: [],
    files: [],
    verify: [],
    instructions: '',
    line: 1,
    status: 'ready',
    ...over,
  };
}

function candidate(t: Task, over: Partial<LaunchCandidate> = {}): LaunchCandidate {
  return { task: t, notBefore: null, approvedProfiles: [], ...over };
}

function snapshot(candidates: LaunchCandidate[], over: Partial<LaunchSnapshot> = {}): LaunchSnapshot {
  return {
    now: NOW,
    settings: {
      riskTags: [],
      leaseSeconds: 60,
      maxAttempts: 3,
      retryBackoffSeconds: 5,
      isolation: 'none',
      workers: freezeWorkers(config),
    },
    planPath: 'plan.md',
    gates: { budget: [] },
    occupying: [],
    inFlight: [],
    candidates,
    ...over,
  };
}

const view: LaunchView = {
  maxConcurrency: 2,
  config: { permissionPolicy: DEFAULT_CONFIG.permissionPolicy, leaseSeconds: 30 },
  configWorkers: () => freezeWorkers(config),
};

describe('launch decision (pure)', () => {
  it("starts a ready task with the run's frozen worker, its profile and the lease; a person gets a week", () => {
    const decision = decideLaunch(snapshot([candidate(task('A'))]), 'A', view);
    assert.equal(decision.kind, 'start');
    if (decision.kind !== 'start') return;
    assert.equal(decision.plan.workerId, 'sh');
    assert.equal(decision.plan.manual, false);
    assert.deepEqual(decision.plan.permissions, { profile: 'edit' });
    assert.equal(decision.plan.leaseMs, 30_000);
    assert.deepEqual(decision.plan.isolation, { mode: 'none' });

    const manual = decideLaunch(snapshot([candidate(task('B', { worker: 'person' }))]), 'B', view);
    assert.ok(manual.kind === 'start' && manual.plan.manual);
    assert.equal(manual.kind === 'start' && manual.plan.leaseMs, 7 * 86_400_000);
    assert.equal(decideLaunch(snapshot([candidate(task('A'))]), 'A', { ...view, worker: 'agent' }).kind, 'start');
  });

  it('lets a task that is no longer ready wait, writing nothing', () => {
    assert.deepEqual(decideLaunch(snapshot([]), 'A', view), { kind: 'wait', taskId: 'A' });
  });

  it('holds every task at an open config_changed gate first, whatever else holds it', () => {
    const over = snapshot(
      [candidate(task('A'), { spent: { run: { tokens: 9e9 }, task: { tokens: 0 }, agent: { tokens: 0 } } })],
      {
        gates: { configChanged: 'G-1', budget: [] },
      },
    );
    over.settings.budget = { run: { tokens: 10 } };
    assert.deepEqual(decideLaunch(over, 'A', view), {
      kind: 'hold',
      task: over.candidates[0]!.task,
      hold: { kind: 'wait-at-gate', gateId: 'G-1', gate: 'config_changed' },
    });
  });

  describe('budget', () => {
    const spent = { run: { tokens: 100 }, task: { tokens: 0 }, agent: { tokens: 0 } };

    it('opens a budget gate of its own when the task would cross a line', () => {
      const s = snapshot([candidate(task('A'), { spent })]);
      s.settings.budget = { run: { tokens: 50 } };
      const decision = decideLaunch(s, 'A', view);
      assert.ok(decision.kind === 'hold' && decision.hold.kind === 'budget-gate');
      assert.deepEqual(decision.hold.crossings, [{ scope: 'run', unit: 'tokens', limit: 50, spent: 100 }]);
    });

    it("waits at the run's budget gate that another task opened, when only the run's line is crossed", () => {
      const s = snapshot([candidate(task('A'), { spent })], { gates: { budget: [{ id: 'G-7', taskId: 'B' }] } });
      s.settings.budget = { run: { tokens: 50 } };
      assert.deepEqual(decideLaunch(s, 'A', view), {
        kind: 'hold',
        task: s.candidates[0]!.task,
        hold: { kind: 'wait-at-gate', gateId: 'G-7', gate: 'budget' },
      });
      // Its own gate is not the run's: a second one is not opened beside it only for another task's.
      const own = snapshot([candidate(task('A'), { spent })], { gates: { budget: [{ id: 'G-7', taskId: 'A' }] } });
      own.settings.budget = { run: { tokens: 50 } };
      const decision = decideLaunch(own, 'A', view);
      assert.ok(decision.kind === 'hold' && decision.hold.kind === 'budget-gate');
    });

    it('starts a task under every line', () => {
      const s = snapshot([candidate(task('A'), { spent })]);
      s.settings.budget = { run: { tokens: 500 } };
      assert.equal(decideLaunch(s, 'A', view).kind, 'start');
    });
  });

  describe('permission policy', () => {
    const forbidding: LaunchView = {
      ...view,
      config: { ...view.config, permissionPolicy: { forbid: ['full'], forbidForRisk: {} } },
    };
    const full = task('A', { worker: 'agent', permissions: { profile: 'full' } });

    it("holds an agent's task whose profile the policy forbids at a risk_approval gate that says why", () => {
      const decision = decideLaunch(snapshot([candidate(full)]), 'A', forbidding);
      assert.deepEqual(decision, {
        kind: 'hold',
        task: full,
        hold: { kind: 'permission-gate', profile: 'full', why: 'the permission policy forbids the full profile' },
      });
    });

    it('starts it once a person approved the profile for the task, and never asks it of a plain process', () => {
      assert.equal(
        decideLaunch(snapshot([candidate(full, { approvedProfiles: ['full'] })]), 'A', forbidding).kind,
        'start',
      );
      const plain = task('B', { permissions: { profile: 'full' } });
      assert.equal(decideLaunch(snapshot([candidate(plain)]), 'B', forbidding).kind, 'start');
    });
  });

  describe('admission', () => {
    it('lets a task wait out its retry backoff and the run’s slots without writing anything', () => {
      assert.equal(decideLaunch(snapshot([candidate(task('A'), { notBefore: NOW + 1 })]), 'A', view).kind, 'wait');
      const full = snapshot([candidate(task('A'))], { occupying: ['X', 'Y'] });
      assert.equal(decideLaunch(full, 'A', view).kind, 'wait');
    });

    it('says on what a task whose files overlap one in flight waits — once', () => {
      const a = task('A', { files: ['src/**'] });
      const s = snapshot([candidate(a)], { inFlight: [{ id: 'B', files: ['src/x.ts'] }] });
      const decision = decideLaunch(s, 'A', view);
      assert.ok(decision.kind === 'hold' && decision.hold.kind === 'overlap');
      assert.match(decision.hold.reason, /^waits for B: its files overlap/);
      const said = snapshot([candidate({ ...a, statusReason: decision.hold.reason })], { inFlight: s.inFlight });
      assert.deepEqual(decideLaunch(said, 'A', view), { kind: 'wait', taskId: 'A' });
    });
  });

  describe('isolation', () => {
    it("waits at the run's open isolation question while the run has no answer", () => {
      const s = snapshot([candidate(task('A'))], { gates: { isolation: 'G-3', budget: [] } });
      const decision = decideLaunch(s, 'A', view);
      assert.ok(
        decision.kind === 'hold' && decision.hold.kind === 'wait-at-gate' && decision.hold.gate === 'isolation',
      );
      assert.equal(decideLaunch(s, 'A', { ...view, worker: 'person' }).kind, 'start', 'a person needs no worktree');
    });

    it('probes the repository at the first isolated dispatch, and uses what the run recorded after it', () => {
      const s = snapshot([candidate(task('A'))]);
      s.settings.isolation = 'auto';
      const first = decideLaunch(s, 'A', view);
      assert.deepEqual(first.kind === 'start' && first.plan.isolation, {
        mode: 'probe',
        explicit: false,
        strategy: 'merge',
      });
      const run = {
        runId: 'R',
        mode: 'worktree' as const,
        strategy: 'merge' as const,
        repoRoot: '/r',
        targetBranch: 'main',
        baseCommit: 'abc',
      };
      const later = decideLaunch({ ...s, isolation: run }, 'A', view);
      assert.deepEqual(later.kind === 'start' && later.plan.isolation, { mode: 'worktree', run });
      const alone = decideLaunch(s, 'A', { ...view, maxConcurrency: 1 });
      assert.deepEqual(alone.kind === 'start' && alone.plan.isolation, { mode: 'none' }, 'auto, one at a time: shared');
    });
  });

  describe('usage limits (docs/agents.md, "Usage limits park")', () => {
    it('a worker at its usage limit starts nothing until its reset; the task waits with its reason; other workers start', () => {
      const quotaHolds = [{ worker: 'agent', until: NOW + 60_000 }];
      const held = task('A', { worker: 'agent' });
      const decision = decideLaunch(snapshot([candidate(held)], { quotaHolds }), 'A', view);
      assert.ok(decision.kind === 'hold' && decision.hold.kind === 'quota');
      assert.equal(decision.hold.until, NOW + 60_000);
      assert.match(decision.hold.reason, /^waiting for usage limit until \d\d:\d\d/);
      assert.equal(decideLaunch(snapshot([candidate(task('B'))], { quotaHolds }), 'B', view).kind, 'start');
      const afterReset = snapshot([candidate(held)], { quotaHolds, now: NOW + 60_000 });
      assert.equal(decideLaunch(afterReset, 'A', view).kind, 'start', 'at the reset it starts');
    });

    it("meanwhile its worker's fallbackWorker takes the task, unless that one is at its limit too", () => {
      const withFallback = parseConfig(
        JSON.stringify({
          defaultWorker: 'agent',
          workers: { agent: { type: 'claude-code', fallbackWorker: 'spare' }, spare: { type: 'codex' } },
        }),
      ).config;
      const s = snapshot([candidate(task('A'))], { quotaHolds: [{ worker: 'agent', until: NOW + 60_000 }] });
      s.settings.workers = freezeWorkers(withFallback);
      const decision = decideLaunch(s, 'A', view);
      assert.ok(
        decision.kind === 'start' && decision.plan.workerId === 'spare' && decision.plan.worker.type === 'codex',
      );
      s.quotaHolds = [...s.quotaHolds!, { worker: 'spare', until: NOW + 1000 }];
      const both = decideLaunch(s, 'A', view);
      assert.ok(both.kind === 'hold' && both.hold.kind === 'quota' && both.hold.until === NOW + 60_000);
    });
  });

  describe('one pass, several candidates', () => {
    it('a start takes a slot and puts its files in flight for the candidates after it', () => {
      const [a, b, c, d] = [task('A', { files: ['src/**'] }), task('B', { files: ['src/y.ts'] }), task('C'), task('D')];
      let s = snapshot([candidate(a), candidate(b), candidate(c), candidate(d)]);
      assert.equal(decideLaunch(s, 'A', view).kind, 'start');
      s = afterLaunch(s, { started: { taskId: 'A', files: a.files, slot: true } });
      const second = decideLaunch(s, 'B', view);
      assert.ok(second.kind === 'hold' && second.hold.kind === 'overlap', 'B overlaps A, started in this pass');
      assert.equal(decideLaunch(s, 'C', view).kind, 'start');
      s = afterLaunch(s, { started: { taskId: 'C', files: [], slot: true } });
      assert.equal(decideLaunch(s, 'D', view).kind, 'wait', 'the two slots are taken');
      const handOff = afterLaunch(snapshot([candidate(d)], { occupying: ['X'] }), {
        started: { taskId: 'P', files: [], slot: false },
      });
      assert.equal(decideLaunch(handOff, 'D', view).kind, 'start', "a person's hand-off takes no slot");
    });

    it('a gate opened in the pass holds the later candidates that need its answer', () => {
      const s = snapshot([candidate(task('A')), candidate(task('B'))]);
      const isolated = afterLaunch(s, { gate: { id: 'G-9', kind: 'isolation', taskId: 'A' } });
      assert.deepEqual(decideLaunch(isolated, 'B', view), {
        kind: 'hold',
        task: s.candidates[1]!.task,
        hold: { kind: 'wait-at-gate', gateId: 'G-9', gate: 'isolation' },
      });
      const spent = { run: { tokens: 100 }, task: { tokens: 0 }, agent: { tokens: 0 } };
      const over = snapshot([candidate(task('A'), { spent }), candidate(task('B'), { spent })]);
      over.settings.budget = { run: { tokens: 50 } };
      const budgeted = afterLaunch(over, { gate: { id: 'G-4', kind: 'budget', taskId: 'A' } });
      const second = decideLaunch(budgeted, 'B', view);
      assert.ok(second.kind === 'hold' && second.hold.kind === 'wait-at-gate' && second.hold.gateId === 'G-4');
      const recorded = afterLaunch(s, {
        isolation: { runId: 'R', mode: 'none', strategy: 'merge', note: 'auto: no git' },
      });
      assert.equal(recorded.isolation?.note, 'auto: no git');
    });
  });
});
