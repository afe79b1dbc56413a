/**
 * The engine's public API: the only module adapters (src/cli, src/extension) import.
 * Nothing here knows about VS Code.
 */
export {
  Engine,
  BATON_DIR,
  configPathOf,
  loadConfig,
  readPlan,
  requireValidPlan,
  runFolderOf,
  runPaths,
  storeDirOf,
} from './engine';
export type {
  ClaimOutcome,
  Diagnosis,
  EngineEvent,
  EngineOptions,
  LoadedPlan,
  RunOverview,
  ReviewRecord,
  TaskRecord,
} from './engine';
export type { DoctorCheck, RunConfigView, StoreTransferSummary } from './engine';
export type { ReplanOutcome } from './operations/runs/replanRun';
export { isCoordinatorLive } from './queries/coordinatorLease';
export type { CoordinatorState } from './queries/coordinatorLease';
export type { BeatUsage, HandOver } from './domain/events';
export { MAX_ARTIFACT_BYTES, STDIN_ARTIFACT } from './usecases/ingestArtifact';
export type { IngestionArtifact, IngestionView, StoredArtifact } from './queries/artifacts';
export { MAX_ARTIFACT_BYTES_CEILING } from './domain/config';
export type { IngestOutcome } from './usecases/ingestArtifact';
export type { AttemptCredential } from './domain/attemptCredential';
export type { AttemptBrief, DraftCheck, StopCheck } from './usecases/attemptAccess';
export { parseStopHookInput, type StopHookInput, type StopVerdict } from './domain/stopCheck';
export type { QuestionAnswer } from './usecases/askQuestion';
export { QUESTION_LIMITS, questionOf, type Question } from './domain/question';
export type { ResultContractBrief } from './domain/result/resultTemplate';
export {
  BUDGET_UNPRICED,
  configJsonSchema,
  configSchema,
  DEFAULT_CONFIG,
  DEFAULT_RISK_TAGS,
  parseConfig,
} from './domain/config';
export type { BatonConfig, ParsedConfig } from './domain/config';
export type { GateDecision } from './operations/gates/decideGate';
export { parsePlan } from './domain/plan/parsePlan';
export { nextTaskId, taskBlockText, type NewTask } from './domain/plan/taskBlock';
export { parseResultArtifact, checkResultIdentity, hasResultBlock, RESULT_FENCE } from './domain/result/parseResult';
export { checkArtifactPaths } from './usecases/artifactPaths';
export { BatonError } from './domain/errors';
export type { ErrorKind } from './domain/errors';
export { formatIssue, hasErrors } from './domain/issue';
export type { Issue, IssueSeverity, Position, Range } from './domain/issue';
export { systemClock, systemIds } from './domain/clock';
export type { Clock, IdSource } from './domain/clock';
export * from './domain/types';
export { deriveRuntimeStatus, isTerminalDelegation } from './domain/transitions';
export { Emitter } from './domain/emitter';
export type { Disposable } from './domain/emitter';
export type { CoordinatorOutcome, CoordinatorOptions } from './executor/coordinator';
export type { ReconcileEntry, ReconcileReport } from './usecases/reconcileRun';
export type { StopReportEntry, StopRequest } from './domain/stops';
export type { StopOutcome } from './usecases/applyStop';
export type { FollowUpOutcome } from './usecases/sendFollowUp';
export type { DropOutcome } from './usecases/dropFromIntegration';
export type { ConflictInWorktree, ConflictSentToAgent } from './usecases/resolveConflict';
export type { AttemptWorktreePlace } from './usecases/attemptWorktree';
export type { FollowUp } from './domain/followUp';
export { FOLLOW_UP_TASK_STATUSES, MAX_FOLLOW_UP_BYTES } from './domain/followUp';
export type { ReviewComment } from './domain/review';
export { commentPlace, MAX_REVIEW_COMMENTS, quoteOf, reviewMessage, reviewProblem } from './domain/review';
export type { CancelOutcome } from './usecases/cancelRun';
export type { IsolationRecheck } from './usecases/recheckIsolation';
export type { StopMode } from './domain/types';
export type { VerificationOutcome } from './usecases/verifyAttempt';
export { findGit } from './effects/git/git';
/** This machine's name as Baton records it with every process (BATON_HOST_ID, else the hostname). */
export { thisHost } from './effects/processes/processes';
export { excludeBatonFromRepository } from './effects/git/worktrees';
export type { AttemptWorktree, RunIsolation } from './domain/isolation';
export type { AttemptChanges, FileChange } from './domain/changes';
export type { IntegrationStrategy } from './domain/types';
export type { CleanupReport, WorktreeFinding } from './usecases/cleanupWorktrees';
export type { IntegrationOutcome } from './usecases/integrateAttempt';
export type { TargetCheck, MissingCommit } from './domain/targetHead';
export { describeEvent, oneLine } from './domain/describeEvent';
export { isWaitingForLimit } from './domain/parking';
export {
  attemptEndsOf,
  attemptSpan,
  taskRunTime,
  type AttemptEnds,
  type AttemptSpan,
  type TaskRunTime,
} from './domain/runTime';
export { counted } from './domain/plural';
export { totalUsage, type AttemptUsage, type UsageTotals } from './queries/agentUsage';
export { renderTranscript, TranscriptRenderer } from './domain/agents/transcript';
export { agentKindOf } from './domain/workerLaunch';
