import { createHash } from 'node:crypto';
import { basename, dirname } from 'node:path';
import { BatonError } from '../domain/errors';
import { isSharedStore } from '../domain/config';
import { overlapReason, refusalError } from '../domain/admission';
import type { RunIsolation } from '../domain/isolation';
import { budgetCrossings, describeCrossing, forbiddenProfile } from '../domain/agents/budget';
import { ARGV_PROMPT_MAX_BYTES, buildPrompt, fitPrompt, STDIN_PROMPT_MAX_BYTES } from '../domain/prompt';
import type { StopRequest } from '../domain/stops';
import type { Task } from '../domain/types';
import { credentialVariables } from '../domain/credentials';
import { freezeWorkers } from '../domain/frozenWorkers';
import {
  DEFAULT_PERMISSIONS,
  frozenWorkerFor,
  isAgentWorker,
  MANUAL_HOLDER,
  promptInArgv,
  workerLaunch,
} from '../domain/workerLaunch';
import { sharedTreeRepository } from '../effects/git/treeSnapshot';
import { createWorktree, targetHead } from '../effects/git/worktrees';
import { ensureBatonFolder, writeBatonFile } from '../effects/files/safeWrite';
import { workerMarker } from '../effects/processes/processes';
import { spawnWorker } from '../effects/processes/spawnSupervised';
import { runPaths, workspaceInWorktree, worktreeLocation } from '../effects/workspaceLayout';
import { claimDelegation } from '../operations/delegations/claimDelegation';
import { enqueueDelegation } from '../operations/delegations/enqueueDelegation';
import { recordPrompt } from '../operations/delegations/recordPrompt';
import { openGate, waitsAtGateReason } from '../operations/gates/openGate';
import { recordRunIsolation } from '../operations/runs/recordRunIsolation';
import { refreshRunStatus } from '../operations/runs/refreshRunStatus';
import { recordRuntimeLaunch, recordStartedWorker } from '../operations/runtimes/createRuntime';
import { cancelStoppedAttempt } from '../operations/stops/stopRequests';
import { setTaskStatus } from '../operations/tasks/setTaskStatus';
import { recordWorktree } from '../operations/worktrees/worktrees';
import { readAdmission } from '../queries/admission';
import { lastAgentSession, spendSoFar } from '../queries/agentUsage';
import { readRunSettings } from '../queries/runs';
import { readRunIsolation } from '../queries/worktrees';
import { sideEffectPoint } from '../store/faultPoint';
import type { EngineContext } from '../usecases/context';
import { workspacePath } from '../usecases/ingestArtifact';
import { isolationGateReason, planIsolation } from '../usecases/planIsolation';
import { recordSharedTreeBefore } from '../usecases/sharedTreeSnapshots';
import { Attempt } from './attempt';
import type { AttemptSupervisor } from './attemptSupervisor';

/** What the launcher needs from the coordinator it serves. */
export interface LauncherHost {
  runId: string;
  /** Who holds the runtimes it claims (host:pid), shown in status views. */
  holder: string;
  maxConcurrency: number;
  /** Run every task with this worker instead of the task's or the default one. */
  worker?: string;
  /** Look again at this moment (the target branch could not be read). */
  wakeAt(at: number): void;
  /**
   * The stop a shutdown recorded, if the coordinator is shutting down: a worker that starts meanwhile ends under it.
   */
  shutdownStop(): StopRequest | undefined;
}

/**
 * Starts one attempt of a ready task: checks that nothing it overlaps is in flight and how it
 * is isolated, claims it (with its worktree and launch recorded in the same transaction),
 * prepares its prompt and worktree, spawns its worker — only after proving the coordinator
 * still holds its epoch — and hands it to the supervisor. A person's task opens a
 * manual_handoff gate instead of a process.
 */
export class AttemptLauncher {
  /** The workspace's git repository, asked once per coordinator (undefined outside git). */
  private sharedRepo: Promise<string | undefined> | undefined;

  constructor(
    private readonly ctx: EngineContext,
    private readonly supervisor: AttemptSupervisor,
    private readonly host: LauncherHost,
  ) {}

  private sharedRepository(): Promise<string | undefined> {
    this.sharedRepo ??= sharedTreeRepository(this.ctx.workspace).catch((err: unknown) => {
      this.ctx.log(`the working tree's repository could not be read: ${(err as Error).message}`);
      return undefined;
    });
    return this.sharedRepo;
  }

  async start(task: Task): Promise<void> {
    const { runId } = this.host;
    if (await this.heldAtConfigGate(task)) return;
    // The definitions the run froze, never the config file's: a worker can write .baton/config.json
    // (docs/architecture.md, "Trust model"). A run from before frozen workers is frozen at its coordinator's first
    // pass; until then, the config this coordinator started with.
    const frozen =
      (await this.ctx.store.read((r) => readRunSettings(r, runId))).workers ?? freezeWorkers(this.ctx.config);
    const workerId = this.host.worker ?? task.worker ?? frozen.defaultWorker;
    const worker = frozenWorkerFor(frozen, workerId);
    const manual = worker.type === 'manual';
    const agentPreset = isAgentWorker(worker) ? worker : undefined;
    const permissions = task.permissions ?? DEFAULT_PERMISSIONS;
    if (await this.heldBackByBudget(task)) return;
    if (agentPreset && (await this.heldBackByPermissionPolicy(task, permissions.profile))) return;
    if (await this.heldBackByAdmission(task)) return;
    const isolation = manual ? 'none' : await this.isolationFor(task);
    if (isolation === 'gated') return;
    let baseCommit: string | undefined;
    if (isolation !== 'none') {
      try {
        baseCommit = await targetHead(isolation as { repoRoot: string; targetBranch: string });
      } catch (err) {
        const why = `cannot read the target branch ${isolation.targetBranch}: ${(err as Error).message}`;
        this.ctx.log(`${task.id}: not started: ${why}`);
        this.host.wakeAt(this.ctx.clock.now() + 5000);
        return;
      }
    }
    // A person gets a long lease; a process's lease is renewed while it lives.
    const leaseSeconds = this.ctx.config.leaseSeconds;
    const leaseMs = manual ? Math.max(leaseSeconds * 1000, 7 * 86_400_000) : leaseSeconds * 1000;
    const claimedMono = this.ctx.clock.monotonic();
    const paths = runPaths(this.ctx.workspace, runId);
    let claim;
    try {
      claim = await this.ctx.store.transact(async (tx) => {
        const now = this.ctx.clock.now();
        // The same rule `baton claim` obeys, in the claim's transaction: an external worker may have taken a slot or
        // an overlapping task since the check above.
        const refusal = await readAdmission(tx, {
          runId,
          taskId: task.id,
          now,
          maxConcurrency: this.host.maxConcurrency,
        });
        if (refusal) throw refusalError(refusal);
        const queued = await enqueueDelegation(tx, { runId, taskId: task.id }, now);
        const holder = manual ? MANUAL_HOLDER : this.host.holder;
        const claimed = await claimDelegation(
          tx,
          { runId, delegationId: queued.id, leaseMs, holder },
          { now, ids: this.ctx.ids },
        );
        let cwd = this.ctx.workspace;
        let worktree: { path: string; branch: string; repoRoot: string } | undefined;
        if (isolation !== 'none') {
          if (!(await readRunIsolation(tx, runId))) await recordRunIsolation(tx, isolation, now);
          const location = worktreeLocation(this.ctx.workspace, runId, task.id, claimed.delegation.attempt);
          const delegationId = claimed.delegation.id;
          const strategy = isolation.strategy;
          await recordWorktree(
            tx,
            { runId, delegationId, taskId: task.id, ...location, baseCommit: baseCommit!, strategy },
            now,
          );
          worktree = { ...location, repoRoot: isolation.repoRoot! };
          cwd = workspaceInWorktree(location.path, isolation.repoRoot!, this.ctx.workspace);
        }
        const logPath = paths.log(claimed.delegation.id);
        await recordRuntimeLaunch(tx, claimed.runtimeId, { worker: workerId, logPath, cwd });
        await refreshRunStatus(tx, runId, now);
        return { ...claimed, cwd, worktree };
      });
    } catch (err) {
      // Someone else claimed or gated the task since we read it: the next pass sees the new state.
      if (err instanceof BatonError && err.code !== 'coordinator.superseded') {
        this.ctx.log(`${task.id}: not started: ${err.message}`);
        return;
      }
      throw err;
    }
    const delegationId = claim.delegation.id;
    const artifactPath = paths.artifact(delegationId);
    const logPath = paths.log(delegationId);
    const promptPath = paths.prompt(delegationId);
    let prompt: string;
    try {
      const dependencies = await this.ctx.store.read((r) =>
        r.all<{ id: string; title: string }>(
          `SELECT t.id, t.title FROM task_dependencies dep JOIN tasks t ON t.run_id = dep.run_id AND t.id = dep.depends_on
           WHERE dep.run_id = ? AND dep.task_id = ?`,
          [runId, task.id],
        ),
      );
      // An isolated worker works elsewhere: it gets the artifact's absolute path.
      const shownArtifact = claim.worktree ? artifactPath : workspacePath(this.ctx.workspace, artifactPath);
      const fitted = fitPrompt(
        buildPrompt({ task, delegationId, agent: claim.delegation.agent, artifactPath: shownArtifact, dependencies }),
        promptInArgv(worker) ? ARGV_PROMPT_MAX_BYTES : STDIN_PROMPT_MAX_BYTES,
      );
      prompt = fitted.text;
      // Never through a link a worker planted under .baton/ (workspace.link-refused fails the attempt).
      ensureBatonFolder(this.ctx.workspace, dirname(artifactPath));
      writeBatonFile(this.ctx.workspace, promptPath, prompt);
      // Prompt provenance: the file keeps the exact text, the store its digest and size (docs/workers.md).
      const provenance = {
        sha256: createHash('sha256').update(prompt).digest('hex'),
        bytes: Buffer.byteLength(prompt),
        truncated: fitted.truncated,
      };
      await this.ctx.store.transact((tx) =>
        recordPrompt(tx, { runId, delegationId, taskId: task.id }, provenance, this.ctx.clock.now()),
      );
      if (claim.worktree) {
        // git would create the worktree through a link planted at .baton/worktrees/<run>.
        ensureBatonFolder(this.ctx.workspace, dirname(claim.worktree.path));
        await createWorktree(claim.worktree.repoRoot, claim.worktree, baseCommit!);
        const where = workspacePath(this.ctx.workspace, claim.worktree.path);
        this.ctx.log(`${delegationId}: worktree ${where} on ${claim.worktree.branch}`);
      }
    } catch (err) {
      // The attempt is claimed: it must end in the store, not stay RUNNING with nothing behind it.
      await this.supervisor.fail(delegationId, `could not prepare the attempt: ${(err as Error).message}`);
      return;
    }

    const attempt = new Attempt(
      { delegationId, taskId: task.id, runtimeId: claim.runtimeId, artifactPath, logPath, manual, leaseMs },
      claimedMono + leaseMs,
    );
    if (manual) {
      await this.ctx.store.transact(async (tx) => {
        const now = this.ctx.clock.now();
        await openGate(
          tx,
          {
            runId,
            kind: 'manual_handoff',
            taskId: task.id,
            delegationId,
            reason: `Task ${task.id} is for a person. Do the work, then ingest the result for ${delegationId} (baton ingest --delegation ${delegationId} --artifact <file>). Approve to hand it out again, reject to fail it.`,
            details: { manual: true, promptPath, artifactPath },
          },
          now,
        );
        await refreshRunStatus(tx, runId, now);
      });
      this.supervisor.trackManual(attempt);
      return;
    }

    // A shared-tree attempt has no branch to compare later: the working tree as its worker finds it is recorded.
    if (!claim.worktree) await recordSharedTreeBefore(this.ctx, { runId, delegationId }, await this.sharedRepository());

    // A retry may continue the agent's session of the task's last attempt, when its worker asks for it.
    const resumeSession =
      agentPreset?.continueSession && claim.delegation.attempt > 1
        ? await this.ctx.store.read((r) => lastAgentSession(r, runId, task.id, agentPreset.type))
        : undefined;
    let spawned;
    let launch;
    try {
      // Proven just before the spawn, and again by the transaction that records the worker before it may run.
      await this.ctx.fence?.assertHeld();
      await sideEffectPoint('launch:after-fence');
      // On a shared store the worker gets no store credential: its heartbeats go through this coordinator.
      const relay = isSharedStore(this.ctx.config)
        ? runPaths(this.ctx.workspace, runId).heartbeatRelay(delegationId)
        : undefined;
      if (relay) ensureBatonFolder(this.ctx.workspace, dirname(relay));
      launch = workerLaunch(workerId, worker, {
        prompt,
        promptFile: promptPath,
        artifactPath,
        taskId: task.id,
        workspace: claim.cwd,
        permissions,
        ...(resumeSession ? { resumeSession } : {}),
      });
      spawned = await spawnWorker(launch, {
        cwd: claim.cwd,
        logPath,
        workspace: this.ctx.workspace,
        // Held at its gate until the store records it (below): its marker is also its tag, inherited by all it starts.
        marker: workerMarker(claim.runtimeId),
        held: true,
        withhold: credentialVariables(this.ctx.config.store),
        env: {
          BATON_RUN_ID: runId,
          BATON_DELEGATION_ID: delegationId,
          BATON_RUNTIME_ID: claim.runtimeId,
          BATON_RUNTIME_TOKEN: claim.token,
          BATON_ARTIFACT_PATH: artifactPath,
          BATON_WORKSPACE: this.ctx.workspace,
          ...(claim.worktree ? { BATON_WORKTREE: claim.worktree.path } : {}),
          ...(this.ctx.cliPath ? { BATON_CLI: this.ctx.cliPath } : {}),
          ...(relay ? { BATON_HEARTBEAT_RELAY: relay } : {}),
        },
      });
    } catch (err) {
      if (BatonError.is(err, 'coordinator.superseded')) throw err;
      const reason = BatonError.is(err) ? err.message : `could not start the worker: ${(err as Error).message}`;
      this.ctx.log(`${delegationId}: ${reason}`);
      await this.supervisor.fail(delegationId, reason);
      return;
    }
    // The worker waits at its gate until the store knows it as this attempt's — recorded through the fenced store, and
    // only while the attempt is still RUNNING. A coordinator stopped anywhere before this commit cannot run it later:
    // its successor's epoch (or a stop that decided the attempt) refuses the record, and the worker never runs.
    const identity = spawned.identity;
    try {
      await this.ctx.store.transact((tx) =>
        recordStartedWorker(tx, { runId, delegationId, runtimeId: claim.runtimeId, identity }, this.ctx.clock.now()),
      );
    } catch (err) {
      spawned.abort();
      if (BatonError.is(err, 'coordinator.superseded')) throw err;
      this.ctx.log(`${delegationId}: ${(err as Error).message}`);
      // Decided elsewhere meanwhile: nothing to record. Any other failure: the attempt fails, its worker never ran.
      if (!BatonError.is(err, 'runtime.not-live'))
        await this.supervisor.fail(delegationId, `could not record the worker: ${(err as Error).message}`);
      return;
    }
    attempt.identity = identity;
    if (worker.type === 'process' && worker.result === 'exit-code') {
      attempt.plainCommand = { command: basename(worker.command), cwd: claim.cwd, agent: claim.delegation.agent };
    }
    const agent = launch.agent
      ? { agent: { kind: launch.agent.kind, agent: claim.delegation.agent, permissions }, cwd: claim.cwd }
      : undefined;
    this.supervisor.watch(attempt, spawned.exited, {
      timeoutMs: this.ctx.config.taskTimeoutSeconds * 1000,
      ...(agent ? { agent } : {}),
      // Its lease as the claim set it: on a shared store the watchdog ends the worker if no one renews it.
      watchdogUntil: this.ctx.clock.now() + (attempt.leaseUntilMono - this.ctx.clock.monotonic()),
    });
    await sideEffectPoint('launch:before-release');
    spawned.release();
    this.ctx.log(`${delegationId}: started ${workerId} (pid ${identity.pid})`);
    const stop = this.host.shutdownStop();
    if (stop) {
      // Shutdown's stop was applied while this worker was starting: it ends like the others.
      const termination = await this.supervisor.end(attempt, 'stopped');
      const entry = {
        delegationId,
        processes: termination?.processes.map((p) => p.pid) ?? [],
        confirmed: termination ? termination.confirmed : true,
        survivors: termination?.survivors.map((p) => p.pid) ?? [],
      };
      try {
        await this.ctx.store.transact((tx) =>
          cancelStoppedAttempt(tx, { runId, delegationId, request: stop, entry }, this.ctx.clock.now()),
        );
      } finally {
        this.supervisor.forget(attempt);
      }
    }
  }

  /**
   * While a config_changed gate is open the run starts nothing new: a task that became ready
   * since the gate opened waits at it too (released when a person decides).
   */
  private async heldAtConfigGate(task: Task): Promise<boolean> {
    const { runId } = this.host;
    const open = await this.ctx.store.read((r) =>
      r.get<{ id: string }>(
        `SELECT id FROM gates WHERE run_id = ? AND kind = 'config_changed' AND status = 'open' LIMIT 1`,
        [runId],
      ),
    );
    if (!open) return false;
    await this.ctx.store.transact(async (tx) => {
      const now = this.ctx.clock.now();
      await setTaskStatus(tx, runId, task.id, 'gated', waitsAtGateReason(open.id, 'config_changed'), now);
      await refreshRunStatus(tx, runId, now);
    });
    return true;
  }

  /**
   * A run, task or agent already over its budget starts nothing more (docs/workers.md,
   * "Budgets"): the task waits at a budget gate — its own, or the one already open for the
   * run's budget, which every task then waits at.
   */
  private async heldBackByBudget(task: Task): Promise<boolean> {
    const { runId } = this.host;
    const budget = (await this.ctx.store.read((r) => readRunSettings(r, runId))).budget;
    if (!budget || (!budget.run && !budget.task && !budget.agent)) return false;
    const spent = await this.ctx.store.read((r) => spendSoFar(r, runId, { taskId: task.id, agent: task.agent }));
    const crossings = budgetCrossings(budget, spent);
    if (crossings.length === 0) return false;
    await this.ctx.store.transact(async (tx) => {
      const now = this.ctx.clock.now();
      const runWide = crossings.every((c) => c.scope === 'run')
        ? await tx.get<{ id: string }>(
            `SELECT id FROM gates WHERE run_id = ? AND kind = 'budget' AND status = 'open' AND task_id IS DISTINCT FROM ? LIMIT 1`,
            [runId, task.id],
          )
        : undefined;
      if (runWide) await setTaskStatus(tx, runId, task.id, 'gated', waitsAtGateReason(runWide.id, 'budget'), now);
      else {
        const why = crossings.map(describeCrossing).join('; ');
        await openGate(
          tx,
          {
            runId,
            kind: 'budget',
            taskId: task.id,
            reason: `Task ${task.id} was not started: ${why}. Approve to raise the limit and start it, reject to fail it.`,
            details: { crossings },
          },
          now,
        );
      }
      await refreshRunStatus(tx, runId, now);
    });
    return true;
  }

  /**
   * The run's permission policy may forbid the task's profile (docs/workers.md, "Permission
   * profiles"): the task is not dispatched and waits at a risk_approval gate that says why;
   * once a person approved the profile for the task, it starts.
   */
  private async heldBackByPermissionPolicy(task: Task, profile: 'read-only' | 'edit' | 'full'): Promise<boolean> {
    const { runId } = this.host;
    const settings = await this.ctx.store.read((r) => readRunSettings(r, runId));
    const why = forbiddenProfile(settings.permissionPolicy ?? this.ctx.config.permissionPolicy, {
      profile,
      risk: task.risk,
    });
    if (!why) return false;
    const approved = (
      await this.ctx.store.read((r) =>
        r.all<{ details_json: string }>(
          `SELECT details_json FROM gates WHERE run_id = ? AND task_id = ? AND kind = 'risk_approval' AND status = 'approved'`,
          [runId, task.id],
        ),
      )
    ).some((gate) => (JSON.parse(gate.details_json) as { permissionProfile?: unknown }).permissionProfile === profile);
    if (approved) return false;
    await this.ctx.store.transact(async (tx) => {
      const now = this.ctx.clock.now();
      await openGate(
        tx,
        {
          runId,
          kind: 'risk_approval',
          taskId: task.id,
          reason: `Task ${task.id} asks for the ${profile} permission profile, but ${why}. Approve to run it with ${profile} anyway, reject to cancel it.`,
          details: { permissionProfile: profile, policy: why },
        },
        now,
      );
      await refreshRunStatus(tx, runId, now);
    });
    return true;
  }

  /**
   * The admission rule (domain/admission.ts, the one `baton claim` obeys): a task within its
   * retry backoff, beyond the run's slots (external workers' included), or whose `files:`
   * overlap those of a task in flight is not dispatched; for an overlap its reason says on
   * what it waits (docs/isolation.md, "Overlap").
   */
  private async heldBackByAdmission(task: Task): Promise<boolean> {
    const { runId } = this.host;
    const refusal = await this.ctx.store.read((r) =>
      readAdmission(r, { runId, taskId: task.id, now: this.ctx.clock.now(), maxConcurrency: this.host.maxConcurrency }),
    );
    if (!refusal) return false;
    if (refusal.kind === 'overlap') {
      const reason = overlapReason(refusal.otherTaskId, refusal.globs);
      if (task.statusReason !== reason) {
        await this.ctx.store.transact((tx) => setTaskStatus(tx, runId, task.id, 'ready', reason, this.ctx.clock.now()));
      }
    }
    return true;
  }

  /** How the task runs: in the shared tree, in a worktree of its own, or not yet (an isolation gate opened). */
  private async isolationFor(task: Task): Promise<RunIsolation | 'none' | 'gated'> {
    const { runId } = this.host;
    if (task.isolation !== 'none') {
      // One isolation question per run: while it is open, the other tasks that need the answer wait at it too.
      const open = await this.ctx.store.read((r) =>
        r.get<{ id: string }>(
          `SELECT id FROM gates WHERE run_id = ? AND kind = 'isolation' AND status = 'open' LIMIT 1`,
          [runId],
        ),
      );
      if (open && !(await this.ctx.store.read((r) => readRunIsolation(r, runId)))) {
        await this.ctx.store.transact(async (tx) => {
          const now = this.ctx.clock.now();
          await setTaskStatus(tx, runId, task.id, 'gated', waitsAtGateReason(open.id, 'isolation'), now);
          await refreshRunStatus(tx, runId, now);
        });
        return 'gated';
      }
    }
    const plan = await planIsolation(
      (work) => this.ctx.store.read(work),
      this.ctx.workspace,
      task,
      this.host.maxConcurrency,
    );
    if (plan.mode === 'none') return 'none';
    if (plan.mode === 'decided') {
      await this.ctx.store.transact((tx) => recordRunIsolation(tx, plan.run, this.ctx.clock.now()));
      this.ctx.log(`isolation: none (${plan.run.note ?? ''})`);
      return 'none';
    }
    if (plan.mode === 'gate') {
      await this.ctx.store.transact(async (tx) => {
        const now = this.ctx.clock.now();
        await openGate(
          tx,
          {
            runId,
            kind: 'isolation',
            taskId: task.id,
            reason: isolationGateReason(task.id, plan.reason),
            details: { problem: plan.problem },
          },
          now,
        );
        await refreshRunStatus(tx, runId, now);
      });
      return 'gated';
    }
    return plan.run;
  }
}
