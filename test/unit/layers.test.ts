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
  });
});
