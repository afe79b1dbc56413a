/**
 * Offering Baton's MCP server for a person (`baton mcp --for-person`, docs/extension.md "Chat tools") to the editor's
 * chat: VS Code 1.101+ has `vscode.lm.registerMcpServerDefinitionProvider` and `vscode.McpStdioServerDefinition`;
 * VS Code 1.99 (code-server 4.99, our target) has neither, and @types/vscode here is 1.99's. So both are looked for
 * on what the running editor gives (property reads, typed loosely here), and the definition is built only with the
 * editor's own constructor. Host-free: the host passes `vscode.lm` and the constructor in; unit tests pass fakes.
 */

/** The provider's id: package.json `contributes.mcpServerDefinitionProviders` declares it (VS Code requires it). */
export const MCP_PROVIDER_ID = 'baton.workspaceMcpServer';

/** The server's name in the editor's MCP server list. */
export const MCP_SERVER_LABEL = 'Baton';

interface Disposable {
  dispose(): unknown;
}

/** `new vscode.McpStdioServerDefinition(label, command, args, env, version)` (VS Code 1.101+). */
type StdioDefinitionConstructor = new (
  label: string,
  command: string,
  args?: string[],
  env?: Record<string, string | number | null>,
  version?: string,
) => object;

/** `vscode.lm.registerMcpServerDefinitionProvider` as 1.101 declares it, as much of it as Baton uses. */
type RegisterProvider = (id: string, provider: { provideMcpServerDefinitions(): object[] }) => Disposable;

export interface McpServerOffer {
  /** The one line for the Baton log. */
  readonly line: string;
  /** The provider's registration, to dispose with the extension; absent when nothing was registered. */
  readonly registration?: Disposable;
}

/** The server's command line: the CLI this extension ships, run by the editor's own Node (as the terminal shim). */
export function workspaceServerCommand(server: { nodePath: string; cliPath: string; workspace: string }): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  return {
    command: server.nodePath,
    args: [server.cliPath, '--workspace', server.workspace, 'mcp', '--for-person'],
    // The desktop editor's binary is Electron: this makes it run the CLI as Node (ignored by a plain node).
    env: { ELECTRON_RUN_AS_NODE: '1' },
  };
}

export function offerMcpServer(input: {
  editorVersion: string;
  lm: object | undefined;
  stdioDefinition: unknown;
  server: { nodePath: string; cliPath: string; workspace: string; version: string };
}): McpServerOffer {
  const { editorVersion, lm } = input;
  const register = (lm as { registerMcpServerDefinitionProvider?: unknown } | undefined)
    ?.registerMcpServerDefinitionProvider;
  if (typeof register !== 'function')
    return {
      line: `VS Code ${editorVersion} has no vscode.lm.registerMcpServerDefinitionProvider (VS Code 1.101+): Baton's MCP server is not offered to chat here (an MCP client can start \`baton mcp --for-person\` itself, docs/extension.md); Baton's chat tools are registered.`,
    };
  if (typeof input.stdioDefinition !== 'function')
    return {
      line: `VS Code ${editorVersion} has vscode.lm.registerMcpServerDefinitionProvider but no McpStdioServerDefinition: Baton's MCP server is not offered to chat; Baton's chat tools are registered.`,
    };
  const Definition = input.stdioDefinition as StdioDefinitionConstructor;
  const { command, args, env } = workspaceServerCommand(input.server);
  try {
    const registration = (register as RegisterProvider).call(lm, MCP_PROVIDER_ID, {
      provideMcpServerDefinitions: () => [new Definition(MCP_SERVER_LABEL, command, args, env, input.server.version)],
    });
    return {
      line: `VS Code ${editorVersion}: Baton's MCP server (baton mcp --for-person: the chat tools over MCP, for ${input.server.workspace}) is offered to chat as "${MCP_SERVER_LABEL}".`,
      registration,
    };
  } catch (err) {
    return {
      line: `VS Code ${editorVersion} refused Baton's MCP server provider (${(err as Error)?.message ?? String(err)}): it is not offered to chat; Baton's chat tools are registered.`,
    };
  }
}
