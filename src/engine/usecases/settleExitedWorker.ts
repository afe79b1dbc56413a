import { existsSync } from 'node:fs';
import type { AgentKind } from '../domain/agents/agentActivity';
import type { Delegation } from '../domain/types';
import type { WorkerExit } from '../effects/processes/spawnSupervised';
import { endRunningAttempt } from '../operations/delegations/endRunningAttempt';
import type { EngineContext } from './context';
import { writeExitCodeResult } from './exitCodeResult';
import { ingestArtifact } from './ingestArtifact';
import { resultOnDisk } from './resultOnDisk';

/** How the attempt's worker hands in its result (docs/workers.md, "The result"). */
export interface ExitedWorker {
  artifactPath: string;
  logPath: string;
  /** A plain command (`"result": "exit-code"`): its exit status is its result. */
  plainCommand?: { command: string; cwd: string; agent: string };
  /** An agent preset: its final message, when its stream was followed to the end. */
  agent?: { kind: AgentKind; finalText?: string };
  /** What the agent said last when it stopped (a refused request, a model error): quoted in a failure. */
  said?: string;
}

/**
 * Settles a RUNNING attempt whose worker ended by itself, from how it ended — the one way, for
 * the coordinator that watched it end (executor/attemptSupervisor.ts) and for the next one,
 * which reads the end from the worker's exit record (reconcileRun.ts): a plain command's exit
 * status becomes its result; a result on disk (the artifact, else the answer in its log) is
 * ingested; with none the attempt fails, saying how the worker ended. The store decides once:
 * ingestion is idempotent and an attempt that is no longer RUNNING refuses the failure.
 * Returns what happened, for a log line.
 */
export async function settleExitedWorker(
  ctx: EngineContext,
  delegation: Delegation,
  worker: ExitedWorker,
  exit: WorkerExit,
): Promise<string> {
  const { runId, id: delegationId, taskId } = delegation;
  if (worker.plainCommand && !existsSync(worker.artifactPath)) {
    const { command, cwd, agent } = worker.plainCommand;
    await writeExitCodeResult(
      ctx,
      { runId, delegationId, taskId, agent, artifactPath: worker.artifactPath },
      { command, cwd, logPath: worker.logPath },
      exit,
    );
  }
  const artifact = resultOnDisk(ctx.workspace, worker.artifactPath, worker.logPath, true, worker.agent);
  if (!artifact) {
    const reason = `the worker ${describeExit(exit)} without a result${worker.said ? `: ${worker.said}` : ''}`;
    await ctx.store.transact((tx) =>
      endRunningAttempt(tx, { runId, delegationId, to: 'FAILED', reason }, ctx.clock.now()),
    );
    return `FAILED: ${reason}`;
  }
  const outcome = await ingestArtifact(ctx, delegation, artifact);
  const what = outcome.record.accepted ? `result ${outcome.record.resultStatus}` : 'result rejected';
  return `${what}; ${outcome.delegation.status}`;
}

/** "exited with code 1", "was killed by SIGKILL", or "ended" when nobody saw how. */
export function describeExit(exit: WorkerExit): string {
  if (exit.signal) return `was killed by ${exit.signal}`;
  return exit.exitCode === null ? 'ended' : `exited with code ${exit.exitCode}`;
}
