// What a gate opened by a use case says (its `reason`): the task, what happened, and what each
// decision does. Built from plain values, so each is tested without a store or a repository.
import type { AttemptWorktree } from './isolation';
import { counted } from './plural';
import { describeTargetMoved, type TargetMoved } from './targetHead';

/**
 * What an isolation gate says: the task, what is wrong (the probe's reason), and the three
 * ways on — fix it and check again (the gate then closes by itself), approve (the shared
 * working tree), reject (cancel the task).
 */
export function isolationGateReason(taskId: string, problem: string): string {
  const why = `${problem.charAt(0).toLowerCase()}${problem.slice(1)}`;
  return `${taskId} should run in a git worktree of its own, but ${why} Fix that and check again (Check Again, or baton recheck) to run it in a worktree; approve to run this run's tasks in the shared working tree instead; reject to cancel ${taskId}.`;
}

/** The note an isolation gate closes with when checking again finds a clean tree on a branch. */
export function isolationResolvedNote(branch: string, taskId: string | undefined): string {
  return `checked again: the working tree on ${branch} is clean now, so ${taskId ?? 'the task'} runs in a git worktree of its own`;
}

/** A verify command failed: which, how, and what approving (with or without accept) and rejecting do. */
export function verificationFailedReason(
  delegationId: string,
  failure: { command: readonly string[]; exitCode: number | null; timedOut: boolean },
): string {
  const what = failure.timedOut ? 'timed out' : `exited with ${failure.exitCode}`;
  return `Verification of ${delegationId} failed: \`${failure.command.join(' ')}\` ${what}. Approve to retry the task, approve with accept to take the result anyway, reject to fail it.`;
}

type Held = Pick<AttemptWorktree, 'taskId' | 'path'>;

/** A passed attempt that does not integrate: where (`detail`), the files in conflict, and where the work is kept. */
export function integrationConflictReason(worktree: Held, files: readonly string[], detail: string): string {
  const listed = files.length > 0 ? files.join(', ') : 'see the details';
  return `${worktree.taskId} passed but does not integrate cleanly (${detail}): conflicts in ${listed}. The target branch is untouched and the work is kept in ${worktree.path}. Resolve it there and approve to integrate again, or reject to discard the attempt.`;
}

/** A passed attempt held because its target branch moved backwards or sideways. */
export function targetMovedReason(worktree: Held, moved: TargetMoved): string {
  return `${worktree.taskId} passed, but ${describeTargetMoved(moved)} Nothing was integrated; the work is kept in ${worktree.path}. Approve to accept ${moved.branch} as it is now (${moved.found.slice(0, 10)}) and integrate ${worktree.taskId} onto it; reject to fail ${worktree.taskId} and integrate nothing.`;
}

/** A passed attempt held because it changed files its task's `files:` does not cover. */
export function undeclaredFilesReason(worktree: Held, files: readonly string[], declared: readonly string[]): string {
  return `${worktree.taskId} passed, but changed ${counted(files.length, 'file')} outside its declaration (files: ${declared.join(', ')}): ${files.join(', ')}. Nothing was integrated; the work is kept in ${worktree.path}. Approve to integrate it anyway; reject to fail ${worktree.taskId} and discard the attempt.`;
}

/**
 * A passed attempt whose merged tree failed a verify command: which command on what, the end of its output, that
 * nothing moved, and what each decision does (docs/isolation.md, "The merge queue").
 */
export function integrationFailedReason(
  worktree: Held,
  failure: { command: readonly string[]; exitCode: number | null; timedOut: boolean; output: string },
  merged: { targetBranch: string; targetHead: string; tree: string },
): string {
  const what = failure.timedOut ? 'timed out' : `exited with ${failure.exitCode}`;
  const last = tellingLine(failure.output);
  return `${worktree.taskId} passed on its own, but its work merged with ${merged.targetBranch} (${merged.targetHead.slice(0, 10)}; tree ${merged.tree.slice(0, 10)}) fails: \`${failure.command.join(' ')}\` ${what}${last ? ` (${last})` : ''}. ${merged.targetBranch} did not move; the work is kept in ${worktree.path}. Approve to integrate it anyway; reject to fail ${worktree.taskId}; or send it back to its agent with a message (baton message ${worktree.taskId} "…").`;
}

/**
 * The line of a failed command's output that most likely says what went wrong, for a one-line reason (the whole tail
 * is in the gate's details): the last that speaks of an error, a failure, an exception or an assertion, else the last
 * one. The log's own "(exit 1)" line is not the command's.
 */
export function tellingLine(output: string): string | undefined {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^\((exit|could not start)\b/.test(line));
  return [...lines].reverse().find((line) => /error|fail|exception|assert/i.test(line)) ?? lines.at(-1);
}

/**
 * A passed attempt whose branch the remote did not take (`integration: branch`): where it was pushed, git's telling
 * line, that nothing is lost, and what each decision does (docs/isolation.md, "Branch and pull request").
 */
export function pushRefusedReason(
  worktree: Held & Pick<AttemptWorktree, 'branch'>,
  push: { remote: string; refusal: string },
): string {
  return `${worktree.taskId} passed, but pushing its branch ${worktree.branch} to ${push.remote} failed: ${push.refusal}. Nothing was pushed; the branch and the work are kept in ${worktree.path}. Fix what is in the way (the remote, the network, a branch of that name there) and approve to push again; reject to fail ${worktree.taskId} (its branch stays until baton cleanup).`;
}

/** A passed attempt held for a person's review (config `review: required`): what it changed and the three ways on. */
export function reviewReason(
  taskId: string,
  delegationId: string,
  changedFiles: readonly string[] | undefined,
  worktree: string | undefined,
): string {
  const what =
    changedFiles === undefined
      ? 'its changes are in the working tree'
      : changedFiles.length === 0
        ? 'it changed no files'
        : `it changed ${counted(changedFiles.length, 'file')}`;
  const kept = worktree ? `, committed in ${worktree}` : '';
  return `${taskId} passed (${delegationId}) and waits for your review: ${what}${kept}. Approve to integrate it, request changes (Send Review to Agent, or baton message ${taskId} "…") to send it back to its agent, reject to fail the task.`;
}
