import assert from 'node:assert/strict';
import { approvedDespiteFailure, mergedTreeCommands, mergedTreeWork } from '../../../../src/engine/domain/mergeQueue';
import { integrationFailedReason, tellingLine } from '../../../../src/engine/domain/gateReasons';
import { DEFAULT_CONFIG, parseConfig } from '../../../../src/engine/domain/config';
import { runSettingsFrom, settingsDiffering } from '../../../../src/engine/domain/runSettings';

describe('the merge queue: what a merged tree is verified with (docs/isolation.md, "The merge queue")', () => {
  it('verifyIntegrated first, then the task’s own commands not already among them; absent: no merged verification', () => {
    const test = ['npm', 'test'];
    const lint = ['npm', 'run', 'lint'];
    assert.deepEqual(mergedTreeCommands([test], [lint, ['npm', 'test']]), [test, lint], 'the same argv runs once');
    assert.deepEqual(mergedTreeCommands([], [lint]), [lint], '[] verifies the task’s own commands on the merged tree');
    assert.deepEqual(mergedTreeCommands([], []), []);
    assert.equal(mergedTreeCommands(undefined, [lint]), undefined, 'a run without verifyIntegrated is not checked');
    // `npm test` and `npm  test` are not the same argv: words, not a shell line.
    assert.equal(mergedTreeCommands([['npm', 'test']], [['npm', 'test', '--']])!.length, 2);
  });

  it('a command that passed on this tree is taken from its receipt; the others run, in order', () => {
    const a = ['node', 'a.js'];
    const b = ['node', 'b.js'];
    const c = ['node', 'c.js'];
    assert.deepEqual(mergedTreeWork([a, b, c], new Set([JSON.stringify(b)])), { toRun: [a, c], reused: [b] });
    assert.deepEqual(mergedTreeWork([a], new Set()), { toRun: [a], reused: [] });
    assert.deepEqual(mergedTreeWork([a, b], new Set([JSON.stringify(a), JSON.stringify(b)])), {
      toRun: [],
      reused: [a, b],
    });
  });

  it('an approval to integrate anyway holds for the commit it was given for, not for a changed worktree', () => {
    const approved = [
      { id: 'G-3', details: { sourceHead: 'aaa' } },
      { id: 'G-7', details: { sourceHead: 'bbb' } },
    ];
    assert.equal(approvedDespiteFailure(approved, 'bbb'), 'G-7');
    assert.equal(approvedDespiteFailure(approved, 'ccc'), undefined);
    assert.equal(approvedDespiteFailure([], 'aaa'), undefined);
  });

  it('the integration_failed gate names the task, the command, how it ended with its last output line, and what stayed', () => {
    const reason = integrationFailedReason(
      { taskId: 'B', path: '/ws/.baton/worktrees/R-1/B-001' },
      {
        command: ['node', 'check.js'],
        exitCode: 1,
        timedOut: false,
        output: 'at x\nTypeError: greet is not a function\n',
      },
      { targetBranch: 'main', targetHead: '0123456789abcdef', tree: 'fedcba9876543210' },
    );
    assert.equal(
      reason,
      'B passed on its own, but its work merged with main (0123456789; tree fedcba9876) fails: `node check.js` exited with 1 (TypeError: greet is not a function). main did not move; the work is kept in /ws/.baton/worktrees/R-1/B-001. Approve to integrate it anyway; reject to fail B.',
    );
    assert.match(
      integrationFailedReason(
        { taskId: 'B', path: '/w' },
        { command: ['sleep', '9'], exitCode: null, timedOut: true, output: '' },
        { targetBranch: 'main', targetHead: 'a', tree: 'b' },
      ),
      /`sleep 9` timed out\. main did not move/,
    );
  });

  it('verifyIntegrated is argv lists, frozen into a run, and a later edit of the file is told as a differing setting', () => {
    const { config, issues } = parseConfig('{ "verifyIntegrated": [["node", "check.js"]] }');
    assert.deepEqual(issues, []);
    assert.deepEqual(runSettingsFrom(config).verifyIntegrated, [['node', 'check.js']]);
    assert.equal('verifyIntegrated' in runSettingsFrom(DEFAULT_CONFIG), false, 'absent stays absent');
    assert.deepEqual(settingsDiffering(runSettingsFrom(config), DEFAULT_CONFIG), ['verifyIntegrated']);
    const shell = parseConfig('{ "verifyIntegrated": ["npm test"] }');
    assert.ok(
      shell.issues.some((i) => i.severity === 'error'),
      'a shell line is refused: commands are argv',
    );
  });

  it('the telling line of a failed output: the last that speaks of an error, else the last; never the log’s own (exit N)', () => {
    const node = [
      '/w/use-b.js:1',
      'require("./lib.js").greet();',
      '                    ^',
      '',
      'TypeError: require(...).greet is not a function',
      '    at Object.<anonymous> (/w/use-b.js:1:21)',
      '',
      'Node.js v20.20.2',
      '(exit 1)',
    ].join('\n');
    assert.equal(tellingLine(node), 'TypeError: require(...).greet is not a function');
    assert.equal(tellingLine('compiling\n3 of 4 checks FAILED\nbye\n(exit 2)\n'), '3 of 4 checks FAILED');
    assert.equal(tellingLine('one\ntwo\n(exit 1)'), 'two');
    assert.equal(tellingLine('(exit 1)\n'), undefined);
  });
});
