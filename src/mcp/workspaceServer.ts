import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { BatonError, Engine, hasErrors, isFinishedRun, readPlan, type Run } from '../engine/index';
import { CHAT_ACTION_TOOLS, CHAT_TOOL_NAMES, chatToolJsonSchema, type ChatToolName } from '../tools/chatTools';
import { describeDecision } from '../tools/gateWords';
import { stopNotice } from '../tools/stopWords';
import { engineErrorLine, runBatonTool, ToolRefusal, type ToolHost } from '../tools/toolRunner';

/** What the server asks of the engine: the tools' reads, and the acts of its host. */
export type WorkspaceEngine = Pick<
  Engine,
  | 'listRuns'
  | 'overview'
  | 'listGates'
  | 'getRun'
  | 'taskRecord'
  | 'now'
  | 'runForPlan'
  | 'coordinate'
  | 'decideGate'
  | 'answerQuestion'
  | 'requestStop'
>;

/** A coordinator this server holds (what `coordinate` hands over). */
type Coordinator = Extract<Awaited<ReturnType<Engine['coordinate']>>, { coordinator: unknown }>['coordinator'];

export interface WorkspaceServerOptions {
  /** The workspace folder (the engine's). */
  workspace: string;
  /** The server's version, told in the MCP handshake. */
  version: string;
  /** Where the server says what no caller is told (a coordinator's lines). Never stdout. */
  log?: (line: string) => void;
}

export interface WorkspaceServer {
  server: Server;
  /** The runs this server coordinates now. */
  drivenRuns(): readonly string[];
  /**
   * Hands every run this server drives over, its workers running, as a closing editor window does: the next `baton
   * resume`, window or server takes it at once and adopts them (a chat that closes does not stop a person's run).
   */
  close(why: string): Promise<void>;
}

const INSTRUCTIONS = [
  "Baton's tools for the person working in this workspace: the same tools as Baton's chat tools in VS Code.",
  'Read: baton_listRuns, baton_listTasks, baton_listGates, baton_taskIssues. Each returns JSON with a one-line summary first.',
  'Act: baton_startRun, baton_decideGate, baton_answerQuestion, baton_stopRun. They change what Baton does: say what you are about to do and let the person confirm (your client asks before each call).',
  'A run this server starts, or one a decision lets go on while nobody coordinates it, is coordinated by this server while it runs.',
].join('\n');

/** Each tool's title and description as an MCP client shows them (package.json's say "this VS Code window"). */
const TOOL_TEXTS: Record<ChatToolName, { title: string; description: string }> = {
  baton_listRuns: {
    title: 'List Baton runs',
    description:
      "Lists the Baton runs of the workspace, newest first (at most 20): each run's id, plan file, status (running, paused, stopping, completed, failed, blocked, cancelled, superseded), its tasks counted by status, its number of open gates, and whether this server coordinates it (drivenByThisWindow). Use it to find a run id for the other Baton tools.",
  },
  baton_listTasks: {
    title: 'List the tasks of a Baton run',
    description:
      "Lists the tasks of one Baton run (the newest run when runId is left out): each task's id, title, status and reason, agent, dependencies, risk tags, number of attempts, its latest attempt (delegation id, status, result PASS/FAIL/BLOCKED, artifact path) and the open gate it waits at, if any.",
  },
  baton_listGates: {
    title: 'List open Baton gates',
    description:
      "Lists the open gates of the workspace's Baton runs (or of one run): decisions a person must take before work goes on. Each gate has an id (G-n), its run, kind (risk_approval, ingestion_failed, verification_failed, integration_conflict, question, ...), task, reason, and what it takes: a decision (baton_decideGate) or, for a question from an agent, an answer (baton_answerQuestion, with the question and its choices).",
  },
  baton_taskIssues: {
    title: "Issues of a Baton task's result",
    description:
      "Returns the issues of a Baton task's last ingested result (its result artifact, checked against the baton-result contract): whether it was accepted, its status, and each issue's code, severity, message, recommendation, file and 1-based line and column. Use it to explain or fix why a task's result was rejected.",
  },
  baton_startRun: {
    title: 'Start a Baton run',
    description:
      "Starts a Baton run of a plan file (markdown with baton-task blocks, path relative to the workspace folder) and coordinates it from this server: the workers the config names start processes in the workspace. By default the plan's active run continues, or a new run starts; newRun: true always starts a new run. Ask the person first.",
  },
  baton_decideGate: {
    title: 'Approve or reject a Baton gate',
    description:
      'Decides an open Baton gate (not a question): approve lets the held work go on, reject stops it and needs a note saying why. For a verification_failed gate, acceptResult: true accepts the result as it is, otherwise approving retries the task. Ask the person first. A gate decided meanwhile changes nothing and the result says who decided it.',
  },
  baton_answerQuestion: {
    title: "Answer an agent's question",
    description:
      'Answers an open question gate (kind question) that an agent asked through Baton: the answer goes back to the waiting agent. When the question offers choices the answer must be one of them. The first answer wins. Ask the person first.',
  },
  baton_stopRun: {
    title: 'Stop a Baton run',
    description:
      'Stops a running Baton run: graceful starts nothing new and lets the running attempts finish; immediate ends every worker process of the run now and cancels its running attempts. Resume continues the run later. Ask the person first.',
  },
};

/**
 * MCP tool annotations (hints a client uses to decide whether to ask before a call — MCP has no confirmation the
 * server could hold): a read tool is read-only; an action tool is not, and the two that end work (a rejection, a stop)
 * are destructive. Nothing here is open-world: every tool stays in this workspace's store.
 */
function annotations(name: ChatToolName): NonNullable<Tool['annotations']> {
  if (!CHAT_ACTION_TOOLS.includes(name))
    return { title: TOOL_TEXTS[name].title, readOnlyHint: true, idempotentHint: true, openWorldHint: false };
  return {
    title: TOOL_TEXTS[name].title,
    readOnlyHint: false,
    destructiveHint: name === 'baton_decideGate' || name === 'baton_stopRun',
    idempotentHint: name !== 'baton_startRun',
    openWorldHint: false,
  };
}

/** The tools as `tools/list` gives them: the chat tools' names and input schemas. */
export function workspaceTools(): Tool[] {
  return CHAT_TOOL_NAMES.map((name) => ({
    name,
    title: TOOL_TEXTS[name].title,
    description: TOOL_TEXTS[name].description,
    inputSchema: chatToolJsonSchema(name) as Tool['inputSchema'],
    annotations: annotations(name),
  }));
}

/**
 * Baton's MCP server for a person (`baton mcp --for-person`, docs/extension.md "Chat tools"): the chat tools over MCP,
 * run by the same code (src/tools/toolRunner.ts), with this process as their host. The SDK's low-level Server, not
 * McpServer: McpServer checks a call's arguments itself and answers a wrong one with the validator's report; here
 * the chat tools' own check answers it, in the one line the editor's tools give.
 */
export function createWorkspaceServer(
  openEngine: () => Promise<WorkspaceEngine>,
  options: WorkspaceServerOptions,
): WorkspaceServer {
  const log = options.log ?? (() => undefined);
  const driving = new Map<string, Coordinator>();

  /** Coordinates the run from this process, in the background; false when another process drives it. */
  async function drive(run: Run): Promise<boolean> {
    if (driving.has(run.id)) return true;
    const taken = await (await openEngine()).coordinate({ runId: run.id, log: (line) => log(`[${run.id}] ${line}`) });
    if ('heldBy' in taken) {
      log(`baton mcp: ${run.id} is driven by ${taken.heldBy.holder} (${taken.why}); not driving it here.`);
      return false;
    }
    driving.set(run.id, taken.coordinator);
    void taken.coordinator
      .run()
      .then((outcome) => log(`baton mcp: ${run.id} ${outcome.kind}.`))
      .catch((err: unknown) => log(`baton mcp: the coordinator of ${run.id} stopped: ${(err as Error).message}`))
      .finally(() => {
        if (driving.get(run.id) === taken.coordinator) driving.delete(run.id);
      });
    return true;
  }

  /** After a decision: a running run nobody drives goes on, here (as the editor window does). */
  async function continueIfReleased(runId: string): Promise<void> {
    if (driving.has(runId)) return;
    const run = await (await openEngine()).getRun(runId);
    if (run.status !== 'running') return;
    await drive(run).catch((err: unknown) => log(`baton mcp: ${runId} was not driven on: ${engineErrorLine(err)}`));
  }

  const host: ToolHost = {
    workspace: options.workspace,
    engine: openEngine,
    drivenRuns: () => [...driving.keys()],
    async startRun(planPath, newRun) {
      Engine.refuseUnknownWorkersForPlan({ workspace: options.workspace, planPath });
      const plan = readPlan(options.workspace, planPath);
      if (hasErrors(plan.parsed.issues))
        throw new ToolRefusal(
          `${plan.path} has errors (baton validate ${plan.path} lists them); fix them to start a run.`,
        );
      let opened: { run: Run; verb: string };
      try {
        const { run, created } = await (await openEngine()).runForPlan(planPath, { fresh: newRun });
        opened = { run, verb: newRun ? 'started a new' : created ? 'started' : 'continues' };
      } catch (err) {
        if (!BatonError.is(err, 'run.plan-changed')) throw err;
        const active = (await (await openEngine()).listRuns()).find(
          (r) => r.planPath === plan.path && !isFinishedRun(r.status),
        );
        throw new ToolRefusal(
          `${plan.path} changed since run ${active?.id ?? ''} started from it: ask for a new run of the plan as it is now (newRun: true), or replan ${active?.id ?? 'that run'} (baton replan; its completed tasks carry over).`,
        );
      }
      return (await drive(opened.run))
        ? `Baton ${opened.verb} run ${opened.run.id} of ${opened.run.planPath}.`
        : `Run ${opened.run.id} is already driven by another window or process; this server shows it.`;
    },
    async decideGate({ gate, decision, note, accept }) {
      const wanted = decision;
      let outcome: Awaited<ReturnType<Engine['decideGate']>>;
      try {
        outcome = await (
          await openEngine()
        ).decideGate({
          gateId: gate.id,
          decision,
          ...(note ? { note } : {}),
          ...(accept ? { accept } : {}),
        });
      } catch (err) {
        if (!BatonError.is(err, 'gate.already-decided')) throw err;
        const now = (await (await openEngine()).listGates({ runId: gate.runId })).find((g) => g.id === gate.id);
        if (!now || now.status === 'open') throw err;
        outcome = { gate: now, alreadyDecided: true };
      }
      if (outcome.alreadyDecided) {
        if (wanted === 'approved' && outcome.gate.status === 'approved') await continueIfReleased(gate.runId);
        return {
          kind: 'already-decided',
          gate: outcome.gate,
          said: describeDecision(outcome.gate, (await openEngine()).now()),
        };
      }
      log(`baton mcp: ${gate.id} ${decision}${accept ? ' (accepted)' : ''} by ${outcome.gate.decidedBy}`);
      // Either way: a rejection releases work too (an isolation gate's other tasks, a task's siblings).
      await continueIfReleased(gate.runId);
      return { kind: 'decided', gate: outcome.gate };
    },
    async answerQuestion(gate, answer) {
      if (gate.status !== 'open')
        return {
          kind: 'too-late',
          said:
            gate.status === 'answered'
              ? `${gate.id} was already answered by ${gate.decidedBy ?? 'someone'}: ${gate.note ?? ''}`
              : `${gate.id} is closed (${gate.note ?? gate.status}); nobody waits for an answer.`,
        };
      try {
        return { kind: 'answered', gate: await (await openEngine()).answerQuestion({ gateId: gate.id, answer }) };
      } catch (err) {
        if (!BatonError.is(err, 'gate.already-decided')) throw err;
        return { kind: 'too-late', said: err.message };
      }
    },
    async stopRun(runId, mode) {
      const outcome = await (await openEngine()).requestStop({ runId, mode, by: 'baton mcp' });
      return stopNotice(runId, outcome).message;
    },
    describeError(err) {
      if (!BatonError.is(err)) log(`baton mcp: ${(err as Error)?.stack ?? String(err)}`);
      return engineErrorLine(err);
    },
  };

  const server = new Server(
    { name: 'baton', version: options.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: workspaceTools() }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const name = request.params.name;
    if (!(CHAT_TOOL_NAMES as readonly string[]).includes(name))
      return {
        content: [{ type: 'text', text: `${name}: no such tool (Baton's tools: ${CHAT_TOOL_NAMES.join(', ')}).` }],
        isError: true,
      };
    const answer = await runBatonTool(host, name as ChatToolName, request.params.arguments ?? {});
    return { content: [{ type: 'text', text: answer.text }], ...(answer.isError ? { isError: true } : {}) };
  });

  return {
    server,
    drivenRuns: () => [...driving.keys()],
    async close(why) {
      await Promise.all(
        [...driving.values()].map((c) =>
          c.handOver({ by: why }).catch((err: unknown) => log(`baton mcp: ${engineErrorLine(err)}`)),
        ),
      );
    },
  };
}
