// The stop hook's decisions (src/engine/domain/stopCheck.ts, docs/agents.md "The stop hook"): when the agent
// is sent back, what it reads, and how Claude Code's hook input is taken.
import assert from 'node:assert/strict';
import { describeEvent } from '../../../../src/engine/domain/describeEvent';
import { issue } from '../../../../src/engine/domain/issue';
import { parseStopHookInput, repairFeedback, stopVerdict } from '../../../../src/engine/domain/stopCheck';

describe('the stop hook: whether the agent is sent back with its result’s issues', () => {
  it('sends the agent back while issues remain and rounds are left; the round counts from 1', () => {
    assert.deepEqual(stopVerdict({ errors: 1, roundsSentBack: 0, repairRounds: 2 }), { kind: 'repair', round: 1 });
    assert.deepEqual(stopVerdict({ errors: 3, roundsSentBack: 1, repairRounds: 2 }), { kind: 'repair', round: 2 });
  });

  it('lets it end when the result is acceptable, whatever rounds are left', () => {
    assert.deepEqual(stopVerdict({ errors: 0, roundsSentBack: 0, repairRounds: 2 }), {
      kind: 'finish',
      round: 1,
      why: 'acceptable',
    });
    assert.deepEqual(stopVerdict({ errors: 0, roundsSentBack: 2, repairRounds: 2 }), {
      kind: 'finish',
      round: 3,
      why: 'acceptable',
    });
  });

  it('lets it end with its issues once its rounds are spent: ingestion judges then (repairRounds 0: never sent back)', () => {
    assert.deepEqual(stopVerdict({ errors: 1, roundsSentBack: 2, repairRounds: 2 }), {
      kind: 'finish',
      round: 3,
      why: 'rounds-spent',
    });
    assert.equal(stopVerdict({ errors: 1, roundsSentBack: 0, repairRounds: 0 }).kind, 'finish');
  });

  it('reads stop_hook_active and the last message from the hook input; anything else is a stop with no message', () => {
    assert.deepEqual(
      parseStopHookInput(
        JSON.stringify({ hook_event_name: 'Stop', stop_hook_active: true, last_assistant_message: 'Done.', cwd: '/w' }),
      ),
      { stopHookActive: true, lastAssistantMessage: 'Done.' },
    );
    assert.deepEqual(parseStopHookInput('{"stop_hook_active":"yes","last_assistant_message":5}'), {
      stopHookActive: false,
    });
    for (const bad of ['', 'not json', 'null', '[1]', '"text"'])
      assert.deepEqual(parseStopHookInput(bad), { stopHookActive: false }, bad);
  });

  it('tells the agent each issue with its place, where to write the fix, and which check this was', () => {
    const wrongTask = issue(
      'result.task-mismatch',
      'task',
      'The result is for task T9, but D-T1-coder-001 is task T1.',
      'Write task: T1.',
      { start: { line: 5, column: 7 }, end: { line: 5, column: 9 } },
    );
    const first = repairFeedback({
      delegationId: 'D-T1-coder-001',
      source: 'your final message',
      artifactPath: '/w/.baton/runs/R-1/artifacts/D-T1-coder-001.md',
      issues: [wrongTask],
      round: 1,
      repairRounds: 2,
    });
    assert.match(
      first,
      /^Baton checked the result you are about to end D-T1-coder-001 with \(your final message\).*1 issue to fix\./,
    );
    assert.match(first, /\n- your final message:5:7: error result\.task-mismatch: The result is for task T9/);
    assert.match(first, /\/w\/\.baton\/runs\/R-1\/artifacts\/D-T1-coder-001\.md/);
    assert.match(first, /\(Check 1 of 2\.\)$/);
    const last = repairFeedback({
      delegationId: 'D-T1-coder-001',
      source: '.baton/runs/R-1/artifacts/D-T1-coder-001.md',
      artifactPath: '/w/.baton/runs/R-1/artifacts/D-T1-coder-001.md',
      issues: [wrongTask],
      round: 2,
      repairRounds: 2,
    });
    assert.match(last, /the last check \(2 of 2\): the next result goes to ingestion as it is\.$/);
  });

  it('each round is a line of the run’s timeline: its attempt, the round, the issue count, what became of them', () => {
    const line = (issues: number, sentBack: boolean) =>
      describeEvent({
        type: 'result:checked',
        data: { delegationId: 'D-T1-coder-001', taskId: 'T1', attempt: 1, round: 2, issues, sentBack },
      });
    assert.equal(
      line(1, true),
      'D-T1-coder-001 result checked before it ended (round 2): 1 issue, sent back to the agent',
    );
    assert.equal(
      line(3, false),
      'D-T1-coder-001 result checked before it ended (round 2): 3 issues, left to ingestion',
    );
    assert.equal(line(0, false), 'D-T1-coder-001 result checked before it ended (round 2): no issues');
  });
});
