import type { EngineContext } from './context';
import { appendEvent } from '../operations/events/appendEvent';
import { setTaskStatus } from '../operations/tasks/setTaskStatus';
import { latestOpenAttempt } from '../queries/delegations';
import { listAttemptWorktrees } from '../queries/worktrees';
import { Git } from '../effects/git/git';
import { faultPoint } from '../store/faultPoint';
import { GATE_COLUMNS, toGate, type GateRow } from '../store/rows';
import { cherryPicks, type AttemptWorktree, type RunIsolation } from '../domain/isolation';
import {
  approvedDespiteFailure,
  cutIntegrationBatch,
  nextBisectionStep,
  verdictsAfterIntegrating,
} from '../domain/mergeQueue';
import { counted } from '../domain/plural';
import type { IntegrationOutcome } from './integrateAttempt';
import {
  advanceTarget,
  combine,
  commitAttemptWork,
  holdUnfinishedResolution,
  recordConflict,
  recordIntegrated,
  settleBeforeCombining,
  targetMovedWrongly,
  type SourceState,
} from './integrationSteps';
import {
  checkMergedTree,
  holdForFailedTree,
  mergedTreeCommandsOf,
  treeOf,
  type MergedTree,
  type MergedTreeCheck,
} from './verifyMergedTree';

interface Member {
  worktree: AttemptWorktree;
  source: SourceState;
}

/** What a bisection knows of a prefix of the batch on the target as it is now: passed, or how it failed. */
type Verdict =
  { passed: true } | { passed: false; failed: Extract<MergedTreeCheck, { kind: 'failed' }>; commit: string };

/**
 * Batching with bisection (docs/isolation.md): `caller`'s work is committed and waits for integration with the run's
 * other passed tasks. Once a batch is cut (domain/mergeQueue.ts, cutIntegrationBatch) its tasks are merged onto the
 * target one after another and the final tree is verified once; a failing batch is bisected (nextBisectionStep)
 * until the task that breaks it is found: the prefixes that pass move the target (compare-and-swap, as one task's
 * integration does) and are recorded task by task; the culprit is held at an integration_failed gate. Runs under the
 * repository's integration lock. Undefined: integrate `caller` alone (a batch of itself, or a target that moved
 * backwards or sideways — one task's integration gates that).
 */
export async function integrateInBatch(
  ctx: EngineContext,
  runId: string,
  run: RunIsolation,
  caller: AttemptWorktree,
  size: number,
): Promise<IntegrationOutcome | undefined> {
  const { waiting, othersInFlight, approvedAlone, waitingSince } = await readIntegrationQueue(ctx, runId);
  // A person said to integrate it despite its merged tree's failure: that holds for it alone, never for a batch.
  if (approvedAlone.has(caller.taskId)) return undefined;
  const cut = cutIntegrationBatch(
    waiting.map((w) => w.taskId),
    othersInFlight.length,
    size,
    waitingSince === undefined ? 0 : ctx.clock.now() - waitingSince,
  );
  if (cut.kind === 'wait') {
    const ids = waiting.map((w) => w.taskId);
    const reason = `queued for integration: ${ids.length} of ${size} waiting (${othersInFlight.join(', ')} still in flight)`;
    await ctx.store.transact(async (tx) => {
      const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
        runId,
        caller.taskId,
      ]);
      if (task?.status === 'verifying')
        await setTaskStatus(tx, runId, caller.taskId, 'verifying', reason, ctx.clock.now());
    });
    return { kind: 'queued', waiting: ids, inFlight: othersInFlight.length };
  }
  if (cut.members.length === 1 && cut.members[0] === caller.taskId) return undefined;
  const git = new Git(run.repoRoot!);
  const targetBranch = run.targetBranch!;
  let target = await git.revParse(`refs/heads/${targetBranch}`);
  if (await targetMovedWrongly(ctx, git, runId, targetBranch, target)) return undefined;

  const outcomes = new Map<string, IntegrationOutcome>();
  let queue: Member[] = [];
  // Each task's own checks first, as one at a time: work already on the target is recorded, undeclared files gated.
  for (const worktree of waiting.filter((w) => cut.members.includes(w.taskId))) {
    const unfinished = await holdUnfinishedResolution(ctx, runId, worktree, targetBranch);
    if (unfinished) {
      outcomes.set(worktree.taskId, unfinished);
      continue;
    }
    const source = await commitAttemptWork(ctx, runId, worktree);
    // Integrated by a batch whose coordinator died before it recorded it: recorded once here.
    const checked = await settleBeforeCombining(ctx, git, runId, worktree, source, target);
    if ('settled' in checked) {
      outcomes.set(worktree.taskId, checked.settled);
      continue;
    }
    queue.push({ worktree, source });
  }
  const batch = queue.map((m) => m.worktree.taskId);
  if (queue.length > 0)
    await ctx.store.transact((tx) =>
      appendEvent(tx, runId, 'integration:batch-started', ctx.clock.now(), { taskIds: batch, targetHead: target }),
    );
  ctx.log(`integration batch ${batch.join(', ')} onto ${targetBranch} at ${target.slice(0, 8)}`);

  let verdicts = new Map<number, Verdict>();
  for (;;) {
    const step = nextBisectionStep(
      queue.length,
      new Map([...verdicts].map(([take, verdict]) => [take, verdict.passed])),
    );
    if (step.kind === 'done') break;
    if (step.kind === 'culprit') {
      const culprit = queue.shift()!;
      const failing = verdicts.get(1) as Extract<Verdict, { passed: false }>;
      const merged = mergedOnto(run, target, failing.commit, culprit);
      const gateId = await holdForFailedTree(ctx, runId, culprit.worktree, failing.failed, merged, batch);
      const { tree, failure } = failing.failed;
      outcomes.set(culprit.worktree.taskId, { kind: 'failed', tree, command: failure.command, gateId });
      verdicts = new Map();
      continue;
    }
    const group = queue.slice(0, step.take);
    const chain = await combineInOrder(git, group, target, targetBranch);
    if (chain.kind === 'conflict') {
      // A conflict inside the batch (with the target, or with a task before it): that task is split off, as a plain
      // conflict gate; the others are a new batch.
      const { member, files, detail } = chain;
      outcomes.set(member.worktree.taskId, await recordConflict(ctx, runId, member.worktree, files, detail));
      queue = queue.filter((m) => m !== member);
      verdicts = new Map();
      continue;
    }
    const merged = mergedOnto(run, target, chain.commit, group.at(-1)!);
    const commands = (await mergedTreeCommandsOf(
      ctx,
      runId,
      group.map((m) => m.worktree),
    ))!;
    const tree = await treeOf(merged);
    const checked: MergedTreeCheck =
      commands.length > 0
        ? await checkMergedTree(
            ctx,
            runId,
            group.map((m) => m.worktree),
            merged,
            commands,
            tree,
          )
        : { kind: 'passed', tree, ran: 0, reused: 0 };
    if (checked.kind === 'not-now') break;
    if (checked.kind === 'failed') {
      verdicts.set(step.take, { passed: false, failed: checked, commit: chain.commit });
      await tellSplit(ctx, runId, queue, group, verdicts, checked);
      continue;
    }
    verdicts.set(step.take, { passed: true });
    if (step.kind === 'verify') continue;
    // `integrate`: the prefix's tree passed (its receipts just said so again): the target moves once for all of it.
    const advanced = await advanceTarget(git, targetBranch, target, chain.commit);
    if (advanced.kind === 'blocked') {
      const first = group[0]!.worktree;
      outcomes.set(first.taskId, await recordConflict(ctx, runId, first, advanced.files, advanced.detail));
      break;
    }
    if (advanced.kind !== 'advanced') break; // moved meanwhile, or interrupted: the tasks left wait for the next pass
    // A coordinator killed here finds each task's work on the target and records it once (alreadyOnTarget).
    faultPoint('integration:batch-advanced');
    let before = target;
    for (const [index, member] of group.entries()) {
      const after = chain.commits[index]!;
      const changedFiles = await git.changedFiles(before, after);
      const facts = {
        ...member.source,
        changedFiles,
        targetBefore: before,
        targetAfter: after,
        alreadyOnTarget: false,
      };
      outcomes.set(member.worktree.taskId, await recordIntegrated(ctx, runId, member.worktree, facts));
      before = after;
    }
    target = chain.commit;
    queue = queue.slice(step.take);
    verdicts = verdictsAfterIntegrating(verdicts, step.take);
  }
  return (
    outcomes.get(caller.taskId) ?? {
      kind: 'not-now',
      reason: `${caller.delegationId} waits for the next integration pass (batch ${batch.join(', ')})`,
    }
  );
}

/** The passed tasks waiting for integration (plan order), and the run's other tasks still running or verifying. */
async function readIntegrationQueue(
  ctx: EngineContext,
  runId: string,
): Promise<{
  waiting: AttemptWorktree[];
  othersInFlight: string[];
  approvedAlone: Set<string>;
  /** When the first of the waiting tasks committed its work (began to wait). */
  waitingSince: number | undefined;
}> {
  return ctx.store.read(async (r) => {
    const tasks = await r.all<{ id: string }>(
      `SELECT id FROM tasks WHERE run_id = ? AND status IN ('running', 'verifying') ORDER BY ordinal`,
      [runId],
    );
    const worktrees = await listAttemptWorktrees(r, runId);
    const approved = (
      await r.all<GateRow>(
        `SELECT ${GATE_COLUMNS} FROM gates WHERE run_id = ? AND kind = 'integration_failed' AND status = 'approved'`,
        [runId],
      )
    ).map(toGate);
    const waiting: AttemptWorktree[] = [];
    const othersInFlight: string[] = [];
    const approvedAlone = new Set<string>();
    for (const { id } of tasks) {
      const attempt = await latestOpenAttempt(r, runId, id);
      // Committed by its integration: its own verification passed, its work waits on its branch.
      const worktree = worktrees.find((w) => w.delegationId === attempt && w.status === 'committed');
      const approvedAt =
        worktree?.sourceHead &&
        approvedDespiteFailure(
          approved.filter((g) => g.delegationId === worktree.delegationId),
          worktree.sourceHead,
        );
      if (approvedAt) approvedAlone.add(id);
      else if (worktree) waiting.push(worktree);
      else othersInFlight.push(id);
    }
    const committedAt = await r.all<{ delegation_id: string; committed_at: number | null }>(
      `SELECT delegation_id, committed_at FROM worktrees WHERE run_id = ? AND status = 'committed'`,
      [runId],
    );
    const since = committedAt
      .filter((row) => row.committed_at !== null && waiting.some((w) => w.delegationId === row.delegation_id))
      .map((row) => Number(row.committed_at));
    return { waiting, othersInFlight, approvedAlone, waitingSince: since.length > 0 ? Math.min(...since) : undefined };
  });
}

type Chain =
  | { kind: 'combined'; commit: string; commits: string[] }
  | { kind: 'conflict'; member: Member; files: string[]; detail: string };

/** The group merged onto `target` one after another by the run's strategy: each task's commit, and the last. */
async function combineInOrder(
  git: Git,
  group: readonly Member[],
  target: string,
  targetBranch: string,
): Promise<Chain> {
  const commits: string[] = [];
  let head = target;
  for (const member of group) {
    const { worktree, source } = member;
    const picks =
      worktree.strategy === 'cherry-pick'
        ? cherryPicks(await git.run(['cherry', head, source.sourceHead, source.baseCommit]))
        : undefined;
    const result = await combine(git, worktree, picks, source, head, targetBranch);
    if (result.kind === 'conflict') return { kind: 'conflict', member, files: result.files, detail: result.detail };
    head = result.commit;
    commits.push(head);
  }
  return { kind: 'combined', commit: head, commits };
}

function mergedOnto(run: RunIsolation, target: string, commit: string, last: Member): MergedTree {
  return {
    repoRoot: run.repoRoot!,
    targetBranch: run.targetBranch!,
    targetHead: target,
    commit,
    sourceHead: last.source.sourceHead,
  };
}

/** A group of more than one failed: the event says what failed and which half is verified next. */
async function tellSplit(
  ctx: EngineContext,
  runId: string,
  queue: readonly Member[],
  group: readonly Member[],
  verdicts: ReadonlyMap<number, Verdict>,
  failed: Extract<MergedTreeCheck, { kind: 'failed' }>,
): Promise<void> {
  if (group.length < 2) return;
  const next = nextBisectionStep(queue.length, new Map([...verdicts].map(([take, v]) => [take, v.passed])));
  const nextIds = next.kind === 'verify' ? queue.slice(0, next.take).map((m) => m.worktree.taskId) : [];
  const failedIds = group.map((m) => m.worktree.taskId);
  await ctx.store.transact((tx) =>
    appendEvent(tx, runId, 'integration:batch-split', ctx.clock.now(), {
      failed: failedIds,
      next: nextIds,
      tree: failed.tree,
      command: failed.failure.command,
      exitCode: failed.failure.exitCode,
      timedOut: failed.failure.timedOut,
    }),
  );
  ctx.log(
    `batch ${failedIds.join(', ')}: merged tree ${failed.tree.slice(0, 8)} fails; split: ${counted(nextIds.length, 'task')} (${nextIds.join(', ')}) next`,
  );
}
