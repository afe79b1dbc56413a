import { Engine } from '../../engine/index';
import { withEngine, type CommandContext } from '../context';
import { attemptOfThisWorker } from './attemptOfThisWorker';

/** How long a server told to end waits for the answers of calls under way. */
const ANSWER_GRACE_MS = 2000;

/**
 * `baton mcp`: the MCP server of one attempt over stdio (docs/agents.md). The attempt comes from
 * the environment Baton gives its worker; stdout carries the protocol and nothing else, so
 * everything the server has to say goes to stderr. It serves until its client closes stdin (or a
 * signal ends it), then answers the calls under way, sends a progress note still waiting and closes the store.
 */
export async function mcp(ctx: CommandContext, version: string): Promise<void> {
  const credential = attemptOfThisWorker(ctx);
  // Loaded only here: the SDK (and its JSON Schema validator) is a third of the bundle, and every other command
  // — a worker's `baton heartbeat` among them — would pay for evaluating it at start.
  const [{ StdioServerTransport }, { createAttemptServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../../mcp/attemptServer'),
  ]);
  await withEngine(ctx, async (engine) => {
    const log = (line: string): void => void process.stderr.write(`${line}\n`);
    const { server, flush, answered } = createAttemptServer(engine, credential, { version, log });
    const transport = new StdioServerTransport();
    const ended = new Promise<void>((resolve) => {
      transport.onclose = resolve;
      process.stdin.once('end', resolve);
      process.stdin.once('close', resolve);
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    await server.connect(transport);
    log(`baton mcp: serving ${credential.delegationId} of ${credential.runId} (runtime ${credential.runtimeId}).`);
    await ended;
    // Ended by a signal while a call runs — its worker ended by its coordinator once the result it hands in was
    // recorded — the call is answered first: the agent learns its result was taken. Not for longer than a moment: a
    // question may wait for a person for hours, and its call ends with the server.
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([answered(), new Promise((resolve) => (grace = setTimeout(resolve, ANSWER_GRACE_MS)))]);
    clearTimeout(grace);
    await flush();
    await server.close();
  });
}

/**
 * `baton mcp --for-person`: Baton's chat tools over MCP on stdio, for a person's MCP client (Claude Code, Codex, the
 * editor's chat; docs/extension.md, "Chat tools"). No attempt binds it: it acts as the person who started it, as the
 * CLI does. The engine opens at the first tool call, not at start: a client that only lists the tools (an editor
 * starting its MCP servers) leaves a folder without Baton as it was. Runs it starts or lets go on are coordinated by
 * this process; when its client closes it, each is handed over with its workers running, as a closing editor window
 * hands its runs over: `baton resume`, the editor or the next server takes it at once and adopts them.
 */
export async function mcpForPerson(ctx: CommandContext, version: string): Promise<void> {
  const [{ StdioServerTransport }, { createWorkspaceServer }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/stdio.js'),
    import('../../mcp/workspaceServer'),
  ]);
  const log = (line: string): void => void process.stderr.write(`${line}\n`);
  let opening: Promise<Engine> | undefined;
  let told = 0;
  const openEngine = (): Promise<Engine> =>
    (opening ??= Engine.open({ workspace: ctx.workspace, cliPath: process.argv[1] ?? __filename, follow: true }).then(
      (engine) => {
        for (const notice of engine.recoveryNotices.slice(told)) log(`baton: ${notice}`);
        told = engine.recoveryNotices.length;
        return engine;
      },
    ));
  const served = createWorkspaceServer(openEngine, { workspace: ctx.workspace, version, log });
  const transport = new StdioServerTransport();
  const ended = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await served.server.connect(transport);
  log(`baton mcp: serving the runs of ${ctx.workspace} to a person's chat.`);
  await ended;
  try {
    await served.close('baton mcp --for-person closed');
    await served.server.close();
  } finally {
    // An engine that failed to open has nothing to close (its failure was each call's answer).
    const engine = await opening?.catch(() => undefined);
    await engine?.close();
  }
}
