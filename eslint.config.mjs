// Layer rules (DESIGN §1) are errors, not conventions: the engine must run without
// VS Code, and the webview talks to the host only through src/protocol messages. Inside the
// engine, each tier (docs/architecture.md, "Layers and tiers") has a fence: a block below that
// names what its files may not import and, in the message, what to do instead. The adapters
// (extension, CLI, and the MCP server the CLI starts) reach the engine through src/engine/index.ts only.
// test/unit/layers.test.ts shows every fence failing on a probe import.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const vscodeBan = { name: 'vscode', message: 'The engine and the webview must not import vscode (DESIGN §1).' };
const adapterBan = {
  group: ['**/extension/**', '**/cli/**'],
  message: 'The engine does not depend on its adapters: give the engine a port or an event the adapter implements.',
};

/** The engine's import rule plus what a tier adds (one rule per file: a later config replaces it, never merges). */
function engineImports(extra = {}) {
  return { paths: [vscodeBan, ...(extra.paths ?? [])], patterns: [adapterBan, ...(extra.patterns ?? [])] };
}

/** Modules that reach the file system or processes. */
function effectModules(message) {
  const modules = ['node:fs', 'node:fs/promises', 'fs', 'node:child_process', 'child_process'];
  return [...modules, 'execa', 'simple-git', 'tree-kill'].map((name) => ({ name, message }));
}

/** Import paths into the named tiers of src/engine (relative: `../operations/x`, `../../queries`). */
const tiers = (...names) => names.flatMap((name) => [`**/${name}`, `**/${name}/**`]);

/**
 * The facade (engine.ts, index.ts, and announcer.ts beside them) is the top of the engine: the
 * adapters call it, no tier does. `..` and `../..` are index.ts seen from a tier's folder.
 */
const facadeFence = {
  regex: '^\\.\\.(/\\.\\.)*(/(engine|index|announcer))?$',
  message:
    'Only the adapters use the facade (src/engine/engine.ts, index.ts, announcer.ts): import the tier module that does the work.',
};

/** A fenced tier: its files may import neither the facade nor anything `fences` names; `io` bans file and process modules. */
function tier(name, { fences, io }) {
  return {
    files: [`src/engine/${name}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        engineImports({ paths: io ? effectModules(io) : [], patterns: [...fences, facadeFence] }),
      ],
    },
  };
}

/** The adapters' rule: src/engine/index.ts (or `engine` itself) is the only way into the engine. */
const engineIndexOnly = {
  group: ['**/engine/*', '!**/engine/index', '**/engine/*/**'],
  message:
    "The extension and the CLI use only the engine's public API: import from src/engine/index.ts (export what is missing there).",
};

/**
 * The adapters' import rule plus what a folder of theirs adds: a block for part of src/extension
 * or src/cli replaces this rule for its files, so it builds on this one (as the tiers do on engineImports).
 */
function adapterImports(extra = {}) {
  return { paths: [...(extra.paths ?? [])], patterns: [engineIndexOnly, ...(extra.patterns ?? [])] };
}

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.baton/**', '.cache/**', 'out/**', '**/*.js', '**/*.mjs', '**/*.cjs'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      // Prettier (checked by `npm run lint`) wraps code at 120; this holds comments to it too.
      'max-len': [
        'error',
        { code: 120, ignoreStrings: true, ignoreTemplateLiterals: true, ignoreUrls: true, ignoreRegExpLiterals: true },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportDefaultDeclaration', message: 'Named exports only (CONVENTIONS: house style).' },
      ],
    },
  },
  // The facade (src/engine/*.ts) and anything in the engine no tier block below names.
  {
    files: ['src/engine/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', engineImports()] },
  },
  // The tiers, bottom up.
  tier('domain', {
    io: 'domain/ is pure: no file system, no processes. Read in an effect or a use case and pass the content in.',
    fences: [
      {
        group: tiers('store', 'operations', 'queries', 'effects', 'usecases', 'executor'),
        message:
          'domain/ imports only domain/: take the values as arguments; code that needs the store or I/O belongs in a use case.',
      },
    ],
  }),
  tier('platform', {
    fences: [
      {
        group: tiers('store', 'operations', 'queries', 'effects', 'usecases', 'executor'),
        message:
          'platform/ holds file primitives the store and effects share (the fence for files a worker can touch) and imports only domain/.',
      },
    ],
  }),
  tier('store', {
    fences: [
      {
        group: tiers('operations', 'queries', 'effects', 'usecases', 'executor'),
        message:
          'store/ is the port and its backends and imports only domain/: a read belongs in queries/, a state change in operations/.',
      },
    ],
  }),
  tier('queries', {
    io: 'A query only reads the store: no file or process I/O (do it in an effect, called from a use case).',
    fences: [
      {
        group: tiers('operations', 'effects', 'usecases', 'executor'),
        message:
          'queries/ only read (store/, domain/, other queries): a write belongs in operations/, I/O in effects/ called by a use case.',
      },
    ],
  }),
  tier('operations', {
    io: 'An operation runs inside a transaction: no file or process I/O. Do it before, in a use case, and pass the result in.',
    fences: [
      {
        group: tiers('effects', 'usecases', 'executor'),
        message:
          'operations/ change state in one transaction (other operations, queries, store, domain): a use case calls the effects around them.',
      },
    ],
  }),
  tier('effects', {
    fences: [
      {
        group: tiers('store', 'operations', 'queries', 'usecases', 'executor'),
        message:
          'effects/ do file, process and git I/O and know no store: take what they need as arguments; a use case composes them with operations.',
      },
    ],
  }),
  tier('usecases', {
    fences: [
      {
        group: tiers('executor'),
        message:
          'A use case composes operations, queries and effects and never calls the executor: move what both need into a use case or lower.',
      },
    ],
  }),
  // executor/ composes every tier below it; only the facade is fenced off (by tier()).
  tier('executor', { fences: [] }),
  // The adapters: the engine through src/engine/index.ts only.
  {
    files: ['src/extension/**/*.ts', 'src/cli/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', adapterImports()] },
  },
  // The lease watchdog's program (started per attempt on a shared store): its narrow facade, src/engine/watchdog.ts,
  // instead of the index, so that it does not load the whole engine.
  {
    files: ['src/cli/watchdog.ts', 'src/cli/commands/leaseWatchdog.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['**/engine/*', '!**/engine/watchdog', '**/engine/*/**'],
              message:
                'The lease watchdog uses only src/engine/watchdog.ts: a watchdog starts beside every attempt, so it loads what it needs and no more (export it there).',
            },
          ],
        },
      ],
    },
  },
  // The MCP server of one attempt (src/mcp, `baton mcp`): an adapter like the CLI and below it — the CLI starts it;
  // it serves an agent, so it knows neither the CLI's output nor the editor.
  {
    files: ['src/mcp/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'vscode',
              message: 'src/mcp runs in `baton mcp`, a process of its own beside an agent: there is no VS Code here.',
            },
          ],
          patterns: [
            {
              group: ['**/engine/*', '!**/engine/index', '**/engine/*/**'],
              message:
                "src/mcp uses only the engine's public API, as the CLI does: import from src/engine/index.ts (add an Engine method and export it there).",
            },
            {
              group: ['**/cli', '**/cli/**', '**/extension', '**/extension/**', '**/protocol', '**/protocol/**'],
              message:
                'src/mcp is below the adapters: the CLI starts it (src/cli/commands/mcp.ts), not the other way round. Tools talk MCP (the SDK, zod) and the engine, nothing else.',
            },
          ],
        },
      ],
    },
  },
  // Baton's tools for a person's chat (src/tools): what each tool takes, does and answers, once for both of its hosts —
  // the editor's language-model tools (src/extension/chatTools.ts) and `baton mcp --for-person` (src/mcp). Host-free
  // and below both: the engine's public API, src/protocol's plain helpers, zod; never an adapter.
  {
    files: ['src/tools/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        adapterImports({
          paths: [
            {
              name: 'vscode',
              message:
                'src/tools is shared with `baton mcp --for-person`, where there is no VS Code: pass what a tool needs through its ToolHost.',
            },
          ],
          patterns: [
            {
              group: ['**/cli', '**/cli/**', '**/extension', '**/extension/**', '**/mcp', '**/mcp/**'],
              message:
                'src/tools is below its hosts: the extension and src/mcp import it, not the other way round. An act that differs by host is a ToolHost method.',
            },
          ],
        }),
      ],
    },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [vscodeBan],
          patterns: [
            {
              group: ['**/engine', '**/engine/**', '**/extension', '**/extension/**', '**/cli', '**/cli/**'],
              message:
                'src/protocol is shared by the host and the webview: it imports only zod and itself. Declare the message shape here; the host maps engine values onto it.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['webview-ui/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [vscodeBan],
          patterns: [
            {
              group: ['**/src/engine', '**/src/engine/**', '**/engine/**'],
              message: 'The webview talks to the host only through src/protocol (DESIGN §1).',
            },
          ],
        },
      ],
    },
  },
  // The extension's model (src/extension/model/): what the views, the status bar and the dashboard map from, host-free
  // so that unit tests run it in plain Node with the injected clock. Last on purpose: for these files it is the
  // no-restricted-imports in force (a later block replaces an earlier one's), so a rule for all of src/extension
  // goes here too.
  {
    files: ['src/extension/model/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        adapterImports({
          paths: [
            {
              name: 'vscode',
              message:
                'src/extension/model/ is host-free: no vscode here. The provider beside the model (views.ts, ' +
                'statusBar.ts, dashboard.ts, …) maps it to VS Code; pass what the model needs in as plain values.',
            },
          ],
          patterns: [
            {
              // ../x (a host-bound file beside model/) — not ../../engine or ../../protocol.
              regex: '^\\.\\./(?!\\.\\./)',
              message:
                'The model does not reach back into the extension: the host-bound files import the model, not ' +
                'the other way round.',
            },
          ],
        }),
      ],
    },
  },
);
