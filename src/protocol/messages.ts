/**
 * Webview ⇄ host messages of the dashboard (DESIGN §6, docs/extension.md "Dashboard
 * protocol"): one discriminated union per direction, validated with zod on receipt on both
 * sides. Everything in here is data: the webview renders every string as text.
 *
 * The conversation: the webview posts `ready`; the host answers with a full `snapshot`
 * (again on every `ready`, e.g. after the panel was hidden and shown), then small `delta`s,
 * batched `heartbeats` and `clock` ticks. Every host message carries the host's shared
 * `now` — the same instant the sidebar's views use — and the webview shows every age and
 * duration as of that `now`, so both agree. A message that does not parse is rejected and
 * logged, never acted on.
 */
import * as z from 'zod';

export const PROTOCOL_VERSION = 1;

const id = z.string().min(1).max(200);
const text = z.string().max(100_000);
const time = z.number().finite().nonnegative();
const count = z.number().int().nonnegative();

/** What agents spent (src/protocol/spend.ts): tokens in and out together, and US dollars when known. */
export const spendSchema = z
  .object({ tokens: z.number().finite().nonnegative(), costUsd: z.number().finite().nonnegative().optional() })
  .strict();

export const taskViewSchema = z
  .object({
    id,
    title: text,
    status: id,
    reason: text.optional(),
    /** Attempts so far (0: none yet). */
    attempt: count,
    delegationId: id.optional(),
    worker: id.optional(),
    isolation: id.optional(),
    /** Its run time (src/protocol/time.ts `ShownRunTime`): all its attempts', without waits at gates. */
    ranMs: count.optional(),
    runningSince: z.number().finite().optional(),
    resultStatus: id.optional(),
    /** The task's line in the plan (1-based). */
    line: count,
    /** What its agents spent, all its attempts together (absent where no agent ran). */
    spend: spendSchema.optional(),
  })
  .strict();
export type TaskView = z.infer<typeof taskViewSchema>;

export const runtimeViewSchema = z
  .object({
    id,
    delegationId: id,
    taskId: id,
    status: id,
    leaseMs: count,
    leaseExpiresAt: time,
    lastHeartbeatAt: time.optional(),
    heartbeatCount: count,
    progress: text.optional(),
    /** The liveness facts (src/protocol/liveness.ts): the worker's own last beat, its process, its holder. */
    workerBeatAt: time.optional(),
    pid: count.optional(),
    processStartedAt: time.optional(),
    processGone: z.boolean().optional(),
    holder: text.optional(),
    /** An agent's attempt: what it spent so far. */
    spend: spendSchema.optional(),
  })
  .strict();
export type RuntimeView = z.infer<typeof runtimeViewSchema>;

export const gateViewSchema = z
  .object({
    id,
    kind: id,
    status: z.enum(['open', 'approved', 'rejected', 'answered']),
    taskId: id.optional(),
    delegationId: id.optional(),
    reason: text,
    risk: z.array(id).max(100),
    openedAt: time,
    decidedAt: time.optional(),
    decidedBy: text.optional(),
    note: text.optional(),
  })
  .strict();
export type GateView = z.infer<typeof gateViewSchema>;

export const eventViewSchema = z.object({ seq: count, at: time, type: id, text }).strict();
export type EventView = z.infer<typeof eventViewSchema>;

export const issueViewSchema = z
  .object({
    ingestionId: id,
    delegationId: id,
    artifactPath: text,
    code: id,
    severity: z.enum(['error', 'warning']),
    message: text,
    recommendation: text,
    /** 1-based position in the artifact, when the issue has one. */
    line: count.optional(),
    column: count.optional(),
  })
  .strict();
export type IssueView = z.infer<typeof issueViewSchema>;

export const runHeaderSchema = z
  .object({
    id,
    planPath: text,
    status: id,
    createdAt: time,
    /** A finished run: when it ended (its elapsed time stops there). */
    endedAt: time.optional(),
    /** A replanned run: the run that took its place (the dashboard links to it). */
    supersededBy: id.optional(),
    maxConcurrency: count,
    /** Attempts in flight now (slots in use of maxConcurrency). */
    slotsInUse: count,
    /** Driven by this window (Stop applies here), or by another process. */
    coordinatedHere: z.boolean(),
    /**
     * What the run is doing, as the Runs view and the status bar say it (viewRows.ts,
     * runActivity): running only while a live coordinator holds it; otherwise what it waits for.
     */
    activity: z
      .object({
        kind: z.enum(['running', 'stopping', 'waiting-decision', 'stopped', 'waiting-coordinator', 'ended']),
        label: text,
        detail: text,
        /** Resume is what moves it on. */
        canResume: z.boolean(),
        /** Stop applies (as in the Runs view): not on a run that is stopped, waits for a decision, or ended. */
        canStop: z.boolean(),
      })
      .strict(),
    counts: z
      .object({
        total: count,
        done: count,
        running: count,
        waiting: count,
        failed: count,
        /** Could not start: something it depends on did not complete. */
        blocked: count,
        cancelled: count,
        gated: count,
      })
      .strict(),
    /** What the run's agents spent so far (absent where no agent ran). */
    spend: spendSchema.optional(),
  })
  .strict();
export type RunHeader = z.infer<typeof runHeaderSchema>;

/** For the charts: when tasks finished, and each attempt's [start, end] (end absent while it runs). */
export const seriesSchema = z
  .object({ finished: z.array(time).max(200_000), spans: z.array(z.tuple([time, time.nullable()])).max(200_000) })
  .strict();
export type Series = z.infer<typeof seriesSchema>;

export const beatSchema = z
  .object({
    runtimeId: id,
    heartbeatCount: count,
    lastHeartbeatAt: time.optional(),
    leaseExpiresAt: time,
    progress: text.optional(),
    workerBeatAt: time.optional(),
    /** An agent's attempt: what it spent as of this beat. */
    spend: spendSchema.optional(),
  })
  .strict();
export type Beat = z.infer<typeof beatSchema>;

export const snapshotSchema = z
  .object({
    type: z.literal('snapshot'),
    protocolVersion: z.literal(PROTOCOL_VERSION),
    now: time,
    run: runHeaderSchema.nullable(),
    tasks: z.array(taskViewSchema).max(200_000),
    runtimes: z.array(runtimeViewSchema).max(10_000),
    gates: z.array(gateViewSchema).max(100_000),
    /** Newest first. */
    events: z.array(eventViewSchema).max(10_000),
    issues: z.array(issueViewSchema).max(100_000),
    series: seriesSchema,
  })
  .strict();
export type Snapshot = z.infer<typeof snapshotSchema>;

export const deltaSchema = z
  .object({
    type: z.literal('delta'),
    now: time,
    run: runHeaderSchema.optional(),
    /** Tasks, runtimes and gates that changed or appeared (by id). */
    tasks: z.array(taskViewSchema).max(200_000).optional(),
    runtimes: z.array(runtimeViewSchema).max(10_000).optional(),
    removedRuntimes: z.array(id).max(10_000).optional(),
    gates: z.array(gateViewSchema).max(100_000).optional(),
    /** New events, newest first. */
    events: z.array(eventViewSchema).max(10_000).optional(),
    /** All ingestion issues of the run, when they changed. */
    issues: z.array(issueViewSchema).max(100_000).optional(),
    series: seriesSchema.optional(),
  })
  .strict();
export type Delta = z.infer<typeof deltaSchema>;

export const hostMessageSchema = z.discriminatedUnion('type', [
  snapshotSchema,
  deltaSchema,
  z.object({ type: z.literal('heartbeats'), now: time, beats: z.array(beatSchema).max(10_000) }).strict(),
  /** The host's shared clock moved on (about once a second): ages and durations are shown as of `now`. */
  z.object({ type: z.literal('clock'), now: time }).strict(),
  z
    .object({
      type: z.literal('taskDetails'),
      taskId: id,
      delegations: z
        .array(
          z
            .object({
              id,
              status: id,
              attempt: count,
              reason: text.optional(),
              resultStatus: id.optional(),
              startedAt: time.optional(),
              finishedAt: time.optional(),
            })
            .strict(),
        )
        .max(1000),
      receipts: z
        .array(
          z
            .object({
              delegationId: id,
              command: z.array(text).max(200),
              exitCode: z.number().int().nullable(),
              durationMs: count,
            })
            .strict(),
        )
        .max(1000),
      artifact: z.object({ path: text, text }).strict().optional(),
      logTail: text,
      issues: z.array(issueViewSchema).max(10_000),
      /** The review comments sent to its agent (docs/extension.md, "Review comments"), oldest first. */
      reviews: z
        .array(
          z
            .object({
              followUpId: id,
              by: text,
              sentAt: time,
              reviewed: id.optional(),
              /** The attempt that carried it to the agent, and how that attempt ended so far. */
              deliveredTo: id.optional(),
              outcome: text.optional(),
              comments: z
                .array(z.object({ path: text, line: count, endLine: count.optional(), quote: text, text }).strict())
                .max(1000),
            })
            .strict(),
        )
        .max(1000)
        .optional(),
    })
    .strict(),
  z.object({ type: z.literal('notice'), level: z.enum(['info', 'error']), message: text }).strict(),
]);
export type HostMessage = z.infer<typeof hostMessageSchema>;
export type TaskDetails = Extract<HostMessage, { type: 'taskDetails' }>;

const note = z.string().max(2000);

export const webviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready'), protocolVersion: z.literal(PROTOCOL_VERSION) }).strict(),
  z.object({ type: z.literal('approveGate'), gateId: id, note: note.optional() }).strict(),
  z.object({ type: z.literal('rejectGate'), gateId: id, note: note.trim().min(1) }).strict(),
  // A question gate is answered, not approved: the host asks for the answer (its quick pick or input box).
  z.object({ type: z.literal('answerQuestion'), gateId: id }).strict(),
  // An integration conflict: the host offers its two ways (Resolve Conflict…: the merge editor, or the agent).
  z.object({ type: z.literal('resolveConflict'), gateId: id }).strict(),
  z.object({ type: z.literal('stopRun'), mode: z.enum(['graceful', 'immediate']) }).strict(),
  z.object({ type: z.literal('resumeRun') }).strict(),
  /** Show another run in this panel: a replanned run's link to the run that took its place. */
  z.object({ type: z.literal('showRun'), runId: id }).strict(),
  z
    .object({
      type: z.literal('openArtifact'),
      path: z.string().min(1).max(4096),
      line: count.min(1).optional(),
      column: count.min(1).optional(),
    })
    .strict(),
  z.object({ type: z.literal('requestTaskDetails'), taskId: id }).strict(),
  /** An attempt of the shown run: open its diff, or follow its output (docs/extension.md). */
  z.object({ type: z.literal('showChanges'), delegationId: id }).strict(),
  z.object({ type: z.literal('showOutput'), delegationId: id }).strict(),
]);
export type WebviewMessage = z.infer<typeof webviewMessageSchema>;

export type Parsed<T> = { ok: true; message: T } | { ok: false; error: string };

function parseWith<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, message: result.data };
  const first = result.error.issues[0];
  const where = first?.path.length ? ` at ${first.path.join('.')}` : '';
  // `type` may be anything a hostile sender put there, even an object whose toString is not a function.
  const type =
    typeof value === 'object' && value !== null && 'type' in value ? (value as { type: unknown }).type : undefined;
  const kind =
    typeof type === 'string' ? type.slice(0, 40) : type === undefined ? typeof value : `${typeof type}-typed`;
  return { ok: false, error: `rejected a ${kind} message: ${first?.message ?? 'invalid'}${where}` };
}

/** The webview's check of what the host sent. */
export function parseHostMessage(value: unknown): Parsed<HostMessage> {
  return parseWith(hostMessageSchema, value);
}

/** The host's check of what the webview sent. */
export function parseWebviewMessage(value: unknown): Parsed<WebviewMessage> {
  return parseWith(webviewMessageSchema, value);
}
