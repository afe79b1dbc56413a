import * as vscode from 'vscode';
import { answerQuestionAs } from './commands/answerQuestion';
import type { CommandContext } from './commands/context';
import { decideGateAs } from './commands/decideGate';
import { driveFromHere, runOfPlan } from './commands/drive';
import { validPlan } from './commands/pick';
import { stopRunAs } from './commands/stopRun';
import {
  answerQuestionConfirmation,
  CHAT_TOOL_NAMES,
  decideGateConfirmation,
  parseChatToolInput,
  startRunConfirmation,
  stopRunConfirmation,
  type ChatConfirmation,
  type ChatToolInput,
  type ChatToolName,
} from './model/chatTools';
import { offerMcpServer, type McpServerOffer } from './model/mcpProvider';
import { describeError } from './session';
import { planTaskCount, runBatonTool, type ToolHost } from '../tools/toolRunner';

// Baton's tools for Copilot Chat and any other chat participant (docs/extension.md, "Chat tools"). What each tool
// does is src/tools/toolRunner.ts, shared with `baton mcp --for-person`; this host acts as the commands do
// (commands/*.ts: decideGateAs, answerQuestionAs, stopRunAs, runOfPlan / driveFromHere) and asks the person first
// when a tool changes something. Nothing here throws at the caller: a refusal is the tool's result, in one line.

/** The editor as a tools host: the window's engine, its runs, its commands' acts. */
function editorHost(ctx: CommandContext): ToolHost {
  return {
    workspace: ctx.session.workspace,
    engine: () => ctx.session.engine(),
    drivenRuns: () => ctx.session.drivenRuns,
    async startRun(planPath, newRun) {
      ctx.session.requireTrust('start a run');
      const plan = await validPlan(ctx, vscode.Uri.file(planPath));
      const opened = newRun
        ? {
            run: (await (await ctx.session.engine()).runForPlan(plan.uri.fsPath, { fresh: true })).run,
            verb: 'started a new',
          }
        : await runOfPlan(ctx, plan, { askWhenChanged: false });
      if (!opened) return `No run of ${plan.path} was started.`;
      return driveFromHere(ctx, opened.run, opened.verb);
    },
    decideGate: (input) => decideGateAs(ctx, input),
    answerQuestion: (gate, answer) => answerQuestionAs(ctx, gate, answer),
    async stopRun(runId, mode) {
      return (await stopRunAs(ctx, runId, mode)).message;
    },
    describeError,
  };
}

/** The confirmation of an action tool (side-effect free: it may read the store). */
const CONFIRMATIONS: {
  [N in ChatToolName]?: (ctx: CommandContext, input: ChatToolInput<N>) => Promise<ChatConfirmation>;
} = {
  async baton_startRun(ctx, input) {
    return startRunConfirmation(input, planTaskCount(ctx.session.workspace, input.plan));
  },
  async baton_decideGate(ctx, input) {
    const gate = (await (await ctx.session.engine()).listGates({})).find((g) => g.id === input.gateId);
    return decideGateConfirmation(input, gate);
  },
  async baton_answerQuestion(ctx, input) {
    const gate = (await (await ctx.session.engine()).listGates({})).find(
      (g) => g.id === input.gateId && g.kind === 'question',
    );
    return answerQuestionConfirmation(input, gate);
  },
  async baton_stopRun(_ctx, input) {
    return stopRunConfirmation(input);
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
  const prepare = CONFIRMATIONS[name] as
    ((ctx: CommandContext, input: ChatToolInput<N>) => Promise<ChatConfirmation>) | undefined;
  const host = editorHost(ctx);
  return {
    async prepareInvocation(options) {
      const parsed = parseChatToolInput(name, options.input);
      // Invalid input asks nothing: the invocation refuses it and changes nothing.
      if (!parsed.ok || !prepare) return undefined;
      try {
        const asked = await prepare(ctx, parsed.value);
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
      const answer = await runBatonTool(host, name, options.input);
      if (answer.isError) ctx.log.warn(answer.text);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(answer.text)]);
    },
  };
}

/**
 * Offers Baton's MCP server for a person (`baton mcp --for-person`: these tools over MCP) to the editor's chat with
 * `vscode.lm.registerMcpServerDefinitionProvider` where the running VS Code has it (1.101+); on 1.99 it is absent and
 * nothing is registered. Either way one line in the Baton log says what happened (model/mcpProvider.ts decides).
 */
export function offerMcpServerToChat(
  log: vscode.LogOutputChannel,
  server: { cliPath: string; workspace: string; version: string },
): vscode.Disposable[] {
  const offer: McpServerOffer = offerMcpServer({
    editorVersion: vscode.version,
    lm: vscode.lm,
    // Read off the namespace, not named: @types/vscode here is 1.99's, which has no McpStdioServerDefinition.
    stdioDefinition: (vscode as unknown as { McpStdioServerDefinition?: unknown }).McpStdioServerDefinition,
    server: { nodePath: process.execPath, ...server },
  });
  log.info(offer.line);
  return offer.registration ? [offer.registration] : [];
}
