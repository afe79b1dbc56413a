// Layer rules (DESIGN §1) are errors, not conventions: the engine must run without
// VS Code, and the webview talks to the host only through src/protocol messages. Inside the
// engine, the tiers (docs/architecture.md) are errors too: domain/ is pure; operations/ and
// queries/ run inside a store transaction and touch nothing else.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const vscodeBan = { name: 'vscode', message: 'The engine and the webview must not import vscode (DESIGN §1).' };
const adapterBan = { group: ['**/extension/**', '**/cli/**'], message: 'The engine does not depend on its adapters.' };

/** The engine's import rule plus what a tier adds (one rule per file: a later config replaces it, never merges). */
function engineImports(extra = {}) {
  return { paths: [vscodeBan, ...(extra.paths ?? [])], patterns: [adapterBan, ...(extra.patterns ?? [])] };
}

/** Modules that reach the file system or processes. */
function effectModules(message) {
  const modules = ['node:fs', 'node:fs/promises', 'fs', 'node:child_process', 'child_process'];
  return [...modules, 'execa', 'simple-git', 'tree-kill'].map((name) => ({ name, message }));
}

const tiers = (...names) => names.flatMap((name) => [`**/${name}`, `**/${name}/**`]);

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
  {
    files: ['src/engine/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', engineImports()] },
  },
  {
    files: ['src/engine/domain/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        engineImports({
          paths: effectModules('domain/ is pure: no file system, no processes.'),
          patterns: [
            {
              group: [...tiers('store', 'operations', 'queries', 'effects', 'usecases', 'executor'), '**/engine'],
              message: 'domain/ imports only domain/ (docs/architecture.md, tiers).',
            },
          ],
        }),
      ],
    },
  },
  {
    files: ['src/engine/operations/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        engineImports({
          paths: effectModules('An operation runs inside a transaction: no file or process I/O.'),
          patterns: [
            {
              group: [...tiers('effects', 'usecases', 'executor'), '**/engine'],
              message: 'operations/ import no effects, use cases or executor (docs/architecture.md, tiers).',
            },
          ],
        }),
      ],
    },
  },
  {
    files: ['src/engine/queries/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        engineImports({
          paths: effectModules('A query only reads the store: no file or process I/O.'),
          patterns: [
            {
              group: [...tiers('operations', 'effects', 'usecases', 'executor'), '**/engine'],
              message: 'queries/ only read: they import no operations, effects, use cases or executor.',
            },
          ],
        }),
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
        {
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
        },
      ],
    },
  },
);
