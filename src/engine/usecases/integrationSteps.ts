// The steps of an integration (docs/isolation.md, "An isolated attempt", steps 4–7), shared by one task's integration
// (integrateAttempt) and a batch's (integrateBatch): commit the attempt's work, check it, combine it with the
// target, move the target, and record what happened — each once, here.
import { existsSync } from 'node:fs';
import { jsonField } from '../store/rows';
import type { EngineContext } from './context';
import {
  markWorktreeCommitted,
  markWorktreeConflict,
  markWorktreeIntegrated,
  markWorktreeRemoved,
} from '../operations/worktrees/worktrees';
import { appendEvent } from '../operations/events/appendEvent';
import { openGate } from '../operations/gates/openGate';
import { completeAttempt } from '../operations/ingestions/recordIngestion';
import { getDelegation } from '../queries/delegations';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { transitionDelegation } from '../operations/delegations/transitionDelegation';
import { Git, GitCommandFailed } from '../effects/git/git';
import { readUnfinishedResolution, removeWorktree } from '../effects/git/worktrees';
import { stopsIntegration, unfinishedResolutionDetail } from '../domain/conflictResolution';
import { getAttemptWorktree, readRunIsolation } from '../queries/worktrees';
import { compareTargetHead, putBackAfterApproval } from './targetBranch';
import { cherryPicks, type AttemptWorktree, type CherryPicks } from '../domain/isolation';
import { counted } from '../domain/plural';
import { outsideDeclaration } from '../domain/fileOverlap';
import { pathsInWorkspace } from '../domain/workspacePath';
import { recordExpectedTargetHead } from '../operations/runs/recordRunIsolation';
import { integrationConflictReason, targetMovedReason, undeclaredFilesReason } from '../domain/gateReasons';
import type { TargetMoved } from '../domain/targetHead';
import type { StoreReader, StoreTx } from '../store/port';
import { holdAtGate } from './integrationGate';
import { putBackFastForwardLeftovers } from './fastForwardLeftovers';
import type { IntegrationOutcome } from './integrateAttempt';

/**
 * What the attempt brings to the target (added, modified, deleted; a rename as both its
 * names), as workspace-relative paths, that its task's `files:` does not cover. Nothing for a
 * task without `files:`, or when a person approved these very changes at an undeclared_files
 * gate. Compared against the merge base with the target, so a branch that merged the target
 * in (to resolve a conflict) is judged by its own changes only.
 */
async function filesOutsideTheDeclaration(
  ctx: EngineContext,
  repo: Git,
  runId: string,
  worktree: AttemptWorktree,
  source: SourceState,
  targetBefore: string,
): Promise<string[]> {
  const { declared, approvedHeads } = await ctx.store.read(async (r) => ({
    declared: await r.get<{ files_json: string }>(`SELECT files_json FROM tasks WHERE run_id = ? AND id = ?`, [
      runId,
      worktree.taskId,
    ]),
    approvedHeads: (
      await r.all<{ details_json: string | null }>(
        `SELECT details_json FROM gates
       WHERE run_id = ? AND delegation_id = ? AND kind = 'undeclared_files' AND status = 'approved'`,
        [runId, worktree.delegationId],
      )
    ).map((g) => ({ head: jsonField(g.details_json, 'sourceHead') })),
  }));
  const globs = declared ? (JSON.parse(declared.files_json) as string[]) : [];
  if (globs.length === 0) return [];
  if (approvedHeads.some((g) => g.head === source.sourceHead)) return [];
  // Unrelated histories (a target a person accepted after it was reset sideways) have no merge base: the attempt's own.
  const mergeBase = await repo.attempt(['merge-base', targetBefore, source.sourceHead]);
  const from = mergeBase.exitCode === 0 ? mergeBase.stdout.trim() : source.baseCommit;
  const changed = await repo.changedFiles(from, source.sourceHead);
  const run = await ctx.store.read((r) => readRunIsolation(r, runId));
  return outsideDeclaration(pathsInWorkspace(run!.repoRoot!, ctx.workspace, changed), globs);
}

export interface SourceState {
  sourceHead: string;
  baseCommit: string;
  changedFiles: string[];
}

/** Step 1: the worker's uncommitted work becomes a commit on the attempt's branch; recorded. */
export async function commitAttemptWork(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
): Promise<SourceState> {
  const git = new Git(worktree.path);
  await git.run(['add', '--all']);
  const staged = await git.attempt(['diff', '--cached', '--quiet']);
  if (staged.exitCode === 1) {
    await git.run([
      ...(await commitIdentity(git)),
      'commit',
      '--no-verify',
      '--quiet',
      '-m',
      `Baton: ${worktree.taskId} (${worktree.delegationId})`,
      '-m',
      `Run ${runId}, task ${worktree.taskId}, delegation ${worktree.delegationId}.`,
    ]);
  }
  const sourceHead = await git.headCommit();
  const changedFiles = await git.changedFiles(worktree.baseCommit, sourceHead);
  if (worktree.sourceHead !== sourceHead || worktree.status === 'active' || worktree.status === 'conflict') {
    await ctx.store.transact(async (tx) => {
      await markWorktreeCommitted(
        tx,
        { runId, delegationId: worktree.delegationId },
        { sourceHead, changedFiles },
        ctx.clock.now(),
      );
      await appendEvent(tx, runId, 'integration:committed', ctx.clock.now(), {
        delegationId: worktree.delegationId,
        taskId: worktree.taskId,
        sourceHead,
        changedFiles: changedFiles.length,
      });
    });
  }
  return { sourceHead, baseCommit: worktree.baseCommit, changedFiles };
}

export type Combined = { kind: 'combined'; commit: string } | { kind: 'conflict'; files: string[]; detail: string };

/** Step 2: the commit the target branch should move to, by strategy; nothing outside the attempt's worktree changes. */
export async function combine(
  repo: Git,
  worktree: AttemptWorktree,
  picks: CherryPicks | undefined,
  source: SourceState,
  target: string,
  targetBranch: string,
): Promise<Combined> {
  const message = `Baton: integrate ${worktree.taskId} (${worktree.delegationId})`;
  // `branch` merges too, but only to find a conflict and to verify the tree the pull request would make; the target
  // never moves to this commit (docs/isolation.md, "Branch and pull request").
  if (worktree.strategy === 'merge' || worktree.strategy === 'branch') {
    const merged = await repo.attempt([
      'merge-tree',
      '--write-tree',
      '--name-only',
      '--no-messages',
      target,
      source.sourceHead,
    ]);
    const lines = merged.stdout.split('\n').filter(Boolean);
    if (merged.exitCode === 1)
      return { kind: 'conflict', files: lines.slice(1), detail: `merging ${worktree.branch} into ${targetBranch}` };
    if (merged.exitCode !== 0)
      throw new GitCommandFailed(['merge-tree'], merged.exitCode, merged.stdout, merged.stderr);
    const tree = lines[0]!;
    const identity = await commitIdentity(repo);
    const commit = (
      await repo.run([
        ...identity,
        'commit-tree',
        tree,
        '-p',
        target,
        '-p',
        source.sourceHead,
        '-m',
        message,
        '-m',
        `Branch ${worktree.branch} into ${targetBranch}.`,
      ])
    ).trim();
    return { kind: 'combined', commit };
  }
  const git = new Git(worktree.path);
  if (worktree.strategy === 'rebase') {
    const rebased = await git.attempt([...(await commitIdentity(git)), 'rebase', '--no-autosquash', target]);
    if (rebased.exitCode !== 0) {
      const files = await git.unmergedPaths();
      await git.attempt(['rebase', '--abort']);
      return { kind: 'conflict', files, detail: `rebasing ${worktree.branch} onto ${targetBranch}` };
    }
    return { kind: 'combined', commit: await git.headCommit() };
  }
  // cherry-pick: the attempt's commits not yet on the target replayed onto its head, detached, in the worktree.
  // A commit whose changes are all there in other shapes stays as an empty copy: no conflict without files.
  await git.run(['switch', '--quiet', '--detach', target]);
  const picked = await git.attempt([
    ...(await commitIdentity(git)),
    'cherry-pick',
    '--allow-empty',
    '--keep-redundant-commits',
    ...(picks?.kind === 'pick' ? picks.commits : [`${source.baseCommit}..${source.sourceHead}`]),
  ]);
  if (picked.exitCode !== 0) {
    const files = await git.unmergedPaths();
    await git.attempt(['cherry-pick', '--abort']);
    await git.run(['switch', '--quiet', worktree.branch]);
    return { kind: 'conflict', files, detail: `cherry-picking ${worktree.branch} onto ${targetBranch}` };
  }
  const commit = await git.headCommit();
  await git.run(['switch', '--quiet', worktree.branch]);
  return { kind: 'combined', commit };
}

/** Your git identity for Baton's commits; Baton's own when none is configured. */
export async function commitIdentity(git: Git): Promise<string[]> {
  return (await git.attempt(['config', 'user.email'])).exitCode === 0
    ? []
    : ['-c', 'user.name=Baton', '-c', 'user.email=baton@localhost'];
}

export type Advance =
  | { kind: 'advanced' }
  | { kind: 'moved' }
  | { kind: 'blocked'; files: string[]; detail: string }
  /** The fast-forward failed while it wrote the working tree (a full disk); what it wrote is put back. */
  | { kind: 'interrupted'; detail: string };

/**
 * Moves the target branch from `from` to `to` (a descendant). Where the branch is checked
 * out, git's own fast-forward updates that working tree too, or refuses without changing
 * anything (local changes in the way); elsewhere the ref moves by compare-and-swap.
 * A fast-forward that failed while writing (the disk filled) leaves files written but the
 * branch where it was: they are put back, and the integration is tried again later; found in
 * the way afterwards (a coordinator that died there), they are put back and it goes on.
 */
export async function advanceTarget(
  repo: Git,
  targetBranch: string,
  from: string,
  to: string,
  leftoversPutBack = false, // once: what is in the way after that is not left over
): Promise<Advance> {
  const checkedOut = (await repo.worktrees()).find((w) => w.branch === `refs/heads/${targetBranch}`);
  if (!checkedOut) {
    const updated = await repo.attempt([
      'update-ref',
      '-m',
      'baton: integrate',
      `refs/heads/${targetBranch}`,
      to,
      from,
    ]);
    return updated.exitCode === 0 ? { kind: 'advanced' } : { kind: 'moved' };
  }
  const there = new Git(checkedOut.path);
  if ((await there.headCommit()) !== from) return { kind: 'moved' };
  const forwarded = await there.attempt(['merge', '--ff-only', '--quiet', to]);
  if (forwarded.exitCode === 0) return { kind: 'advanced' };
  if ((await there.headCommit()) !== from) return { kind: 'moved' };
  const inTheWay = /would be overwritten[^\n]*:\n((?:\t[^\n]+\n)+)/.exec(forwarded.stderr);
  const putBack = await putBackFastForwardLeftovers(there, checkedOut.path, from, to);
  if (putBack && inTheWay && !leftoversPutBack) return advanceTarget(repo, targetBranch, from, to, true);
  if (putBack && !inTheWay)
    return {
      kind: 'interrupted',
      detail: `fast-forwarding ${targetBranch} in ${checkedOut.path} failed while writing files (${forwarded.stderr.trim().split('\n')[0]}); ${counted(putBack.length, 'file')} it wrote put back`,
    };
  const files = inTheWay
    ? inTheWay[1]!
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
    : [];
  return {
    kind: 'blocked',
    files,
    detail: `local changes in ${checkedOut.path} are in the way of fast-forwarding ${targetBranch}: ${forwarded.stderr.trim().split('\n')[0]}`,
  };
}

export async function recordIntegrated(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  facts: SourceState & { targetBefore: string; targetAfter: string; alreadyOnTarget: boolean },
): Promise<IntegrationOutcome> {
  await ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    await markWorktreeIntegrated(tx, { runId, delegationId: worktree.delegationId }, facts, now);
    // Baton left the target here: the next integration expects it here or further on.
    await recordExpectedTargetHead(tx, runId, facts.targetAfter);
    await appendEvent(tx, runId, 'integration:done', now, {
      delegationId: worktree.delegationId,
      taskId: worktree.taskId,
      strategy: worktree.strategy,
      sourceHead: facts.sourceHead,
      targetBefore: facts.targetBefore,
      targetAfter: facts.targetAfter,
      changedFiles: facts.changedFiles,
      ...(facts.alreadyOnTarget ? { alreadyOnTarget: true } : {}),
    });
    await completeWaitingAttempt(
      tx,
      runId,
      worktree,
      `integrated into the target (${worktree.strategy}, ${facts.changedFiles.length} file${facts.changedFiles.length === 1 ? '' : 's'})`,
      now,
    );
  });
  ctx.log(
    `${worktree.delegationId}: integrated ${counted(facts.changedFiles.length, 'file')} by ${worktree.strategy}: ${facts.targetBefore.slice(0, 8)} → ${facts.targetAfter.slice(0, 8)}`,
  );
  await cleanUpIntegrated(ctx, runId, worktree);
  return { kind: 'integrated', ...facts };
}

/**
 * The attempt's work reached where it goes (the target, or a remote): the attempt and its task complete — if the task
 * still waits for it in `verifying` (a person may have decided otherwise meanwhile).
 */
export async function completeWaitingAttempt(
  tx: StoreTx,
  runId: string,
  worktree: AttemptWorktree,
  reason: string,
  now: number,
): Promise<void> {
  const delegation = await getDelegation(tx, runId, worktree.delegationId);
  const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
    runId,
    worktree.taskId,
  ]);
  if (
    delegation &&
    (delegation.status === 'RUNNING' || delegation.status === 'BLOCKED') &&
    task?.status === 'verifying'
  ) {
    await completeAttempt(tx, delegation, { reason }, now);
    await refreshRunStatus(tx, runId, now);
  }
}

/**
 * The work is on the target: its worktree and branch go (docs/isolation.md, "Cleanup"). `keepBranch`: its work left
 * by a pull request, whose head the branch is — only the worktree goes.
 */
export async function cleanUpIntegrated(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  options: { keepBranch?: boolean } = {},
): Promise<void> {
  const run = await ctx.store.read((r) => readRunIsolation(r, runId));
  if (!run?.repoRoot) return;
  try {
    await removeWorktree(run.repoRoot, worktree, options);
    await ctx.store.transact((tx) =>
      markWorktreeRemoved(tx, { runId, delegationId: worktree.delegationId }, ctx.clock.now()),
    );
  } catch (err) {
    ctx.log(`${worktree.delegationId}: could not remove its worktree (baton cleanup will): ${(err as Error).message}`);
  }
}

/**
 * A resolution left unfinished in the attempt's worktree — a merge of the target with files still in conflict, a
 * rebase stopped half-way (docs/isolation.md, "Resolving a conflict") — is not committed as it is: that would commit
 * the conflict markers, or a commit in the middle of a rebase. The attempt goes back to an integration_conflict gate
 * that says what is left to do there; nothing is integrated. A merge whose files are all resolved goes on: committing
 * the attempt's work concludes it.
 */
export async function holdUnfinishedResolution(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  targetBranch: string,
): Promise<IntegrationOutcome | undefined> {
  if (!existsSync(worktree.path)) return undefined;
  const unfinished = await readUnfinishedResolution(new Git(worktree.path));
  if (!unfinished || !stopsIntegration(unfinished)) return undefined;
  const detail = unfinishedResolutionDetail(unfinished, targetBranch);
  return recordConflict(ctx, runId, worktree, [...unfinished.unmerged], detail);
}

export async function recordConflict(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  files: string[],
  detail: string,
): Promise<IntegrationOutcome> {
  const gateId = await ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    await markWorktreeConflict(tx, { runId, delegationId: worktree.delegationId }, files);
    const delegation = await getDelegation(tx, runId, worktree.delegationId);
    if (delegation?.status === 'RUNNING')
      await transitionDelegation(tx, delegation, 'BLOCKED', { reason: 'integration conflict' }, now);
    const gate = await openGate(
      tx,
      {
        runId,
        kind: 'integration_conflict',
        taskId: worktree.taskId,
        delegationId: worktree.delegationId,
        reason: integrationConflictReason(worktree, files, detail),
        details: { files, worktree: worktree.path, branch: worktree.branch, strategy: worktree.strategy, detail },
      },
      now,
    );
    await refreshRunStatus(tx, runId, now);
    return gate.id;
  });
  ctx.log(
    `${worktree.delegationId}: integration conflict in ${files.join(', ') || '(unknown files)'}; ${gateId} opened`,
  );
  return { kind: 'conflict', files, gateId };
}

export async function recordTargetMoved(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  moved: TargetMoved,
): Promise<IntegrationOutcome> {
  const gateId = await holdAtGate(ctx, runId, worktree, {
    kind: 'target_moved',
    why: `the target branch ${moved.branch} moved ${moved.kind}`,
    reason: targetMovedReason(worktree, moved),
    details: {
      branch: moved.branch,
      direction: moved.kind,
      expected: moved.expected,
      found: moved.found,
      missing: moved.missing,
      missingCount: moved.missingCount,
    },
  });
  ctx.log(
    `${worktree.delegationId}: not integrated: ${moved.branch} moved ${moved.kind} (${moved.expected.slice(0, 8)} → ${moved.found.slice(0, 8)}); ${gateId} opened`,
  );
  return { kind: 'target-moved', expected: moved.expected, found: moved.found, gateId };
}

async function recordUndeclaredFiles(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  source: SourceState,
  files: string[],
): Promise<IntegrationOutcome> {
  const declared = await ctx.store.read((r) =>
    r.get<{ files_json: string }>(`SELECT files_json FROM tasks WHERE run_id = ? AND id = ?`, [runId, worktree.taskId]),
  );
  const globs = declared ? (JSON.parse(declared.files_json) as string[]) : [];
  const gateId = await holdAtGate(ctx, runId, worktree, {
    kind: 'undeclared_files',
    why: `changed ${counted(files.length, 'file')} outside its files:`,
    reason: undeclaredFilesReason(worktree, files, globs),
    details: { files, declared: globs, sourceHead: source.sourceHead },
  });
  ctx.log(
    `${worktree.delegationId}: not integrated: files outside its declaration: ${files.join(', ')}; ${gateId} opened`,
  );
  return { kind: 'undeclared-files', files, gateId };
}

/**
 * The target branch moved backwards or sideways from where Baton expects it (read under the integration lock: a
 * person's approval or this run's last integration may have moved it), and no approval puts it back: what to gate.
 */
export async function targetMovedWrongly(
  ctx: EngineContext,
  git: Git,
  runId: string,
  targetBranch: string,
  targetBefore: string,
): Promise<TargetMoved | undefined> {
  const expected = await ctx.store.read(async (r) => {
    const now = await readRunIsolation(r, runId);
    return now?.expectedHead ?? now?.baseCommit;
  });
  if (!expected) return undefined;
  const check = await compareTargetHead(git, targetBranch, expected, targetBefore);
  if (check.kind !== 'backwards' && check.kind !== 'sideways') return undefined;
  return (await putBackAfterApproval(ctx.store, git, runId, expected, targetBefore)) ? undefined : check;
}

/** The attempt's task still waits in `verifying` for this attempt's integration (not integrated, held or stopped). */
export async function stillToIntegrate(ctx: EngineContext, runId: string, worktree: AttemptWorktree): Promise<boolean> {
  return ctx.store.read((r) => waitsForIntegration(r, runId, worktree.taskId, worktree.delegationId));
}

export async function waitsForIntegration(
  r: Pick<StoreReader, 'get'>,
  runId: string,
  taskId: string,
  delegationId: string,
): Promise<boolean> {
  const task = await r.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [runId, taskId]);
  const worktree = await getAttemptWorktree(r, runId, delegationId);
  return (
    task?.status === 'verifying' &&
    worktree !== undefined &&
    worktree.status !== 'integrated' &&
    worktree.status !== 'pushed'
  );
}

/**
 * A task's own checks before its work is combined with the target at `target`: nothing to bring over, or its work is
 * there already (integrated before a crash; cherry-picked: as copies) — recorded once; files outside its `files:` —
 * held at an undeclared_files gate. Otherwise `picks` (the cherry-pick strategy's commits still to copy).
 */
export async function settleBeforeCombining(
  ctx: EngineContext,
  git: Git,
  runId: string,
  worktree: AttemptWorktree,
  source: SourceState,
  target: string,
): Promise<{ settled: IntegrationOutcome } | { picks: CherryPicks | undefined }> {
  const picks =
    worktree.strategy === 'cherry-pick'
      ? cherryPicks(await git.run(['cherry', target, source.sourceHead, source.baseCommit]))
      : undefined;
  if (
    source.sourceHead === source.baseCommit ||
    picks?.kind === 'on-target' ||
    (await git.isAncestor(source.sourceHead, target))
  ) {
    const facts = { ...source, targetBefore: target, targetAfter: target };
    const alreadyOnTarget = source.sourceHead !== source.baseCommit;
    return { settled: await recordIntegrated(ctx, runId, worktree, { ...facts, alreadyOnTarget }) };
  }
  const undeclared = await filesOutsideTheDeclaration(ctx, git, runId, worktree, source, target);
  if (undeclared.length > 0) return { settled: await recordUndeclaredFiles(ctx, runId, worktree, source, undeclared) };
  return { picks };
}
