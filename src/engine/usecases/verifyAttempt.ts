import type { EngineContext } from './context';
import { randomBytes } from 'node:crypto';
import { dirname } from 'node:path';
import { openGate } from '../operations/gates/openGate';
import { completeAttempt } from '../operations/ingestions/recordIngestion';
import { thisHost } from '../effects/processes/processes';
import { getDelegation } from '../queries/delegations';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { transitionDelegation } from '../operations/delegations/transitionDelegation';
import { endVerifyProcesses } from './endVerifyProcesses';
import type { StoreTx } from '../store/port';
import { appendBatonFile, ensureBatonFolder } from '../effects/files/safeWrite';
import { runPaths } from '../effects/workspaceLayout';
import { verificationFailedReason } from '../domain/gateReasons';
import { integrateAttempt, type IntegrationOutcome } from './integrateAttempt';
import { getAttemptWorktree } from '../queries/worktrees';
import { runRecordedVerifyCommand } from './verifyCommand';
import { holdForReview } from './reviewGate';

export interface VerificationOutcome {
  passed: boolean;
  /** Commands run now, and commands whose passing receipt for this artifact was reused. */
  ran: number;
  reused: number;
  failure?: { command: string[]; exitCode: number | null; timedOut: boolean; logPath: string };
  /** Nothing verified yet: an earlier verify command may still run (on another host, until its watchdog ends it). */
  notYet?: true;
  /** An isolated attempt: what its integration did. */
  integration?: IntegrationOutcome;
  /** Passed, and held at this review gate before it integrates or completes (`review: required`). */
  review?: { gateId: string };
}

/**
 * Runs a task's verify commands after a PASS result, one after another, each as argv in
 * the attempt's folder with a timeout, and stores a receipt for each (command, exit code,
 * duration, output digest, log). A command that already passed for this attempt and the
 * same artifact digest is not run again (resume). All pass → the attempt completes (an isolated one once integrated),
 * or, under `review: required`, waits at a review gate first; one fails → the attempt is BLOCKED behind a
 * verification_failed gate.
 */
export async function verifyAttempt(
  ctx: EngineContext,
  runId: string,
  delegationId: string,
): Promise<VerificationOutcome> {
  const facts = await ctx.store.read(async (r) => {
    const delegation = await r.get<{ task_id: string }>(`SELECT task_id FROM delegations WHERE run_id = ? AND id = ?`, [
      runId,
      delegationId,
    ]);
    const task = delegation
      ? await r.get<{ verify_json: string; status: string }>(
          `SELECT verify_json, status FROM tasks WHERE run_id = ? AND id = ?`,
          [runId, delegation.task_id],
        )
      : undefined;
    const ingestion = await r.get<{ digest: string }>(
      `SELECT digest FROM ingestions WHERE run_id = ? AND delegation_id = ? AND accepted = 1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [runId, delegationId],
    );
    const runtime = await r.get<{ cwd: string | null; host: string | null }>(
      `SELECT cwd, host FROM runtimes WHERE run_id = ? AND delegation_id = ? ORDER BY claimed_at DESC LIMIT 1`,
      [runId, delegationId],
    );
    // The folder the worker ran in, if on this machine; a coordinator that took over from another machine verifies in
    // its own clone (a worktree run is driven from one clone only: docs/team.md, "Git across clones").
    const cwd = runtime?.cwd && (runtime.host === null || runtime.host === thisHost()) ? runtime.cwd : undefined;
    return { taskId: delegation?.task_id, task, digest: ingestion?.digest, cwd };
  });
  if (!facts.taskId || !facts.task || facts.task.status !== 'verifying' || !facts.digest)
    return { passed: false, ran: 0, reused: 0 };
  // A person accepted this attempt's result at its verification gate: its commands are not run again.
  const accepted = (
    await ctx.store.read((r) =>
      r.all<{ details_json: string }>(
        `SELECT details_json FROM gates WHERE run_id = ? AND delegation_id = ? AND kind = 'verification_failed' AND status = 'approved'`,
        [runId, delegationId],
      ),
    )
  ).some((gate) => (JSON.parse(gate.details_json) as { accepted?: unknown }).accepted === true);
  // A verification of this attempt that a coordinator before us started may still run: it ends, proven gone, before
  // anything is verified again — never two at once in the same tree.
  const leftOver = await endVerifyProcesses(
    ctx,
    runId,
    delegationId,
    'ended before the attempt was verified again',
    ctx.config.stopGraceSeconds * 1000,
  );
  if (leftOver.some((e) => !e.confirmed)) {
    ctx.log(`${delegationId}: an earlier verify command is NOT confirmed gone; not verifying again yet`);
    return { passed: false, ran: 0, reused: 0, notYet: true };
  }
  const worktree = await ctx.store.read((r) => getAttemptWorktree(r, runId, delegationId));
  // Committed by its integration: its commands passed and its work waits for a batch (or a crash came between);
  // looking again only asks whether the batch can form now.
  const queued = worktree?.status === 'committed';
  const commands = accepted || queued ? [] : (JSON.parse(facts.task.verify_json) as string[][]);
  const logPath = runPaths(ctx.workspace, runId).verifyLog(delegationId);
  ensureBatonFolder(ctx.workspace, dirname(logPath));
  let ran = 0;
  let reused = 0;
  for (const command of commands) {
    const commandJson = JSON.stringify(command);
    // Only this attempt's receipts in its own folder count: a new attempt may have changed the workspace the
    // command checks, even when its artifact is byte-identical to an earlier one's (merged trees: verifyMergedTree).
    const receipt = await ctx.store.read((r) =>
      r.get(
        `SELECT 1 AS x FROM verification_receipts WHERE run_id = ? AND task_id = ? AND delegation_id = ? AND artifact_digest = ? AND command_json = ? AND exit_code = 0 AND tree_digest IS NULL LIMIT 1`,
        [runId, facts.taskId!, delegationId, facts.digest!, commandJson],
      ),
    );
    if (receipt) {
      reused++;
      appendBatonFile(
        ctx.workspace,
        logPath,
        `$ ${command.join(' ')}\n(passed before for this artifact; not run again)\n`,
      );
      continue;
    }
    ran++;
    const result = await runRecordedVerifyCommand(ctx, command, {
      cwd: facts.cwd ?? ctx.workspace,
      logPath,
      env: { BATON_RUN_ID: runId, BATON_DELEGATION_ID: delegationId, BATON_WORKSPACE: ctx.workspace },
      verify: { id: `${runId}/${delegationId}/${ran}/${randomBytes(6).toString('hex')}`, runId, delegationId },
      receipt: { taskId: facts.taskId, artifactDigest: facts.digest },
    });
    // Decided meanwhile (stopped, or another coordinator holds the attempt): the command never ran, nothing to record.
    if (result === 'not-current') return { passed: false, ran: ran - 1, reused };
    if (result.exitCode !== 0) {
      const failure = { command, exitCode: result.exitCode, timedOut: result.timedOut, logPath };
      await ctx.store.transact((tx) => blockOnFailedVerification(tx, runId, delegationId, failure, ctx.clock.now()));
      return { passed: false, ran, reused, failure };
    }
  }
  // `review: required`: a person looks at the passed work before it goes anywhere.
  const review = await holdForReview(ctx, runId, delegationId, worktree);
  if (review.kind === 'held') return { passed: true, ran, reused, review: { gateId: review.gateId } };
  if (review.kind === 'decided-meanwhile') return { passed: false, ran, reused };
  if (worktree) {
    // An isolated attempt completes when its work is on the target branch.
    return { passed: true, ran, reused, integration: await integrateAttempt(ctx, runId, delegationId) };
  }
  await ctx.store.transact(async (tx) => {
    const delegation = await getDelegation(tx, runId, delegationId);
    const task = await tx.get<{ status: string }>(`SELECT status FROM tasks WHERE run_id = ? AND id = ?`, [
      runId,
      facts.taskId!,
    ]);
    if (!delegation || task?.status !== 'verifying') return; // decided meanwhile (stopped, gate)
    await completeAttempt(
      tx,
      delegation,
      { reason: `verified (${commands.length} command${commands.length === 1 ? '' : 's'})` },
      ctx.clock.now(),
    );
    await refreshRunStatus(tx, runId, ctx.clock.now());
  });
  return { passed: true, ran, reused };
}

async function blockOnFailedVerification(
  tx: StoreTx,
  runId: string,
  delegationId: string,
  failure: NonNullable<VerificationOutcome['failure']>,
  now: number,
): Promise<void> {
  const delegation = await getDelegation(tx, runId, delegationId);
  // Decided meanwhile (a stop cancelled it, its verify command ended by the stop): no gate for an attempt that is over.
  if (!delegation || (delegation.status !== 'RUNNING' && delegation.status !== 'BLOCKED')) return;
  if (delegation.status === 'RUNNING')
    await transitionDelegation(tx, delegation, 'BLOCKED', { reason: 'verification failed' }, now);
  await openGate(
    tx,
    {
      runId,
      kind: 'verification_failed',
      taskId: delegation.taskId,
      delegationId,
      reason: verificationFailedReason(delegationId, failure),
      details: {
        command: failure.command,
        exitCode: failure.exitCode,
        timedOut: failure.timedOut,
        logPath: failure.logPath,
      },
    },
    now,
  );
  await refreshRunStatus(tx, runId, now);
}
