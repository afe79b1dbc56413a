import type { EngineContext } from './context';
import { recordVerificationReceipt } from '../operations/receipts/recordVerificationReceipt';
import { randomBytes } from 'node:crypto';
import { readFenced } from '../platform/fencedFiles';
import { dirname } from 'node:path';
import { openGate } from '../operations/gates/openGate';
import { completeAttempt } from '../operations/ingestions/recordIngestion';
import { terminateWorker, thisHost } from '../effects/processes/processes';
import { getDelegation } from '../queries/delegations';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { transitionDelegation } from '../operations/delegations/transitionDelegation';
import { sideEffectPoint } from '../store/faultPoint';
import { BatonError } from '../domain/errors';
import { endVerifyProcess, recordVerifyProcess } from '../operations/verifyProcesses/verifyProcesses';
import { endVerifyProcesses } from './endVerifyProcesses';
import type { StoreTx } from '../store/port';
import { appendBatonFile, ensureBatonFolder } from '../effects/files/safeWrite';
import { credentialVariables } from '../domain/credentials';
import { spawnSupervised } from '../effects/processes/spawnSupervised';
import { runPaths } from '../effects/workspaceLayout';
import { startLeaseWatchdog } from '../effects/processes/leaseWatchdog';
import { isSharedStore } from '../domain/config';
import { contentDigest } from '../domain/content';
import { verificationFailedReason } from '../domain/gateReasons';
import { integrateAttempt, type IntegrationOutcome } from './integrateAttempt';
import { getAttemptWorktree } from '../queries/worktrees';

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
}

/**
 * Runs a task's verify commands after a PASS result, one after another, each as argv in
 * the attempt's folder with a timeout, and stores a receipt for each (command, exit code,
 * duration, output digest, log). A command that already passed for this attempt and the
 * same artifact digest is not run again (resume). All pass → the attempt completes; one fails → the
 * attempt is BLOCKED behind a verification_failed gate.
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
  const commands = accepted ? [] : (JSON.parse(facts.task.verify_json) as string[][]);
  const logPath = runPaths(ctx.workspace, runId).verifyLog(delegationId);
  ensureBatonFolder(ctx.workspace, dirname(logPath));
  let ran = 0;
  let reused = 0;
  for (const command of commands) {
    const commandJson = JSON.stringify(command);
    // Only this attempt's receipts count: a new attempt may have changed the workspace the command checks,
    // even when its artifact is byte-identical to an earlier attempt's.
    const receipt = await ctx.store.read((r) =>
      r.get(
        `SELECT 1 AS x FROM verification_receipts WHERE run_id = ? AND task_id = ? AND delegation_id = ? AND artifact_digest = ? AND command_json = ? AND exit_code = 0 LIMIT 1`,
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
    const started = ctx.clock.monotonic();
    const startedAt = ctx.clock.now();
    appendBatonFile(ctx.workspace, logPath, `$ ${command.join(' ')}\n`);
    const verifyId = `${runId}/${delegationId}/${ran}/${randomBytes(6).toString('hex')}`;
    const result = await runVerifyCommand(ctx, command, {
      cwd: facts.cwd ?? ctx.workspace,
      logPath,
      env: { BATON_RUN_ID: runId, BATON_DELEGATION_ID: delegationId, BATON_WORKSPACE: ctx.workspace },
      verify: { id: verifyId, runId, delegationId },
    });
    // Decided meanwhile (stopped, or another coordinator holds the attempt): the command never ran, nothing to record.
    if (result === 'not-current') return { passed: false, ran: ran - 1, reused };
    const output = result.output;
    const how = result.startError
      ? `could not start: ${result.startError}`
      : `exit ${result.exitCode ?? result.signal ?? '?'}${result.timedOut ? ', timed out' : ''}`;
    appendBatonFile(ctx.workspace, logPath, `${output.endsWith('\n') || output === '' ? '' : '\n'}(${how})\n`);
    const exitCode = result.exitCode;
    const durationMs = ctx.clock.monotonic() - started;
    await ctx.store.transact(async (tx) => {
      const over = result.startError ? undefined : `exited (${how})`;
      if (over) await endVerifyProcess(tx, { id: verifyId, reason: over }, ctx.clock.now());
      await recordVerificationReceipt(
        tx,
        {
          runId,
          delegationId,
          taskId: facts.taskId!,
          artifactDigest: facts.digest!,
          command,
          exitCode,
          timedOut: Boolean(result.timedOut),
          durationMs,
          outputDigest: contentDigest(output),
          logPath,
          startedAt,
        },
        ctx.clock.now(),
      );
    });
    if (exitCode !== 0) {
      const failure = { command, exitCode, timedOut: Boolean(result.timedOut), logPath };
      await ctx.store.transact((tx) => blockOnFailedVerification(tx, runId, delegationId, failure, ctx.clock.now()));
      return { passed: false, ran, reused, failure };
    }
  }
  if (await ctx.store.read((r) => getAttemptWorktree(r, runId, delegationId))) {
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

interface CommandResult {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  /** Why the command could not start (ENOENT, EACCES), if it could not. */
  startError?: string;
  output: string;
}

/**
 * Runs one verify command the way workers run (spawnSupervised: argv, never a shell, its own
 * process group, output appended to the verification log through a file descriptor). It
 * starts held at its gate and runs only once the store records it for this attempt (through
 * the coordinator's fenced store, and only while the attempt is verifying): a coordinator
 * stopped before that commit never runs it, and a successor finds every command that did run.
 * On timeout it is ended like a worker — TERM, the grace period, KILL, and a look proving it is
 * gone; after it ends, whatever it left running (found by its marker or tag) is ended the
 * same way: verification leaves no process behind.
 */
async function runVerifyCommand(
  ctx: EngineContext,
  command: string[],
  options: {
    cwd: string;
    logPath: string;
    env: Record<string, string>;
    verify: { id: string; runId: string; delegationId: string };
  },
): Promise<CommandResult | 'not-current'> {
  const from = readFenced(dirname(options.logPath), options.logPath, 0)?.size ?? 0;
  const marker = `BATON_VERIFY_ID=${options.verify.id}`;
  // Run by a coordinator on a shared store: a lease watchdog ends the command once that coordinator lost the run, so
  // that a successor on another host can verify again (docs/team.md, "Failover").
  const watched = ctx.fence !== undefined && isSharedStore(ctx.config) && ctx.cliPath !== undefined;
  await ctx.fence?.assertHeld();
  await sideEffectPoint('verify:after-fence');
  const started = await spawnSupervised(
    { argv: command },
    {
      cwd: options.cwd,
      logPath: options.logPath,
      workspace: ctx.workspace,
      env: { ...options.env, BATON_VERIFY_ID: options.verify.id },
      withhold: credentialVariables(ctx.config.store),
      marker,
      held: true,
    },
  );
  if ('notStarted' in started) {
    return {
      exitCode: null,
      signal: null,
      timedOut: false,
      startError: started.notStarted,
      output: readFrom(options.logPath, from),
    };
  }
  try {
    await ctx.store.transact((tx) =>
      recordVerifyProcess(
        tx,
        { ...options.verify, command, marker, identity: started.identity, watched },
        ctx.clock.now(),
      ),
    );
  } catch (err) {
    started.abort();
    await started.exited;
    if (BatonError.is(err, 'verify.not-current')) return 'not-current';
    throw err;
  }
  // Started before the command runs: a coordinator that dies now leaves a held process, which never runs it.
  if (watched)
    startLeaseWatchdog(ctx.cliPath!, {
      kind: 'verify',
      workspace: ctx.workspace,
      delegationId: options.verify.delegationId,
      identity: started.identity,
      marker,
      deadlinePath: runPaths(ctx.workspace, options.verify.runId).coordinatorLeaseDeadline,
      logPath: options.logPath,
      graceMs: ctx.config.stopGraceSeconds * 1000,
    });
  started.release();
  const graceMs = ctx.config.stopGraceSeconds * 1000;
  let timedOut = false;
  let ending: Promise<unknown> = Promise.resolve();
  const cancelTimeout = ctx.clock.setTimer(ctx.config.verifyTimeoutSeconds * 1000, () => {
    timedOut = true;
    ending = terminateWorker(started.identity, { marker, graceMs, clock: ctx.clock });
  });
  const exit = await started.exited;
  cancelTimeout();
  await ending;
  // What it left running (a background child) carries its marker: ended now, not waited for.
  const leftovers = await terminateWorker(undefined, { marker, graceMs: 0, clock: ctx.clock });
  if (!leftovers.confirmed) {
    ctx.log(`verify \`${command.join(' ')}\`: ${leftovers.survivors.length} process(es) it left NOT confirmed gone`);
  }
  const output = readFrom(options.logPath, from);
  return { exitCode: timedOut ? null : exit.exitCode, signal: exit.signal, timedOut, output };
}

/** What the command wrote to its log from byte `from`, through the fence (the log lies where workers write). */
function readFrom(path: string, from: number): string {
  return readFenced(dirname(path), path, MAX_VERIFY_OUTPUT_BYTES, { from })?.bytes.toString('utf8') ?? '';
}

/** A verify command's output taken into its receipt (digest, the tail a retry's prompt shows): at most this much. */
const MAX_VERIFY_OUTPUT_BYTES = 64 * 1024 * 1024;
