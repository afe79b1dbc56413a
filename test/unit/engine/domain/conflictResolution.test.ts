// Resolving an integration conflict (src/engine/domain/conflictResolution.ts): how the target comes into a worktree,
// which unfinished resolutions stop an integration, and what the agent is told.
import assert from 'node:assert/strict';
import {
  conflictFollowUpMessage,
  resolutionMove,
  stopsIntegration,
  unfinishedResolutionDetail,
} from '../../../../src/engine/domain/conflictResolution';

describe('resolving an integration conflict (domain)', () => {
  it('merges the target in for merge and branch, rebases onto it for rebase and cherry-pick', () => {
    assert.deepEqual((['merge', 'branch', 'rebase', 'cherry-pick'] as const).map(resolutionMove), [
      'merge',
      'merge',
      'rebase',
      'rebase',
    ]);
  });

  it('stops an integration at files still in conflict or a rebase under way, not at a merge whose files are resolved', () => {
    assert.equal(stopsIntegration(undefined), false);
    assert.equal(stopsIntegration({ operation: 'merge', unmerged: [] }), false, 'committing concludes it');
    assert.equal(stopsIntegration({ operation: 'merge', unmerged: ['a.txt'] }), true);
    assert.equal(stopsIntegration({ operation: 'rebase', unmerged: [] }), true, 'git replays the rest, not Baton');
    assert.equal(stopsIntegration({ operation: 'cherry-pick', unmerged: [] }), true);
  });

  it('says what is left to do in the worktree', () => {
    assert.equal(
      unfinishedResolutionDetail({ operation: 'merge', unmerged: ['a.txt', 'b.txt'] }, 'main'),
      'the merge of main in the worktree is not finished: a.txt, b.txt still have conflicts; resolve them and mark them resolved (Complete Merge, or git add)',
    );
    assert.equal(
      unfinishedResolutionDetail({ operation: 'rebase', unmerged: [] }, 'main'),
      'the rebase of main in the worktree is not finished: its files are resolved; finish it (git rebase --continue)',
    );
  });

  it('tells the agent the files, the target and the branch to merge', () => {
    const message = conflictFollowUpMessage({
      taskId: 'B',
      targetBranch: 'main',
      branch: 'baton/R-1/B/001',
      files: ['src/a.ts', 'README.md'],
    });
    assert.match(
      message,
      /^Your work on B passed, but it does not integrate cleanly into `main`: main changed `src\/a\.ts`, `README\.md`/,
    );
    assert.match(message, /git merge baton\/R-1\/B\/001/);
  });
});
