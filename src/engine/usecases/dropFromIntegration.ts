import { existsSync } from 'node:fs';
import type { EngineContext } from './context';
import { updateGate } from '../operations/gates/updateGate';
import { BatonError } from '../domain/errors';
import { counted } from '../domain/plural';
import type { Gate } from '../domain/types';
import { Git } from '../effects/git/git';
import { appendEvent } from '../operations/events/appendEvent';
import { markWorktreeCommitted } from '../operations/worktrees/worktrees';
import { getAttemptWorktree } from '../queries/worktrees';
import { GATE_COLUMNS, toGate, type GateRow } from '../store/rows';
import { commitIdentity } from './integrationSteps';

export interface DropOutcome {
  gateId: string;
  delegationId: string;
  dropped: string[];
  kept: string[];
  /** The new commit on the task's branch: its work without the dropped files. */
  sourceHead: string;
}

/**
 * Per-file keep or drop at a review gate or an integration_conflict gate (issue 27; docs/isolation.md, "Keep or drop
 * files at review"): a person
 * drops files of a passed, held attempt's changes, and the integration takes only what was kept. Done as a new commit
 * on the task's branch — each dropped file put back as it was at the attempt's base (or removed, if the attempt added
 * it) — whose message names what was dropped, by whom and at which gate; the worktree's recorded head and changed
 * files follow it, and so does the gate's, so approving integrates that commit. Paths are the repository's, as the
 * attempt's changed files are recorded. The attempt waits at its gate meanwhile: no worker writes to its worktree.
 */
export async function dropFromIntegration(
  ctx: EngineContext,
  input: { gateId: string; files: readonly string[]; by: string },
): Promise<DropOutcome> {
  const { gate, worktree } = await ctx.store.read(async (r) => {
    const row = await r.get<GateRow>(`SELECT ${GATE_COLUMNS} FROM gates WHERE id = ?`, [input.gateId]);
    const found = row ? toGate(row) : undefined;
    return {
      gate: found,
      worktree: found?.delegationId ? await getAttemptWorktree(r, found.runId, found.delegationId) : undefined,
    };
  });
  if (!gate) throw new BatonError('gate.unknown', `There is no gate ${input.gateId}.`);
  refuseUnlessHeld(gate, worktree);
  const changed = worktree!.changedFiles;
  const dropped = [...new Set(input.files)];
  const unknown = dropped.filter((f) => !changed.includes(f));
  if (dropped.length === 0 || unknown.length > 0)
    throw new BatonError(
      'review.drop-refused',
      dropped.length === 0
        ? 'Name the files to drop.'
        : `${worktree!.delegationId} did not change ${unknown.join(', ')}; its changed files: ${changed.join(', ')}.`,
    );
  const kept = changed.filter((f) => !dropped.includes(f));
  if (kept.length === 0)
    throw new BatonError(
      'review.drop-refused',
      `Dropping every file ${worktree!.delegationId} changed leaves nothing to integrate: reject ${gate.id} instead.`,
    );
  const git = new Git(worktree!.path);
  // At a conflict gate the person may have started resolving it there (Resolve Conflict): a commit now would take the
  // half-done merge or rebase with it.
  const resolving = await resolutionInProgress(git);
  if (resolving)
    throw new BatonError(
      'review.drop-refused',
      `Nothing dropped: ${resolving} in ${worktree!.path}; finish it (then approve ${gate.id}) or abort it first.`,
    );
  const base = worktree!.baseCommit;
  const where = gate.kind === 'review' ? 'at review' : `at ${gate.id} (its conflict)`;
  for (const file of dropped) {
    const atBase = (await git.attempt(['cat-file', '-e', `${base}:${file}`])).exitCode === 0;
    if (atBase) await git.run(['checkout', base, '--', `:(top,literal)${file}`]);
    else await git.run(['rm', '--quiet', '--force', '--ignore-unmatch', '--', `:(top,literal)${file}`]);
  }
  await git.run([
    ...(await commitIdentity(git)),
    'commit',
    '--no-verify',
    '--quiet',
    '-m',
    `Baton: ${worktree!.taskId} (${worktree!.delegationId}) without ${counted(dropped.length, 'file')} dropped ${where}`,
    '-m',
    `Dropped by ${input.by} at ${gate.id}, put back as they were at ${base.slice(0, 12)}:\n${dropped.map((f) => `- ${f}`).join('\n')}\n\nKept: ${kept.join(', ')}.`,
  ]);
  const sourceHead = await git.headCommit();
  const nowChanged = await git.changedFiles(base, sourceHead);
  await ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    const still = await tx.get<{ status: string; reason: string }>(`SELECT status, reason FROM gates WHERE id = ?`, [
      gate.id,
    ]);
    // Decided while the commit was made: the commit stays on the branch, unrecorded — the decision stands.
    if (still?.status !== 'open')
      throw new BatonError('gate.already-decided', `Gate ${gate.id} was decided meanwhile.`);
    await markWorktreeCommitted(
      tx,
      { runId: gate.runId, delegationId: worktree!.delegationId },
      { sourceHead, changedFiles: nowChanged },
      now,
    );
    const earlier = Array.isArray(gate.details.dropped) ? (gate.details.dropped as string[]) : [];
    await updateGate(
      tx,
      gate,
      {
        reason: still.reason,
        // A conflict gate's `files` are the files in conflict, a review gate's the attempt's changed files.
        details:
          gate.kind === 'review'
            ? { ...gate.details, sourceHead, files: nowChanged, dropped: [...earlier, ...dropped] }
            : { ...gate.details, sourceHead, dropped: [...earlier, ...dropped] },
      },
      now,
    );
    await appendEvent(tx, gate.runId, 'review:dropped', now, {
      gateId: gate.id,
      delegationId: worktree!.delegationId,
      taskId: worktree!.taskId,
      by: input.by,
      files: dropped,
      sourceHead,
    });
  });
  return { gateId: gate.id, delegationId: worktree!.delegationId, dropped, kept: nowChanged, sourceHead };
}

/** The gates at which a held attempt's files can be dropped, and the worktree state each holds it in. */
const DROP_AT: Partial<Record<Gate['kind'], string>> = { review: 'committed', integration_conflict: 'conflict' };

function refuseUnlessHeld(gate: Gate, worktree: { status: string; sourceHead?: string } | undefined): void {
  const why =
    DROP_AT[gate.kind] === undefined
      ? `${gate.id} is ${gate.kind}; files are dropped at a review gate (review: required) or an integration_conflict gate`
      : gate.status !== 'open'
        ? `${gate.id} is ${gate.status}`
        : !worktree
          ? `${gate.delegationId ?? gate.id} ran in the shared working tree: there is no branch to drop a file from (undo it there)`
          : worktree.status !== DROP_AT[gate.kind] || !worktree.sourceHead
            ? `${gate.delegationId} has no committed work waiting (${worktree.status})`
            : undefined;
  if (why) throw new BatonError('review.drop-refused', `Nothing dropped: ${why}.`);
}

/** A merge or rebase left unfinished in the worktree (its git folder says so), or undefined. */
async function resolutionInProgress(git: Git): Promise<string | undefined> {
  if ((await git.attempt(['rev-parse', '-q', '--verify', 'MERGE_HEAD'])).exitCode === 0) return 'a merge is unfinished';
  for (const dir of ['rebase-merge', 'rebase-apply']) {
    const path = (await git.run(['rev-parse', '--path-format=absolute', '--git-path', dir])).trim();
    if (existsSync(path)) return 'a rebase is unfinished';
  }
  return undefined;
}
