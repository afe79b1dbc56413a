import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { EngineContext } from './context';
import { appendEvent } from '../operations/events/appendEvent';
import { setTaskStatus } from '../operations/tasks/setTaskStatus';
import { readRunSettings } from '../queries/runs';
import { Git } from '../effects/git/git';
import { createScratchWorktree, removeScratchWorktree } from '../effects/git/worktrees';
import { mergedTreeLocation, runPaths, workspaceInWorktree } from '../effects/workspaceLayout';
import { appendBatonFile, ensureBatonFolder } from '../effects/files/safeWrite';
import { readBatonFileTail } from '../effects/files/safeRead';
import { faultPoint } from '../store/faultPoint';
import { toGate, GATE_COLUMNS, type GateRow } from '../store/rows';
import type { AttemptWorktree } from '../domain/isolation';
import { approvedDespiteFailure, mergedTreeCommands, mergedTreeWork } from '../domain/mergeQueue';
import { integrationFailedReason } from '../domain/gateReasons';
import { VERIFY_TAIL_BYTES, verifyOutputTail } from '../domain/prompt';
import { counted } from '../domain/plural';
import { runRecordedVerifyCommand } from './verifyCommand';
import { holdAtGate } from './integrationGate';

/** What the integration is about to do: the target, where it is now, and the commit it would move to. */
export interface MergedTree {
  repoRoot: string;
  targetBranch: string;
  targetHead: string;
  /** The commit the integration strategy made (nothing points at it yet). */
  commit: string;
  sourceHead: string;
}

export type MergedTreeOutcome =
  /** Verified now, from receipts, approved at a gate, or not asked for: the target may move. */
  | { kind: 'passed' }
  /** A command failed: the target stays, an integration_failed gate opened. */
  | { kind: 'failed'; tree: string; command: string[]; gateId: string }
  /** Decided meanwhile (stopped, taken over): nothing ran. */
  | { kind: 'not-now'; reason: string };

/** A merged tree's verification: passed (commands run now and taken from receipts), or the first failure. */
export type MergedTreeCheck =
  | { kind: 'passed'; tree: string; ran: number; reused: number }
  | { kind: 'failed'; tree: string; failure: FailedCommand; logPath: string }
  /** Decided meanwhile (stopped, taken over): nothing ran. */
  | { kind: 'not-now'; reason: string };

export interface FailedCommand {
  command: string[];
  exitCode: number | null;
  timedOut: boolean;
}

/**
 * The merge queue's check (docs/isolation.md, "The merge queue"): before the target branch moves to `merged.commit`,
 * the run's `verifyIntegrated` and the task's own verify commands run on that commit's tree, checked out in a scratch
 * worktree Baton owns — the tree the target will have, not the attempt's own. Each command that already passed on the
 * same tree (its git tree id) is taken from its receipt; the others run as every verify command runs
 * (runRecordedVerifyCommand: recorded before it runs, a timeout, its log). The first failure opens an
 * integration_failed gate with the end of its output, and the target does not move. A run without `verifyIntegrated`
 * is not checked; an attempt a person approved at such a gate for this commit integrates without it.
 */
export async function verifyMergedTree(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  merged: MergedTree,
): Promise<MergedTreeOutcome> {
  const commands = await mergedTreeCommandsOf(ctx, runId, [worktree]);
  // Not asked for, or nothing to run (`[]` and a task without verify commands).
  if (!commands || commands.length === 0) return { kind: 'passed' };
  const tree = await treeOf(merged);
  const { delegationId, taskId } = worktree;
  const approvedAt = approvedDespiteFailure(
    await ctx.store.read(async (r) =>
      (
        await r.all<GateRow>(
          `SELECT ${GATE_COLUMNS} FROM gates WHERE run_id = ? AND delegation_id = ? AND kind = 'integration_failed' AND status = 'approved'`,
          [runId, delegationId],
        )
      ).map(toGate),
    ),
    merged.sourceHead,
  );
  if (approvedAt) {
    await ctx.store.transact((tx) =>
      appendEvent(tx, runId, 'integration:verified', ctx.clock.now(), {
        delegationId,
        taskId,
        tree,
        ran: 0,
        reused: 0,
        approvedAt,
      }),
    );
    return { kind: 'passed' };
  }
  const checked = await checkMergedTree(ctx, runId, [worktree], merged, commands, tree);
  if (checked.kind === 'not-now') return checked;
  if (checked.kind === 'passed') return { kind: 'passed' };
  const gateId = await holdForFailedTree(ctx, runId, worktree, checked, merged);
  return { kind: 'failed', tree, command: checked.failure.command, gateId };
}

/**
 * The commands the merged tree of `members` (one task, or a batch) is verified with: the run's `verifyIntegrated`,
 * then each member's own verify commands not among them yet. Undefined: the run does not verify merged trees.
 */
export async function mergedTreeCommandsOf(
  ctx: EngineContext,
  runId: string,
  members: readonly AttemptWorktree[],
): Promise<string[][] | undefined> {
  const { settings, verify } = await ctx.store.read(async (r) => {
    const rows: ({ verify_json: string } | undefined)[] = [];
    for (const member of members)
      rows.push(
        await r.get<{ verify_json: string }>(`SELECT verify_json FROM tasks WHERE run_id = ? AND id = ?`, [
          runId,
          member.taskId,
        ]),
      );
    return { settings: await readRunSettings(r, runId), verify: rows };
  });
  return mergedTreeCommands(
    settings.verifyIntegrated,
    verify.flatMap((row) => (row ? (JSON.parse(row.verify_json) as string[][]) : [])),
  );
}

export async function treeOf(merged: Pick<MergedTree, 'repoRoot' | 'commit'>): Promise<string> {
  return (await new Git(merged.repoRoot).run(['rev-parse', `${merged.commit}^{tree}`])).trim();
}

/**
 * Verifies the tree of `merged.commit` — the target plus `members` (one task, or a batch's first tasks) — with
 * `commands`: those that passed on this very tree before are taken from their receipts, the others run in a scratch
 * worktree to the first failure. The last member's attempt holds the verification (its verify log, its verify
 * processes, the receipts): in a bisection the last member of a failing group is the one a failure is pinned on.
 */
export async function checkMergedTree(
  ctx: EngineContext,
  runId: string,
  members: readonly AttemptWorktree[],
  merged: MergedTree,
  commands: readonly string[][],
  tree: string,
): Promise<MergedTreeCheck> {
  const holder = members.at(-1)!;
  const { delegationId, taskId } = holder;
  const taskIds = members.map((m) => m.taskId);
  const batch = members.length > 1 ? { batch: taskIds } : {};
  const { passedOnTree, ingestion } = await ctx.store.read(async (r) => ({
    passedOnTree: new Set(
      (
        await r.all<{ command_json: string }>(
          `SELECT command_json FROM verification_receipts WHERE run_id = ? AND tree_digest = ? AND exit_code = 0`,
          [runId, tree],
        )
      ).map((row) => row.command_json),
    ),
    ingestion: await r.get<{ digest: string }>(
      `SELECT digest FROM ingestions WHERE run_id = ? AND delegation_id = ? AND accepted = 1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [runId, delegationId],
    ),
  }));
  const work = mergedTreeWork([...commands], passedOnTree);
  const logPath = runPaths(ctx.workspace, runId).verifyLog(delegationId);
  ensureBatonFolder(ctx.workspace, dirname(logPath));
  appendBatonFile(
    ctx.workspace,
    logPath,
    `== merged tree ${tree} (${merged.targetBranch} at ${merged.targetHead.slice(0, 10)} + ${taskIds.join(', ')}): ${counted(work.toRun.length, 'command')} to run, ${work.reused.length} passed on it before ==\n`,
  );
  await ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    await appendEvent(tx, runId, 'integration:verifying', now, {
      delegationId,
      taskId,
      ...batch,
      tree,
      targetHead: merged.targetHead,
      toRun: work.toRun.length,
      reused: work.reused.length,
    });
    for (const member of taskIds) {
      const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
        runId,
        member,
      ]);
      if (task?.status === 'verifying')
        await setTaskStatus(
          tx,
          runId,
          member,
          'verifying',
          `verifying merged: ${merged.targetBranch} + ${taskIds.join(', ')} (tree ${tree.slice(0, 8)})`,
          now,
        );
    }
  });
  // A scratch worktree left by a coordinator killed while verifying goes, whether anything runs now or not.
  const scratch = mergedTreeLocation(holder.path);
  if (work.toRun.length === 0 && existsSync(scratch)) await removeScratchWorktree(merged.repoRoot, scratch);
  const failure =
    work.toRun.length > 0
      ? await runOnScratch(ctx, runId, holder, merged, tree, work.toRun, ingestion?.digest ?? '')
      : 'passed';
  if (failure === 'not-current') return { kind: 'not-now', reason: `${delegationId} was decided meanwhile` };
  if (failure !== 'passed') return { kind: 'failed', tree, failure, logPath };
  await ctx.store.transact((tx) =>
    appendEvent(tx, runId, 'integration:verified', ctx.clock.now(), {
      delegationId,
      taskId,
      ...batch,
      tree,
      ran: work.toRun.length,
      reused: work.reused.length,
    }),
  );
  return { kind: 'passed', tree, ran: work.toRun.length, reused: work.reused.length };
}

/**
 * The attempt's merged tree failed: it is held (BLOCKED, worktree kept) at an integration_failed gate that names the
 * command and the end of its output; the target did not move. `batch`: the batch whose bisection found it.
 */
export async function holdForFailedTree(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  failed: { tree: string; failure: FailedCommand; logPath: string },
  merged: MergedTree,
  batch?: readonly string[],
): Promise<string> {
  const { delegationId, taskId } = worktree;
  const { tree, failure, logPath } = failed;
  const output = outputTail(ctx, logPath, failure.command);
  const gateId = await holdAtGate(
    ctx,
    runId,
    worktree,
    {
      kind: 'integration_failed',
      why: `its merged tree failed \`${failure.command.join(' ')}\``,
      reason: integrationFailedReason(worktree, { ...failure, output }, { ...merged, tree }),
      details: {
        command: failure.command,
        exitCode: failure.exitCode,
        timedOut: failure.timedOut,
        output,
        logPath,
        tree,
        targetBranch: merged.targetBranch,
        targetHead: merged.targetHead,
        mergedCommit: merged.commit,
        sourceHead: merged.sourceHead,
        ...(batch ? { batch } : {}),
      },
    },
    (tx, opened, now) =>
      appendEvent(tx, runId, 'integration:failed', now, {
        delegationId,
        taskId,
        tree,
        command: failure.command,
        exitCode: failure.exitCode,
        timedOut: failure.timedOut,
        gateId: opened,
      }),
  );
  ctx.log(
    `${delegationId}: not integrated: its merged tree ${tree.slice(0, 8)} fails \`${failure.command.join(' ')}\`; ${gateId} opened`,
  );
  return gateId;
}

type ScratchResult = 'passed' | 'not-current' | FailedCommand;

/** Checks the merged commit out in the scratch worktree and runs `commands` there, to the first failure. */
async function runOnScratch(
  ctx: EngineContext,
  runId: string,
  worktree: AttemptWorktree,
  merged: MergedTree,
  tree: string,
  commands: string[][],
  /** The accepted result the attempt passed with: its receipts name it, as every verification receipt does. */
  artifactDigest: string,
): Promise<ScratchResult> {
  const scratch = mergedTreeLocation(worktree.path);
  const logPath = runPaths(ctx.workspace, runId).verifyLog(worktree.delegationId);
  await createScratchWorktree(merged.repoRoot, scratch, merged.commit);
  let result: ScratchResult = 'passed';
  try {
    for (const [index, command] of commands.entries()) {
      const ran = await runRecordedVerifyCommand(ctx, command, {
        cwd: workspaceInWorktree(scratch, merged.repoRoot, ctx.workspace),
        logPath,
        env: {
          BATON_RUN_ID: runId,
          BATON_DELEGATION_ID: worktree.delegationId,
          BATON_WORKSPACE: ctx.workspace,
          BATON_MERGED_TREE: tree,
        },
        verify: {
          id: `${runId}/${worktree.delegationId}/merged/${index + 1}/${randomBytes(6).toString('hex')}`,
          runId,
          delegationId: worktree.delegationId,
        },
        receipt: { taskId: worktree.taskId, artifactDigest, treeDigest: tree },
      });
      if (ran === 'not-current' || ran.exitCode !== 0) {
        result = ran === 'not-current' ? ran : { command, ...ran };
        break;
      }
    }
    // A coordinator killed here leaves the scratch worktree and the receipts: its successor removes the one and
    // reuses the others (docs/reliability.md).
    faultPoint('integration:merged-verified');
  } finally {
    await removeScratchWorktree(merged.repoRoot, scratch);
  }
  return result;
}

/** The end of the failed command's output, as a retry's prompt shows it (domain/prompt.ts, verifyOutputTail). */
function outputTail(ctx: EngineContext, logPath: string, command: readonly string[]): string {
  try {
    const tail = readBatonFileTail(ctx.workspace, resolve(ctx.workspace, logPath), VERIFY_TAIL_BYTES);
    return tail ? verifyOutputTail(tail.text, command, tail.cut) : '';
  } catch (err) {
    ctx.log(`could not read the merged tree's verify log ${logPath}: ${(err as Error).message}`);
    return '';
  }
}
