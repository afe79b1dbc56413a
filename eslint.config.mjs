// Layer rules (DESIGN §1) are errors, not conventions: the engine must run without
// VS Code, and the webview talks to the host only through src/protocol messages.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const vscodeBan = { name: 'vscode', message: 'The engine and the webview must not import vscode (DESIGN §1).' };

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.baton/**', '.cache/**', 'out/**', '**/*.js', '**/*.mjs'] },
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
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [vscodeBan],
          patterns: [
            { group: ['**/extension/**', '**/cli/**'], message: 'The engine does not depend on its adapters.' },
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
);
