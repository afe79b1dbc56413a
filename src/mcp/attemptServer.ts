import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { BatonError, type AttemptCredential, type Engine } from '../engine/index';
import { admitProgress, PROGRESS_WINDOW_MS, type ProgressWindowState } from './progressWindow';
import {
  ASK_INPUT,
  ASK_OUTPUT,
  CHECK_RESULT_INPUT,
  CHECK_RESULT_OUTPUT,
  PROGRESS_INPUT,
  PROGRESS_OUTPUT,
  SUBMIT_RESULT_INPUT,
  SUBMIT_RESULT_OUTPUT,
  TASK_INPUT,
  TASK_OUTPUT,
  type AskOutput,
  type CheckResultOutput,
  type ProgressOutput,
  type SubmitResultOutput,
  type TaskOutput,
} from './toolSchemas';

/** What the server asks of the engine: the attempt's own tools, each bound by the credential (docs/agents.md). */
export type AttemptEngine = Pick<
  Engine,
  'attemptBrief' | 'attemptProgress' | 'checkDraftResult' | 'submitAttemptResult' | 'askAndWait' | 'now'
>;

export interface AttemptServerOptions {
  /** The server's version, told in the MCP handshake. */
  version: string;
  progressWindowMs?: number;
  /** Where the server says what no caller can be told (a coalesced note that failed to send). Never stdout. */
  log?: (line: string) => void;
}

export interface AttemptServer {
  server: McpServer;
  /** Sends a note still waiting in the rate window, then forgets it. */
  flush(): Promise<void>;
  /** Resolves once every tool call under way has its answer (the server then closes without cutting one off). */
  answered(): Promise<void>;
}

const INSTRUCTIONS = [
  'Baton delegated one task of a plan to you; these tools are bound to that attempt.',
  'baton_task: the task, the files you may change, the verify commands and the result contract.',
  'baton_progress: a few words on what you are doing (at most one heartbeat a second is sent).',
  'baton_check_result: checks your draft result artifact the way Baton will, and writes nothing; fix what it lists.',
  'baton_submit_result: hands the result in; accepted or rejected, that ends your attempt, so check it first.',
  'baton_ask: asks a person a question (optionally with choices) and waits for the answer; use it only when you cannot decide yourself.',
].join('\n');

/**
 * The MCP server of one attempt (`baton mcp`): five tools over the engine's public API, each call
 * authenticated by the attempt's credential inside the engine. Input is validated by the SDK
 * against the tools' zod schemas (an invalid call is a tool error naming the field); a refusal
 * from the engine is a tool error led by its code (`runtime.not-live: …`), the CLI's codes.
 */
export function createAttemptServer(
  engine: AttemptEngine,
  credential: AttemptCredential,
  options: AttemptServerOptions,
): AttemptServer {
  const server = new McpServer({ name: 'baton', version: options.version }, { instructions: INSTRUCTIONS });
  const log = options.log ?? (() => undefined);
  const progress = new ProgressSender(engine, credential, options.progressWindowMs ?? PROGRESS_WINDOW_MS, log);
  // Calls under way: a server ended while one runs (its worker ended once its result was in) answers it first.
  const underWay = new Set<Promise<CallToolResult>>();
  const answer = <T extends Record<string, unknown>>(log: (line: string) => void, work: () => Promise<T>) => {
    const call = answerOf(log, work);
    underWay.add(call);
    void call.finally(() => underWay.delete(call));
    return call;
  };

  server.registerTool(
    'baton_task',
    {
      title: 'The task of this attempt',
      description:
        'The task Baton delegated to you: id, title, instructions, the files you may change, the tasks it builds on, the verify commands Baton runs after a PASS, where to write the result and the result contract, and the attempt number.',
      inputSchema: TASK_INPUT,
      outputSchema: TASK_OUTPUT,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    () => answer(log, async (): Promise<TaskOutput> => engine.attemptBrief(credential)),
  );

  server.registerTool(
    'baton_progress',
    {
      title: 'Report progress',
      description:
        'Tells Baton (and the person watching) what you are doing now. Becomes a heartbeat of your attempt; at most one a second is sent, a note within that second is sent at its end (the newest wins).',
      inputSchema: PROGRESS_INPUT,
      outputSchema: PROGRESS_OUTPUT,
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    },
    ({ note }) => answer(log, (): Promise<ProgressOutput> => progress.report(note)),
  );

  server.registerTool(
    'baton_check_result',
    {
      title: 'Check a draft result',
      description:
        "A dry run of Baton's ingestion on your draft result artifact: the result contract, the task and agent, the listed artifact paths. Returns every issue with its line and column. Writes nothing; call it as often as you like before baton_submit_result.",
      inputSchema: CHECK_RESULT_INPUT,
      outputSchema: CHECK_RESULT_OUTPUT,
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ path }) =>
      answer(log, async (): Promise<CheckResultOutput> => {
        const check = await engine.checkDraftResult(credential, path);
        return { ...check, recorded: false };
      }),
  );

  server.registerTool(
    'baton_submit_result',
    {
      title: 'Hand the result in',
      description:
        'Hands your result artifact in, as `baton ingest` does. Accepted or rejected, the result is recorded and your attempt ends (a rejected one waits for a person): run baton_check_result first.',
      inputSchema: SUBMIT_RESULT_INPUT,
      outputSchema: SUBMIT_RESULT_OUTPUT,
      annotations: { readOnlyHint: false, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    },
    ({ path }) =>
      answer(log, async (): Promise<SubmitResultOutput> => {
        await progress.flush();
        const { record, duplicate, delegation } = await engine.submitAttemptResult(credential, path);
        return {
          ingestionId: record.id,
          accepted: record.accepted,
          duplicate,
          ...(record.resultStatus ? { resultStatus: record.resultStatus } : {}),
          issues: record.issues,
          delegation: { id: delegation.id, status: delegation.status },
          message: record.accepted
            ? `Accepted ${record.resultStatus} for ${delegation.id}; the attempt is ${delegation.status}.`
            : `Rejected (${record.issues.filter((i) => i.severity === 'error').length} error(s)); ${delegation.id} is ${delegation.status}, waiting for a person at an ingestion_failed gate.`,
        };
      }),
  );

  server.registerTool(
    'baton_ask',
    {
      title: 'Ask a person',
      description:
        'Asks the person running Baton a question and waits until they answer (in the editor or with `baton answer`); returns the answer. With choices, the answer is one of them. While you wait your attempt stays alive and its task timeout does not run. Ask only what you cannot decide yourself.',
      inputSchema: ASK_INPUT,
      outputSchema: ASK_OUTPUT,
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
    },
    ({ question, choices }, extra) =>
      answer(log, async (): Promise<AskOutput> => {
        await progress.flush();
        const token = extra._meta?.progressToken;
        let step = 0;
        const tell = async (message: string): Promise<void> => {
          if (token === undefined) return;
          await extra
            .sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress: ++step, message },
            })
            .catch((err: Error) => log(`baton mcp: a progress notification was not sent: ${err.message}`));
        };
        const answered = await engine.askAndWait(
          credential,
          { question, ...(choices ? { choices } : {}) },
          {
            signal: extra.signal,
            onWaiting: (waitedMs, gateId) =>
              tell(`waiting for an answer at ${gateId} (${Math.round(waitedMs / 1000)} s so far)`),
          },
        );
        return { ...answered };
      }),
  );

  return {
    server,
    flush: () => progress.flush(),
    answered: async () => {
      await Promise.allSettled([...underWay]);
      // The SDK sends an answer in a continuation of its call: one turn later it has gone out.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

/**
 * A tool's answer: its typed value as structured content (and as JSON text, for clients that
 * read only text), or a tool error. A BatonError is the engine's refusal, told by its code; any
 * other failure is logged and told as `unexpected` — never a crash of the server.
 */
async function answerOf<T extends Record<string, unknown>>(
  log: (line: string) => void,
  work: () => Promise<T>,
): Promise<CallToolResult> {
  try {
    const value = await work();
    return { content: [{ type: 'text', text: JSON.stringify(value, null, 2) }], structuredContent: value };
  } catch (err) {
    const text = BatonError.is(err) ? `${err.code}: ${err.message}` : `unexpected: ${(err as Error).message}`;
    if (!BatonError.is(err)) log(`baton mcp: ${(err as Error).stack ?? String(err)}`);
    return { content: [{ type: 'text', text }], isError: true };
  }
}

/** The attempt's progress notes on their way to heartbeats, at most one per window (progressWindow.ts). */
class ProgressSender {
  private state: ProgressWindowState = {};
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly engine: AttemptEngine,
    private readonly credential: AttemptCredential,
    private readonly windowMs: number,
    private readonly log: (line: string) => void,
  ) {}

  async report(note: string): Promise<ProgressOutput> {
    const now = this.engine.now();
    const admission = admitProgress(this.state, now, this.windowMs);
    if (admission.kind === 'send') {
      this.cancelPending();
      this.state = { lastSentAt: now };
      const runtime = await this.engine.attemptProgress(this.credential, note);
      return {
        delivery: 'sent',
        heartbeatCount: runtime.heartbeatCount,
        leaseExpiresAt: runtime.leaseExpiresAt,
        message: `Heartbeat ${runtime.heartbeatCount} of ${runtime.id} sent with your note.`,
      };
    }
    // A coalesced note is refused now, not at its send, when the attempt is over or the credential wrong.
    await this.engine.attemptBrief(this.credential);
    this.state = { ...this.state, pending: { note, sendAt: admission.sendAt } };
    this.timer ??= setTimeout(() => void this.flush(), Math.max(0, admission.sendAt - now));
    return {
      delivery: 'coalesced',
      sendAt: admission.sendAt,
      replaced: admission.replaced,
      message: `Accepted; sent as a heartbeat at the end of this ${this.windowMs} ms window${admission.replaced ? ', in place of the note that waited there' : ''} (at most one a window).`,
    };
  }

  /** Sends the note that waits, if any. A failure has no caller left to tell: it is logged. */
  async flush(): Promise<void> {
    const pending = this.state.pending;
    this.cancelPending();
    if (!pending) return;
    this.state = { lastSentAt: this.engine.now() };
    try {
      await this.engine.attemptProgress(this.credential, pending.note);
    } catch (err) {
      this.log(`baton mcp: a coalesced progress note was not sent: ${(err as Error).message}`);
    }
  }

  private cancelPending(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.state = { ...this.state, pending: undefined };
  }
}
