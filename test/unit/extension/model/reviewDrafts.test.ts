import assert from 'node:assert/strict';
import type { FollowUpOutcome } from '../../../../src/engine/index';
import {
  reviewOf,
  reviewSent,
  workspaceRelative,
  type DraftThread,
} from '../../../../src/extension/model/reviewDrafts';

/** Review comments in the editor, as plain data (docs/extension.md, "Review comments"). */
describe('review drafts (model/reviewDrafts.ts)', () => {
  const target = { runId: 'R-1', taskId: 'T1', delegationId: 'D-T1-coder-001', path: 'src/greeting.txt' };
  const thread = (extra: Partial<DraftThread> = {}): DraftThread => ({
    target,
    startLine: 1,
    endLine: 1,
    lines: ['Hello wrld   '],
    texts: ['Fix the typo.'],
    ...extra,
  });

  it('a thread is one comment: 1-based lines, the line quoted, its drafts joined; the attempt when all are on one', () => {
    assert.deepEqual(
      reviewOf([
        thread(),
        thread({ startLine: 4, endLine: 5, lines: ['a', 'b'], texts: ['One.', '  ', 'Two.'] }),
        thread({ texts: [' '] }),
      ]),
      {
        reviewed: 'D-T1-coder-001',
        comments: [
          { path: 'src/greeting.txt', line: 2, quote: 'Hello wrld', text: 'Fix the typo.' },
          { path: 'src/greeting.txt', line: 5, endLine: 6, quote: 'a\nb', text: 'One.\n\nTwo.' },
        ],
      },
    );
    const two = reviewOf([thread(), thread({ target: { ...target, delegationId: 'D-T1-coder-002' } })]);
    assert.equal(two.reviewed, undefined, 'threads on two attempts’ diffs name no one attempt');
  });

  it('names files relative to the workspace: the repository’s, a subfolder workspace’s, a worktree’s', () => {
    assert.equal(workspaceRelative('/w', '/w', 'src/a.ts'), 'src/a.ts');
    assert.equal(workspaceRelative('/repo/app', '/repo', 'app/src/a.ts'), 'src/a.ts');
    assert.equal(workspaceRelative('/w', '/w/.baton/worktrees/R-1/T1', 'src/a.ts'), 'src/a.ts');
    assert.equal(
      workspaceRelative('/repo/app', '/repo', 'lib/b.ts'),
      'lib/b.ts',
      'outside the workspace: as in the repository',
    );
  });

  it('says what sending did, as Send Message… does', () => {
    const outcome = (action: FollowUpOutcome['action']): FollowUpOutcome =>
      ({
        followUp: { id: 'M-3' },
        action,
        runStatus: 'running',
        driven: false,
        ...(action === 'interrupt' ? { interrupted: { delegationId: 'D-T1-coder-002', endedBy: 'coordinator' } } : {}),
      }) as FollowUpOutcome;
    assert.equal(
      reviewSent('T1', 2, outcome('reopen')),
      'Review sent to T1 (2 comments, message M-3): the finished task runs again as a follow-up attempt.',
    );
    assert.equal(
      reviewSent('T1', 1, outcome('interrupt')),
      'Review sent to T1 (1 comment, message M-3): its running attempt D-T1-coder-002 was ended; the next attempt continues its session with the review first.',
    );
    assert.equal(
      reviewSent('T1', 1, outcome('queue')),
      'Review sent to T1 (1 comment, message M-3): its next attempt carries it.',
    );
  });
});
