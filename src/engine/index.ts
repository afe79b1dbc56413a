/**
 * The engine's public API: the only module adapters (src/cli, src/extension) import.
 * Nothing here knows about VS Code.
 */
export { Engine, BATON_DIR, configPathOf, loadConfig, readPlan, requireValidPlan, storeDirOf } from './engine';
export type { ClaimOutcome, Diagnosis, EngineEvent, EngineOptions, LoadedPlan, RunOverview } from './engine';
export type { ReplanOutcome } from './queue/replanRun';
export { MAX_ARTIFACT_BYTES } from './ingest/ingestArtifact';
export type { IngestOutcome } from './ingest/ingestArtifact';
export { configJsonSchema, configSchema, DEFAULT_CONFIG, DEFAULT_RISK_TAGS, parseConfig } from './config/config';
export type { BatonConfig, ParsedConfig } from './config/config';
export type { GateDecision } from './gates/decideGate';
export { parsePlan } from './plan/parsePlan';
export { parseResultArtifact, checkResultIdentity } from './ingest/parseResult';
export { checkArtifactPaths } from './ingest/artifactPaths';
export { hasResultBlock, RESULT_FENCE } from './ingest/resultOnDisk';
export { BatonError } from './model/errors';
export type { ErrorKind } from './model/errors';
export { formatIssue, hasErrors } from './model/issue';
export type { Issue, IssueSeverity, Position, Range } from './model/issue';
export { systemClock, systemIds } from './model/clock';
export type { Clock, IdSource } from './model/clock';
export * from './model/types';
export { deriveRuntimeStatus, isTerminalDelegation } from './model/transitions';
export { Emitter } from './util/emitter';
export type { Disposable } from './util/emitter';
export type { CoordinatorOutcome, CoordinatorOptions } from './executor/coordinator';
export type { ReconcileEntry, ReconcileReport } from './executor/reconcile';
export type { StopMode, StopRequest, StopReportEntry } from './executor/stopRequests';
export type { VerificationOutcome } from './executor/verifyAttempt';
export { findGit } from './isolation/git';
export type { AttemptWorktree, IntegrationStrategy, RunIsolation } from './isolation/worktrees';
export type { CleanupReport, WorktreeFinding } from './isolation/cleanup';
export type { IntegrationOutcome } from './isolation/integrate';
export { describeEvent, oneLine } from './events/describeEvent';
