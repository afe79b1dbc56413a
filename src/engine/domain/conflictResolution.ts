// Resolving an integration conflict (docs/isolation.md, "Resolving a conflict"): in the task's worktree by a person
// (the editor's merge editor), or by the task's agent in a follow-up attempt. What each says, and how the resolution
// in a worktree is started — decided from plain values, so each is tested without a repository.
import type { IntegrationStrategy } from './types';

/**
 * How the target comes into a task's branch so that its files carry the conflict: a merge for the strategies that
 * integrate by merging (the task's branch then holds the target, and merging it again is clean), a rebase onto the
 * target for those that replay the task's commits (a merge commit would be replayed away and conflict again).
 */
export function resolutionMove(strategy: IntegrationStrategy): 'merge' | 'rebase' {
  return strategy === 'rebase' || strategy === 'cherry-pick' ? 'rebase' : 'merge';
}

/** A merge or rebase left unfinished in a worktree: what git is in the middle of, and the files still in conflict. */
export interface UnfinishedResolution {
  operation: 'merge' | 'rebase' | 'cherry-pick';
  unmerged: readonly string[];
}

/**
 * Whether an unfinished resolution stops an integration: files still in conflict always do (committing them would
 * commit the conflict markers); a rebase or cherry-pick in progress does too (its remaining commits are git's to
 * replay, not Baton's). A merge whose files are all resolved does not: committing it concludes it.
 */
export function stopsIntegration(unfinished: UnfinishedResolution | undefined): boolean {
  return unfinished !== undefined && (unfinished.unmerged.length > 0 || unfinished.operation !== 'merge');
}

/** The `detail` of the conflict gate an unfinished resolution reopens: what is left to do in the worktree. */
export function unfinishedResolutionDetail(unfinished: UnfinishedResolution, targetBranch: string): string {
  const files = unfinished.unmerged;
  const left =
    files.length > 0
      ? `${files.join(', ')} still ${files.length === 1 ? 'has' : 'have'} conflicts`
      : 'its files are resolved';
  const resolve = files.length > 0 ? 'resolve them and ' : '';
  const finish =
    unfinished.operation === 'merge'
      ? `${resolve}mark them resolved (Complete Merge, or git add)`
      : `${resolve}finish it (git ${unfinished.operation} --continue)`;
  return `the ${unfinished.operation} of ${targetBranch} in the worktree is not finished: ${left}; ${finish}`;
}

/**
 * The follow-up message that sends a conflict to the task's agent. Its next attempt starts in a new worktree from the
 * target as it is now (like every attempt), so it is told to bring its earlier branch in and settle the files there.
 */
export function conflictFollowUpMessage(conflict: {
  taskId: string;
  targetBranch: string;
  branch: string;
  files: readonly string[];
}): string {
  const files = conflict.files.length > 0 ? conflict.files.map((f) => `\`${f}\``).join(', ') : 'some files';
  return [
    `Your work on ${conflict.taskId} passed, but it does not integrate cleanly into \`${conflict.targetBranch}\`: ${conflict.targetBranch} changed ${files} since your attempt started, and so did you.`,
    '',
    `This attempt starts from \`${conflict.targetBranch}\` as it is now. Bring your earlier work in with \`git merge ${conflict.branch}\`, resolve the conflicts in ${files} so that both ${conflict.targetBranch}'s changes and yours are kept, commit the merge, and report your result as before.`,
  ].join('\n');
}
