import assert from 'node:assert/strict';
import {
  integrationConflictReason,
  isolationGateReason,
  isolationResolvedNote,
  targetMovedReason,
  undeclaredFilesReason,
  verificationFailedReason,
} from '../../../../src/engine/domain/gateReasons';
import type { TargetMoved } from '../../../../src/engine/domain/targetHead';

const worktree = { taskId: 'T2', path: '/ws/.baton/worktrees/R-1/D-T2-coder-001' };

describe('gate reasons: what a gate opened by a use case says', () => {
  it('isolation: the task, the problem (its first letter lowered) and the three ways on', () => {
    assert.equal(
      isolationGateReason('T2', 'The working tree has uncommitted changes: README.md.'),
      "T2 should run in a git worktree of its own, but the working tree has uncommitted changes: README.md. Fix that and check again (Check Again, or baton recheck) to run it in a worktree; approve to run this run's tasks in the shared working tree instead; reject to cancel T2.",
    );
    assert.equal(
      isolationResolvedNote('main', undefined),
      'checked again: the working tree on main is clean now, so the task runs in a git worktree of its own',
    );
    assert.match(isolationResolvedNote('main', 'T2'), /so T2 runs in a git worktree/);
  });

  it('verification failed: the command and how it ended (an exit code, or timed out)', () => {
    assert.equal(
      verificationFailedReason('D-T1-coder-001', { command: ['npm', 'test'], exitCode: 1, timedOut: false }),
      'Verification of D-T1-coder-001 failed: `npm test` exited with 1. Approve to retry the task, approve with accept to take the result anyway, reject to fail it.',
    );
    assert.match(
      verificationFailedReason('D-T1-coder-001', { command: ['sleep', '9'], exitCode: null, timedOut: true }),
      /`sleep 9` timed out\./,
    );
  });

  it('integration conflict: where, the files (or the details when git named none), where the work is kept', () => {
    assert.equal(
      integrationConflictReason(worktree, ['a.ts', 'b.ts'], 'merging baton/T2 into main'),
      'T2 passed but does not integrate cleanly (merging baton/T2 into main): conflicts in a.ts, b.ts. The target branch is untouched and the work is kept in /ws/.baton/worktrees/R-1/D-T2-coder-001. Resolve it there and approve to integrate again, or reject to discard the attempt.',
    );
    assert.match(integrationConflictReason(worktree, [], 'x'), /conflicts in see the details\./);
  });

  it('target moved: the move told by describeTargetMoved, then what approving and rejecting do', () => {
    const moved: TargetMoved = {
      kind: 'backwards',
      branch: 'main',
      expected: 'a'.repeat(40),
      found: 'b'.repeat(40),
      missing: [{ sha: 'a'.repeat(40), subject: 'add x' }],
      missingCount: 1,
    };
    const reason = targetMovedReason(worktree, moved);
    assert.match(reason, /^T2 passed, but main was rewound from aaaaaaaaaa to bbbbbbbbbb, not by Baton/);
    assert.match(
      reason,
      /puts the branch back\. Nothing was integrated; the work is kept in \/ws\/\.baton\/worktrees\/R-1\/D-T2-coder-001\. Approve to accept main as it is now \(bbbbbbbbbb\) and integrate T2 onto it; reject to fail T2 and integrate nothing\.$/,
    );
  });

  it('undeclared files: how many, the declaration, the files', () => {
    assert.equal(
      undeclaredFilesReason(worktree, ['docs/x.md'], ['src/**']),
      'T2 passed, but changed 1 file outside its declaration (files: src/**): docs/x.md. Nothing was integrated; the work is kept in /ws/.baton/worktrees/R-1/D-T2-coder-001. Approve to integrate it anyway; reject to fail T2 and discard the attempt.',
    );
    assert.match(
      undeclaredFilesReason(worktree, ['a', 'b'], ['src/**', 'test/**']),
      /changed 2 files outside its declaration \(files: src\/\*\*, test\/\*\*\): a, b\./,
    );
  });
});
