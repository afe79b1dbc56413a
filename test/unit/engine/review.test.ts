import assert from 'node:assert/strict';
import { BatonError, describeEvent, type Engine } from '../../../src/engine/index';
import { MAX_FOLLOW_UP_BYTES } from '../../../src/engine/domain/followUp';
import { buildPrompt } from '../../../src/engine/domain/prompt';
import {
  commentPlace,
  quoteOf,
  reviewMessage,
  reviewMessageProblem,
  reviewProblem,
  type ReviewComment,
} from '../../../src/engine/domain/review';
import { deliverFollowUps } from '../../../src/engine/operations/followUps/followUps';
import { messagesSinceLastPass } from '../../../src/engine/queries/followUps';
import { DEMO_PLAN, EngineFixture } from '../../support/engineFixture';

/** Review comments (docs/extension.md, "Review comments"): the message an agent reads, and the store's record. */
describe('review comments', () => {
  const comment = (extra: Partial<ReviewComment> = {}): ReviewComment => ({
    path: 'src/greeting.txt',
    line: 2,
    quote: 'Hello wrld',
    text: 'Fix the typo: world.',
    ...extra,
  });

  describe('the message', () => {
    it('names each file and line, quotes the line and says the comment, ordered by file and line', () => {
      const message = reviewMessage(
        [
          comment({
            path: 'src/b.ts',
            line: 10,
            endLine: 11,
            quote: 'const a = 1;\nconst b = 2;',
            text: 'Merge these.',
          }),
          comment(),
          comment({ path: 'src/b.ts', line: 3, quote: '', text: 'Add a comment here.\n\nAnd a blank line.' }),
        ],
        'D-T1-coder-001',
      );
      assert.equal(
        message,
        [
          'Review of your changes (D-T1-coder-001): 3 comments. Each names a file (relative to the workspace) and a line, quotes that line as you left it, and says what to change. Address every comment.',
          '',
          '1. src/b.ts, line 3:',
          '   > (an empty line)',
          '   Add a comment here.',
          '',
          '   And a blank line.',
          '',
          '2. src/b.ts, lines 10–11:',
          '   > const a = 1;',
          '   > const b = 2;',
          '   Merge these.',
          '',
          '3. src/greeting.txt, line 2:',
          '   > Hello wrld',
          '   Fix the typo: world.',
        ].join('\n'),
      );
      assert.equal(commentPlace(comment({ endLine: 2 })), 'src/greeting.txt, line 2');
    });

    it('cannot start a heading of the prompt it opens: a comment that starts with # is not fenced away', () => {
      const message = reviewMessage([comment({ text: '# Not a heading\nUse ## here.', quote: '# Title' })]);
      assert.ok(!/^#/m.test(message), message);
      const prompt = buildPrompt({
        task: {
          runId: 'R-1',
          id: 'T1',
          title: 'Greet',
          agent: 'coder',
          depends: [],
          risk: [],
          files: [],
          verify: [],
          instructions: 'Greet.',
          line: 1,
          status: 'running',
        },
        delegationId: 'D-T1-coder-002',
        agent: 'coder',
        artifactPath: 'result.md',
        dependencies: [],
        followUps: [{ id: 'M-1', by: 'alice', message }],
      });
      assert.ok(prompt.includes(`## Message from alice\n\n${message}\n`), prompt.slice(0, 600));
    });

    it('keeps a quote short: five lines, 200 characters each', () => {
      const quote = quoteOf(['a'.repeat(300), 'b  ', 'c', 'd', 'e', 'f', 'g']);
      const lines = quote.split('\n');
      assert.equal(lines.length, 6);
      assert.equal(lines[0]!.length, 200);
      assert.ok(lines[0]!.endsWith('…'));
      assert.equal(lines[1], 'b');
      assert.equal(lines[5], '… (2 more lines)');
    });

    it('refuses a review with no comment, an empty comment, a comment with no line, and one too long', () => {
      assert.match(reviewProblem([])!, /no comment/);
      assert.match(reviewProblem([comment({ text: '  ' })])!, /^The comment on src\/greeting.txt:2 is empty/);
      assert.match(reviewProblem([comment({ line: 0 })])!, /names no line/);
      assert.match(reviewProblem([comment({ line: 4, endLine: 3 })])!, /ends before it starts/);
      assert.equal(reviewProblem([comment()]), undefined);
      assert.equal(reviewMessageProblem('x'.repeat(MAX_FOLLOW_UP_BYTES)), undefined);
      assert.match(reviewMessageProblem('x'.repeat(MAX_FOLLOW_UP_BYTES + 1))!, /send fewer or shorter comments/);
    });
  });

  describe('sent to the agent as one follow-up, kept in the store', () => {
    let fixture: EngineFixture;
    let engine: Engine;

    beforeEach(async () => {
      fixture = new EngineFixture();
      fixture.write('plan.md', DEMO_PLAN.slice(0, DEMO_PLAN.indexOf('```baton-task\nid: T2')));
      engine = await fixture.open();
    });
    afterEach(() => fixture.dispose());

    it('a review of a finished task reopens it with one message; review:sent keeps every comment; the task record shows it and the attempt that carried it', async () => {
      const first = await engine.claimTask({ planPath: 'plan.md', taskId: 'T1' });
      await engine.ingest({
        delegationId: first.delegation.id,
        artifactPath: fixture.writeResult('t1.md', { task: 'T1' }),
        token: first.token,
      });
      const comments = [comment(), comment({ path: 'src/app.ts', line: 7, quote: 'let x;', text: 'Name it.' })];
      const outcome = await engine.sendReview({
        runId: first.runId,
        taskId: 'T1',
        reviewed: first.delegation.id,
        comments,
        by: 'alice',
      });
      assert.equal(outcome.action, 'reopen');
      const [followUp] = await engine.listFollowUps(first.runId, 'T1');
      assert.equal(followUp!.id, outcome.followUp.id);
      assert.equal(
        followUp!.message,
        reviewMessage(comments, first.delegation.id),
        'one message, the formatted review',
      );
      const events = await engine.listEvents(first.runId);
      const sent = events.find((e) => e.type === 'review:sent');
      assert.ok(sent?.type === 'review:sent');
      assert.deepEqual(sent.data, {
        followUpId: outcome.followUp.id,
        taskId: 'T1',
        by: 'alice',
        action: 'reopen',
        reviewed: first.delegation.id,
        comments,
      });
      assert.equal(
        describeEvent(sent),
        `alice sent T1 a review of ${first.delegation.id}: 2 comments (src/greeting.txt:2 "Fix the typo: world.", src/app.ts:7 "Name it."); it runs again as a follow-up`,
      );
      // The follow-up and the review are one transaction: the review follows its message in the log.
      const follow = events.find((e) => e.type === 'follow-up:sent')!;
      assert.equal(sent.seq, follow.seq + 1);

      let record = await engine.taskRecord(first.runId, 'T1');
      assert.deepEqual(
        record.reviews.map((r) => [r.followUpId, r.by, r.reviewed, r.comments.length, r.deliveredTo]),
        [[outcome.followUp.id, 'alice', first.delegation.id, 2, undefined]],
      );
      // The next attempt carries it: the record says which.
      const second = await engine.claimTask({ planPath: 'plan.md', runId: first.runId, taskId: 'T1' });
      const store = await fixture.openStore();
      const pending = await store.read((r) => messagesSinceLastPass(r, first.runId, 'T1'));
      await store.transact((tx) =>
        deliverFollowUps(
          tx,
          { runId: first.runId, taskId: 'T1', delegationId: second.delegation.id, pending },
          fixture.fakeClock.now(),
        ),
      );
      record = await engine.taskRecord(first.runId, 'T1');
      assert.equal(record.reviews[0]!.deliveredTo, second.delegation.id);
    });

    it('refuses an empty review as an invalid follow-up, and writes nothing', async () => {
      const { run } = await engine.runForPlan('plan.md');
      const refused = await engine.sendReview({ runId: run.id, taskId: 'T1', comments: [], by: 'alice' }).then(
        () => 'sent',
        (err: unknown) => (BatonError.is(err) ? `${err.code}: ${err.message}` : String(err)),
      );
      assert.equal(refused, 'follow-up.invalid: The review has no comment; add a comment on a changed line first.');
      assert.deepEqual(await engine.listFollowUps(run.id), []);
      assert.deepEqual((await engine.taskRecord(run.id, 'T1')).reviews, []);
    });
  });
});
