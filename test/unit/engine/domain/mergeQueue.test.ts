import assert from 'node:assert/strict';
import {
  approvedDespiteFailure,
  cutIntegrationBatch,
  MAX_BATCH_WAIT_MS,
  mergedTreeCommands,
  mergedTreeWork,
  nextBisectionStep,
  verdictsAfterIntegrating,
} from '../../../../src/engine/domain/mergeQueue';
import { integrationFailedReason, tellingLine } from '../../../../src/engine/domain/gateReasons';
import { DEFAULT_CONFIG, parseConfig } from '../../../../src/engine/domain/config';
import { describeEvent } from '../../../../src/engine/domain/describeEvent';
import type { EventOf } from '../../../../src/engine/domain/events';
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
      'B passed on its own, but its work merged with main (0123456789; tree fedcba9876) fails: `node check.js` exited with 1 (TypeError: greet is not a function). main did not move; the work is kept in /ws/.baton/worktrees/R-1/B-001. Approve to integrate it anyway; reject to fail B; or send it back to its agent with a message (baton message B "…").',
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

/**
 * Drives the bisection decision as the batch integration does: `fails(tree)` says whether the target holding the tasks
 * in `tree` (in order) fails its commands. Returns what integrated, the culprits, and every tree verified.
 */
function bisect(
  batch: string[],
  fails: (tree: string[]) => boolean,
): { integrated: string[]; culprits: string[]; verified: string[] } {
  const target: string[] = [];
  const culprits: string[] = [];
  const verified: string[] = [];
  let queue = [...batch];
  let verdicts = new Map<number, boolean>();
  for (let guard = 0; guard < 100; guard++) {
    const step = nextBisectionStep(queue.length, verdicts);
    if (step.kind === 'done') return { integrated: target, culprits, verified };
    if (step.kind === 'culprit') {
      culprits.push(queue.shift()!);
      verdicts = new Map();
    } else if (step.kind === 'verify') {
      const tree = [...target, ...queue.slice(0, step.take)];
      verified.push(tree.join(''));
      verdicts.set(step.take, !fails(tree));
    } else {
      // Integrating a prefix known to pass: its tree's receipt, nothing runs.
      target.push(...queue.slice(0, step.take));
      queue = queue.slice(step.take);
      verdicts = verdictsAfterIntegrating(verdicts, step.take);
    }
  }
  throw new Error('the bisection does not end');
}

describe('the merge queue: batching with bisection (docs/isolation.md, "Batching with bisection")', () => {
  it('a batch is cut when it is full or when nothing else in flight could join it; in plan order', () => {
    assert.deepEqual(cutIntegrationBatch(['A', 'B'], 1, 3), { kind: 'wait' }, 'C still runs: it may join');
    assert.deepEqual(cutIntegrationBatch(['A', 'B'], 0, 3), { kind: 'batch', members: ['A', 'B'] });
    assert.deepEqual(cutIntegrationBatch(['A', 'B', 'C', 'D'], 2, 3), { kind: 'batch', members: ['A', 'B', 'C'] });
    assert.deepEqual(cutIntegrationBatch([], 0, 3), { kind: 'wait' });
    assert.deepEqual(cutIntegrationBatch(['A'], 4, 1), { kind: 'batch', members: ['A'] }, 'size 1: one at a time');
    assert.deepEqual(cutIntegrationBatch(['A', 'B'], 1, 3, MAX_BATCH_WAIT_MS - 1), { kind: 'wait' });
    assert.deepEqual(
      cutIntegrationBatch(['A', 'B'], 1, 3, MAX_BATCH_WAIT_MS),
      { kind: 'batch', members: ['A', 'B'] },
      'a slow task in flight holds the finished ones back for a while only',
    );
  });

  it('all pass: one verification, then the whole batch integrates from its receipt', () => {
    assert.deepEqual(
      bisect(['A', 'B', 'C', 'D'], () => false),
      { integrated: ['A', 'B', 'C', 'D'], culprits: [], verified: ['ABCD'] },
    );
  });

  it('one culprit among 4: the other 3 integrate, the culprit is named, in 3 or 4 verifications', () => {
    const breaks = (culprit: string) => (tree: string[]) => tree.includes(culprit);
    assert.deepEqual(bisect(['A', 'B', 'C', 'D'], breaks('C')), {
      integrated: ['A', 'B', 'D'],
      culprits: ['C'],
      // The batch fails; its first half passes and integrates; C alone on A+B fails; D is a new batch of one.
      verified: ['ABCD', 'AB', 'ABC', 'ABD'],
    });
    assert.deepEqual(bisect(['A', 'B', 'C', 'D'], breaks('A')), {
      integrated: ['B', 'C', 'D'],
      culprits: ['A'],
      verified: ['ABCD', 'AB', 'A', 'BCD'],
    });
    assert.deepEqual(bisect(['A', 'B', 'C', 'D'], breaks('D')), {
      integrated: ['A', 'B', 'C'],
      culprits: ['D'],
      verified: ['ABCD', 'AB', 'ABC'],
    });
    // 8 tasks, one culprit: about log2(8) + 2 verifications instead of 8.
    const eight = bisect(['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H'], breaks('F'));
    assert.deepEqual(eight.culprits, ['F']);
    assert.deepEqual(eight.integrated, ['A', 'B', 'C', 'D', 'E', 'G', 'H']);
    assert.equal(eight.verified.length, 5);
  });

  it('two culprits: both are named, the others integrate', () => {
    const result = bisect(['A', 'B', 'C', 'D'], (tree) => tree.includes('B') || tree.includes('D'));
    assert.deepEqual(result.culprits, ['B', 'D']);
    assert.deepEqual(result.integrated, ['A', 'C']);
    assert.deepEqual(result.verified, ['ABCD', 'AB', 'A', 'ACD', 'AC']);
  });

  it('a culprit only together with another (A renames what C calls): C, the later in plan order, is named; A integrates', () => {
    const result = bisect(['A', 'B', 'C', 'D'], (tree) => tree.includes('A') && tree.includes('C'));
    assert.deepEqual(result.culprits, ['C'], 'C is verified on the target that holds A, as one at a time would');
    assert.deepEqual(result.integrated, ['A', 'B', 'D']);
  });

  it('a prefix known to pass that fails when integrated (a flaky command) is verified again as a failure', () => {
    // Passed at 2, then integrating those 2 failed: the shortest failure is 2, nothing passes; its first half next.
    assert.deepEqual(nextBisectionStep(4, new Map([[2, false]])), { kind: 'verify', take: 1 });
    assert.deepEqual(nextBisectionStep(3, new Map([[3, false]])), { kind: 'verify', take: 2 });
    assert.deepEqual(nextBisectionStep(0, new Map()), { kind: 'done' });
    assert.deepEqual(
      verdictsAfterIntegrating(
        new Map([
          [1, true],
          [2, true],
          [4, false],
        ]),
        2,
      ),
      new Map([[2, false]]),
    );
  });

  it('integrationBatch is a whole number 1–64, default 1, frozen into the run', () => {
    assert.equal(parseConfig('{}').config.integrationBatch, 1);
    assert.equal(runSettingsFrom(parseConfig('{ "integrationBatch": 8 }').config).integrationBatch, 8);
    for (const bad of ['0', '65', '2.5', '"4"'])
      assert.ok(
        parseConfig(`{ "integrationBatch": ${bad} }`).issues.some((i) => i.severity === 'error'),
        `${bad} is refused`,
      );
    const frozen = runSettingsFrom(parseConfig('{ "integrationBatch": 4 }').config);
    assert.deepEqual(settingsDiffering(frozen, DEFAULT_CONFIG), ['integrationBatch'], 'a later edit is told');
  });

  it('each step of a batch is one line in the timeline', () => {
    const line = (e: EventOf) => describeEvent(e);
    assert.equal(
      line({ type: 'integration:batch-started', data: { taskIds: ['A', 'B', 'C'], targetHead: 'abcdef0123' } }),
      'integration batch A, B, C merged onto abcdef01, verified together',
    );
    assert.equal(
      line({
        type: 'integration:batch-split',
        data: {
          failed: ['A', 'B', 'C'],
          next: ['A', 'B'],
          tree: '9b81c04a77',
          command: ['npm', 'test'],
          exitCode: 1,
          timedOut: false,
        },
      }),
      'batch A, B, C: merged tree 9b81c04a failed `npm test` exited 1; split: A, B next',
    );
    assert.equal(
      line({
        type: 'integration:verified',
        data: { delegationId: 'D-B-x-001', taskId: 'B', batch: ['A', 'B'], tree: '9b81c04a77', ran: 0, reused: 1 },
      }),
      'batch A, B: merged tree 9b81c04a passed (0 run, 1 reused)',
    );
  });
});
