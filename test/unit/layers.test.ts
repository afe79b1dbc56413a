import assert from 'node:assert/strict';
import { join } from 'node:path';
import { ESLint } from 'eslint';

const root = join(__dirname, '../..');

async function restrictedImports(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root });
  const [result] = await eslint.lintText(code, { filePath: join(root, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

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
});
