import type { Issue } from './issue';

/**
 * What kind of failure an error is. Adapters map kinds to their own surface; the CLI
 * maps them to the exit codes of DESIGN §6 (see docs/cli.md).
 */
export type ErrorKind =
  | 'io' // unexpected I/O: 1
  | 'invalid-input' // invalid input or config: 2
  | 'conflict' // ownership or lease conflict: 3
  // evidence / plan / approval mismatch: 4 — also an id the store or the plan does not hold (an unknown run, task,
  // gate, delegation, ingestion, runtime; a replan mapping to a task that is not there), as the task-executor seed's
  // table says; 2 is for input wrong in itself (docs/cli.md, "Exit codes").
  | 'mismatch'
  | 'worker-failure' // worker or verification failure: 5
  | 'integration-conflict' // 6
  | 'not-qualified' // runtime not qualified (untrusted, git missing): 7
  | 'awaiting-decision'; // paused awaiting a human decision: 8

/**
 * Every error code the engine and its adapters raise, declared once with its kind (GitLens
 * declares its reasons the same way): a code that is not in this list does not compile, and
 * a code always maps to the same exit code.
 */
export const ERROR_CODES = {
  'changes.bad-commit': 'invalid-input',
  'claim.no-run': 'invalid-input',
  // A claim refused for a limit driven workers obey too (domain/admission.ts): try again later, as the message says.
  'claim.retry-backoff': 'conflict',
  'claim.max-concurrency': 'conflict',
  'claim.files-overlap': 'conflict',
  'config.invalid': 'invalid-input',
  'coordinator.superseded': 'conflict',
  'delegation.changed-meanwhile': 'conflict',
  'delegation.illegal-transition': 'mismatch',
  'delegation.not-isolated': 'mismatch',
  'delegation.not-pending': 'conflict',
  'delegation.unknown': 'mismatch',
  // A follow-up message (`baton message`, docs/agents.md "Follow-up messages"): empty or too long; to a person's task,
  // which has no agent to read it; to a task whose attempt is being verified or integrated (try again once it is
  // judged); to a task that cannot run again (blocked, cancelled, skipped) or of a run that was replaced or cancelled.
  'follow-up.invalid': 'invalid-input',
  'follow-up.manual-worker': 'invalid-input',
  'follow-up.task-verifying': 'conflict',
  'follow-up.task-ended': 'mismatch',
  'follow-up.run-ended': 'mismatch',
  'gate.accept-not-applicable': 'invalid-input',
  'gate.already-decided': 'mismatch',
  // Approving a config_changed gate when .baton/config.json changed again since the gate showed it: nothing adopted.
  'gate.config-moved': 'mismatch',
  // "Check again" asked of a gate that is not an isolation gate.
  'gate.not-isolation': 'invalid-input',
  // Resolve Conflict asked of a gate that is not an integration_conflict gate.
  'gate.not-conflict': 'invalid-input',
  'gate.unknown': 'mismatch',
  // `baton answer` on a gate that is not a question (approve or reject it instead).
  'gate.not-question': 'invalid-input',
  // Approve or reject asked of a question gate: it takes an answer (`baton answer`), not a decision.
  'gate.is-question': 'invalid-input',
  // Dropping files from an integration: the gate is not an isolated attempt's open review gate, a file is not one the
  // attempt changed, or every file would go (reject the gate instead).
  'review.drop-refused': 'invalid-input',
  'git.missing': 'not-qualified',
  'heartbeat.missing-identity': 'invalid-input',
  // An artifact under .baton/runs/<run>/ handed in for a delegation of another run (delegation ids repeat across runs).
  'ingest.artifact-of-other-run': 'mismatch',
  'ingest.artifact-unreadable': 'invalid-input',
  // A draft named to `baton mcp` (baton_check_result, baton_submit_result) outside the workspace: never read.
  'ingest.artifact-outside-workspace': 'invalid-input',
  // `baton mcp` started without the attempt's BATON_* variables (docs/agents.md).
  'mcp.missing-identity': 'invalid-input',
  // A result handed in larger than the run's maxArtifactBytes, or not UTF-8 text: refused, nothing recorded.
  'ingest.artifact-too-large': 'invalid-input',
  'ingest.artifact-not-text': 'invalid-input',
  'ingest.delegation-not-started': 'mismatch',
  'ingest.delegation-terminal': 'mismatch',
  // A result handed in for a RUNNING attempt under a live lease, without its runtime token.
  'ingest.token-required': 'conflict',
  'ingestion.unknown': 'mismatch',
  'plan.invalid': 'invalid-input',
  'plan.unreadable': 'invalid-input',
  // A question (`baton_ask`, `baton ask`) or an answer outside its limits; the message names the field.
  'question.invalid': 'invalid-input',
  // An answer that is not one of the question's choices.
  'question.not-a-choice': 'invalid-input',
  // The attempt that asked ended (stopped, timed out, its lease lost, its result handed in) before an answer came.
  'question.closed': 'conflict',
  'replan.already-superseded': 'mismatch',
  'replan.bad-map': 'invalid-input',
  'replan.coordinator-alive': 'conflict',
  'replan.invalid-mapping': 'mismatch',
  'replan.workers-alive': 'conflict',
  // A cancel whose stop the run's coordinator did not apply in time: nothing was cancelled.
  'run.cancel-pending': 'conflict',
  // A coordinator in another clone than the one a worktree-isolated run works in (docs/team.md, "Git across clones").
  'run.other-clone': 'conflict',
  // Cancelling a run that already ended (completed, failed, blocked, superseded).
  'run.finished': 'mismatch',
  'run.plan-changed': 'mismatch',
  'run.plan-mismatch': 'mismatch',
  'run.unknown': 'mismatch',
  'runtime.lease-expired': 'conflict',
  'runtime.not-live': 'conflict',
  'runtime.not-its-worker': 'conflict',
  'runtime.unknown': 'mismatch',
  'runtime.wrong-token': 'conflict',
  'store.busy': 'conflict',
  // `baton store import`: a document that is not JSON lines of the store format, or was cut short (store-transfer.md).
  'store.document-invalid': 'invalid-input',
  // `baton store import` of a document an older Baton wrote: export it again with this one.
  'store.document-too-old': 'invalid-input',
  // `baton store import` into a store that already holds runs (or any row): nothing is merged.
  'store.not-empty': 'conflict',
  'store.holder-stopped': 'conflict',
  'store.commit-failed': 'io',
  'store.journal-corrupt': 'io',
  'store.schema-too-new': 'not-qualified',
  'store.unrecoverable': 'io',
  // A PostgreSQL store that cannot be reached or refuses the connection (its message never holds the password).
  'store.unreachable': 'io',
  'task.already-claimed': 'conflict',
  'task.dependencies-unmet': 'mismatch',
  'task.gated': 'awaiting-decision',
  'task.unknown': 'mismatch',
  'task.illegal-transition': 'mismatch',
  'task.changed-meanwhile': 'conflict',
  // A task that is in none of the states a new attempt can start from (enqueueDelegation).
  'task.running': 'mismatch',
  'task.verifying': 'mismatch',
  'task.completed': 'mismatch',
  'task.failed': 'mismatch',
  'task.blocked': 'mismatch',
  'task.skipped': 'mismatch',
  'task.cancelled': 'mismatch',
  'validate.unreadable': 'invalid-input',
  'verify.not-current': 'conflict',
  'worker.spawn-failed': 'worker-failure',
  // The user's own settings of an agent CLI Baton must carry into the attempt (Gemini CLI's) cannot be read.
  'worker.settings-unreadable': 'worker-failure',
  'worker.unknown': 'invalid-input',
  // A worker the run's frozen definitions do not hold, whose adoption a person rejected at a config_changed gate.
  'worker.not-frozen': 'invalid-input',
  'worker.not-launched': 'invalid-input',
  // A worker's program is not installed (or not executable): nothing is dispatched; `baton doctor` says more.
  'worker.missing': 'not-qualified',
  // A file Baton writes under .baton/ (or a folder above it) is a link or not a plain file: nothing is written.
  'workspace.link-refused': 'mismatch',
  // Resolve Conflict on an attempt whose worktree was removed (baton cleanup) or deleted by hand.
  'worktree.gone': 'mismatch',
  // The target could not be brought into a task's worktree for a reason other than a conflict (uncommitted changes).
  'worktree.unmergeable': 'mismatch',
} as const satisfies Record<string, ErrorKind>;

export type ErrorCode = keyof typeof ERROR_CODES;

export function isErrorCode(value: string): value is ErrorCode {
  return Object.hasOwn(ERROR_CODES, value);
}

/**
 * The one error type the engine throws on purpose. Branch on `code` (or `kind`), never on
 * the message; `BatonError.is(err, code)` only takes a code from ERROR_CODES.
 */
export class BatonError extends Error {
  override readonly name = 'BatonError';
  readonly kind: ErrorKind;

  constructor(
    /** Stable dotted code from ERROR_CODES, e.g. `store.schema-too-new`; its kind follows from it. */
    readonly code: ErrorCode,
    message: string,
    readonly issues: readonly Issue[] = [],
    /** Facts for a machine reader (the CLI's `--json` error carries them), e.g. a refused claim's reason. */
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
    this.kind = ERROR_CODES[code];
  }

  static is(value: unknown, code?: ErrorCode): value is BatonError {
    return value instanceof BatonError && (code === undefined || value.code === code);
  }
}
