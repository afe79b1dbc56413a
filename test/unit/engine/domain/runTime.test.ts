import assert from 'node:assert/strict';
import { attemptEndsOf, attemptSpan, taskRunTime } from '../../../../src/engine/domain/runTime';
import type { Delegation, Gate } from '../../../../src/engine/index';

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
  const gate = (delegationId: string, kind: Gate['kind'], openedAt: number, details = {}) => ({
    delegationId,
    kind,
    openedAt,
    details,
  });
  const ends = (facts: Partial<Parameters<typeof attemptEndsOf>[0]>) =>
    attemptEndsOf({ runtimes: [], gates: [], ...facts });

  it('runs from its start to its end, or on with the clock while it runs; nothing before it started', () => {
    assert.equal(attemptSpan(attempt(1, { status: 'PENDING' }), undefined), undefined);
    assert.deepEqual(attemptSpan(attempt(1, { startedAt: 1000 }), undefined), { from: 1000, to: undefined });
    const done = attempt(1, { status: 'COMPLETED', startedAt: 1000, finishedAt: 16_000, updatedAt: 16_000 });
    assert.deepEqual(attemptSpan(done, undefined), { from: 1000, to: 16_000 });
  });

  it('stops where it began to wait at a gate, though it ended (a decision) much later', () => {
    const d = attempt(1, { status: 'FAILED', startedAt: 1000, finishedAt: 200_000, updatedAt: 200_000 });
    const gates = [gate(d.id, 'ingestion_failed', 16_000), gate(d.id, 'ingestion_failed', 90_000)];
    assert.deepEqual(attemptSpan(d, ends({ gates }).get(d.id)), { from: 1000, to: 16_000 });
    // Its worker ended first (a PASS that waits for verification and integration): that is the end.
    const runtimes = [{ delegationId: d.id, endedAt: 12_000 }];
    assert.deepEqual(attemptSpan(d, ends({ gates, runtimes }).get(d.id)), { from: 1000, to: 12_000 });
  });

  it("a question (its worker still runs) and a person's hand-off (the person's work is the attempt) are no such wait", () => {
    const d = attempt(1, { startedAt: 1000 });
    const gates = [gate(d.id, 'question', 5000), gate(d.id, 'manual_handoff', 1000, { manual: true })];
    assert.deepEqual(attemptSpan(d, ends({ gates }).get(d.id)), { from: 1000, to: undefined });
  });

  it("a task's is the sum of its attempts', running while its latest runs; undefined before any started", () => {
    const first = attempt(1, { status: 'FAILED', startedAt: 1000, finishedAt: 300_000, updatedAt: 300_000 });
    const second = attempt(2, { startedAt: 400_000 });
    const gates = [gate(first.id, 'ingestion_failed', 16_000)];
    assert.deepEqual(taskRunTime([first, second], ends({ gates }), 410_000), { ms: 25_000, running: true });
    assert.equal(taskRunTime([attempt(1, { status: 'PENDING' })], ends({}), 5000), undefined);
  });
});
