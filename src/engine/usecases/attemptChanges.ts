import { existsSync } from 'node:fs';
import type { AttemptChanges } from '../domain/changes';
import { BatonError } from '../domain/errors';
import type { AttemptWorktree } from '../domain/isolation';
import type { Delegation } from '../domain/types';
import { diffCommits, hasCommit, sharedTreeRepository, snapshotWorkingTree } from '../effects/git/treeSnapshot';
import { getDelegation } from '../queries/delegations';
import { readTreeSnapshot, type TreeSnapshot } from '../queries/treeSnapshots';
import { getAttemptWorktree, readRunIsolation } from '../queries/worktrees';
import type { EngineContext } from './context';

const short = (commit: string): string => commit.slice(0, 8);

/**
 * What one attempt changed (docs/workers.md, "What an attempt changed"), from what the store
 * recorded about it and what git still has:
 *
 * - an isolated attempt: its base → its branch head once committed, or → its worktree's files
 *   while nothing is committed; once integrated, the commit integration made on the target;
 * - a shared-tree attempt: the working tree before its worker → after it (or → now, while it
 *   runs);
 * - otherwise it says why it cannot be shown (outside git, nothing recorded, pruned by git).
 *
 * A comparison with live files snapshots them first (a commit no ref points at), so the list of
 * files includes new, untracked ones.
 */
export async function readAttemptChanges(
  ctx: Pick<EngineContext, 'store' | 'workspace'>,
  runId: string,
  delegationId: string,
): Promise<AttemptChanges> {
  const facts = await ctx.store.read(async (r) => ({
    delegation: await getDelegation(r, runId, delegationId),
    worktree: await getAttemptWorktree(r, runId, delegationId),
    isolation: await readRunIsolation(r, runId),
    snapshot: await readTreeSnapshot(r, runId, delegationId),
  }));
  const { delegation } = facts;
  if (!delegation)
    throw new BatonError('delegation.unknown', `There is no delegation ${delegationId} in run ${runId}.`);
  const unavailable = (reason: string): AttemptChanges => ({ available: false, runId, delegationId, reason });
  if (delegation.status === 'PENDING' || delegation.startedAt === undefined)
    return unavailable(`${delegationId} has not started yet: it changed nothing so far.`);
  if (facts.worktree)
    return worktreeChanges(ctx.workspace, delegation, facts.worktree, facts.isolation?.targetBranch, unavailable);
  if (facts.snapshot) return sharedTreeChanges(ctx.workspace, delegation, facts.snapshot, unavailable);
  if (!(await sharedTreeRepository(ctx.workspace)))
    return unavailable(
      `${delegationId} worked in the shared working tree, and ${ctx.workspace} is not in a git repository: Baton records what an attempt changed with git, so it cannot show this one's changes.`,
    );
  return unavailable(
    `Baton recorded no starting point for ${delegationId} (a person's hand-off, an attempt from before Baton recorded them, or git failed as it started: see the Baton log), so it cannot tell its changes from the rest of the working tree.`,
  );
}

async function worktreeChanges(
  workspace: string,
  delegation: Delegation,
  worktree: AttemptWorktree,
  targetBranch: string | undefined,
  unavailable: (reason: string) => AttemptChanges,
): Promise<AttemptChanges> {
  // Commits live in the repository's object store; a removed worktree's folder cannot run git, the workspace can.
  const repoRoot = existsSync(worktree.path) ? worktree.path : workspace;
  const base = {
    available: true as const,
    runId: delegation.runId,
    delegationId: delegation.id,
    taskId: delegation.taskId,
    repoRoot,
  };
  const integrated =
    worktree.status === 'integrated' &&
    worktree.targetBefore &&
    worktree.targetAfter &&
    worktree.targetBefore !== worktree.targetAfter;
  if (integrated && (await hasCommit(repoRoot, worktree.targetAfter!))) {
    return {
      ...base,
      where: 'integrated',
      summary: `integrated into ${targetBranch ?? 'the target branch'} by ${worktree.strategy}: ${short(worktree.targetBefore!)} → ${short(worktree.targetAfter!)}`,
      before: worktree.targetBefore!,
      after: { commit: worktree.targetAfter! },
      files: await diffCommits(repoRoot, worktree.targetBefore!, worktree.targetAfter!),
    };
  }
  if (worktree.sourceHead) {
    if (!(await hasCommit(repoRoot, worktree.sourceHead)))
      return unavailable(
        `${delegation.id}'s commit ${short(worktree.sourceHead)} is gone from the repository (its branch was removed and git pruned it).`,
      );
    return {
      ...base,
      where: 'worktree',
      summary: `committed on ${worktree.branch}: ${short(worktree.baseCommit)} → ${short(worktree.sourceHead)}`,
      before: worktree.baseCommit,
      after: { commit: worktree.sourceHead },
      files: await diffCommits(repoRoot, worktree.baseCommit, worktree.sourceHead),
    };
  }
  if (!existsSync(worktree.path))
    return unavailable(
      `${delegation.id}'s worktree ${worktree.path} was removed before anything of it was committed: its changes are gone.`,
    );
  const now = await snapshotWorkingTree(worktree.path, workspace, `Baton: ${delegation.id}'s worktree as it is`);
  return {
    ...base,
    where: 'worktree',
    summary: `uncommitted in its worktree: ${short(worktree.baseCommit)} → its files now`,
    before: worktree.baseCommit,
    after: { folder: worktree.path },
    files: await diffCommits(worktree.path, worktree.baseCommit, now),
  };
}

async function sharedTreeChanges(
  workspace: string,
  delegation: Delegation,
  snapshot: TreeSnapshot,
  unavailable: (reason: string) => AttemptChanges,
): Promise<AttemptChanges> {
  const { repoRoot } = snapshot;
  if (!existsSync(repoRoot) || !(await hasCommit(repoRoot, snapshot.before)))
    return unavailable(
      `The working tree Baton recorded before ${delegation.id} (${short(snapshot.before)}) is gone from ${repoRoot}: git prunes unreferenced commits after a while (gc.pruneExpire).`,
    );
  const base = {
    available: true as const,
    runId: delegation.runId,
    delegationId: delegation.id,
    taskId: delegation.taskId,
    repoRoot,
    where: 'shared' as const,
    before: snapshot.before,
  };
  if (snapshot.after && (await hasCommit(repoRoot, snapshot.after))) {
    return {
      ...base,
      summary: `in the shared working tree, before → after its worker (${short(snapshot.before)} → ${short(snapshot.after)})`,
      after: { commit: snapshot.after },
      files: await diffCommits(repoRoot, snapshot.before, snapshot.after),
      note: 'Anything else that changed the shared working tree while this worker ran (another task, a person) is in this comparison too.',
    };
  }
  const running = delegation.status === 'RUNNING';
  const now = await snapshotWorkingTree(repoRoot, workspace, `Baton: the working tree during ${delegation.id}`);
  return {
    ...base,
    summary: running
      ? `in the shared working tree, still running: before its worker → now`
      : `in the shared working tree: before its worker → now`,
    after: { folder: repoRoot },
    files: await diffCommits(repoRoot, snapshot.before, now),
    note: running
      ? 'The worker is still running: this compares with the files as they are now.'
      : 'Baton did not record the tree after this worker ended (its coordinator stopped first): this compares with the files as they are now.',
  };
}
