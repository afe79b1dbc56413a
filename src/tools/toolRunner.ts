import { BatonError, readPlan, type Engine, type Gate } from '../engine/index';
import {
  gatesResult,
  parseChatToolInput,
  planInWorkspace,
  runsResult,
  taskIssuesResult,
  tasksResult,
  type ChatToolInput,
  type ChatToolName,
} from './chatTools';

// What each of Baton's chat tools does, once, for both hosts (docs/extension.md, "Chat tools"; docs/agents.md, "A
// person's MCP server"): the editor's language-model tools and `baton mcp --for-person`. The read tools are whole here
// (engine reads, results from chatTools.ts). An action tool's checks are here too — the gate named, of the right kind,
// the plan inside the folder — and the act itself is the host's (`ToolHost`): the editor decides a gate as its Gates
// view does (the views refreshed, the run driven on from the window), the MCP server as its process can.

/** At most this many runs, newest first, in baton_listRuns (each costs a read of its overview). */
export const LISTED_RUNS = 20;

/** The engine reads the tools make. */
export type ToolEngine = Pick<Engine, 'listRuns' | 'overview' | 'listGates' | 'getRun' | 'taskRecord' | 'now'>;

/** What deciding a gate came to: decided now, or decided before (by whom, when: `said`). */
export type DecideOutcome =
  | { readonly kind: 'decided'; readonly gate: Gate }
  | { readonly kind: 'already-decided'; readonly gate: Gate; readonly said: string };

/** What answering a question came to: answered now, or answered (or closed) before — `said`. */
export type AnswerOutcome =
  { readonly kind: 'answered'; readonly gate: Gate } | { readonly kind: 'too-late'; readonly said: string };

/** A tool's host: the engine it reads, and the acts it does its own way. A refusal it throws becomes one line. */
export interface ToolHost {
  readonly workspace: string;
  engine(): Promise<ToolEngine>;
  /** The runs this host coordinates (baton_listRuns' `drivenByThisWindow`). */
  drivenRuns(): readonly string[];
  /** Runs the plan (an absolute path inside the workspace, a `.md`): its active run, or a new one with `newRun`. */
  startRun(planPath: string, newRun: boolean): Promise<string>;
  decideGate(input: {
    gate: Gate;
    decision: 'approved' | 'rejected';
    note?: string;
    accept?: boolean;
  }): Promise<DecideOutcome>;
  answerQuestion(gate: Gate, answer: string): Promise<AnswerOutcome>;
  /** Stops a run that is running or stopping (checked here); the one-line notice. */
  stopRun(runId: string, mode: 'graceful' | 'immediate'): Promise<string>;
  /** A failure as one line (a BatonError's message; anything else said as unexpected). */
  describeError(err: unknown): string;
}

/** A tool's answer: one text, an error when the tool refused or failed (the MCP server's `isError`). */
export interface ToolAnswer {
  readonly text: string;
  readonly isError: boolean;
}

/** A refusal of a tool: its message is the tool's whole answer. */
export class ToolRefusal extends Error {
  override readonly name = 'ToolRefusal';
}

type ToolWork = { [N in ChatToolName]: (host: ToolHost, input: ChatToolInput<N>) => Promise<string> };

const WORK: ToolWork = {
  async baton_listRuns(host) {
    const e = await host.engine();
    const runs = (await e.listRuns()).slice(0, LISTED_RUNS);
    const overviews = await Promise.all(runs.map((run) => e.overview(run.id)));
    return runsResult(overviews, host.drivenRuns());
  },
  async baton_listTasks(host, input) {
    return tasksResult(await (await host.engine()).overview(input.runId));
  },
  async baton_listGates(host, input) {
    const e = await host.engine();
    const gates = await e.listGates({ status: 'open', ...(input.runId ? { runId: input.runId } : {}) });
    if (input.runId) await e.getRun(input.runId); // an unknown run is an error, not "no gate"
    const titles = new Map<string, { title: string }>();
    for (const runId of new Set(gates.map((g) => g.runId)))
      for (const task of (await e.overview(runId)).tasks) titles.set(`${runId}/${task.id}`, task);
    return gatesResult(gates, titles);
  },
  async baton_taskIssues(host, input) {
    const e = await host.engine();
    const view = await e.overview(input.runId);
    if (!view.tasks.some((t) => t.id === input.taskId))
      throw new ToolRefusal(
        `run ${view.run.id} has no task ${input.taskId} (its tasks: ${view.tasks.map((t) => t.id).join(', ')}).`,
      );
    const record = await e.taskRecord(view.run.id, input.taskId);
    return taskIssuesResult(view.run, input.taskId, record.ingestions);
  },
  async baton_startRun(host, input) {
    const path = planInWorkspace(host.workspace, input.plan);
    if (!path.ok) throw new ToolRefusal(path.error.replace(/^baton_startRun: /, ''));
    return host.startRun(path.value, Boolean(input.newRun));
  },
  async baton_decideGate(host, input) {
    const gate = await gateNamed(host, input.gateId);
    if (gate.kind === 'question')
      throw new ToolRefusal(`${gate.id} is a question from the agent: answer it with baton_answerQuestion.`);
    if (input.acceptResult !== undefined && gate.kind !== 'verification_failed')
      throw new ToolRefusal(`acceptResult applies to a verification_failed gate; ${gate.id} is a ${gate.kind} gate.`);
    const outcome = await host.decideGate({
      gate,
      decision: input.decision === 'approve' ? 'approved' : 'rejected',
      ...(input.note?.trim() ? { note: input.note.trim() } : {}),
      ...(input.acceptResult ? { accept: true } : {}),
    });
    if (outcome.kind === 'already-decided') return outcome.said;
    const g = outcome.gate;
    return `${g.id} ${g.status} by ${g.decidedBy ?? 'you'}${input.acceptResult ? ' (the result accepted as it is)' : ''}${g.note ? ` with the note “${g.note}”` : ''}.`;
  },
  async baton_answerQuestion(host, input) {
    const gate = await gateNamed(host, input.gateId);
    if (gate.kind !== 'question') throw new ToolRefusal(`${gate.id} is a ${gate.kind} gate: approve or reject it.`);
    const outcome = await host.answerQuestion(gate, input.answer.trim());
    if (outcome.kind === 'too-late') return outcome.said;
    return `${outcome.gate.id} answered by ${outcome.gate.decidedBy ?? 'you'}: “${outcome.gate.note ?? input.answer}”. ${outcome.gate.delegationId ?? 'The agent'} gets the answer.`;
  },
  async baton_stopRun(host, input) {
    const run = await (await host.engine()).getRun(input.runId);
    if (run.status !== 'running' && run.status !== 'stopping')
      throw new ToolRefusal(`Run ${run.id} is ${run.status}: Stop Run does not apply to it.`);
    return host.stopRun(run.id, input.mode);
  },
};

async function gateNamed(host: ToolHost, gateId: string): Promise<Gate> {
  const gate = (await (await host.engine()).listGates({})).find((g) => g.id === gateId);
  if (!gate) throw new ToolRefusal(`There is no gate ${gateId}.`);
  return gate;
}

/**
 * Runs one tool on its raw input: the input checked (a wrong one is refused in one line, nothing done), the tool's
 * work, and any refusal or failure turned into one line led by the tool's name — never a throw at the caller.
 */
export async function runBatonTool(host: ToolHost, name: ChatToolName, rawInput: unknown): Promise<ToolAnswer> {
  const parsed = parseChatToolInput(name, rawInput);
  if (!parsed.ok) return { text: parsed.error, isError: true };
  try {
    const work = WORK[name] as (host: ToolHost, input: unknown) => Promise<string>;
    return { text: await work(host, parsed.value), isError: false };
  } catch (err) {
    const message = err instanceof ToolRefusal ? err.message : host.describeError(err);
    return { text: `${name}: ${message.replace(/\s+/g, ' ').trim()}`, isError: true };
  }
}

/** The number of tasks of a plan, for a confirmation (undefined when it cannot be read now: the act says why). */
export function planTaskCount(workspace: string, plan: string): number | undefined {
  const path = planInWorkspace(workspace, plan);
  if (!path.ok) return undefined;
  try {
    return readPlan(workspace, path.value).parsed.tasks.length;
  } catch {
    return undefined;
  }
}

/** A failure as one line, for a host with no words of its own: an engine refusal by its message. */
export function engineErrorLine(err: unknown): string {
  if (BatonError.is(err)) return err.message;
  return `unexpected error: ${(err as Error)?.message ?? String(err)}`;
}
