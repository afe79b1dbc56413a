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

  describe('tiers inside the engine (docs/architecture.md)', () => {
    it('domain/ imports only domain/: no store, operation, effect, file system or process', async () => {
      const file = 'src/engine/domain/x.ts';
      for (const source of [
        `import { FileStore } from '../store/fileStore';`,
        `import { openGate } from '../operations/gates/openGate';`,
        `import { terminateWorker } from '../effects/processes/processes';`,
        `import { readFileSync } from 'node:fs';`,
        `import { execa } from 'execa';`,
      ]) {
        assert.equal((await restrictedImports(file, `${source}\nexport const x = 1;\n`)).length, 1, source);
      }
      assert.deepEqual(
        await restrictedImports(file, `import type { Task } from './types';\nexport type X = Task;\n`),
        [],
      );
    });

    it('operations/ and queries/ reach no effect, use case, file system or process', async () => {
      for (const file of ['src/engine/operations/runs/x.ts', 'src/engine/queries/x.ts']) {
        for (const source of [
          `import { isProcessAlive } from '${file.includes('operations') ? '../../' : '../'}effects/processes/processes';`,
          `import { readFileSync } from 'node:fs';`,
          `import { spawn } from 'node:child_process';`,
          `import { ingestArtifact } from '${file.includes('operations') ? '../../' : '../'}usecases/ingestArtifact';`,
        ]) {
          assert.equal(
            (await restrictedImports(file, `${source}\nexport const x = 1;\n`)).length,
            1,
            `${file}: ${source}`,
          );
        }
      }
    });

    it('queries/ only read: they do not import operations', async () => {
      const source = `import { openGate } from '../operations/gates/openGate';\nexport const x = openGate;\n`;
      assert.equal((await restrictedImports('src/engine/queries/x.ts', source)).length, 1);
      assert.deepEqual(
        await restrictedImports(
          'src/engine/operations/gates/x.ts',
          `import { getDelegation } from '../../queries/delegations';\nexport const x = getDelegation;\n`,
        ),
        [],
        'an operation reads through queries',
      );
    });

    it('use cases may call operations, queries and effects', async () => {
      const source = [
        `import { openGate } from '../operations/gates/openGate';`,
        `import { getDelegation } from '../queries/delegations';`,
        `import { terminateWorker } from '../effects/processes/processes';`,
        `export const x = [openGate, getDelegation, terminateWorker];`,
      ].join('\n');
      assert.deepEqual(await restrictedImports('src/engine/usecases/x.ts', `${source}\n`), []);
    });
  });
});
