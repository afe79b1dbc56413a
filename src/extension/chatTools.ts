import * as vscode from 'vscode';
import { readPlan } from '../engine/index';
import { answerQuestionAs, questionGateNamed } from './commands/answerQuestion';
import type { CommandContext } from './commands/context';
import { decideGateAs, gateToDecide } from './commands/decideGate';
import { driveFromHere, runOfPlan } from './commands/drive';
import { runThatApplies, validPlan } from './commands/pick';
import { stopRunAs } from './commands/stopRun';
import {
  answerQuestionConfirmation,
  CHAT_TOOL_NAMES,
  decideGateConfirmation,
  gatesResult,
  parseChatToolInput,
  planInWorkspace,
  runsResult,
  startRunConfirmation,
  stopRunConfirmation,
  taskIssuesResult,
  tasksResult,
  type ChatConfirmation,
  type ChatToolInput,
  type ChatToolName,
  mcpProviderLine,
} from './model/chatTools';
import { describeError } from './session';

// Baton's tools for Copilot Chat and any other chat participant (docs/extension.md, "Chat tools"). Each one is an
// operation the commands already use (commands/*.ts): the tool only checks its input (model/chatTools.ts), asks the
// person first when it changes something, and turns what happened into text. Nothing here throws at the caller: a
// refusal is the tool's result, in one line.

/** At most this many runs, newest first, in baton_listRuns (each costs a read of its overview). */
const LISTED_RUNS = 20;

interface ChatTool<N extends ChatToolName> {
  /** Read-only for a read tool; for an action tool, the confirmation (side-effect free: it may read the store). */
  prepare?(ctx: CommandContext, input: ChatToolInput<N>): Promise<ChatConfirmation>;
  invoke(ctx: CommandContext, input: ChatToolInput<N>): Promise<string>;
}

type ChatTools = { [N in ChatToolName]: ChatTool<N> };

const TOOLS: ChatTools = {
  baton_listRuns: {
    async invoke(ctx) {
      const e = await ctx.session.engine();
      const runs = (await e.listRuns()).slice(0, LISTED_RUNS);
      const overviews = await Promise.all(runs.map((run) => e.overview(run.id)));
      return runsResult(overviews, ctx.session.drivenRuns);
    },
  },
  baton_listTasks: {
    async invoke(ctx, input) {
      return tasksResult(await (await ctx.session.engine()).overview(input.runId));
    },
  },
  baton_listGates: {
    async invoke(ctx, input) {
      const e = await ctx.session.engine();
      const gates = await e.listGates({ status: 'open', ...(input.runId ? { runId: input.runId } : {}) });
      if (input.runId) await e.getRun(input.runId); // an unknown run is an error, not "no gate"
      const titles = new Map<string, { title: string }>();
      for (const runId of new Set(gates.map((g) => g.runId)))
        for (const task of (await e.overview(runId)).tasks) titles.set(`${runId}/${task.id}`, task);
      return gatesResult(gates, titles);
    },
  },
  baton_taskIssues: {
    async invoke(ctx, input) {
      const e = await ctx.session.engine();
      const view = await e.overview(input.runId);
      if (!view.tasks.some((t) => t.id === input.taskId))
        return `baton_taskIssues: run ${view.run.id} has no task ${input.taskId} (its tasks: ${view.tasks.map((t) => t.id).join(', ')}).`;
      const record = await e.taskRecord(view.run.id, input.taskId);
      return taskIssuesResult(view.run, input.taskId, record.ingestions);
    },
  },
  baton_startRun: {
    async prepare(ctx, input) {
      const path = planInWorkspace(ctx.session.workspace, input.plan);
      let tasks: number | undefined;
      try {
        if (path.ok) tasks = readPlan(ctx.session.workspace, path.value).parsed.tasks.length;
      } catch {
        // not readable now: the invocation says why
      }
      return startRunConfirmation(input, tasks);
    },
    async invoke(ctx, input) {
      ctx.session.requireTrust('start a run');
      const path = planInWorkspace(ctx.session.workspace, input.plan);
      if (!path.ok) return path.error;
      const plan = await validPlan(ctx, vscode.Uri.file(path.value));
      const opened = input.newRun
        ? {
            run: (await (await ctx.session.engine()).runForPlan(plan.uri.fsPath, { fresh: true })).run,
            verb: 'started a new',
          }
        : await runOfPlan(ctx, plan, { askWhenChanged: false });
      if (!opened) return `No run of ${plan.path} was started.`;
      return driveFromHere(ctx, opened.run, opened.verb);
    },
  },
  baton_decideGate: {
    async prepare(ctx, input) {
      const gate = (await (await ctx.session.engine()).listGates({})).find((g) => g.id === input.gateId);
      return decideGateConfirmation(input, gate);
    },
    async invoke(ctx, input) {
      const gate = await gateToDecide(ctx, input.gateId);
      if (gate.kind === 'question')
        return `baton_decideGate: ${gate.id} is a question from the agent: answer it with baton_answerQuestion.`;
      if (input.acceptResult !== undefined && gate.kind !== 'verification_failed')
        return `baton_decideGate: acceptResult applies to a verification_failed gate; ${gate.id} is a ${gate.kind} gate.`;
      const decision = input.decision === 'approve' ? 'approved' : 'rejected';
      const outcome = await decideGateAs(ctx, {
        gate,
        decision,
        ...(input.note?.trim() ? { note: input.note.trim() } : {}),
        ...(input.acceptResult ? { accept: true } : {}),
      });
      if (outcome.kind === 'already-decided') return outcome.said;
      const g = outcome.gate;
      return `${g.id} ${g.status} by ${g.decidedBy ?? 'you'}${input.acceptResult ? ' (the result accepted as it is)' : ''}${g.note ? ` with the note “${g.note}”` : ''}.`;
    },
  },
  baton_answerQuestion: {
    async prepare(ctx, input) {
      const gate = (await (await ctx.session.engine()).listGates({})).find(
        (g) => g.id === input.gateId && g.kind === 'question',
      );
      return answerQuestionConfirmation(input, gate);
    },
    async invoke(ctx, input) {
      const gate = await questionGateNamed(await ctx.session.engine(), input.gateId);
      const outcome = await answerQuestionAs(ctx, gate, input.answer.trim());
      if (outcome.kind === 'too-late') return outcome.said;
      return `${outcome.gate.id} answered by ${outcome.gate.decidedBy ?? 'you'}: “${outcome.gate.note ?? input.answer}”. ${outcome.gate.delegationId ?? 'The agent'} gets the answer.`;
    },
  },
  baton_stopRun: {
    async prepare(_ctx, input) {
      return stopRunConfirmation(input);
    },
    async invoke(ctx, input) {
      const run = await runThatApplies(ctx, input.runId, 'Stop Run', 'stop');
      return (await stopRunAs(ctx, run.id, input.mode)).message;
    },
  },
};

/** Registers every tool package.json's `languageModelTools` declares. */
export function registerChatTools(ctx: CommandContext): vscode.Disposable[] {
  if (typeof vscode.lm?.registerTool !== 'function') {
    ctx.log.info('This VS Code has no language-model tools API: Baton’s chat tools are not registered.');
    return [];
  }
  return CHAT_TOOL_NAMES.map((name) => vscode.lm.registerTool(name, chatTool(ctx, name)));
}

/** In a window with no folder: each tool says so (a contributed tool with no implementation would be an error). */
export function registerChatToolsWithoutFolder(): vscode.Disposable[] {
  if (typeof vscode.lm?.registerTool !== 'function') return [];
  const text = 'Baton needs a folder: open the workspace folder that holds the plan, then ask again.';
  return CHAT_TOOL_NAMES.map((name) =>
    vscode.lm.registerTool(name, {
      invoke: () => new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(`${name}: ${text}`)]),
    }),
  );
}

function chatTool<N extends ChatToolName>(ctx: CommandContext, name: N): vscode.LanguageModelTool<unknown> {
  const tool = TOOLS[name] as ChatTool<N>;
  return {
    async prepareInvocation(options) {
      const parsed = parseChatToolInput(name, options.input);
      // Invalid input asks nothing: the invocation refuses it and changes nothing.
      if (!parsed.ok || !tool.prepare) return undefined;
      try {
        const asked = await tool.prepare(ctx, parsed.value);
        return {
          invocationMessage: asked.invocationMessage,
          confirmationMessages: { title: asked.title, message: asked.message },
        };
      } catch (err) {
        // The store not open yet, say: still ask, with what is known.
        ctx.log.warn(`${name}: preparing the confirmation: ${describeError(err)}`);
        return { confirmationMessages: { title: `Run ${name}?`, message: JSON.stringify(parsed.value) } };
      }
    },
    async invoke(options) {
      const parsed = parseChatToolInput(name, options.input);
      let text: string;
      if (!parsed.ok) text = parsed.error;
      else
        try {
          text = await tool.invoke(ctx, parsed.value);
        } catch (err) {
          const message = describeError(err);
          ctx.log.warn(`${name}: ${message}`);
          text = `${name}: ${message.replace(/\s+/g, ' ').trim()}`;
        }
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
    },
  };
}

/**
 * `vscode.lm.registerMcpServerDefinitionProvider` (VS Code 1.101+) is looked for, not assumed: 1.99 has only the
 * proposed `registerMcpConfigurationProvider`. Either way nothing is registered today, and the log says why in one
 * line (docs/extension.md, "Chat tools": Baton's MCP server serves one worker's attempt, bound by its token).
 */
export function reportMcpProvider(log: vscode.LogOutputChannel): void {
  log.info(mcpProviderLine(vscode.version, vscode.lm));
}
