// What waits on a person (src/extension/model/attention.ts): one list for the badge, the status bar and the
// notifications — open gates of any kind, questions, stopped runs, usage-limit holds — each told once, and a run
// that a decision ended says which decision.
import assert from 'node:assert/strict';
import type { Engine, Gate, Run, RunOverview, Task } from '../../../../src/engine/index';
import {
  attentionBadge,
  attentionItems,
  attentionNotices,
  attentionTarget,
  endingDecision,
  runEndAttention,
  ToldLedger,
  waitingText,
  type AttentionSource,
} from '../../../../src/extension/model/attention';
import type { RunStateCache } from '../../../../src/extension/model/runState';
import { statusSummary } from '../../../../src/extension/model/viewRows';
import { EngineFixture } from '../../../support/engineFixture';

const ONE_RISKY_TASK =
  '# One\n\n```baton-task\nid: T1\ntitle: Drop the old table\nagent: coder\nrisk: [database]\n```\nDrop it.\n';

/** What the model reads, as the run-state cache holds it, from the engine's own reads. */
async function sourceOf(engine: Engine): Promise<AttentionSource & { views: RunOverview[] }> {
  const views = await Promise.all((await engine.listRuns()).map((r) => engine.overview(r.id)));
  return {
    views,
    runs: views.map((v) => v.run),
    overview: (id) => views.find((v) => v.run.id === id),
    now: engine.now(),
  };
}

function run(extra: Partial<Run> = {}): Run {
  return {
    id: 'R-1',
    planPath: 'dir/p.plan.md',
    planDigest: 'x',
    status: 'running',
    createdAt: 0,
    updatedAt: 50,
    ...extra,
  };
}

function task(extra: Partial<Task>): Task {
  return {
    runId: 'R-1',
    id: 'T1',
    title: 'First',
    agent: 'coder',
    depends: [],
    risk: [],
    files: [],
    verify: [],
    instructions: '',
    line: 1,
    status: 'pending',
    ...extra,
  };
}

function gate(extra: Partial<Gate>): Gate {
  return {
    id: 'G-1',
    runId: 'R-1',
    kind: 'risk_approval',
    status: 'open',
    reason: 'T1 is tagged database',
    details: {},
    openedAt: 10,
    ...extra,
  } as Gate;
}

function sourceFrom(...views: RunOverview[]): AttentionSource {
  return { runs: views.map((v) => v.run), overview: (id) => views.find((v) => v.run.id === id), now: 100 };
}

function view(r: Run, facts: { tasks?: Task[]; gates?: Gate[] } = {}): RunOverview {
  return { run: r, tasks: facts.tasks ?? [], delegations: [], runtimes: [], gates: facts.gates ?? [], usage: [] };
}

describe('attention: what waits on a person', () => {
  let fixture: EngineFixture;
  beforeEach(() => {
    fixture = new EngineFixture();
    fixture.write('one.plan.md', ONE_RISKY_TASK);
  });
  afterEach(() => fixture.dispose());

  it('a gate that opens is one thing waiting, told once; rejecting it ends the run, and the end names the decision', async () => {
    const engine = await fixture.open();
    const started = await engine.startRun('one.plan.md');
    const open = await sourceOf(engine);
    const items = attentionItems(open);
    assert.deepEqual(
      items.map((i) => [i.kind, i.gateId, i.text]),
      [['gate', 'G-1', 'G-1 risk approval of T1 “Drop the old table” waits for a decision']],
    );
    assert.deepEqual(attentionBadge(items), {
      value: 1,
      tooltip: 'Baton: 1 gate waiting — G-1 risk approval of T1 “Drop the old table” waits for a decision',
    });
    // Told once: the gate notification shows it in the window, so its notice is for the OS channel only.
    const notices = attentionNotices(items, () => false);
    assert.deepEqual(
      notices.map((n) => [n.key, n.inWindow, n.title]),
      [[items[0]!.key, false, 'Baton: G-1 waits for a decision']],
    );
    assert.deepEqual(
      attentionNotices(items, (key) => key === items[0]!.key),
      [],
      'not told again',
    );

    await engine.decideGate({ gateId: 'G-1', decision: 'rejected', by: 'ann', note: 'not now' });
    const after = await sourceOf(engine);
    assert.deepEqual(attentionItems(after), [], 'nothing waits once it is decided and the run ended');
    const ended = after.views[0]!;
    assert.equal(ended.run.status, 'blocked');
    assert.equal(endingDecision(ended)?.id, 'G-1', 'decided in the transaction that ended the run');
    const notice = runEndAttention(ended, open.views[0]!.run.status, 'vm:4242');
    assert.equal(
      notice?.message,
      `Baton run ${started.id} (one.plan.md) blocked: G-1 (risk approval of T1) was rejected by ann (“not now”); 0 of 1 task completed, 1 cancelled.`,
    );
    assert.equal(notice?.level, 'warning');
    assert.equal(notice?.body, `${started.id} blocked: G-1 (risk approval of T1) was rejected by ann (“not now”)`);
    assert.equal(notice?.key, `end:${started.id}@${ended.run.updatedAt}`);
    assert.equal(runEndAttention(ended, 'blocked'), undefined, 'an end seen already ended is not told');
  });

  it('a run that ends by its work, after an earlier decision, says no decision ended it', () => {
    const decided = gate({ status: 'approved', decidedAt: 20, decidedBy: 'ann' });
    const done = view(run({ status: 'completed', updatedAt: 90 }), {
      tasks: [task({ status: 'completed' })],
      gates: [decided],
    });
    assert.equal(endingDecision(done), undefined);
    assert.equal(
      runEndAttention(done, 'running', 'vm:1')?.message,
      'Baton run R-1 (p.plan.md) completed, driven by vm:1: 1 of 1 task completed.',
    );
    // A gate Baton closed itself in that transaction (its run cancelled, its task blocked) is nobody's decision.
    const closed = view(run({ status: 'blocked', updatedAt: 90 }), {
      tasks: [task({ status: 'blocked' })],
      gates: [gate({ status: 'rejected', decidedAt: 90, decidedBy: 'baton' })],
    });
    assert.equal(endingDecision(closed), undefined);
  });

  it('counts questions, stopped runs and usage-limit holds with the gates; any gate kind, a new one too', () => {
    const waiting = view(run({ id: 'R-1' }), {
      tasks: [
        task({ id: 'T1', title: 'Ask' }),
        task({ id: 'T2', title: 'Held', status: 'ready', statusReason: 'waiting for usage limit until 14:05' }),
        task({ id: 'T3', status: 'ready', statusReason: 'dependencies completed' }),
      ],
      gates: [
        gate({ id: 'G-3', kind: 'question', taskId: 'T1', reason: 'Which [schema](command:x)?', openedAt: 30 }),
        gate({ id: 'G-4', kind: 'review' as Gate['kind'], taskId: 'T3', openedAt: 40 }),
        gate({ id: 'G-2', kind: 'budget', reason: 'the run spent $5', openedAt: 20 }),
        gate({ id: 'G-1', status: 'approved', openedAt: 5 }),
      ],
    });
    const stopped = view(
      run({ id: 'R-2', planPath: 's.plan.md', status: 'paused', stopMode: 'graceful', updatedAt: 60 }),
    );
    const over = view(run({ id: 'R-3', status: 'failed' }), { gates: [gate({ id: 'G-9', runId: 'R-3' })] });
    const items = attentionItems(sourceFrom(waiting, stopped, over));
    assert.deepEqual(
      items.map((i) => [i.kind, i.text]),
      [
        ['gate', 'G-2 budget waits for a decision'],
        ['question', 'T1 “Ask” asks: Which (schema)(command:x)? (G-3)'],
        ['gate', 'G-4 review of T3 “First” waits for a decision'],
        ['usage-limit', 'T2 “Held” is waiting for usage limit until 14:05 (its worker hit its usage limit; R-1)'],
        ['stopped', 'R-2 (s.plan.md) is stopped: Resume continues it'],
      ],
      'oldest first; an ended run waits for nothing; brackets from the store make no link',
    );
    assert.equal(waitingText(items), '3 gates waiting, 1 run stopped, 1 task held by a usage limit');
    assert.deepEqual(items.find((i) => i.kind === 'question')!.target, {
      command: 'baton.answerQuestion',
      args: { kind: 'gate', id: 'gate:G-3', runId: 'R-1', gateId: 'G-3' },
    });
    // The status bar leads to the oldest: a gate, in the Gates view; to the Runs view when nothing waits.
    assert.deepEqual(attentionTarget(items), { command: 'baton.gates.focus' });
    assert.deepEqual(attentionTarget([]), { command: 'baton.runs.focus' });
    // A stop is the person's own act: counted, not told. A hold is told in the window (no gate notification has it).
    const told = attentionNotices(items, () => false);
    assert.deepEqual(
      told.map((n) => [n.title, n.inWindow]),
      [
        ['Baton: G-2 waits for a decision', false],
        ['Baton: a question from T1', false],
        ['Baton: G-4 waits for a decision', false],
        ['Baton: T2 held by a usage limit', true],
      ],
    );
  });

  it('the status bar counts what waits, and says idle when nothing does', () => {
    const stopped = view(run({ status: 'paused', stopMode: 'immediate' }), { gates: [gate({})] });
    const cache = {
      runs: [stopped.run],
      overview: () => stopped,
      now: 100,
      openGates: () => stopped.gates,
    } as unknown as RunStateCache;
    const items = attentionItems(cache);
    const summary = statusSummary(cache, [], { count: items.length, text: waitingText(items) });
    assert.equal(summary.text, '$(bell-dot) Baton: 1 gate waiting, 1 run stopped');
    assert.equal(summary.tooltip, 'Baton — 0 workers running, 1 gate waiting, 1 run stopped');
    assert.equal(summary.warning, true);
    const idle = statusSummary({ ...cache, runs: [], openGates: () => [] } as unknown as RunStateCache, [], {
      count: 0,
      text: '',
    });
    assert.equal(idle.text, '$(check) Baton: idle');
  });

  it('what was told stays told after a reload, and the oldest keys go first', () => {
    let saved: readonly string[] = [];
    const first = new ToldLedger([], (keys) => (saved = [...keys]), 3);
    first.add('gate:G-1@1');
    first.add('gate:G-1@1');
    assert.deepEqual(saved, ['gate:G-1@1']);
    assert.equal(first.toldBefore('gate:G-1@1'), false, 'told in this window, not before it');
    const reloaded = new ToldLedger(saved, (keys) => (saved = [...keys]), 3);
    assert.equal(reloaded.has('gate:G-1@1'), true);
    assert.equal(reloaded.toldBefore('gate:G-1@1'), true);
    for (const key of ['a', 'b', 'c']) reloaded.add(key);
    assert.deepEqual(saved, ['a', 'b', 'c']);
    assert.equal(reloaded.has('gate:G-1@1'), false);
  });
});
