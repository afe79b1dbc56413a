import { dirname } from 'node:path';
import type { Permissions, WorkerVariable } from '../domain/agents/presets';
import { isSharedStore, type WorkerDefinition } from '../domain/config';
import { credentialVariables } from '../domain/credentials';
import { BatonError } from '../domain/errors';
import type { ProcessIdentity } from '../domain/process';
import {
  batonMcpServer,
  batonStopHook,
  installsStopHook,
  wiresBatonMcp,
  workerLaunch,
  type WorkerLaunch,
} from '../domain/workerLaunch';
import { ensureBatonFolder, linkBatonEntry, writeBatonFile } from '../effects/files/safeWrite';
import { readGeminiUserHome } from '../effects/agentHomes';
import { workerMarker } from '../effects/processes/processes';
import { spawnWorker, type WorkerExit } from '../effects/processes/spawnSupervised';
import { runPaths } from '../effects/workspaceLayout';
import { recordStartedWorker } from '../operations/runtimes/createRuntime';
import { sideEffectPoint } from '../store/faultPoint';
import { failAttempt, type ClaimedAttempt } from './claimAttempt';
import type { EngineContext } from './context';
import { recordSharedTreeBefore } from './sharedTreeSnapshots';

/** A claimed attempt's worker, recorded in the store and still held at its gate: it runs once `release` is called. */
export interface StartedWorker {
  identity: ProcessIdentity;
  exited: Promise<WorkerExit>;
  release(): void;
  /** An agent preset: its event stream is followed (executor/agentStreamFollower.ts). */
  agent?: WorkerLaunch['agent'];
}

/**
 * The spawn step of a start (docs/architecture.md, "Fenced side effects"): the shared working
 * tree as the worker will find it is recorded, the coordinator proves it still holds the run,
 * the worker is spawned held at its gate, and the store records it as this attempt's — through
 * the fenced store and only while the attempt is still RUNNING — before anyone lets it go. A
 * coordinator stopped anywhere before that commit cannot run it later: its successor's epoch (or
 * a stop that decided the attempt) refuses the record, and the worker never runs. Undefined when
 * it did not start: the attempt is then failed (or was decided elsewhere). A store out of reach
 * (`store.unreachable`) is thrown with no worker left and nothing decided: the caller releases the claim.
 */
export async function startWorker(
  ctx: EngineContext,
  claimed: ClaimedAttempt,
  input: {
    runId: string;
    workerId: string;
    worker: WorkerDefinition;
    permissions: Permissions;
    /** The workspace's git repository (undefined outside git), for the shared tree's snapshot. */
    sharedRepo: () => Promise<string | undefined>;
  },
): Promise<StartedWorker | undefined> {
  const { runId } = input;
  const { delegation, runtimeId } = claimed;
  const delegationId = delegation.id;
  // A shared-tree attempt has no branch to compare later: the working tree as its worker finds it is recorded.
  if (!claimed.worktree) await recordSharedTreeBefore(ctx, { runId, delegationId }, await input.sharedRepo());
  let spawned;
  let launch;
  try {
    // Proven just before the spawn, and again by the transaction that records the worker before it may run.
    await ctx.fence?.assertHeld();
    await sideEffectPoint('launch:after-fence');
    // On a shared store the worker gets no store credential: its heartbeats go through this coordinator.
    const relay = isSharedStore(ctx.config) ? runPaths(ctx.workspace, runId).heartbeatRelay(delegationId) : undefined;
    if (relay) ensureBatonFolder(ctx.workspace, dirname(relay));
    const configFolder = runPaths(ctx.workspace, runId).agentConfig(delegationId);
    const batonMcp =
      ctx.cliPath && wiresBatonMcp(input.worker)
        ? batonMcpServer(ctx.cliPath, { execPath: process.execPath, electron: process.versions.electron })
        : undefined;
    const host = { execPath: process.execPath, electron: process.versions.electron };
    launch = workerLaunch(input.workerId, input.worker, {
      prompt: claimed.prompt,
      promptFile: claimed.promptPath,
      artifactPath: claimed.artifactPath,
      taskId: delegation.taskId,
      workspace: claimed.cwd,
      permissions: input.permissions,
      ...(claimed.resumeSession ? { resumeSession: claimed.resumeSession } : {}),
      ...(batonMcp ? { batonMcp } : {}),
      // Gemini CLI takes the server from a home of the attempt's own, made from the one the worker would use.
      ...(batonMcp && input.worker.type === 'gemini'
        ? {
            geminiHomes: {
              user: readGeminiUserHome({ ...process.env, ...input.worker.env }),
              task: runPaths(ctx.workspace, runId).agentHome(delegation.taskId),
            },
          }
        : {}),
      ...(ctx.cliPath && installsStopHook(input.worker, claimed.repairRounds)
        ? { stopHook: batonStopHook(ctx.cliPath, host) }
        : {}),
      configFolder,
    });
    // What the CLI reads at its start (Gemini CLI's settings, and links to the user's own files beside them): written
    // through .baton/'s own guard, before the spawn.
    for (const file of launch.files ?? []) {
      ensureBatonFolder(ctx.workspace, dirname(file.path));
      writeBatonFile(ctx.workspace, file.path, file.content);
    }
    for (const link of launch.links ?? []) linkBatonEntry(ctx.workspace, link.path, link.target);
    spawned = await spawnWorker(launch, {
      cwd: claimed.cwd,
      logPath: claimed.logPath,
      workspace: ctx.workspace,
      // Held at its gate until the store records it (below): its marker is also its tag, inherited by all it starts.
      marker: workerMarker(runtimeId),
      held: true,
      // Its end leaves its evidence for the next coordinator, should this one be gone by then.
      exitRecord: { path: runPaths(ctx.workspace, runId).exitRecord(delegationId), owner: { delegationId, runtimeId } },
      withhold: credentialVariables(ctx.config.store),
      env: {
        // Typed by the list the presets hand on to their CLIs' tool servers: a variable added here is added there.
        BATON_RUN_ID: runId,
        BATON_DELEGATION_ID: delegationId,
        BATON_RUNTIME_ID: runtimeId,
        BATON_RUNTIME_TOKEN: claimed.token,
        BATON_ARTIFACT_PATH: claimed.artifactPath,
        BATON_WORKSPACE: ctx.workspace,
        ...(claimed.worktree ? { BATON_WORKTREE: claimed.worktree.path } : {}),
        ...(ctx.cliPath ? { BATON_CLI: ctx.cliPath } : {}),
        ...(relay ? { BATON_HEARTBEAT_RELAY: relay } : {}),
      } satisfies Partial<Record<WorkerVariable, string>>,
    });
  } catch (err) {
    // A store out of reach decides nothing about the attempt: the launcher releases its claim once the store answers.
    if (BatonError.is(err, 'coordinator.superseded') || BatonError.is(err, 'store.unreachable')) throw err;
    const reason = BatonError.is(err) ? err.message : `could not start the worker: ${(err as Error).message}`;
    ctx.log(`${delegationId}: ${reason}`);
    await failAttempt(ctx, runId, delegationId, reason);
    return undefined;
  }
  const { identity } = spawned;
  try {
    await ctx.store.transact((tx) =>
      recordStartedWorker(tx, { runId, delegationId, runtimeId, identity }, ctx.clock.now()),
    );
  } catch (err) {
    // Held at its gate, it never ran: ended here whatever the store says, so the attempt can be released or failed.
    spawned.abort();
    if (BatonError.is(err, 'coordinator.superseded') || BatonError.is(err, 'store.unreachable')) throw err;
    ctx.log(`${delegationId}: ${(err as Error).message}`);
    // Decided elsewhere meanwhile: nothing to record. Any other failure: the attempt fails, its worker never ran.
    if (!BatonError.is(err, 'runtime.not-live'))
      await failAttempt(ctx, runId, delegationId, `could not record the worker: ${(err as Error).message}`);
    return undefined;
  }
  return {
    identity,
    exited: spawned.exited,
    release: () => spawned.release(),
    ...(launch.agent ? { agent: launch.agent } : {}),
  };
}
