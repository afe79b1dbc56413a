import { hostname, userInfo } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import { EventAnnouncer } from './announcer';
import type { Clock, IdSource } from './domain/clock';
import { databaseClock, systemClock, systemIds } from './domain/clock';
import { DEFAULT_CONFIG, type BatonConfig } from './domain/config';
import { BatonError } from './domain/errors';
import type { AttemptChanges } from './domain/changes';
import type { StopHookInput } from './domain/stopCheck';
import type { AttemptWorktree, RunIsolation } from './domain/isolation';
import { hasErrors, type Issue } from './domain/issue';
import { runSettingsFrom, type OperationContext, type RunSettings } from './domain/runSettings';
import type {
  Delegation,
  DelegationStatus,
  Gate,
  GateDecision,
  GateStatus,
  IngestionRecord,
  Run,
  RunEvent,
  StopMode,
  WorkerRuntime,
} from './domain/types';
import { frozenWorkerFor, resolveWorker } from './domain/workerLaunch';
import { canonicalJson, freezeWorkers, frozenDefinition, type FrozenWorkers } from './domain/frozenWorkers';
import { isFinishedRun } from './domain/types';
import { describeRunConfig, noticeConfigChange, type RunConfigView } from './usecases/runConfig';
import { folderSize } from './effects/folderSize';
import { findGit, gitMissing } from './effects/git/git';
import { readFileAtCommit } from './effects/git/treeSnapshot';
import { excludeBatonFromRepository } from './effects/git/worktrees';
import { configPathOf, storeDirOf, worktreesRoot } from './effects/workspaceLayout';
import { leaseHostHere } from './effects/processes/processes';
import { assertRunRepositoryHere } from './usecases/runRepository';
import { Coordinator, type CoordinatorOptions } from './executor/coordinator';
import type { Claim } from './operations/delegations/claimDelegation';
import { claimTask } from './operations/delegations/claimTask';
import { decideGate, type DecideGateOutcome } from './operations/gates/decideGate';
import { dropFromIntegration, type DropOutcome } from './usecases/dropFromIntegration';
import { planDigest } from './operations/runs/createRun';
import { openRunForPlan } from './operations/runs/openRunForPlan';
import { replanRun, type ReplanOutcome } from './operations/runs/replanRun';
import { expireStaleRuntimes, type ExpiredRuntime, type ExpiryScope } from './operations/runtimes/expireStaleRuntimes';
import { liftStops } from './operations/stops/stopRequests';
import { readCoordinatorLease } from './queries/coordinatorLease';
import { readRunSettings } from './queries/runs';
import { isSharedStore } from './domain/config';
import {
  countLiveWorktrees,
  findDelegation,
  findGate,
  findRun,
  rejectedNewWorkers,
  listDelegations,
  listEvents,
  listGates,
  listIngestions,
  listRuns,
  completedRunOfSamePlan,
  readOverview,
  readTaskRecord,
  type RunOverview,
  type TaskRecord,
} from './queries/runView';
import { listAttemptWorktrees, readRunIsolation } from './queries/worktrees';
import { storeExists, type FileStoreOptions } from './store/fileStore';
import { onFirstCommit } from './store/firstCommit';
import { checkStore, chooseStore, openStore, storeEnvironment } from './store/openStore';
import type { SharedStoreAccess } from './domain/handIn';
import type { StorePort, StoreTx, WriteScope } from './store/port';
import { readAttemptChanges } from './usecases/attemptChanges';
import type { AgentKind } from './domain/agents/agentActivity';
import { agentKindOf } from './domain/workerLaunch';
import { attemptWorker } from './queries/agentUsage';
import { stopAndApply, type StopOutcome } from './usecases/applyStop';
import { cancelRun, type CancelOutcome } from './usecases/cancelRun';
import { sendFollowUp, sendReview, type FollowUpOutcome } from './usecases/sendFollowUp';
import { locateAttemptWorktree, type AttemptWorktreePlace } from './usecases/attemptWorktree';
import {
  mergeTargetIntoWorktree,
  sendConflictToAgent,
  type ConflictInWorktree,
  type ConflictSentToAgent,
} from './usecases/resolveConflict';
import { listFollowUps } from './queries/followUps';
import type { FollowUp } from './domain/followUp';
import type { ReviewComment } from './domain/review';
import { recheckIsolationGate, recheckIsolationGates, type IsolationRecheck } from './usecases/recheckIsolation';
import { cleanupWorktrees, type CleanupReport } from './usecases/cleanupWorktrees';
import type { EngineContext } from './usecases/context';
import { isLeaseLive, withHolderProcess } from './usecases/coordinatorLiveness';
import { withWorkerProcesses } from './usecases/workerProcesses';
import { diagnoseRun, type Diagnosis } from './usecases/diagnoseRun';
import { HeartbeatBatch, type WorkerBeat } from './usecases/heartbeatBatch';
import type { AttemptCredential } from './domain/attemptCredential';
import {
  answerGate,
  askQuestion,
  awaitAnswer,
  type AwaitAnswerOptions,
  type QuestionAnswer,
} from './usecases/askQuestion';
import {
  authenticateAttempt,
  checkBeforeStop,
  checkDraftResult,
  describeAttempt,
  submitAttemptResult,
  type AttemptBrief,
  type DraftCheck,
  type StopCheck,
} from './usecases/attemptAccess';
import { findExecutable, runDoctor, type DoctorCheck } from './usecases/doctor';
import {
  judgingFactsOf,
  type JudgingFacts,
  ingestArtifact,
  ingestArtifactContent,
  judgeArtifact,
  STDIN_ARTIFACT,
  type IngestOutcome,
} from './usecases/ingestArtifact';
import {
  listIngestionViews,
  readIngestionArtifact,
  type IngestionArtifact,
  type IngestionView,
} from './queries/artifacts';
import { reconcileRun, type ReconcileReport } from './usecases/reconcileRun';
import type { TargetCheck } from './domain/targetHead';
import { checkTargetOf } from './usecases/targetBranch';
import { loadConfig, readPlan, requireValidPlan, type LoadedPlan } from './usecases/workspaceFiles';
import { exportStore, importStore, readStoreDocument, type StoreTransferSummary } from './usecases/storeTransfer';

export { BATON_DIR, configPathOf, runFolderOf, runPaths, storeDirOf } from './effects/workspaceLayout';
export { loadConfig, readPlan, requireValidPlan } from './usecases/workspaceFiles';
export type { LoadedPlan } from './usecases/workspaceFiles';
export type { EngineEvent } from './announcer';
export type { RunOverview, TaskRecord } from './queries/runView';
export type { ReviewRecord } from './queries/reviews';
export type { Diagnosis } from './usecases/diagnoseRun';
export type { RunConfigView } from './usecases/runConfig';
export type { DoctorCheck } from './usecases/doctor';
export type { StoreTransferSummary } from './usecases/storeTransfer';

export interface EngineOptions {
  workspace: string;
  clock?: Clock;
  ids?: IdSource;
  /** Follow other processes' commits live (the extension, `events --follow`). */
  follow?: boolean;
  /** Options of the file store (a PostgreSQL store, chosen by the config, takes none). */
  store?: FileStoreOptions;
  /** Where BATON_STORE_URL and PGPASSWORD are read (default: this process's environment). */
  env?: NodeJS.ProcessEnv;
  /** The `baton` CLI script, handed to workers as BATON_CLI. */
  cliPath?: string;
}

export interface ClaimOutcome extends Claim {
  runId: string;
  runCreated: boolean;
}

/**
 * The engine's public face: every adapter (CLI, extension) goes through it. A method
 * validates its input (reading files first, outside any transaction), then runs one
 * operation in a transaction, one query, or one use case (docs/architecture.md, tiers).
 */
export class Engine {
  private readonly announcer: EventAnnouncer;
  private readonly heartbeats: HeartbeatBatch;
  readonly onEvent: EventAnnouncer['onEvent'];
  private openNotices: readonly string[] = [];

  /** On a shared store: how this process reached it (the lease watchdogs that hand in finished work need it). */
  private storeAccess: SharedStoreAccess | undefined;

  private constructor(
    readonly workspace: string,
    private loadedConfig: BatonConfig,
    private loadedConfigIssues: readonly Issue[],
    private readonly store: StorePort,
    private readonly clock: Clock,
    private readonly ids: IdSource,
    announcer: EventAnnouncer,
    private readonly cliPath?: string,
  ) {
    this.announcer = announcer;
    this.heartbeats = new HeartbeatBatch(store, clock);
    this.onEvent = announcer.onEvent;
  }

  /** Opens (creating if needed) the store of a workspace. An invalid config is refused with its issues. */
  static async open(options: EngineOptions): Promise<Engine> {
    const workspace = resolve(options.workspace);
    const { config, issues } = loadConfig(workspace);
    if (hasErrors(issues)) throw invalidConfig(workspace, issues);
    const notices: string[] = [];
    // .baton/ never shows as untracked work in the user's repository — edited only by a command that writes (creates
    // the store, or commits), so one that only reads or is refused leaves the repository as it was.
    const excludeBaton = (): void => {
      try {
        excludeBatonFromRepository(workspace);
      } catch (err) {
        notices.push(
          `Could not add .baton/ to the git repository's info/exclude (${(err as Error).message}); Source Control may list Baton's files.`,
        );
      }
    };
    const choice = chooseStore(config.store, storeDirOf(workspace), options.env ?? storeEnvironment());
    if (choice.kind === 'file' && !storeExists(choice.dir)) excludeBaton();
    const local = options.clock ?? systemClock;
    const opened = await openStore(choice, {
      follow: options.follow ?? false,
      file: { clock: local, ...options.store },
    });
    const store = onFirstCommit(opened, excludeBaton);
    // On a shared store every host keeps time by its server's clock (a clock a test gives is kept as it is).
    const offset = opened.clockOffsetMs?.bind(opened);
    const clock = offset && !options.clock ? databaseClock(local, offset) : local;
    // Announcement failures have no caller to report to; the next change tries again.
    const announcer = await EventAnnouncer.start(store, clock, () => undefined);
    const ids = options.ids ?? systemIds(clock);
    const engine = new Engine(workspace, config, issues, store, clock, ids, announcer, options.cliPath);
    engine.openNotices = notices;
    if (choice.kind === 'postgres')
      engine.storeAccess = {
        url: choice.url,
        schema: choice.schema,
        ...(choice.password !== undefined ? { password: choice.password } : {}),
      };
    return engine;
  }

  /** The workspace's settings, as last read (Engine.open, reloadConfig). */
  get config(): BatonConfig {
    return this.loadedConfig;
  }

  /** Warnings of the config as last read (errors refuse it). */
  get configIssues(): readonly Issue[] {
    return this.loadedConfigIssues;
  }

  /**
   * Reads `.baton/config.json` again (the editor calls this when the file changes). A valid file
   * is used from now on by what starts here — new runs, coordinators, stops, claims; a
   * coordinator already running keeps the settings it started with, and a run keeps the ones
   * it froze (docs/config.md). An invalid file changes nothing: its issues are returned.
   */
  reloadConfig(): { changed: boolean; applied: boolean; issues: readonly Issue[] } {
    const { config, issues } = loadConfig(this.workspace);
    const path = configPathOf(this.workspace);
    const located = issues.map((i) => ({ ...i, file: path }));
    if (hasErrors(issues)) return { changed: false, applied: false, issues: located };
    const changed = JSON.stringify(config) !== JSON.stringify(this.loadedConfig);
    this.loadedConfig = config;
    this.loadedConfigIssues = located;
    return { changed, applied: true, issues: located };
  }

  /**
   * Whether there is a store to read: a file store once created; a shared (PostgreSQL) one is always there to ask.
   * The config names the store, so an invalid one is refused here (`config.invalid`, with its issues) as Engine.open
   * refuses it: answering "no store" would show a team's running run as none.
   */
  static hasStore(workspace: string): boolean {
    const root = resolve(workspace);
    const { config, issues } = loadConfig(root);
    if (hasErrors(issues)) throw invalidConfig(root, issues);
    return config.store.kind === 'postgres' || storeExists(storeDirOf(root));
  }

  /** What opening found and repaired (the store's recovery), or could not do, for the adapter to show. */
  get recoveryNotices(): readonly string[] {
    return [...this.openNotices, ...this.store.recovery.notices];
  }

  async close(): Promise<void> {
    await this.heartbeats.settled();
    await this.announcer.settled();
    this.announcer.dispose();
    await this.store.close();
  }

  /** Catches up with other processes now and announces what they did. */
  async refresh(): Promise<void> {
    await this.store.refresh();
    await this.announcer.settled();
  }

  now(): number {
    return this.clock.now();
  }

  // ── plans and runs ──────────────────────────────────────────────────────

  loadPlan(planPath: string): LoadedPlan {
    return readPlan(this.workspace, planPath);
  }

  /** Starts a new run from a plan file; a plan with errors is refused with its issues. */
  async startRun(planPath: string): Promise<Run> {
    const { runId } = await this.openRun(planPath, { fresh: true, whatNext: '', checkGit: false });
    return this.getRun(runId);
  }

  /** The active run of a plan (same plan text), or a new one; `fresh` always starts a new one. */
  async runForPlan(
    planPath: string,
    options: { fresh?: boolean; settings?: Partial<Pick<RunSettings, 'isolation' | 'integration' | 'review'>> } = {},
  ): Promise<{ run: Run; created: boolean }> {
    const whatNext = 'resume that run, replan it, or start fresh with --new';
    const { runId, created } = await this.openRun(planPath, { ...options, whatNext });
    return { run: await this.getRun(runId), created };
  }

  /**
   * An external worker takes a task. Without `runId`, the plan's active run is used — or
   * started, in the same transaction, so two claimers never start two runs. A plan that
   * changed since its active run started is refused (replan instead). The limits a driven
   * worker obeys hold here too (retry backoff, maxConcurrency, `files:` overlap): a refusal is
   * `claim.retry-backoff`, `claim.max-concurrency` or `claim.files-overlap` and writes nothing.
   */
  async claimTask(input: {
    planPath?: string;
    runId?: string;
    taskId: string;
    agent?: string;
    leaseSeconds?: number;
    holder?: string;
  }): Promise<ClaimOutcome> {
    if (!input.planPath && !input.runId) {
      throw new BatonError('claim.no-run', 'Name the plan (--plan) or the run (--run) to claim from.');
    }
    const plan = input.planPath ? this.validPlan(input.planPath) : undefined;
    const leaseMs = (input.leaseSeconds ?? this.config.leaseSeconds) * 1000;
    // Leases that ran out are made official in a commit of their own: a claim refused by the retry backoff must not
    // undo the expiry that started it (the backoff runs from that moment, not from each refused claim). So the first
    // transaction ends, committed, right after an expiry that found something, and the claim runs in the next one; in
    // the common case (nothing expired) the claim is made in the first, without a read of its own before it.
    // A claim from a run it names touches only that run: it runs beside other runs' writers on a shared store (only
    // that run's leases are expired in it). One by a plan may create a run, and runs alone.
    const scope = input.runId ? { runId: input.runId } : undefined;
    const first = await this.store.transact(async (tx) => {
      const ctx = this.operationContext();
      if ((await expireStaleRuntimes(tx, ctx.now, this.expiryScope(scope))).length > 0) return undefined;
      return this.claimIn(tx, ctx, input, plan, leaseMs, { expired: true });
    }, scope);
    const claim =
      first ??
      (await this.store.transact((tx) => this.claimIn(tx, this.operationContext(), input, plan, leaseMs), scope));
    this.heartbeats.remember(claim.runtimeId, claim.runId);
    return claim;
  }

  /** The claim of `claimTask` inside its transaction; `expired`: stale leases were expired in it at `ctx.now`. */
  private async claimIn(
    tx: StoreTx,
    ctx: OperationContext,
    input: Parameters<Engine['claimTask']>[0],
    plan: ReturnType<Engine['validPlan']> | undefined,
    leaseMs: number,
    options: { expired?: boolean } = {},
  ): Promise<ClaimOutcome> {
    let runId = input.runId;
    let runCreated = false;
    if (runId) {
      const run = await findRun(tx, runId);
      if (plan && run.planPath !== plan.path) {
        throw new BatonError('run.plan-mismatch', `Run ${runId} runs ${run.planPath}, not ${plan.path}.`);
      }
    } else {
      const opened = await openRunForPlan(
        tx,
        {
          plan: { path: plan!.path, text: plan!.text, tasks: plan!.parsed.tasks },
          settings: runSettingsFrom(this.config),
          whatNext: 'finish that run or replan it',
        },
        ctx,
      );
      runId = opened.runId;
      runCreated = opened.created;
    }
    if (!options.expired)
      await expireStaleRuntimes(tx, ctx.now, this.expiryScope(input.runId ? { runId: input.runId } : undefined));
    const holder = input.holder ?? hostname();
    const agent = input.agent ? { agent: input.agent } : {};
    const claim = await claimTask(
      tx,
      { runId, taskId: input.taskId, leaseMs, holder, maxConcurrency: this.config.maxConcurrency, ...agent },
      ctx,
    );
    return { ...claim, runId, runCreated };
  }

  /** A worker's heartbeat; beats sent while another commits go together in the next commit (HeartbeatBatch). */
  heartbeat(input: WorkerBeat): Promise<WorkerRuntime> {
    return this.heartbeats.renew(input);
  }

  // ── an attempt's own tools (`baton mcp`, docs/agents.md): each bound by the attempt's runtime token ──

  /** The task of the attempt the credential is bound to, as its prompt gives it (`baton_task`). */
  attemptBrief(credential: AttemptCredential): Promise<AttemptBrief> {
    return describeAttempt(this.engineContext(), credential);
  }

  /** A progress note from the attempt's worker: its heartbeat, once the credential is shown to be its own. */
  async attemptProgress(credential: AttemptCredential, progress: string): Promise<WorkerRuntime> {
    await authenticateAttempt(this.engineContext(), credential);
    return this.heartbeat({ runtimeId: credential.runtimeId, token: credential.token, progress });
  }

  /** A dry run of ingestion on the attempt's draft result (`baton_check_result`): nothing is written. */
  checkDraftResult(credential: AttemptCredential, draft?: string): Promise<DraftCheck> {
    return checkDraftResult(this.engineContext(), credential, draft);
  }

  /** The stop hook's check of the result the agent ends with, counted as a round (`baton check-result --stop-hook`). */
  checkBeforeStop(credential: AttemptCredential, input: StopHookInput): Promise<StopCheck> {
    return checkBeforeStop(this.engineContext(), credential, input);
  }

  /** Hands the attempt's result in by its token (`baton_submit_result`), as `baton ingest --token` does. */
  submitAttemptResult(credential: AttemptCredential, draft?: string): Promise<IngestOutcome> {
    return submitAttemptResult(this.engineContext(), credential, draft);
  }

  /**
   * The attempt's agent asks a person (`baton_ask`, `baton ask`): opens a question gate and waits for its answer,
   * beating for the attempt meanwhile (docs/agents.md). `onOpened` is told the gate once it is open.
   */
  async askAndWait(
    credential: AttemptCredential,
    input: { question: string; choices?: readonly string[] },
    options: Omit<AwaitAnswerOptions, 'beat'> & { onOpened?(gate: Gate): void } = {},
  ): Promise<QuestionAnswer> {
    const ctx = this.engineContext();
    const gate = await askQuestion(ctx, credential, input);
    options.onOpened?.(gate);
    return awaitAnswer(ctx, credential, gate.id, {
      ...options,
      beat: (progress) => this.heartbeat({ runtimeId: credential.runtimeId, token: credential.token, progress }),
    });
  }

  /** A person answers a question gate (`baton answer`, the editor): the first answer wins. */
  answerQuestion(input: { gateId: string; answer: string; by?: string }): Promise<Gate> {
    return answerGate(this.engineContext(), { ...input, by: input.by ?? defaultDecider() });
  }

  /**
   * A person's follow-up message to a task (`baton message`, docs/agents.md "Follow-up messages"): its running attempt
   * is ended and continued with it, a finished task runs again as a follow-up, a task yet to start takes it with its
   * next attempt.
   */
  sendFollowUp(input: { runId: string; taskId: string; message: string; by?: string }): Promise<FollowUpOutcome> {
    return sendFollowUp(this.engineContext(), { ...input, by: input.by ?? defaultDecider() });
  }

  /** Where an isolated attempt's worktree is (Open Worktree…); undefined for an attempt in the shared working tree. */
  attemptWorktree(runId: string, delegationId: string): Promise<AttemptWorktreePlace | undefined> {
    return locateAttemptWorktree(this.engineContext(), runId, delegationId);
  }

  /**
   * Resolve Conflict → Open in Merge Editor (docs/isolation.md, "Resolving a conflict"): brings the run's target into
   * the worktree of the attempt held at an open integration_conflict gate, stopping at its conflicts (merge, or
   * rebase for the rebase and cherry-pick strategies); asked again, says which files are still in conflict. The gate
   * stays open: approving it once the person resolved and committed integrates again.
   */
  mergeTargetIntoWorktree(gateId: string): Promise<ConflictInWorktree> {
    return mergeTargetIntoWorktree(this.engineContext(), gateId);
  }

  /**
   * Resolve Conflict → Send to Agent: closes the integration_conflict gate, ends its attempt (CANCELLED, not a failure
   * retry) and sends the task's agent a follow-up message naming the files and the target; the next attempt starts
   * from the target, continues the session and merges its earlier branch.
   */
  sendConflictToAgent(input: { gateId: string; by?: string }): Promise<ConflictSentToAgent> {
    return sendConflictToAgent(this.engineContext(), { gateId: input.gateId, by: input.by ?? defaultDecider() });
  }

  /**
   * A person's review comments on a task's changes, sent to its agent as one follow-up message (the editor's *Send
   * Review to Agent*, docs/extension.md "Review comments") and kept with it (`review:sent`).
   */
  sendReview(input: {
    runId: string;
    taskId: string;
    reviewed?: string;
    comments: readonly ReviewComment[];
    by?: string;
  }): Promise<FollowUpOutcome> {
    return sendReview(this.engineContext(), { ...input, by: input.by ?? defaultDecider() });
  }

  /**
   * Drops files from a held attempt's integration at its open review gate (issue 27): a new commit on its branch puts
   * them back as they were at its base; approving the gate integrates only what was kept.
   */
  dropFromIntegration(input: { gateId: string; files: readonly string[]; by?: string }): Promise<DropOutcome> {
    return dropFromIntegration(this.engineContext(), { ...input, by: input.by ?? defaultDecider() });
  }

  /** A run's follow-up messages (of one task), oldest first. */
  listFollowUps(runId: string, taskId?: string): Promise<FollowUp[]> {
    return this.store.read((r) => listFollowUps(r, runId, taskId));
  }

  /** Marks every lease that ran out as STALE and applies the retry policy. */
  async expireStaleRuntimes(): Promise<ExpiredRuntime[]> {
    return this.store.transact((tx) => expireStaleRuntimes(tx, this.clock.now(), this.expiryScope()));
  }

  /** Leases are judged on this machine: a worker another host started gets its watchdog's time (docs/team.md). */
  private expiryScope(write?: WriteScope): ExpiryScope {
    return { host: leaseHostHere(this.config.stopGraceSeconds), ...(write ? { runId: write.runId } : {}) };
  }

  /**
   * Validates a result artifact against the contract and its delegation, then records it with
   * its content. The artifact is a file on this machine (`artifactPath`) or content handed in
   * (`artifactContent`, e.g. from stdin). A missing file, content over the run's
   * maxArtifactBytes or not UTF-8 text is bad input (nothing written); an invalid artifact is
   * a rejected ingestion (recorded, the delegation BLOCKED behind a gate).
   */
  async ingest(
    input: {
      delegationId: string;
      runId?: string;
      /** The attempt's runtime token: required while it runs under a live lease (authorizeIngest). */
      token?: string;
    } & ({ artifactPath: string } | { artifactContent: Uint8Array; artifactName?: string }),
  ): Promise<IngestOutcome> {
    const { delegation, facts } = await this.ingestionTarget(input);
    const handedIn = input.token !== undefined ? { token: input.token } : {};
    if ('artifactContent' in input)
      return ingestArtifactContent(
        this.engineContext(),
        delegation,
        { bytes: input.artifactContent },
        input.artifactName ?? STDIN_ARTIFACT,
        handedIn,
        facts,
      );
    return ingestArtifact(
      this.engineContext(),
      delegation,
      resolve(this.workspace, input.artifactPath),
      handedIn,
      facts,
    );
  }

  /**
   * A dry run of ingestion on a result's text as the editor holds it (docs/extension.md, "Result problems": a quick
   * fix re-checks the artifact): the one check ingestion makes (judgeArtifact), for the delegation it would be
   * ingested for. Nothing is written.
   */
  async checkResultText(input: { delegationId: string; runId?: string; text: string }): Promise<Issue[]> {
    const { delegation, facts } = await this.ingestionTarget(input);
    const bytes = new TextEncoder().encode(input.text);
    return (await judgeArtifact(this.engineContext(), delegation, { bytes }, facts)).issues;
  }

  /** The delegation a result is for, and what judging its result reads (judgingFactsOf), in one read. */
  private ingestionTarget(input: { delegationId: string; runId?: string }): Promise<{
    delegation: Delegation;
    facts: JudgingFacts;
  }> {
    return this.store.read(async (r) => {
      const found = await findDelegation(r, input.delegationId, input.runId);
      return { delegation: found, facts: await judgingFactsOf(r, this, found) };
    });
  }

  /** A run's ingestions with the sizes of their kept artifacts, and each delegation's newest with its content. */
  listIngestionViews(runId: string): Promise<IngestionView[]> {
    return this.store.read((r) => listIngestionViews(r, runId));
  }

  /** One ingestion with its artifact's content from the store, wherever it was ingested (`baton ingestion show`). */
  ingestionArtifact(ingestionId: string, runId?: string): Promise<IngestionArtifact> {
    return this.store.read((r) => readIngestionArtifact(r, ingestionId, runId));
  }

  async decideGate(input: {
    gateId: string;
    decision: GateDecision;
    note?: string;
    by?: string;
    accept?: boolean;
  }): Promise<DecideGateOutcome> {
    // Approving a config_changed gate adopts the config's worker definitions as this process reads them now; the
    // operation takes them only if they are the ones the gate showed (read before the transaction: no I/O inside it).
    const gate = await this.store.read((r) => findGate(r, input.gateId));
    let adopt: FrozenWorkers | undefined;
    if (gate?.kind === 'config_changed' && gate.status === 'open' && input.decision === 'approved') {
      const { config, issues } = loadConfig(this.workspace);
      if (hasErrors(issues)) throw invalidConfig(this.workspace, issues);
      adopt = freezeWorkers(config);
    }
    const decision = {
      gateId: input.gateId,
      decision: input.decision,
      by: input.by ?? defaultDecider(),
      ...(input.note ? { note: input.note } : {}),
      ...(input.accept ? { accept: true } : {}),
      ...(adopt ? { adopt } : {}),
    };
    return this.store.transact((tx) => decideGate(tx, decision, this.clock.now()));
  }

  /**
   * Maps a run onto a new plan (docs/cli.md, replan): refused while the old run has a live
   * coordinator or work in flight; completed tasks carry over; the old run is superseded.
   */
  async replan(input: {
    runId: string;
    planPath: string;
    mapping?: Record<string, string | null>;
  }): Promise<ReplanOutcome> {
    const plan = this.validPlan(input.planPath);
    const lease = await this.store.read((r) => readCoordinatorLease(r, input.runId));
    if (isLeaseLive(lease, this.clock.now())) {
      throw new BatonError(
        'replan.coordinator-alive',
        `Run ${input.runId} is driven by ${lease!.holder}; stop it first (baton stop --run ${input.runId}).`,
      );
    }
    const replan = {
      oldRunId: input.runId,
      planPath: plan.path,
      planText: plan.text,
      tasks: plan.parsed.tasks,
      settings: runSettingsFrom(this.config),
      mapping: input.mapping ?? {},
    };
    return this.store.transact((tx) => replanRun(tx, replan, this.operationContext()));
  }

  // ── execution ───────────────────────────────────────────────────────────

  /**
   * Why this process may not join a run beside the coordinator that holds its lease (docs/team.md, "Every machine
   * works"); undefined when it may. Joining needs a shared store, and a run in the shared working tree: a run in
   * worktrees integrates in the clone that started it, one coordinator at a time.
   */
  async whyNotJoin(runId: string): Promise<string | undefined> {
    if (!isSharedStore(this.config))
      return 'the store is on this machine, where one coordinator drives a run (a team store lets several)';
    const settings = await this.store.read((r) => readRunSettings(r, runId));
    const isolation = settings.isolation ?? this.config.isolation;
    if (isolation !== 'none')
      return `the run works in worktrees (isolation "${isolation}"), which one coordinator integrates; a run in the shared working tree (isolation "none") can be joined`;
    return undefined;
  }

  /**
   * Becomes the coordinator of a run (reconciling what a predecessor left), or reports who
   * is. The caller runs `coordinator.run()` and, on exit, `shutdown()` if it was interrupted.
   */
  async coordinate(
    options: CoordinatorOptions & { log?: (line: string) => void },
  ): Promise<Awaited<ReturnType<typeof Coordinator.take>>> {
    await this.refuseUnknownWorkers(options.runId, options.worker);
    await assertRunRepositoryHere(this.store, this.workspace, options.runId);
    const { log, ...coordinatorOptions } = options;
    return Coordinator.take(
      { ...this.engineContext(), ...(log ? { log } : {}), onStoreChange: (listener) => this.store.watch(listener) },
      coordinatorOptions,
    );
  }

  /** Lets a stopped run dispatch again (the coordinator's job resumes with `coordinate`). */
  async liftStops(runId: string): Promise<void> {
    await this.store.transact((tx) => liftStops(tx, runId, this.clock.now()));
  }

  /**
   * Records a stop. A live coordinator of the run applies it (it watches the store); with
   * none, this process applies it: it ends the workers recorded on this host and cancels
   * their attempts. Either way the returned request, once applied, reports per attempt
   * whether the end of its processes was confirmed.
   */
  async requestStop(input: {
    runId: string;
    delegationId?: string;
    mode: StopMode;
    by?: string;
    waitMs?: number;
  }): Promise<StopOutcome> {
    const stop = {
      runId: input.runId,
      mode: input.mode,
      by: input.by ?? defaultDecider(),
      ...(input.delegationId ? { delegationId: input.delegationId } : {}),
    };
    return stopAndApply(this.engineContext(), stop, input.waitMs ?? (this.config.stopGraceSeconds + 10) * 1000);
  }

  /**
   * "Check again" on an isolation gate, or on every open one (of a run): when what stood in
   * the way of a worktree is gone (the tree was committed), the gate closes by itself and its
   * task runs in a worktree at its next dispatch (docs/isolation.md).
   */
  async recheckIsolation(input: { gateId?: string; runId?: string } = {}): Promise<IsolationRecheck[]> {
    if (input.gateId) return [await recheckIsolationGate(this.engineContext(), input.gateId)];
    return recheckIsolationGates(this.engineContext(), input.runId);
  }

  /**
   * Cancels a run (docs/architecture.md, "Cancelling a run"): an immediate stop ends its
   * workers and proves it, then its gates, attempts and tasks are closed and the run is
   * `cancelled` for good.
   */
  async cancelRun(input: { runId: string; by?: string; note?: string; waitMs?: number }): Promise<CancelOutcome> {
    const cancel = {
      runId: input.runId,
      by: input.by ?? defaultDecider(),
      ...(input.note ? { note: input.note } : {}),
    };
    return cancelRun(this.engineContext(), cancel, input.waitMs ?? (this.config.stopGraceSeconds + 10) * 1000);
  }

  /**
   * Classifies every task of a run from the evidence and repairs what it can prove. While
   * another process coordinates the run, it only reports.
   */
  async reconcile(runId: string): Promise<ReconcileReport & { reportOnly: boolean; coordinator?: string }> {
    const lease = await this.store.read((r) => readCoordinatorLease(r, runId));
    const reportOnly = isLeaseLive(lease, this.clock.now());
    const report = await reconcileRun(this.engineContext(), runId, { reportOnly });
    return { ...report, reportOnly, ...(reportOnly && lease ? { coordinator: lease.holder } : {}) };
  }

  /** Removes the worktrees and branches of the run's attempts that are over (docs/isolation.md, "Cleanup"). */
  async cleanupWorktrees(runId?: string): Promise<CleanupReport & { runId: string }> {
    const run = await this.getRun(runId);
    return { runId: run.id, ...(await cleanupWorktrees(this.store, this.clock, this.workspace, run.id)) };
  }

  /** Everything about a run in one place, with the command that most likely helps next. */
  async diagnose(runId?: string): Promise<Diagnosis> {
    return diagnoseRun(this.engineContext(), runId);
  }

  // ── queries (queries/runView.ts) ───────────────────────────────────────

  listRuns(): Promise<Run[]> {
    return this.store.read((r) => listRuns(r));
  }

  /** The plan's newest run, when it completed from the plan as it is now (none of the plan's runs active). */
  async completedRunOfPlan(planPath: string): Promise<Run | undefined> {
    const plan = this.validPlan(planPath);
    const runId = await this.store.read((r) => completedRunOfSamePlan(r, plan.path, planDigest(plan.text)));
    return runId ? this.getRun(runId) : undefined;
  }

  /** The run with this id, or the most recent run when no id is given. */
  getRun(runId?: string): Promise<Run> {
    return this.store.read((r) => findRun(r, runId));
  }

  /** The run with its tasks, attempts, runtimes, gates and coordinator (its holder's process looked at). */
  async overview(runId?: string): Promise<RunOverview> {
    const now = this.clock.now();
    // Its workers' processes are looked at too: one that ended while no coordinator watched is not shown alive.
    const view = withWorkerProcesses(await this.store.read((r) => readOverview(r, runId, now)));
    const coordinatorLease = withHolderProcess(view.coordinatorLease, now);
    return coordinatorLease === view.coordinatorLease
      ? view
      : { ...view, ...(coordinatorLease ? { coordinatorLease } : {}) };
  }

  listDelegations(runId?: string, status?: DelegationStatus): Promise<{ run: Run; delegations: Delegation[] }> {
    return this.store.read((r) => listDelegations(r, runId, status));
  }

  listGates(filter: { runId?: string; status?: GateStatus } = {}): Promise<Gate[]> {
    return this.store.read((r) => listGates(r, filter));
  }

  /** A run's ingestion records, oldest first. */
  listIngestions(runId: string): Promise<IngestionRecord[]> {
    return this.store.read((r) => listIngestions(r, runId));
  }

  listEvents(runId: string, afterSeq = 0, limit = 10_000): Promise<Array<RunEvent & { id: number }>> {
    return this.store.read((r) => listEvents(r, runId, afterSeq, limit));
  }

  /** One task's attempts with their receipts, log paths and ingestions, in one read (the dashboard's task details). */
  taskRecord(runId: string, taskId: string): Promise<TaskRecord> {
    return this.store.read((r) => readTaskRecord(r, runId, taskId));
  }

  /** How the run isolates its tasks (once decided at its first dispatch), its live worktrees and the disk they use. */
  async isolationSummary(runId?: string): Promise<{
    runId: string;
    setting: string;
    isolation?: RunIsolation;
    liveWorktrees: number;
    worktreeBytes: number;
    /** The target branch against the head Baton expects it at (worktree runs; docs/isolation.md). */
    target?: TargetCheck;
  }> {
    const { run, settings, isolation, live } = await this.store.read(async (r) => {
      const found = await findRun(r, runId);
      return {
        run: found,
        settings: await readRunSettings(r, found.id),
        isolation: await readRunIsolation(r, found.id),
        live: await countLiveWorktrees(r, found.id),
      };
    });
    // A status must answer even where git cannot (not installed any more): then it says nothing about the target.
    const target = await checkTargetOf(this.store, isolation).catch(() => undefined);
    return {
      runId: run.id,
      setting: settings.isolation ?? 'none',
      ...(isolation ? { isolation } : {}),
      liveWorktrees: live,
      worktreeBytes: folderSize(worktreesRoot(this.workspace, run.id)),
      ...(target ? { target } : {}),
    };
  }

  /**
   * What one attempt changed, for a diff view: its worktree's base → branch head (or its
   * uncommitted files), the integrated commit, or the shared working tree before → after its
   * worker; or why that cannot be shown (docs/workers.md, "What an attempt changed").
   */
  attemptChanges(runId: string, delegationId: string): Promise<AttemptChanges> {
    return readAttemptChanges(this.engineContext(), runId, delegationId);
  }

  /** The agent CLI an attempt ran (its log is then an event stream: renderTranscript), or undefined. */
  async attemptAgentKind(runId: string, delegationId: string): Promise<AgentKind | undefined> {
    const { worker, settings } = await this.store.read(async (r) => ({
      worker: await attemptWorker(r, runId, delegationId),
      settings: await readRunSettings(r, runId),
    }));
    // The run's frozen definitions say what the attempt ran, whatever the config file says now.
    return agentKindOf(settings.workers ?? this.config, worker);
  }

  /**
   * The worker definitions a run runs with beside `.baton/config.json` as it is now (`status`,
   * `diagnose`): their digests, what differs, an open config_changed gate.
   */
  async runConfig(runId?: string): Promise<RunConfigView> {
    const run = await this.getRun(runId);
    return describeRunConfig(this.engineContext(), run.id);
  }

  /**
   * The editor saw `.baton/config.json` change: each run that can still go on and runs on frozen
   * settings gets a `config:changed` event when the file differs from what it last saw (its
   * coordinator opens a gate, if one is needed, at its next pass). Returns the runs told.
   */
  async noticeConfigChange(): Promise<Array<{ runId: string; changes: number }>> {
    const told: Array<{ runId: string; changes: number }> = [];
    for (const run of await this.listRuns()) {
      if (isFinishedRun(run.status)) continue;
      const notice = await noticeConfigChange(this.engineContext(), run.id, { noticedBy: 'editor', gate: false });
      if (notice.told) told.push({ runId: run.id, changes: (await this.runConfig(run.id)).changes.length });
    }
    return told;
  }

  /** A file's text at a commit that `attemptChanges` named; undefined when the commit has no such file. */
  async fileAtCommit(repoRoot: string, commit: string, path: string): Promise<string | undefined> {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(commit))
      throw new BatonError('changes.bad-commit', `${commit} is not a commit id.`);
    return readFileAtCommit(repoRoot, commit, path);
  }

  /** The run's isolated attempts: worktree, branch, what became of their work. */
  listWorktrees(runId?: string): Promise<AttemptWorktree[]> {
    return this.store.read(async (r) => listAttemptWorktrees(r, (await findRun(r, runId)).id));
  }

  // ── internals ───────────────────────────────────────────────────────────

  /** What the use cases work with (a coordinator gives them a fenced one of its own). */
  private engineContext(): EngineContext {
    return {
      store: this.store,
      clock: this.clock,
      ids: this.ids,
      workspace: this.workspace,
      config: this.config,
      log: () => undefined,
      ...(this.cliPath ? { cliPath: this.cliPath } : {}),
      ...(this.storeAccess ? { storeAccess: this.storeAccess } : {}),
    };
  }

  private operationContext(): OperationContext {
    return { now: this.clock.now(), ids: this.ids };
  }

  private validPlan(planPath: string): LoadedPlan {
    return requireValidPlan(readPlan(this.workspace, planPath));
  }

  private async openRun(
    planPath: string,
    options: { fresh?: boolean; whatNext: string; settings?: Partial<RunSettings>; checkGit?: boolean },
  ): Promise<{ runId: string; created: boolean }> {
    const plan = this.validPlan(planPath);
    const settings = { ...runSettingsFrom(this.config), ...options.settings };
    // A run that must isolate its tasks cannot start without git (exit 7); `auto` falls back to the shared tree.
    if (options.checkGit !== false && settings.isolation === 'worktree' && !(await findGit())) throw gitMissing();
    const snapshot = { path: plan.path, text: plan.text, tasks: plan.parsed.tasks };
    return this.store.transact((tx) =>
      openRunForPlan(
        tx,
        { plan: snapshot, settings, whatNext: options.whatNext, ...(options.fresh ? { fresh: true } : {}) },
        this.operationContext(),
      ),
    );
  }

  /**
   * Every task's worker (or the override) must be defined, and its program installed, before a
   * coordinator dispatches anything: a missing CLI is refused here (exit 7, `worker.missing`)
   * instead of failing every attempt at dispatch. `resume` asks before it lifts a stop.
   */
  async refuseUnknownWorkers(runId: string, override?: string): Promise<void> {
    const overview = await this.overview(runId);
    const { frozen, refused } = await this.store.read(async (r) => ({
      frozen: (await readRunSettings(r, runId)).workers,
      refused: await rejectedNewWorkers(r, runId),
    }));
    // Only a task that may still be dispatched needs its worker.
    const open = overview.tasks.filter(
      (task) => !['completed', 'failed', 'blocked', 'skipped', 'cancelled'].includes(task.status),
    );
    const planPath = overview.run.planPath;
    if (!frozen) {
      const ids = open.map((task) => override ?? task.worker ?? this.config.defaultWorker);
      return refuseWorkers(this.config, this.workspace, ids, undefined, planPath);
    }
    // What will run is the run's frozen definitions. Where the config now defines a worker otherwise (or names another
    // default), the coordinator asks at a config_changed gate first: the config's one must exist, the frozen one need
    // not be installed (a person may be replacing a CLI that is gone).
    const current = freezeWorkers(this.config);
    const defaultMoved = current.defaultWorker !== frozen.defaultWorker;
    for (const id of new Set(open.map((task) => override ?? task.worker ?? frozen.defaultWorker))) {
      const mine = frozenDefinition(frozen, id);
      if (!mine) {
        // A new worker whose adoption a person rejected cannot run in this run: said now, not at the first dispatch.
        if (refused.has(id)) frozenWorkerFor(frozen, id);
        refuseWorkers(this.config, this.workspace, [id], undefined, planPath);
        continue;
      }
      const theirs = frozenDefinition(current, id);
      const replaced =
        (theirs && canonicalJson(theirs) !== canonicalJson(mine)) ||
        (id === frozen.defaultWorker && defaultMoved && !override);
      if (replaced) {
        resolveWorker(this.config, theirs ? id : current.defaultWorker);
        continue;
      }
      refuseWorkers(this.config, this.workspace, [id], frozen, planPath);
    }
  }

  /**
   * The same check for `start`, from the config and the plan alone, before any store is
   * opened: a refusal writes nothing (no run, no journal line, no .baton/store). Also
   * refuses an invalid config or plan, as opening the engine would.
   */
  static refuseUnknownWorkersForPlan(options: { workspace: string; planPath: string; worker?: string }): void {
    const workspace = resolve(options.workspace);
    const { config, issues } = loadConfig(workspace);
    if (hasErrors(issues)) throw invalidConfig(workspace, issues);
    const plan = requireValidPlan(readPlan(workspace, options.planPath));
    refuseWorkers(
      config,
      workspace,
      plan.parsed.tasks.map((t) => options.worker ?? t.worker ?? config.defaultWorker),
      undefined,
      options.planPath,
    );
  }

  // ── moving a store (baton store export / import, docs/store-transfer.md) ──

  /** Writes the whole store as one document, line by line, from one consistent read. */
  async exportStore(write: (line: string) => Promise<void>): Promise<StoreTransferSummary> {
    return exportStore(this.store, write, this.clock.now());
  }

  /**
   * Checks a store document through without opening any store: a bad line, a document cut
   * short or one of another schema version is refused here, before anything is created.
   */
  static async checkStoreDocument(lines: AsyncIterable<string>, source?: string): Promise<StoreTransferSummary> {
    return (await readStoreDocument(lines, undefined, source)).summary;
  }

  /** Imports a document into this workspace's store, which must be empty: one transaction, all or nothing. */
  async importStore(lines: AsyncIterable<string>, source?: string): Promise<StoreTransferSummary> {
    const setting = this.config.store;
    const where =
      setting.kind === 'postgres'
        ? `The PostgreSQL store of this workspace (schema ${setting.schema})`
        : `The store of this workspace (${storeDirOf(this.workspace)})`;
    return importStore(this.store, lines, where, source);
  }

  /**
   * What a run needs before it starts (`baton doctor`), without opening an engine — so it
   * also answers for a workspace whose config is invalid.
   */
  static async doctor(options: {
    workspace: string;
    planPath?: string;
    env?: NodeJS.ProcessEnv;
  }): Promise<DoctorCheck[]> {
    const workspace = resolve(options.workspace);
    const { config, issues } = loadConfig(workspace);
    const effective = hasErrors(issues) ? DEFAULT_CONFIG : config;
    // With a plan, the workers its tasks name are the ones a run needs; without, the default one.
    const plan = options.planPath ? readPlan(workspace, options.planPath) : undefined;
    const planWorkers = plan?.parsed.tasks.map((t) => t.worker ?? effective.defaultWorker);
    return runDoctor({
      workspace,
      config: effective,
      configIssues: issues,
      ...(planWorkers ? { planWorkers } : {}),
      ...(options.env ? { env: options.env } : {}),
      // The config names the store: with an invalid one, "no store yet" could hide a team's store that holds runs.
      store: hasErrors(issues)
        ? async () => ({
            exists: false,
            notices: [],
            error: `not checked: ${configPathOf(workspace)} is invalid, and it says which store this workspace uses (see the config check)`,
          })
        : () => checkStore(config.store, storeDirOf(workspace), options.env ?? storeEnvironment()),
    });
  }
}

function defaultDecider(): string {
  try {
    return process.env.BATON_USER || userInfo().username;
  } catch {
    return 'someone';
  }
}

function invalidConfig(workspace: string, issues: readonly Issue[]): BatonError {
  return new BatonError(
    'config.invalid',
    `${configPathOf(workspace)} is invalid.`,
    issues.map((i) => ({ ...i, file: configPathOf(workspace) })),
  );
}

/**
 * Each worker id must be defined (`worker.unknown`, exit 2) — by the run's frozen definitions when given, else the
 * config — and, unless manual, installed (`worker.missing`, 7).
 */
function refuseWorkers(
  config: BatonConfig,
  workspace: string,
  ids: readonly string[],
  frozen?: FrozenWorkers,
  planPath?: string,
): void {
  for (const id of new Set(ids)) {
    const worker = (frozen && frozenDefinition(frozen, id)) ?? resolveWorker(config, id);
    if (worker.type === 'manual') continue;
    const executable = worker.type === 'process' ? worker.command : worker.executable;
    if (!findExecutable(executable, workspace)) {
      throw new BatonError(
        'worker.missing',
        `Worker "${id}" cannot start: ${executable} is not installed (not found${isAbsolute(executable) ? '' : ' on PATH'}). Install it or change the worker in .baton/config.json; baton doctor checks every worker.`,
        [],
        // The plan it was refused for: a doctor offered with the refusal checks that plan's workers.
        { worker: id, executable, ...(planPath ? { planPath } : {}) },
      );
    }
  }
}
