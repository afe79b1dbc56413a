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
  const facts = await ctx.store.read(async (r) => ({
    settings: await readRunSettings(r, runId),
    task: await r.get<{ verify_json: string }>(`SELECT verify_json FROM tasks WHERE run_id = ? AND id = ?`, [
      runId,
      worktree.taskId,
    ]),
    ingestion: await r.get<{ digest: string }>(
      `SELECT digest FROM ingestions WHERE run_id = ? AND delegation_id = ? AND accepted = 1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [runId, worktree.delegationId],
    ),
    approved: (
      await r.all<GateRow>(
        `SELECT ${GATE_COLUMNS} FROM gates WHERE run_id = ? AND delegation_id = ? AND kind = 'integration_failed' AND status = 'approved'`,
        [runId, worktree.delegationId],
      )
    ).map(toGate),
  }));
  const commands = mergedTreeCommands(
    facts.settings.verifyIntegrated,
    facts.task ? (JSON.parse(facts.task.verify_json) as string[][]) : [],
  );
  // Not asked for, or nothing to run (`[]` and a task without verify commands).
  if (!commands || commands.length === 0) return { kind: 'passed' };
  const tree = (await new Git(merged.repoRoot).run(['rev-parse', `${merged.commit}^{tree}`])).trim();
  const { delegationId, taskId } = worktree;
  const approvedAt = approvedDespiteFailure(facts.approved, merged.sourceHead);
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
  const passedOnTree = new Set(
    (
      await ctx.store.read((r) =>
        r.all<{ command_json: string }>(
          `SELECT command_json FROM verification_receipts WHERE run_id = ? AND tree_digest = ? AND exit_code = 0`,
          [runId, tree],
        ),
      )
    ).map((row) => row.command_json),
  );
  const work = mergedTreeWork(commands, passedOnTree);
  const logPath = runPaths(ctx.workspace, runId).verifyLog(delegationId);
  ensureBatonFolder(ctx.workspace, dirname(logPath));
  appendBatonFile(
    ctx.workspace,
    logPath,
    `== merged tree ${tree} (${merged.targetBranch} at ${merged.targetHead.slice(0, 10)} + ${taskId}): ${counted(work.toRun.length, 'command')} to run, ${work.reused.length} passed on it before ==\n`,
  );
  await ctx.store.transact(async (tx) => {
    const now = ctx.clock.now();
    await appendEvent(tx, runId, 'integration:verifying', now, {
      delegationId,
      taskId,
      tree,
      targetHead: merged.targetHead,
      toRun: work.toRun.length,
      reused: work.reused.length,
    });
    const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
      runId,
      taskId,
    ]);
    if (task?.status === 'verifying')
      await setTaskStatus(
        tx,
        runId,
        taskId,
        'verifying',
        `verifying merged: ${merged.targetBranch} + ${taskId} (tree ${tree.slice(0, 8)})`,
        now,
      );
  });
  // A scratch worktree left by a coordinator killed while verifying goes, whether anything runs now or not.
  const scratch = mergedTreeLocation(worktree.path);
  if (work.toRun.length === 0 && existsSync(scratch)) await removeScratchWorktree(merged.repoRoot, scratch);
  const failure =
    work.toRun.length > 0
      ? await runOnScratch(ctx, runId, worktree, merged, tree, work.toRun, facts.ingestion?.digest ?? '')
      : 'passed';
  if (failure === 'not-current') return { kind: 'not-now', reason: `${delegationId} was decided meanwhile` };
  if (failure === 'passed') {
    await ctx.store.transact((tx) =>
      appendEvent(tx, runId, 'integration:verified', ctx.clock.now(), {
        delegationId,
        taskId,
        tree,
        ran: work.toRun.length,
        reused: work.reused.length,
      }),
    );
    return { kind: 'passed' };
  }
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
  return { kind: 'failed', tree, command: failure.command, gateId };
}

type ScratchResult = 'passed' | 'not-current' | { command: string[]; exitCode: number | null; timedOut: boolean };

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
