// What the extension says, as plain text (src/extension/notices.ts, attempts.ts): the stop toast
// says what happens, counts are in words, the Baton log gets sentences instead of JSON, and an
// attempt's end is said once its worker is done.
import assert from 'node:assert/strict';
import type { RunEvent, RunOverview, StopRequest } from '../../../../src/engine/index';
import { describeEvent } from '../../../../src/engine/index';
import { attemptEndLine, latestStartedAttempt } from '../../../../src/extension/model/attempts';
import {
  eventLine,
  outcomeLine,
  processesEnded,
  runEndNotice,
  statusTooltip,
  stopNotice,
} from '../../../../src/extension/model/notices';

function request(mode: 'graceful' | 'immediate', report: StopRequest['report']): StopRequest {
  return { id: 'S-1', runId: 'R-1', mode, status: 'applied', requestedAt: 0, requestedBy: 'VS Code', report };
}
const finishing = (id: string) => ({
  delegationId: id,
  processes: [],
  confirmed: true,
  survivors: [],
  note: 'left to finish (graceful)',
});
const ended = (id: string, confirmed = true) => ({
  delegationId: id,
  processes: [42],
  confirmed,
  survivors: confirmed ? [] : [42],
});

describe('what the extension says', () => {
  it('a graceful stop while a task runs says it stops after that task, not "Stopped"', () => {
    const notice = stopNotice('R-1', {
      request: request('graceful', [finishing('D-T3-coder-001')]),
      repeated: false,
      appliedBy: 'coordinator',
    });
    assert.equal(notice.level, 'info');
    assert.equal(
      notice.message,
      'Stopping R-1 after the running task finishes (D-T3-coder-001): nothing new starts; the run pauses then. Stop Immediately ends it now.',
    );
    assert.doesNotMatch(notice.message, /^Stopped/);
    const two = stopNotice('R-1', {
      request: request('graceful', [finishing('D-T1-coder-001'), finishing('D-T2-coder-001')]),
      repeated: true,
      appliedBy: 'coordinator',
    });
    assert.match(
      two.message,
      /^R-1 is already stopping\. Stopping R-1 after the running tasks finish \(D-T1-coder-001, D-T2-coder-001\)/,
    );
    assert.match(
      stopNotice('R-1', { request: request('graceful', []), repeated: false, appliedBy: 'this process' }).message,
      /^Stopped R-1: nothing was running/,
    );
  });

  it('an immediate stop counts what it ended, in words, and warns when an end is not proven', () => {
    const one = stopNotice('R-1', {
      request: request('immediate', [ended('D-T1-coder-001')]),
      repeated: false,
      appliedBy: 'coordinator',
    });
    assert.equal(one.message, 'Stopped R-1 now: 1 attempt ended, its processes are gone. Resume runs it again.');
    const two = stopNotice('R-1', {
      request: request('immediate', [ended('D-T1-coder-001'), ended('D-T2-coder-001', false)]),
      repeated: false,
      appliedBy: 'coordinator',
    });
    assert.equal(two.level, 'warning');
    assert.equal(
      two.message,
      'Stopped R-1 now: 2 attempts ended, 1 attempt NOT confirmed gone (see the Baton log). Resume runs them again.',
    );
  });

  it('says processes are gone only of attempts that had one (issue 24, item 9)', () => {
    const none = { delegationId: 'D-T1-coder-001', processes: [], confirmed: true, survivors: [] };
    assert.equal(processesEnded([none]), undefined);
    assert.equal(
      stopNotice('R-1', { request: request('immediate', [none]), repeated: false, appliedBy: 'this process' }).message,
      'Stopped R-1 now: 1 attempt ended. Resume runs it again.',
    );
    assert.equal(processesEnded([none, ended('D-T2-coder-001')]), 'the processes of 1 attempt are gone');
    assert.equal(processesEnded([ended('D-T1-coder-001'), ended('D-T2-coder-001')]), 'their processes are gone');
    assert.equal(
      processesEnded([none, ended('D-T2-coder-001', false)]),
      '1 attempt NOT confirmed gone (see the Baton log)',
    );
  });

  it('the timeline names no internal record and counts in words (issue 24, item 9)', () => {
    const recorded = (accepted: boolean, issues: number) =>
      describeEvent({
        type: 'ingestion:recorded',
        data: {
          ingestionId: 'I-19',
          delegationId: 'D-T2-coder-001',
          accepted,
          resultStatus: accepted ? 'PASS' : undefined,
          issues,
        },
      } as never);
    assert.equal(recorded(true, 0), 'the result of D-T2-coder-001 accepted: PASS');
    assert.equal(recorded(false, 1), 'the result of D-T2-coder-001 rejected: 1 issue');
    const usage = describeEvent({
      type: 'agent:usage',
      data: {
        delegationId: 'D-T1-coder-001',
        kind: 'claude-code',
        turns: 1,
        toolCalls: 1,
        inputTokens: 1,
        outputTokens: 0,
      },
    } as never);
    assert.equal(usage, 'D-T1-coder-001 claude-code: 1 turn, 1 tool call, 1 token');
  });

  it('singular and plural, never "(s)": the status bar tooltip and the event descriptions', () => {
    assert.equal(statusTooltip(1, 1, []), 'Baton — 1 worker running, 1 gate waiting');
    assert.equal(statusTooltip(2, 0, ['R-1']), 'Baton — 2 workers running, 0 gates waiting; this window drives R-1');
    assert.equal(
      describeEvent({ type: 'run:replanned', data: { from: 'R-1', carried: 1 } }),
      'replanned from R-1 (1 task carried over)',
    );
    assert.equal(
      describeEvent({ type: 'stop:applied', data: { stopId: 'S-1', attempts: 2, confirmed: true } } as never),
      'S-1 applied to 2 attempts',
    );
  });

  it('the Baton log gets sentences, not JSON: run events and how a coordinator ended', () => {
    const event = {
      runId: 'R-1',
      seq: 7,
      at: Date.UTC(2026, 11, 1, 12, 0, 5),
      type: 'task:status',
      data: { taskId: 'T1', from: 'running', to: 'completed' },
    } as RunEvent;
    assert.equal(eventLine(event), '   7 2026-12-01 12:00:05Z task:status            T1 running → completed');
    assert.equal(
      outcomeLine('R-1', { kind: 'finished', status: 'completed' }),
      '[R-1] the run is completed; this window stops driving it.',
    );
    assert.equal(
      outcomeLine('R-1', { kind: 'paused', status: 'paused', openGates: 2, stopped: false }),
      '[R-1] the run is paused: it waits for 2 decisions; this window stops driving it until it continues.',
    );
    for (const line of [
      eventLine(event),
      outcomeLine('R-1', { kind: 'idle', status: 'running', reason: 'nothing is ready to run' }),
    ])
      assert.doesNotMatch(line, /[{}"]/);
  });

  it('an attempt ends for Show Output when its worker is done: over, at a gate, or its lease ended while the task verifies', () => {
    const d = {
      runId: 'R-1',
      id: 'D-T1-coder-001',
      taskId: 'T1',
      agent: 'coder',
      attempt: 1,
      createdAt: 0,
      updatedAt: 0,
      startedAt: 1,
    };
    const view = (status: string, extra: object = {}, runtimeEnded = false): RunOverview =>
      ({
        run: { id: 'R-1' },
        tasks: [{ id: 'T1', status: 'verifying' }],
        delegations: [{ ...d, status, ...extra }],
        runtimes: [{ delegationId: d.id, ...(runtimeEnded ? { endedAt: 5 } : {}) }],
        gates: [],
      }) as unknown as RunOverview;
    assert.equal(attemptEndLine(view('RUNNING'), d.id), undefined, 'still running');
    assert.equal(
      attemptEndLine(view('FAILED', { reason: 'the worker was killed by SIGKILL without a result' }), d.id),
      'D-T1-coder-001 ended: FAILED · the worker was killed by SIGKILL without a result',
    );
    assert.equal(
      attemptEndLine(view('COMPLETED', { resultStatus: 'PASS', reason: 'result PASS' }), d.id),
      'D-T1-coder-001 ended: COMPLETED · result PASS',
    );
    assert.equal(
      attemptEndLine(view('RUNNING', { resultStatus: 'PASS' }, true), d.id),
      'D-T1-coder-001: its worker ended · result PASS; the task is verifying',
    );
    assert.equal(latestStartedAttempt(view('RUNNING'), 'T1')?.id, d.id);
    assert.equal(latestStartedAttempt(view('RUNNING'), 'T2'), undefined);
  });

  it("tells a run's end this window watched happen, once: not a run first seen ended, not a person's own cancel", () => {
    const run = { id: 'R-1', planPath: 'plans/demo.plan.md', status: 'blocked' as const };
    const tasks = [{ status: 'completed' }, { status: 'failed' }, { status: 'blocked' }];
    assert.deepEqual(runEndNotice(run, 'running', tasks, 'baton start on vm'), {
      level: 'warning',
      message:
        'Baton run R-1 (demo.plan.md) blocked, driven by baton start on vm: 1 of 3 tasks completed, 1 failed, 1 blocked.',
    });
    assert.deepEqual(runEndNotice({ ...run, status: 'completed' }, 'paused', [{ status: 'completed' }]), {
      level: 'info',
      message: 'Baton run R-1 (demo.plan.md) completed: 1 of 1 task completed.',
    });
    assert.equal(runEndNotice(run, undefined, tasks), undefined, 'first seen: it ended before this window looked');
    assert.equal(runEndNotice(run, 'failed', tasks), undefined, 'already ended');
    assert.equal(
      runEndNotice({ ...run, status: 'cancelled' }, 'running', tasks),
      undefined,
      'a cancel is their own act',
    );
    assert.equal(runEndNotice({ ...run, status: 'paused' }, 'running', tasks), undefined, 'not an end');
  });
});
