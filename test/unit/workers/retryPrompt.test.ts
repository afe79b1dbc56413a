import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Task } from '../../../src/engine/index';
import { issue } from '../../../src/engine/domain/issue';
import {
  buildFittedPrompt,
  buildPrompt,
  fitPrompt,
  STDIN_PROMPT_MAX_BYTES,
  verifyOutputTail,
  whatWentWrongBefore,
  type EarlierAttempt,
} from '../../../src/engine/domain/prompt';

const TASK: Task = {
  runId: 'R-1',
  id: 'T2',
  title: 'Migrate the schema',
  agent: 'coder',
  depends: ['T1'],
  risk: [],
  files: ['src/db/**', 'migrations/*.sql'],
  verify: [['npm', 'test', '--', '--grep', 'schema']],
  instructions: 'Add the table `users`.\n\nKeep it small.',
  line: 1,
  status: 'running',
};

const input = (earlierAttempts?: EarlierAttempt[]) => ({
  task: TASK,
  delegationId: 'D-T2-coder-002',
  agent: 'coder',
  artifactPath: '.baton/runs/R-1/artifacts/D-T2-coder-002.md',
  dependencies: [{ id: 'T1', title: 'Lay the ground' }],
  ...(earlierAttempts ? { earlierAttempts } : {}),
});

const at = (line: number, column: number) => ({ start: { line, column }, end: { line, column: column + 2 } });

const REJECTED: EarlierAttempt = {
  attempt: 1,
  delegationId: 'D-T2-coder-001',
  status: 'FAILED',
  reason: 'retry approved at G-3: try again',
  leaseEndReason: 'retry approved at G-3: try again',
  rejectedResult: {
    artifactPath: '.baton/runs/R-1/artifacts/D-T2-coder-001.md',
    issues: [
      issue(
        'result.task-mismatch',
        'task',
        'The result is for task "T3", but this delegation is for task "T2".',
        'Set task: T2.',
        at(12, 7),
      ),
      issue('result.no-block', '', 'The artifact has no baton-result block.', ''),
    ],
    omitted: 0,
  },
};

describe('workers: a retry’s prompt says what went wrong before', () => {
  it('leaves a first attempt’s prompt byte for byte as it was', () => {
    // The sha256 of this prompt as Baton built it before retries said anything (commit c8b832e), less the seed's
    // `Queue item id:` paragraph added since (issue 27): nothing else of a first attempt's prompt changed.
    const before = '71102ef5f7a669224ae00f589789c2bed55a2d5449b58652ad65ed1f76c9c889';
    const queueItem = 'Queue item id: R-1:D-T2-coder-001\n\n';
    const first = {
      ...input(),
      delegationId: 'D-T2-coder-001',
      artifactPath: '.baton/runs/R-1/artifacts/D-T2-coder-001.md',
    };
    const sha = (text: string) => createHash('sha256').update(text.replace(queueItem, '')).digest('hex');
    assert.ok(buildPrompt(first).includes(queueItem));
    assert.equal(sha(buildPrompt(first)), before);
    assert.equal(sha(buildPrompt({ ...first, earlierAttempts: [] })), before);
    assert.deepEqual(
      buildFittedPrompt(first, STDIN_PROMPT_MAX_BYTES),
      fitPrompt(buildPrompt(first), STDIN_PROMPT_MAX_BYTES),
    );
    assert.deepEqual(whatWentWrongBefore([]), []);
  });

  it('lists a rejected result’s issues with their code, message, line and column, before the result’s instructions', () => {
    const prompt = buildPrompt(input([REJECTED]));
    const section = prompt.slice(prompt.indexOf('## What went wrong before'), prompt.indexOf('## When you are done'));
    assert.ok(prompt.indexOf('## Verification') < prompt.indexOf('## What went wrong before'));
    assert.ok(prompt.indexOf('## What went wrong before') < prompt.indexOf('## When you are done'));
    assert.equal(
      section,
      [
        '## What went wrong before',
        '',
        'This task was tried before and did not succeed. Fix what went wrong, and do not repeat it.',
        '',
        '### Attempt 1 (D-T2-coder-001): FAILED — retry approved at G-3: try again',
        '',
        'Its result `.baton/runs/R-1/artifacts/D-T2-coder-001.md` was rejected:',
        '- line 12, column 7: `result.task-mismatch` The result is for task "T3", but this delegation is for task "T2". Set task: T2.',
        '- `result.no-block` The artifact has no baton-result block.',
        '',
        '',
      ].join('\n'),
    );
  });

  it('keeps each reason and issue on its line: a line break in their text cannot start a heading of its own', () => {
    const text = whatWentWrongBefore([
      {
        ...REJECTED,
        reason: 'retry approved at G-3: first line\n## When you are done\nsecond',
        rejectedResult: {
          ...REJECTED.rejectedResult!,
          issues: [issue('result.task-mismatch', 'task', 'The result is for task "A\n## B".', '')],
        },
      },
    ]).join('\n');
    assert.doesNotMatch(text, /^## (When|B)/m);
    assert.match(text, /— retry approved at G-3: first line ## When you are done second\n/);
    assert.match(text, /^- `result\.task-mismatch` The result is for task "A ## B"\.$/m);
  });

  it('says how many issues it left out', () => {
    const many = { ...REJECTED, rejectedResult: { ...REJECTED.rejectedResult!, omitted: 7 } };
    assert.ok(whatWentWrongBefore([many]).includes('- and 7 more issues.'));
    const one = { ...REJECTED, rejectedResult: { ...REJECTED.rejectedResult!, omitted: 1 } };
    assert.ok(whatWentWrongBefore([one]).includes('- and 1 more issue.'));
  });

  it('shows a failed verify command, how it failed and the end of its output in a fence its output cannot close', () => {
    const lines = whatWentWrongBefore([
      {
        attempt: 1,
        delegationId: 'D-T2-coder-001',
        status: 'FAILED',
        reason: 'retry approved at G-5',
        leaseEndReason: 'result ingested',
        failedVerification: {
          command: ['npm', 'test'],
          exitCode: 1,
          timedOut: false,
          logPath: '.baton/runs/R-1/logs/D-T2-coder-001.verify.log',
          output: 'AssertionError: expected 2 rows\n```\nnot a fence end',
        },
      },
    ]);
    const text = lines.join('\n');
    assert.match(text, /### Attempt 1 \(D-T2-coder-001\): FAILED — retry approved at G-5\n/);
    assert.match(text, /Its worker's lease ended: result ingested\./);
    assert.match(text, /its verification failed: `npm test` exited with 1\./);
    assert.match(text, /The end of its output \(all of it: `\.baton\/runs\/R-1\/logs\/D-T2-coder-001\.verify\.log`\):/);
    assert.match(text, /\n````text\nAssertionError: expected 2 rows\n```\nnot a fence end\n````\n/);
  });

  it('says a verify command timed out, and where its output is when it could not be read', () => {
    const text = whatWentWrongBefore([
      {
        attempt: 1,
        delegationId: 'D-T2-coder-001',
        status: 'FAILED',
        failedVerification: { command: ['make', 'check'], exitCode: null, timedOut: true, logPath: 'v.log' },
      },
    ]).join('\n');
    assert.match(text, /`make check` timed out\./);
    assert.match(text, /\(Its output is in `v\.log`\.\)/);
    assert.doesNotMatch(text, /```/);
  });

  it('gives the reason an attempt ended without a result: timed out, stale, stopped, over budget', () => {
    const ended = (attempt: number, status: EarlierAttempt['status'], reason: string): EarlierAttempt => ({
      attempt,
      delegationId: `D-T2-coder-00${attempt}`,
      status,
      reason,
      leaseEndReason: reason,
    });
    const text = whatWentWrongBefore([
      ended(1, 'FAILED', 'timed out after 2 s'),
      ended(2, 'STALE', 'lease expired at 2026-12-06T10:00:00.000Z without a heartbeat'),
      ended(3, 'CANCELLED', 'stopped: over the task budget'),
    ]).join('\n');
    assert.match(text, /### Attempt 1 \(D-T2-coder-001\): FAILED — timed out after 2 s\n/);
    assert.match(text, /### Attempt 2 \(D-T2-coder-002\): STALE — lease expired at .* without a heartbeat\n/);
    assert.match(text, /### Attempt 3 \(D-T2-coder-003\): CANCELLED — stopped: over the task budget\n/);
    assert.doesNotMatch(text, /lease ended/, 'a lease that ended for the same reason is not told twice');
  });

  it('tells about the last three earlier attempts only, and says so', () => {
    const attempts = [1, 2, 3, 4, 5].map((n): EarlierAttempt => ({
      attempt: n,
      delegationId: `D-T2-coder-00${n}`,
      status: 'FAILED',
      reason: `reason ${n}`,
    }));
    const text = whatWentWrongBefore(attempts).join('\n');
    assert.deepEqual(
      [...text.matchAll(/^### Attempt (\d)/gm)].map((m) => m[1]),
      ['3', '4', '5'],
    );
    assert.match(text, /\(The last 3 attempts are shown\.\)/);
  });

  it('gives way before the result’s instructions when the prompt must be cut: oldest attempts first', () => {
    const big = (n: number): EarlierAttempt => ({
      attempt: n,
      delegationId: `D-T2-coder-00${n}`,
      status: 'FAILED',
      reason: `reason ${n} ${'x'.repeat(3000)}`,
    });
    const plain = buildPrompt(input());
    const fitted = buildFittedPrompt(input([big(1), big(2)]), Buffer.byteLength(plain) + 4000);
    assert.equal(fitted.truncated, false);
    assert.doesNotMatch(fitted.text, /### Attempt 1/);
    assert.match(fitted.text, /### Attempt 2/);
    assert.match(fitted.text, /## When you are done[\s\S]*baton heartbeat/);
    const none = buildFittedPrompt(input([big(1)]), Buffer.byteLength(plain) + 100);
    assert.deepEqual(none, { text: plain, truncated: false });
  });

  describe('verifyOutputTail', () => {
    it('keeps the failed command’s own output, its last 40 lines', () => {
      const log = [
        '$ npm run lint',
        'lint ok',
        '(exit 0)',
        '$ npm test',
        ...Array.from({ length: 50 }, (_, i) => `line ${i + 1}`),
        '(exit 1)',
        '',
      ].join('\n');
      const tail = verifyOutputTail(log, ['npm', 'test'], false).split('\n');
      assert.equal(tail.length, 40);
      assert.equal(tail[0], 'line 12');
      assert.equal(tail.at(-1), '(exit 1)');
      assert.deepEqual(verifyOutputTail(log.replace(/line \d+\n/g, ''), ['npm', 'test'], false), '(exit 1)');
    });

    it('drops the partial first line of a cut log', () => {
      assert.equal(verifyOutputTail('ial line\nwhole line\n(exit 2)\n', ['x'], true), 'whole line\n(exit 2)');
      assert.equal(verifyOutputTail('first line\n(exit 2)', ['x'], false), 'first line\n(exit 2)');
    });
  });
});
