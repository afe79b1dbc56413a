import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import {
  counted,
  questionOf,
  QUESTION_LIMITS,
  type Gate,
  type IngestionRecord,
  type RunOverview,
  type Task,
} from '../engine/index';
import { gateKindWords } from './gateWords';

// Baton's tools for a person's chat (docs/extension.md, "Chat tools"): what each takes, checked here with zod (the
// JSON schemas in package.json's `languageModelTools` are these schemas, test/unit/extension/model/chatTools.test.ts),
// what each returns, and what each asks before it acts. Host-free and shared by both hosts: the editor's language-model
// tools (src/extension/chatTools.ts) and `baton mcp --for-person` (src/mcp/workspaceServer.ts); toolRunner.ts runs
// them.

const runId = z.string().regex(/^R-\S+$/, 'a run id such as R-20260101-k3f9 (baton_listRuns lists them)');
const gateId = z.string().regex(/^G-\d+$/, 'a gate id such as G-3 (baton_listGates lists them)');
const taskId = z.string().min(1).max(200);

/** Each tool's input. Strict: a field not listed is refused by name, as the MCP server's tools do. */
export const CHAT_TOOL_INPUTS = {
  baton_listRuns: z.strictObject({}),
  baton_listTasks: z.strictObject({
    runId: runId.optional().describe('The run; the newest run when left out.'),
  }),
  baton_listGates: z.strictObject({
    runId: runId.optional().describe('Only this run’s gates; every run’s when left out.'),
  }),
  baton_taskIssues: z.strictObject({
    taskId: taskId.describe('The task id from the plan, e.g. T2.'),
    runId: runId.optional().describe('The run; the newest run when left out.'),
  }),
  baton_startRun: z.strictObject({
    plan: z
      .string()
      .min(1)
      .describe('The plan: a markdown file of baton-task blocks, relative to the workspace folder (e.g. plan.md).'),
    newRun: z
      .boolean()
      .optional()
      .describe('true: always a new run of the plan as it is now. Otherwise its active run continues, or one starts.'),
  }),
  baton_decideGate: z.strictObject({
    gateId: gateId.describe('The open gate to decide (not a question: baton_answerQuestion answers those).'),
    decision: z
      .enum(['approve', 'reject'])
      .describe('approve: the work the gate holds goes on. reject: it does not (a note says why).'),
    note: z.string().max(2000).optional().describe('Why: required to reject, kept with the decision.'),
    acceptResult: z
      .boolean()
      .optional()
      .describe('Only for a verification_failed gate being approved: true accepts the result as it is, false retries.'),
  }),
  baton_answerQuestion: z.strictObject({
    gateId: gateId.describe('The open question gate (kind question).'),
    answer: z
      .string()
      .min(1)
      .max(QUESTION_LIMITS.answer)
      .describe('The answer the agent gets: one of the question’s choices when it offers some.'),
  }),
  baton_stopRun: z.strictObject({
    runId: runId.describe('The running run to stop.'),
    mode: z
      .enum(['graceful', 'immediate'])
      .describe('graceful: start nothing new, let running attempts finish. immediate: end every worker process now.'),
  }),
} as const;

export type ChatToolName = keyof typeof CHAT_TOOL_INPUTS;
export type ChatToolInput<N extends ChatToolName> = z.infer<(typeof CHAT_TOOL_INPUTS)[N]>;

export const CHAT_TOOL_NAMES = Object.keys(CHAT_TOOL_INPUTS) as ChatToolName[];

/** The tools that change something, and so ask the person first. */
export const CHAT_ACTION_TOOLS: readonly ChatToolName[] = [
  'baton_startRun',
  'baton_decideGate',
  'baton_answerQuestion',
  'baton_stopRun',
];

/** The JSON schema of a tool's input, as package.json declares it (what a language model is shown). */
export function chatToolJsonSchema(name: ChatToolName): Record<string, unknown> {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(CHAT_TOOL_INPUTS[name]) as Record<string, unknown>;
  return schema;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/**
 * A tool's input, checked: the value, or one line that says what is wrong with it — the tool's whole result, never a
 * stack. Checks zod cannot say in a JSON schema (a rejection needs a note) are here too.
 */
export function parseChatToolInput<N extends ChatToolName>(name: N, input: unknown): Parsed<ChatToolInput<N>> {
  const parsed = CHAT_TOOL_INPUTS[name].safeParse(input ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const at = issue.path.length > 0 ? issue.path.join('.') : 'input';
      return issue.code === 'unrecognized_keys'
        ? `${issue.keys.join(', ')}: not an input of this tool`
        : `${at}: ${issue.message}`;
    });
    return { ok: false, error: `${name}: invalid input — ${oneLine(problems.join('; '), 400)}.` };
  }
  const value = parsed.data as ChatToolInput<N>;
  if (name === 'baton_decideGate') {
    const d = value as ChatToolInput<'baton_decideGate'>;
    if (d.decision === 'reject' && !d.note?.trim())
      return { ok: false, error: `${name}: invalid input — note: rejecting a gate needs a note that says why.` };
    if (d.decision === 'reject' && d.acceptResult !== undefined)
      return { ok: false, error: `${name}: invalid input — acceptResult: only an approval accepts a result.` };
  }
  if (name === 'baton_answerQuestion' && !(value as ChatToolInput<'baton_answerQuestion'>).answer.trim())
    return { ok: false, error: `${name}: invalid input — answer: an answer has some text.` };
  return { ok: true, value };
}

/**
 * The plan a tool names, as a path inside the workspace folder; one outside it is refused (Baton runs only the
 * workspace's plans).
 */
export function planInWorkspace(workspace: string, plan: string): Parsed<string> {
  const full = resolve(workspace, plan);
  const rel = relative(workspace, full);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel))
    return { ok: false, error: `baton_startRun: ${plan} is not a file inside the workspace folder.` };
  if (!/\.md$/i.test(full))
    return { ok: false, error: `baton_startRun: ${plan} is not a plan: a plan is a markdown (.md) file.` };
  return { ok: true, value: full };
}

// ── results (read tools): JSON a model reads, with a one-line summary first ────────────────────────

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

/** The tool result of a read tool: a JSON document. */
export function jsonResult(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v === undefined ? undefined : v), 2);
}

function countBy<T extends string>(values: readonly T[]): Partial<Record<T, number>> {
  const counts: Partial<Record<T, number>> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  return counts;
}

/** baton_listRuns: every run, newest first, with its task counts and open gates. */
export function runsResult(overviews: readonly RunOverview[], drivenHere: readonly string[]): string {
  const runs = overviews.map(({ run, tasks, gates }) => {
    const completed = tasks.filter((t) => t.status === 'completed').length;
    const open = gates.filter((g) => g.status === 'open').length;
    return {
      id: run.id,
      plan: run.planPath,
      status: run.status,
      ...(run.stopMode ? { stopMode: run.stopMode } : {}),
      ...(run.supersededBy ? { supersededBy: run.supersededBy } : {}),
      tasks: { total: tasks.length, completed, byStatus: countBy(tasks.map((t) => t.status)) },
      openGates: open,
      drivenByThisWindow: drivenHere.includes(run.id),
      createdAt: iso(run.createdAt),
      updatedAt: iso(run.updatedAt),
    };
  });
  const summary =
    runs.length === 0
      ? 'No Baton run in this workspace yet.'
      : `${counted(runs.length, 'run')}: ${runs
          .slice(0, 5)
          .map((r) => `${r.id} ${r.status} (${r.tasks.completed}/${r.tasks.total} tasks completed)`)
          .join('; ')}${runs.length > 5 ? '; …' : ''}.`;
  return jsonResult({ summary, runs });
}

/** baton_listTasks: a run's tasks with their latest attempt and the gate each waits at. */
export function tasksResult(view: RunOverview): string {
  const tasks = view.tasks.map((task) => {
    const attempts = view.delegations.filter((d) => d.taskId === task.id);
    const latest = attempts.at(-1);
    const gate = view.gates.find((g) => g.taskId === task.id && g.status === 'open');
    return {
      id: task.id,
      title: task.title,
      status: task.status,
      ...(task.statusReason ? { reason: task.statusReason } : {}),
      agent: task.agent,
      ...(task.worker ? { worker: task.worker } : {}),
      depends: task.depends,
      ...(task.risk.length > 0 ? { risk: task.risk } : {}),
      attempts: attempts.length,
      ...(latest
        ? {
            latestAttempt: {
              id: latest.id,
              status: latest.status,
              ...(latest.resultStatus ? { result: latest.resultStatus } : {}),
              ...(latest.reason ? { reason: latest.reason } : {}),
              ...(latest.artifactPath ? { artifact: latest.artifactPath } : {}),
            },
          }
        : {}),
      ...(gate ? { waitsAtGate: gate.id } : {}),
    };
  });
  const counts = Object.entries(countBy(view.tasks.map((t) => t.status)))
    .map(([status, n]) => `${n} ${status}`)
    .join(', ');
  return jsonResult({
    summary: `Run ${view.run.id} of ${view.run.planPath} is ${view.run.status}: ${counted(tasks.length, 'task')}${counts ? ` (${counts})` : ''}.`,
    run: { id: view.run.id, plan: view.run.planPath, status: view.run.status },
    tasks,
  });
}

/** baton_listGates: the open gates, oldest first, each with what it takes (a decision, or an answer). */
export function gatesResult(gates: readonly Gate[], tasks: ReadonlyMap<string, Pick<Task, 'title'>>): string {
  const open = gates.filter((g) => g.status === 'open');
  const list = open.map((g) => {
    const question = questionOf(g);
    return {
      id: g.id,
      runId: g.runId,
      kind: g.kind,
      ...(g.taskId ? { taskId: g.taskId } : {}),
      ...(g.taskId && tasks.get(`${g.runId}/${g.taskId}`)
        ? { taskTitle: tasks.get(`${g.runId}/${g.taskId}`)!.title }
        : {}),
      ...(g.delegationId ? { delegationId: g.delegationId } : {}),
      reason: g.reason,
      openedAt: iso(g.openedAt),
      ...(question ? { question: question.text, ...(question.choices ? { choices: question.choices } : {}) } : {}),
      takes: question ? 'an answer (baton_answerQuestion)' : 'a decision (baton_decideGate: approve or reject)',
    };
  });
  const summary =
    list.length === 0
      ? 'No gate is waiting for a decision.'
      : `${counted(list.length, 'open gate')}: ${list
          .map((g) => `${g.id} ${gateKindWords(g.kind)}${g.taskId ? ` of ${g.taskId}` : ''}`)
          .join('; ')}.`;
  return jsonResult({ summary, gates: list });
}

/**
 * baton_taskIssues: the issues of the task's last result — its latest ingestion — each with the file and the 1-based
 * line (and column) it is at, as the editor's Problems show them.
 */
export function taskIssuesResult(
  run: { id: string; planPath: string },
  taskId: string,
  ingestions: readonly IngestionRecord[],
): string {
  const last = ingestions.at(-1);
  if (!last)
    return jsonResult({
      summary: `${taskId} of run ${run.id} has no result ingested yet: no issues.`,
      run: run.id,
      task: taskId,
      issues: [],
    });
  const issues = last.issues.map((i) => ({
    code: i.code,
    severity: i.severity,
    message: i.message,
    recommendation: i.recommendation,
    file: i.file ?? last.artifactPath,
    ...(i.range ? { line: i.range.start.line, column: i.range.start.column } : {}),
    ...(i.field ? { field: i.field } : {}),
  }));
  const verdict = last.accepted ? 'accepted' : 'rejected';
  const where = issues
    .slice(0, 3)
    .map((i) => `${i.file}${i.line !== undefined ? `:${i.line}` : ''} ${i.code}`)
    .join('; ');
  return jsonResult({
    summary: `${taskId}'s last result (${last.delegationId}, ${last.artifactPath}) was ${verdict}${last.resultStatus ? ` (${last.resultStatus})` : ''} with ${counted(issues.length, 'issue')}${where ? `: ${where}${issues.length > 3 ? '; …' : ''}` : ''}.`,
    run: run.id,
    task: taskId,
    result: {
      delegationId: last.delegationId,
      artifact: last.artifactPath,
      accepted: last.accepted,
      ...(last.resultStatus ? { status: last.resultStatus } : {}),
      ingestedAt: iso(last.createdAt),
    },
    issues,
  });
}

// ── confirmations (action tools) ───────────────────────────────────────────────────────────────

/** What VS Code shows before an action tool runs, with Continue and Cancel. Plain text. */
export interface ChatConfirmation {
  readonly title: string;
  readonly message: string;
  /** The progress line while it runs. */
  readonly invocationMessage: string;
}

export function startRunConfirmation(input: ChatToolInput<'baton_startRun'>, planTasks?: number): ChatConfirmation {
  const plan = input.plan;
  const tasks = planTasks !== undefined ? ` (${counted(planTasks, 'task')})` : '';
  return {
    title: input.newRun ? 'Start a new Baton run?' : 'Start a Baton run?',
    message: input.newRun
      ? `Start a new run of ${plan}${tasks} as it is now, and coordinate it from this window: its workers (the programs .baton/config.json names) start in this workspace.`
      : `Run ${plan}${tasks}: its active run continues, or a new one starts, coordinated from this window; its workers (the programs .baton/config.json names) start in this workspace.`,
    invocationMessage: `Starting a run of ${plan}`,
  };
}

/** `gate` as found when the tool is prepared (undefined: no such gate; the invocation says so, changes nothing). */
export function decideGateConfirmation(
  input: ChatToolInput<'baton_decideGate'>,
  gate: Gate | undefined,
): ChatConfirmation {
  const verb = input.decision === 'approve' ? 'Approve' : 'Reject';
  const what = gate
    ? `${gate.id} (${gateKindWords(gate.kind)}${gate.taskId ? ` of ${gate.taskId}` : ''}, run ${gate.runId}): ${oneLine(gate.reason, 400).replace(/\.$/, '')}`
    : `${input.gateId} (Baton finds no such gate now: nothing would change)`;
  const consequence =
    input.decision === 'reject'
      ? ` With the note: “${oneLine(input.note ?? '', 400)}”.`
      : gate?.kind === 'verification_failed'
        ? input.acceptResult
          ? ' The result is accepted as it is, although its verification failed.'
          : ' The task is retried (a new attempt).'
        : '';
  const closed = gate && gate.status !== 'open' ? ` It is already ${gate.status}: nothing would change.` : '';
  return {
    title: `${verb} gate ${input.gateId}?`,
    message: `${verb} ${what}.${consequence}${closed}`,
    invocationMessage: `${input.decision === 'approve' ? 'Approving' : 'Rejecting'} ${input.gateId}`,
  };
}

export function answerQuestionConfirmation(
  input: ChatToolInput<'baton_answerQuestion'>,
  gate: Gate | undefined,
): ChatConfirmation {
  const question = gate ? questionOf(gate) : undefined;
  const asks = question
    ? `${gate!.delegationId ?? gate!.taskId ?? 'The agent'} asks: “${oneLine(question.text, 400)}”`
    : `${input.gateId} (Baton finds no open question by that id now: nothing would change)`;
  return {
    title: `Answer ${input.gateId}?`,
    message: `${asks}. Answer: “${oneLine(input.answer, 400)}”. The agent gets this answer; the first answer wins.`,
    invocationMessage: `Answering ${input.gateId}`,
  };
}

export function stopRunConfirmation(input: ChatToolInput<'baton_stopRun'>): ChatConfirmation {
  return {
    title: input.mode === 'immediate' ? `Stop ${input.runId} immediately?` : `Stop ${input.runId}?`,
    message:
      input.mode === 'immediate'
        ? `Stop run ${input.runId} now: every worker process of the run is ended, and its running attempts are cancelled. Resume continues the run later.`
        : `Stop run ${input.runId} gracefully: nothing new starts, the attempts running now finish, then the run pauses. Resume continues it.`,
    invocationMessage: `Stopping ${input.runId} (${input.mode})`,
  };
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
