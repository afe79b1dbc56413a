import type { EngineContext } from './context';
import { BatonError } from '../domain/errors';
import { faultPoint } from '../store/faultPoint';
import { Mutex } from '../store/mutex';
import { Git } from '../effects/git/git';
import { getAttemptWorktree, readRunIsolation } from '../queries/worktrees';
import { readRunSettings } from '../queries/runs';
import { verifyMergedTree } from './verifyMergedTree';
import {
  advanceTarget,
  combine,
  commitAttemptWork,
  holdUnfinishedResolution,
  recordConflict,
  recordIntegrated,
  recordTargetMoved,
  settleBeforeCombining,
  stillToIntegrate,
  targetMovedWrongly,
} from './integrationSteps';
import { integrateInBatch } from './integrateBatch';
import { pushTaskBranch } from './pushTaskBranch';

export type IntegrationOutcome =
  | {
      kind: 'integrated';
      sourceHead: string;
      targetBefore: string;
      targetAfter: string;
      changedFiles: string[];
      alreadyOnTarget: boolean;
    }
  | { kind: 'conflict'; files: string[]; gateId: string }
  /** The target branch moved backwards or sideways: nothing integrated, a target_moved gate opened. */
  | { kind: 'target-moved'; expected: string; found: string; gateId: string }
  /** The attempt changed files outside its task's `files:`: nothing integrated, an undeclared_files gate opened. */
  | { kind: 'undeclared-files'; files: string[]; gateId: string }
  /** The merged tree failed a verify command: nothing integrated, an integration_failed gate opened. */
  | { kind: 'failed'; tree: string; command: string[]; gateId: string }
  /**
   * Batching (`integrationBatch`): its work is committed and waits for others still in flight to form a batch; it is
   * looked at again shortly (docs/isolation.md, "Batching with bisection").
   */
  | { kind: 'queued'; waiting: string[]; inFlight: number }
  /**
   * `integration: branch`: the attempt's branch is on the remote (the target did not move); its pull request opened
   * (`url`) or suggested.
   */
  | { kind: 'pushed'; remote: string; branch: string; sourceHead: string; url?: string }
  /** `integration: branch`: the remote refused the push; nothing lost, an integration_failed gate opened. */
  | { kind: 'push-refused'; remote: string; refusal: string; gateId: string }
  | { kind: 'not-now'; reason: string };

/** Integrations into one repository run one at a time in this process (docs/isolation.md, "Serialized"). */
const integrationLocks = new Map<string, Mutex>();

/** How often the target may move under an integration before it gives up for this pass. */
const MAX_TARGET_RACES = 3;

/**
 * Brings a passed, verified attempt's work onto the run's target branch (docs/isolation.md):
 * 1. commit what the worker left uncommitted in its worktree and record the source head and changed files;
 * 2. integrate by the run's strategy against the target head now (merge: one --no-ff merge
 *    commit computed with `merge-tree`, nothing checked out; rebase in the worktree then
 *    fast-forward; cherry-pick onto the target head in the worktree then fast-forward);
 * 3. record the target head before and after and complete the attempt, in one transaction.
 * A conflict touches neither the target branch nor the main working tree: the worktree is
 * kept and an integration_conflict gate names the files. Work already on the target (a crash
 * after step 2) is recorded, not integrated again.
 *
 * Before the target moves, two checks (docs/isolation.md, "The expected head" and "`files:`
 * at integration"): the target must be where Baton expects it or a descendant (a worker can
 * move it through refs shared by every worktree: backwards or sideways opens a target_moved
 * gate), and every file the attempt changed must be covered by its task's `files:` (else an
 * undeclared_files gate). Either way nothing is integrated and the worktree is kept.
 */
export async function integrateAttempt(
  ctx: EngineContext,
  runId: string,
  delegationId: string,
): Promise<IntegrationOutcome> {
  const { run, worktree } = await ctx.store.read(async (r) => ({
    run: await readRunIsolation(r, runId),
    worktree: await getAttemptWorktree(r, runId, delegationId),
  }));
  if (!run?.repoRoot || !run.targetBranch || !worktree)
    throw new BatonError('delegation.not-isolated', `${delegationId} has no worktree to integrate.`);
  const repoRoot = run.repoRoot;
  const lock = integrationLocks.get(repoRoot) ?? new Mutex();
  integrationLocks.set(repoRoot, lock);
  return lock.run(async () => {
    // Under the lock: a batch another task's integration cut may have integrated or held this one meanwhile.
    if (!(await stillToIntegrate(ctx, runId, worktree)))
      return { kind: 'not-now', reason: `${delegationId} was decided meanwhile` };
    const unfinished = await holdUnfinishedResolution(ctx, runId, worktree, run.targetBranch!);
    if (unfinished) return unfinished;
    const source = await commitAttemptWork(ctx, runId, worktree);
    faultPoint('integration:after-commit');
    const git = new Git(repoRoot);
    const settings = await ctx.store.read((r) => readRunSettings(r, runId));
    // Not batched: rebase (it rewrites the task's branch), branch (no target moves, nothing to save).
    if (
      settings.verifyIntegrated &&
      (settings.integrationBatch ?? 1) > 1 &&
      (worktree.strategy === 'merge' || worktree.strategy === 'cherry-pick')
    ) {
      const batched = await integrateInBatch(ctx, runId, run, worktree, settings.integrationBatch!);
      if (batched) return batched;
    }
    for (let race = 0; ; race++) {
      const targetBefore = await git.revParse(`refs/heads/${run.targetBranch}`);
      const moved = await targetMovedWrongly(ctx, git, runId, run.targetBranch!, targetBefore);
      if (moved) return recordTargetMoved(ctx, runId, worktree, moved);
      const checked = await settleBeforeCombining(ctx, git, runId, worktree, source, targetBefore);
      if ('settled' in checked) return checked.settled;
      const { picks } = checked;
      const result = await combine(git, worktree, picks, source, targetBefore, run.targetBranch!);
      if (result.kind === 'conflict') return recordConflict(ctx, runId, worktree, result.files, result.detail);
      // The merge queue: the tree the target would have is verified before the target moves.
      const verified = await verifyMergedTree(ctx, runId, worktree, {
        repoRoot,
        targetBranch: run.targetBranch!,
        targetHead: targetBefore,
        commit: result.commit,
        sourceHead: source.sourceHead,
      });
      if (verified.kind !== 'passed') return verified;
      if (worktree.strategy === 'branch')
        return pushTaskBranch(ctx, runId, worktree, source, {
          repoRoot,
          remote: settings.integrationRemote ?? 'origin',
          targetBranch: run.targetBranch!,
          targetHead: targetBefore,
        });
      const advanced = await advanceTarget(git, run.targetBranch!, targetBefore, result.commit);
      if (advanced.kind === 'advanced') {
        faultPoint('integration:after-advance');
        // What the integration changed on the target (a branch that merged the target in also carries others' files).
        const changedFiles = await git.changedFiles(targetBefore, result.commit);
        return recordIntegrated(ctx, runId, worktree, {
          ...source,
          changedFiles,
          targetBefore,
          targetAfter: result.commit,
          alreadyOnTarget: false,
        });
      }
      if (advanced.kind === 'blocked') return recordConflict(ctx, runId, worktree, advanced.files, advanced.detail);
      if (advanced.kind === 'interrupted') {
        ctx.log(`${worktree.delegationId}: not integrated yet: ${advanced.detail}; it is tried again`);
        return { kind: 'not-now', reason: advanced.detail };
      }
      if (race + 1 >= MAX_TARGET_RACES)
        return { kind: 'not-now', reason: `the target branch ${run.targetBranch} kept moving during the integration` };
      // The target moved meanwhile (someone committed): integrate against the new head.
    }
  });
}
