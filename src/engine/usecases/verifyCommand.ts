import type { EngineContext } from './context';
import { dirname } from 'node:path';
import { readFenced } from '../platform/fencedFiles';
import { recordVerificationReceipt } from '../operations/receipts/recordVerificationReceipt';
import { terminateWorker } from '../effects/processes/processes';
import { sideEffectPoint } from '../store/faultPoint';
import { BatonError } from '../domain/errors';
import { endVerifyProcess, recordVerifyProcess } from '../operations/verifyProcesses/verifyProcesses';
import { appendBatonFile } from '../effects/files/safeWrite';
import { credentialVariables } from '../domain/credentials';
import { spawnSupervised } from '../effects/processes/spawnSupervised';
import { runPaths } from '../effects/workspaceLayout';
import { startLeaseWatchdog } from '../effects/processes/leaseWatchdog';
import { isSharedStore } from '../domain/config';
import { contentDigest } from '../domain/content';

/** Where a verify command runs, where its output goes, and the attempt it verifies (its process is recorded for it). */
interface VerifyCommandOptions {
  cwd: string;
  logPath: string;
  env: Record<string, string>;
  verify: { id: string; runId: string; delegationId: string };
}

export interface RecordedCommand {
  exitCode: number | null;
  timedOut: boolean;
}

/**
 * One verify command of an attempt, run and recorded — the one place a verify command runs, in the attempt's folder
 * (verifyAttempt) or on its merged tree (verifyMergedTree): `$ <command>` and its output go to the verify log, how it
 * ended after them, and in one transaction its process is closed and its receipt stored (for the merged tree, with
 * the tree it ran on). 'not-current': the attempt was decided meanwhile and the command never ran.
 */
export async function runRecordedVerifyCommand(
  ctx: EngineContext,
  command: string[],
  options: VerifyCommandOptions & { receipt: { taskId: string; artifactDigest: string; treeDigest?: string } },
): Promise<RecordedCommand | 'not-current'> {
  const { runId, delegationId, id: verifyId } = options.verify;
  const started = ctx.clock.monotonic();
  const startedAt = ctx.clock.now();
  appendBatonFile(ctx.workspace, options.logPath, `$ ${command.join(' ')}\n`);
  const result = await runVerifyCommand(ctx, command, options);
  if (result === 'not-current') return result;
  const output = result.output;
  const how = result.startError
    ? `could not start: ${result.startError}`
    : `exit ${result.exitCode ?? result.signal ?? '?'}${result.timedOut ? ', timed out' : ''}`;
  appendBatonFile(ctx.workspace, options.logPath, `${output.endsWith('\n') || output === '' ? '' : '\n'}(${how})\n`);
  const durationMs = ctx.clock.monotonic() - started;
  await ctx.store.transact(async (tx) => {
    const over = result.startError ? undefined : `exited (${how})`;
    if (over) await endVerifyProcess(tx, { id: verifyId, reason: over }, ctx.clock.now());
    await recordVerificationReceipt(
      tx,
      {
        runId,
        delegationId,
        ...options.receipt,
        command,
        exitCode: result.exitCode,
        timedOut: Boolean(result.timedOut),
        durationMs,
        outputDigest: contentDigest(output),
        logPath: options.logPath,
        startedAt,
      },
      ctx.clock.now(),
    );
  });
  return { exitCode: result.exitCode, timedOut: Boolean(result.timedOut) };
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
  options: VerifyCommandOptions,
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
