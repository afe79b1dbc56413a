import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(__dirname, '../..');
const eslint = new ESLint({ cwd: root });

async function restrictedImports(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

/** The messages lint gives one import of `source` in `file`. */
async function fencesHit(file: string, source: string): Promise<string[]> {
  return restrictedImports(file, `import { x } from '${source}';\nexport const y = x;\n`);
}

/**
 * A fence (eslint.config.mjs): files of one place, imports each forbidden with the fence's own
 * message (what to do instead), and an import that passes.
 */
interface Fence {
  readonly name: string;
  readonly file: string;
  readonly forbidden: readonly (readonly [source: string, message: RegExp])[];
  readonly allowed: readonly string[];
}

const FACADE = /Only the adapters use the facade .*: import the tier module that does the work/;
const PURE = /domain\/ is pure: no file system, no processes/;

const FENCES: readonly Fence[] = [
  {
    name: 'domain/ imports only domain/: no other tier, no facade, no file system or process',
    file: 'src/engine/domain/x.ts',
    forbidden: [
      ['../store/fileStore', /domain\/ imports only domain\/: take the values as arguments/],
      ['../operations/gates/openGate', /domain\/ imports only domain\//],
      ['../queries/runs', /domain\/ imports only domain\//],
      ['../effects/processes/processes', /domain\/ imports only domain\//],
      ['../usecases/ingestArtifact', /domain\/ imports only domain\//],
      ['../executor/coordinator', /domain\/ imports only domain\//],
      ['../engine', FACADE],
      ['node:fs', PURE],
      ['execa', PURE],
    ],
    allowed: ['./types', './plan/parsePlan'],
  },
  {
    name: 'store/ imports only domain/: no operation, query, effect, use case, executor or facade',
    file: 'src/engine/store/x.ts',
    forbidden: [
      ['../operations/gates/openGate', /store\/ is the port and its backends and imports only domain\//],
      ['../effects/processes/processes', /store\/ is the port/],
      ['../queries/runs', /store\/ is the port/],
      ['../usecases/ingestArtifact', /store\/ is the port/],
      ['../executor/coordinator', /store\/ is the port/],
      ['..', FACADE],
    ],
    allowed: ['../domain/types', './port', 'node:fs', '../platform/fencedFiles'],
  },
  {
    name: 'platform/ imports only domain/: no store, operation, query, effect, use case, executor or facade',
    file: 'src/engine/platform/x.ts',
    forbidden: [
      ['../store/port', /platform\/ holds file primitives the store and effects share/],
      ['../effects/processes/processes', /platform\/ holds file primitives/],
      ['../usecases/ingestArtifact', /platform\/ holds file primitives/],
      ['..', FACADE],
    ],
    allowed: ['../domain/errors', 'node:fs'],
  },
  {
    name: 'queries/ only read: no operation, effect, use case, executor, facade, file system or process',
    file: 'src/engine/queries/x.ts',
    forbidden: [
      ['../operations/gates/openGate', /queries\/ only read .*: a write belongs in operations\//],
      ['../effects/processes/processes', /queries\/ only read/],
      ['../usecases/ingestArtifact', /queries\/ only read/],
      ['../executor/coordinator', /queries\/ only read/],
      ['../index', FACADE],
      ['node:fs', /A query only reads the store: no file or process I\/O/],
      ['node:child_process', /A query only reads the store/],
    ],
    allowed: ['../store/port', '../domain/types', './runs'],
  },
  {
    name: 'operations/ reach no effect, use case, executor, facade, file system or process',
    file: 'src/engine/operations/runs/x.ts',
    forbidden: [
      ['../../effects/processes/processes', /operations\/ change state in one transaction/],
      ['../../usecases/ingestArtifact', /operations\/ change state in one transaction/],
      ['../../executor/coordinator', /operations\/ change state in one transaction/],
      ['../../engine', FACADE],
      ['../../announcer', FACADE],
      ['node:fs', /An operation runs inside a transaction: no file or process I\/O/],
      ['node:child_process', /An operation runs inside a transaction/],
    ],
    allowed: ['../../queries/delegations', '../gates/openGate', '../../store/port', '../../domain/types'],
  },
  {
    name: 'effects/ know no store: no store, operation, query, use case, executor or facade',
    file: 'src/engine/effects/git/x.ts',
    forbidden: [
      ['../../store/port', /effects\/ do file, process and git I\/O and know no store/],
      ['../../operations/gates/openGate', /effects\/ do file, process and git I\/O/],
      ['../../queries/runs', /effects\/ do file, process and git I\/O/],
      ['../../usecases/ingestArtifact', /effects\/ do file, process and git I\/O/],
      ['../../executor/coordinator', /effects\/ do file, process and git I\/O/],
      ['../..', FACADE],
    ],
    allowed: [
      '../../domain/types',
      '../processes/processes',
      '../../platform/fencedFiles',
      'node:child_process',
      'simple-git',
    ],
  },
  {
    name: 'usecases/ call no executor and no facade',
    file: 'src/engine/usecases/x.ts',
    forbidden: [
      ['../executor/coordinator', /A use case composes operations, queries and effects and never calls the executor/],
      ['../engine', FACADE],
      ['../index', FACADE],
      ['..', FACADE],
    ],
    allowed: [
      '../operations/gates/openGate',
      '../queries/delegations',
      '../effects/processes/processes',
      '../store/port',
      './context',
    ],
  },
  {
    name: 'executor/ uses the tiers, never the facade',
    file: 'src/engine/executor/x.ts',
    forbidden: [
      ['../engine', FACADE],
      ['../index', FACADE],
      ['../announcer', FACADE],
    ],
    allowed: ['../usecases/verifyAttempt', '../operations/gates/openGate', './leaseKeeper', 'node:child_process'],
  },
  {
    name: 'the extension imports the engine through src/engine/index.ts only',
    file: 'src/extension/views/x.ts',
    forbidden: [
      [
        '../../engine/engine',
        /The extension and the CLI use only the engine's public API: import from src\/engine\/index\.ts/,
      ],
      ['../../engine/domain/types', /use only the engine's public API/],
      ['../../engine/usecases/doctor', /use only the engine's public API/],
      ['../../engine/announcer', /use only the engine's public API/],
    ],
    allowed: ['../../engine/index', 'vscode', '../../protocol/messages'],
  },
  {
    name: 'the CLI imports the engine through src/engine/index.ts only',
    file: 'src/cli/x.ts',
    forbidden: [
      ['../engine/engine', /use only the engine's public API: import from src\/engine\/index\.ts/],
      ['../engine/store/openStore', /use only the engine's public API/],
      ['../engine/executor/coordinator', /use only the engine's public API/],
    ],
    allowed: ['../engine/index', '../engine', 'commander'],
  },
  {
    name: "the lease watchdog's program imports only its facade, src/engine/watchdog.ts (it starts beside every attempt)",
    file: 'src/cli/watchdog.ts',
    forbidden: [
      ['../engine/index', /The lease watchdog uses only src\/engine\/watchdog\.ts/],
      ['../engine/usecases/handIn', /The lease watchdog uses only src\/engine\/watchdog\.ts/],
    ],
    allowed: ['../engine/watchdog', './commands/leaseWatchdog'],
  },
  {
    name: 'src/mcp (baton mcp) imports the engine through src/engine/index.ts only, and not the adapters above it',
    file: 'src/mcp/x.ts',
    forbidden: [
      [
        '../engine/engine',
        /src\/mcp uses only the engine's public API, as the CLI does: import from src\/engine\/index\.ts/,
      ],
      ['../engine/usecases/attemptAccess', /src\/mcp uses only the engine's public API/],
      ['../engine/domain/attemptCredential', /src\/mcp uses only the engine's public API/],
      ['../cli/context', /src\/mcp is below the adapters: the CLI starts it/],
      ['../extension/views', /src\/mcp is below the adapters/],
      ['../protocol/messages', /src\/mcp is below the adapters/],
      ['vscode', /src\/mcp runs in `baton mcp`, a process of its own/],
    ],
    allowed: [
      '../engine/index',
      '@modelcontextprotocol/sdk/server/mcp.js',
      'zod',
      './progressWindow',
      '../tools/toolRunner',
    ],
  },
  {
    name: 'src/tools (the chat tools, shared by the editor and baton mcp --for-person) is host-free and below its hosts',
    file: 'src/tools/x.ts',
    forbidden: [
      ['vscode', /src\/tools is shared with `baton mcp --for-person`, where there is no VS Code/],
      ['../engine/engine', /The extension and the CLI use only the engine's public API/],
      ['../extension/session', /src\/tools is below its hosts/],
      ['../mcp/workspaceServer', /src\/tools is below its hosts/],
      ['../cli/context', /src\/tools is below its hosts/],
    ],
    allowed: ['../engine/index', '../protocol/time', 'zod', './chatTools'],
  },
  {
    name: 'src/protocol imports only zod and itself: no vscode, engine, extension or CLI',
    file: 'src/protocol/x.ts',
    forbidden: [
      ['vscode', /must not import vscode/],
      ['../engine/index', /src\/protocol is shared by the host and the webview: it imports only zod and itself/],
      ['../engine/domain/types', /src\/protocol is shared by the host and the webview/],
      ['../extension/runState', /src\/protocol is shared by the host and the webview/],
      ['../cli/main', /src\/protocol is shared by the host and the webview/],
    ],
    allowed: ['zod', './time'],
  },
];

describe('layers (DESIGN §1), enforced by lint', () => {
  it('the engine may not import vscode', async () => {
    assert.equal(
      (
        await restrictedImports(
          'src/engine/queue/x.ts',
          `import * as vscode from 'vscode';\nexport const v = vscode;\n`,
        )
      ).length,
      1,
    );
  });

  it('the engine may not import its adapters', async () => {
    assert.equal(
      (await restrictedImports('src/engine/x.ts', `import { runCli } from '../cli/main';\nexport const r = runCli;\n`))
        .length,
      1,
    );
  });

  it('no tier may import vscode or the adapters (each tier block keeps the engine rule)', async () => {
    for (const { file } of FENCES.filter((f) => f.file.startsWith('src/engine/'))) {
      const depth = file.split('/').length - 2;
      const up = '../'.repeat(depth);
      assert.equal((await fencesHit(file, 'vscode')).length, 1, `${file}: vscode`);
      assert.match((await fencesHit(file, `${up}cli/main`))[0] ?? '', /does not depend on its adapters/, file);
    }
  });

  it('the webview may import neither vscode nor the engine', async () => {
    assert.equal(
      (await restrictedImports('webview-ui/x.ts', `import * as vscode from 'vscode';\nexport const v = vscode;\n`))
        .length,
      1,
    );
    assert.equal(
      (
        await restrictedImports(
          'webview-ui/x.ts',
          `import { Engine } from '../src/engine/index';\nexport const e = Engine;\n`,
        )
      ).length,
      1,
    );
  });

  it('the extension and the CLI may import both', async () => {
    assert.deepEqual(
      await restrictedImports(
        'src/extension/x.ts',
        `import * as vscode from 'vscode';\nimport { Engine } from '../engine/index';\nexport const x = [vscode, Engine];\n`,
      ),
      [],
    );
  });

  describe('a fence per boundary (docs/architecture.md, "Layers and tiers"), each failing on a probe import', () => {
    for (const fence of FENCES) {
      it(fence.name, async () => {
        for (const [source, message] of fence.forbidden) {
          const hits = await fencesHit(fence.file, source);
          assert.equal(hits.length, 1, `${fence.file}: import '${source}' should fail lint once, got ${hits.length}`);
          assert.match(hits[0]!, message, `${fence.file}: import '${source}'`);
        }
        for (const source of fence.allowed) {
          assert.deepEqual(await fencesHit(fence.file, source), [], `${fence.file}: import '${source}' is allowed`);
        }
      });
    }

    it('an operation reads through queries', async () => {
      assert.deepEqual(await fencesHit('src/engine/operations/gates/x.ts', '../../queries/delegations'), []);
    });
  });

  describe("the extension's model (src/extension/model/), fenced from the host", () => {
    const file = 'src/extension/model/x.ts';

    it('may not import vscode, not even its types: the provider beside it maps the model to VS Code', async () => {
      for (const source of [
        `import * as vscode from 'vscode';\nexport const v = vscode;`,
        `import type { TreeItem } from 'vscode';\nexport type T = TreeItem;`,
      ]) {
        const messages = await restrictedImports(file, `${source}\n`);
        assert.equal(messages.length, 1, source);
        assert.match(messages[0]!, /host-free.*provider beside the model/);
      }
      assert.deepEqual(
        await restrictedImports('src/extension/x.ts', `import * as vscode from 'vscode';\nexport const v = vscode;\n`),
        [],
        'the host-bound files beside it may',
      );
    });

    it('may not import the host-bound files beside it; it may import the engine, the protocol and itself', async () => {
      assert.equal(
        (await restrictedImports(file, `import type { RunsNode } from '../views';\nexport type N = RunsNode;\n`))
          .length,
        1,
      );
      const allowed = [
        `import { Emitter } from '../../engine/index';`,
        `import { formatDuration } from '../../protocol/time';`,
        `import { statusTooltip } from './notices';`,
        `export const x = [Emitter, formatDuration, statusTooltip];`,
      ].join('\n');
      assert.deepEqual(await restrictedImports(file, `${allowed}\n`), []);
    });

    it("keeps the adapters' fence: the engine only through its index", async () => {
      const messages = await restrictedImports(
        file,
        `import { openGate } from '../../engine/operations/gates/openGate';\nexport const o = openGate;\n`,
      );
      assert.equal(messages.length, 1);
      assert.match(messages[0]!, /public API/);
    });
  });
});
