import assert from 'node:assert/strict';
import { attemptSpan, taskRunTime, type RunTimeFacts } from '../../../../src/engine/domain/runTime';
import type { Delegation } from '../../../../src/engine/index';

describe("an attempt's and a task's run time: the process's time, never a wait at a gate or in the queue", () => {
  const attempt = (n: number, over: Partial<Delegation> = {}): Delegation => ({
    runId: 'R-1',
    id: `D-T1-coder-00${n}`,
    taskId: 'T1',
    agent: 'coder',
    attempt: n,
    status: 'RUNNING',
    createdAt: 0,
    updatedAt: 0,
    ...over,
  });
  const facts = (over: Partial<RunTimeFacts> = {}): RunTimeFacts => ({
    delegations: [],
    runtimes: [],
    gates: [],
    ...over,
  });

  it('runs from its start to its end, or on with the clock while it runs; nothing before it started', () => {
    assert.equal(attemptSpan(attempt(1, { status: 'PENDING' }), facts()), undefined);
    assert.deepEqual(attemptSpan(attempt(1, { startedAt: 1000 }), facts()), { from: 1000, to: undefined });
    const done = attempt(1, { status: 'COMPLETED', startedAt: 1000, finishedAt: 16_000, updatedAt: 16_000 });
    assert.deepEqual(attemptSpan(done, facts()), { from: 1000, to: 16_000 });
  });

  it('stops where it began to wait at a gate, though it ended (a decision) much later', () => {
    const d = attempt(1, { status: 'FAILED', startedAt: 1000, finishedAt: 200_000, updatedAt: 200_000 });
    const gates = [{ delegationId: d.id, kind: 'ingestion_failed' as const, openedAt: 16_000, details: {} }];
    assert.deepEqual(attemptSpan(d, facts({ gates })), { from: 1000, to: 16_000 });
    // Its worker ended first (a PASS that waits for verification and integration): that is the end.
    const runtimes = [{ delegationId: d.id, endedAt: 12_000 }];
    assert.deepEqual(attemptSpan(d, facts({ gates, runtimes })), { from: 1000, to: 12_000 });
  });

  it("a question (its worker still runs) and a person's hand-off (the person's work is the attempt) are no such wait", () => {
    const d = attempt(1, { startedAt: 1000 });
    const gates = [
      { delegationId: d.id, kind: 'question' as const, openedAt: 5000, details: {} },
      { delegationId: d.id, kind: 'manual_handoff' as const, openedAt: 1000, details: { manual: true } },
    ];
    assert.deepEqual(attemptSpan(d, facts({ gates })), { from: 1000, to: undefined });
  });

  it("a task's is the sum of its attempts', running while its latest runs; undefined before any started", () => {
    const first = attempt(1, { status: 'FAILED', startedAt: 1000, finishedAt: 300_000, updatedAt: 300_000 });
    const second = attempt(2, { startedAt: 400_000 });
    const gates = [{ delegationId: first.id, kind: 'ingestion_failed' as const, openedAt: 16_000, details: {} }];
    assert.deepEqual(taskRunTime(facts({ delegations: [first, second], gates }), 'T1', 410_000), {
      ms: 25_000,
      running: true,
    });
    assert.equal(taskRunTime(facts({ delegations: [attempt(1, { status: 'PENDING' })] }), 'T1', 5000), undefined);
  });
});
