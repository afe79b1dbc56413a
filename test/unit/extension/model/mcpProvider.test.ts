import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MCP_PROVIDER_ID, MCP_SERVER_LABEL, offerMcpServer } from '../../../../src/extension/model/mcpProvider';

// Offering `baton mcp --for-person` to the editor's chat (docs/extension.md, "Chat tools"): registered with
// vscode.lm.registerMcpServerDefinitionProvider where the running VS Code has it (1.101+), one log line and nothing
// registered on 1.99. `lm` and the definition class are fakes shaped as VS Code 1.101 declares them.

const SERVER = {
  nodePath: '/opt/editor/node',
  cliPath: '/ext/dist/cli.js',
  workspace: '/home/ann/shop',
  version: '0.1.0',
};

/** VS Code 1.101's McpStdioServerDefinition: what the constructor was given. */
class FakeStdioDefinition {
  constructor(
    readonly label: string,
    readonly command: string,
    readonly args?: string[],
    readonly env?: Record<string, string | number | null>,
    readonly version?: string,
  ) {}
}

function fakeLm() {
  const registered: Array<{ id: string; provider: { provideMcpServerDefinitions(): object[] } }> = [];
  let disposed = 0;
  return {
    registered,
    disposed: () => disposed,
    lm: {
      registerTool: () => ({ dispose: () => undefined }),
      registerMcpServerDefinitionProvider(id: string, provider: { provideMcpServerDefinitions(): object[] }) {
        registered.push({ id, provider });
        return { dispose: () => void disposed++ };
      },
    },
  };
}

describe('chat tools: offering Baton’s MCP server to the editor’s chat', () => {
  it('on VS Code 1.99 (no registerMcpServerDefinitionProvider) registers nothing and says so in one line', () => {
    const offer = offerMcpServer({
      editorVersion: '1.99.3',
      lm: { registerTool: () => undefined, registerMcpConfigurationProvider: () => 1 },
      stdioDefinition: undefined,
      server: SERVER,
    });
    assert.equal(offer.registration, undefined);
    assert.match(
      offer.line,
      /^VS Code 1\.99\.3 has no vscode\.lm\.registerMcpServerDefinitionProvider \(VS Code 1\.101\+\): Baton's MCP server is not offered to chat here/,
    );
    assert.doesNotMatch(offer.line, /\n/);
  });

  it('with no lm namespace at all, registers nothing either', () => {
    const offer = offerMcpServer({
      editorVersion: '1.80.0',
      lm: undefined,
      stdioDefinition: undefined,
      server: SERVER,
    });
    assert.equal(offer.registration, undefined);
    assert.match(offer.line, /has no vscode\.lm\.registerMcpServerDefinitionProvider/);
  });

  it('on VS Code 1.101+ registers a provider whose one definition runs `baton mcp --for-person` on the workspace', () => {
    const fake = fakeLm();
    const offer = offerMcpServer({
      editorVersion: '1.101.0',
      lm: fake.lm,
      stdioDefinition: FakeStdioDefinition,
      server: SERVER,
    });
    assert.equal(fake.registered.length, 1);
    assert.equal(fake.registered[0]!.id, MCP_PROVIDER_ID);
    const definitions = fake.registered[0]!.provider.provideMcpServerDefinitions();
    assert.equal(definitions.length, 1);
    const d = definitions[0] as FakeStdioDefinition;
    assert.ok(d instanceof FakeStdioDefinition, 'built with the editor’s own class');
    assert.equal(d.label, MCP_SERVER_LABEL);
    assert.equal(d.command, SERVER.nodePath);
    assert.deepEqual(d.args, [SERVER.cliPath, '--workspace', SERVER.workspace, 'mcp', '--for-person']);
    assert.deepEqual(d.env, { ELECTRON_RUN_AS_NODE: '1' });
    assert.equal(d.version, '0.1.0');
    assert.match(offer.line, /^VS Code 1\.101\.0: Baton's MCP server .* is offered to chat as "Baton"\.$/);
    offer.registration!.dispose();
    assert.equal(fake.disposed(), 1);
  });

  it('the API without McpStdioServerDefinition, or a registration that throws, registers nothing and says why', () => {
    const fake = fakeLm();
    const noClass = offerMcpServer({
      editorVersion: '1.100.0',
      lm: fake.lm,
      stdioDefinition: undefined,
      server: SERVER,
    });
    assert.equal(noClass.registration, undefined);
    assert.equal(fake.registered.length, 0);
    assert.match(noClass.line, /no McpStdioServerDefinition/);
    const refused = offerMcpServer({
      editorVersion: '1.101.0',
      lm: {
        registerMcpServerDefinitionProvider: () => {
          throw new Error('provider baton.workspaceMcpServer is not declared');
        },
      },
      stdioDefinition: FakeStdioDefinition,
      server: SERVER,
    });
    assert.equal(refused.registration, undefined);
    assert.match(
      refused.line,
      /refused Baton's MCP server provider \(provider baton\.workspaceMcpServer is not declared\)/,
    );
  });

  it('package.json declares the provider id it registers (VS Code refuses an undeclared one)', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '../../../../package.json'), 'utf8')) as {
      contributes: { mcpServerDefinitionProviders?: Array<{ id: string; label: string }> };
    };
    assert.deepEqual(manifest.contributes.mcpServerDefinitionProviders, [
      { id: MCP_PROVIDER_ID, label: MCP_SERVER_LABEL },
    ]);
  });
});
