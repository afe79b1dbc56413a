import assert from 'node:assert/strict';
import { nextTaskId, parsePlan, taskBlockText } from '../../../../src/engine/index';

const PLAN =
  '# Plan\n\n```baton-task\nid: T1\nagent: coder\n```\nDo T1.\n\n```baton-task\nid: T2\nagent: coder\n```\nDo T2.';

describe('a task written into a plan (Add Task…)', () => {
  it('takes the next free T<n> id', () => {
    assert.equal(nextTaskId([]), 'T1');
    assert.equal(nextTaskId(['T1', 'T2', 'build']), 'T3');
    assert.equal(nextTaskId(['T9', 'T2']), 'T10');
    assert.equal(nextTaskId(['setup']), 'T1');
  });

  it('appends a block that parses back to the same task, the plan still without issues', () => {
    const block = taskBlockText(
      {
        id: 'T3',
        title: 'Fix: the #1 bug',
        agent: 'coder',
        worker: 'claude',
        depends: ['T1', 'T2'],
        instructions: '  Fix it.\nThen test it.  ',
      },
      PLAN,
    );
    const parsed = parsePlan(PLAN + block);
    assert.deepEqual(parsed.issues, []);
    const task = parsed.tasks.find((t) => t.id === 'T3')!;
    assert.equal(task.title, 'Fix: the #1 bug');
    assert.equal(task.agent, 'coder');
    assert.equal(task.worker, 'claude');
    assert.deepEqual(task.depends, ['T1', 'T2']);
    assert.equal(task.instructions.trim(), 'Fix it.\nThen test it.');
    assert.ok(block.startsWith('\n\n```baton-task'), 'a blank line after a plan without a final newline');
    assert.ok(taskBlockText({ id: 'T3', title: 'x', depends: [], instructions: '' }, `${PLAN}\n\n`).startsWith('```'));
    // No instructions: the task still says something to do.
    const bare = parsePlan(PLAN + taskBlockText({ id: 'T3', title: 'x', depends: [], instructions: ' ' }, PLAN));
    assert.equal(bare.tasks.find((t) => t.id === 'T3')?.instructions.trim(), 'Do T3.');
  });
});
