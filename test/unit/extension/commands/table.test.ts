import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

// The command table (src/extension/commands/table.ts) imports every command and so vscode: it
// cannot be loaded in plain Node. It is read as source instead, parsed by TypeScript — the ids
// are the keys of its object literal, as the compiler sees them.

const ROOT = join(__dirname, '../../../..');
const COMMANDS_DIR = join(ROOT, 'src/extension/commands');

/** The keys of `export const COMMANDS = { … }` in table.ts, in order, duplicates kept. */
function tableIds(): string[] {
  const file = join(COMMANDS_DIR, 'table.ts');
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  let literal: ts.ObjectLiteralExpression | undefined;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'COMMANDS' && node.initializer) {
      let init: ts.Expression = node.initializer;
      while (ts.isSatisfiesExpression(init) || ts.isAsExpression(init) || ts.isParenthesizedExpression(init))
        init = init.expression;
      if (ts.isObjectLiteralExpression(init)) literal = init;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  assert.ok(literal, 'table.ts declares COMMANDS as an object literal');
  return literal.properties.map((p) => {
    assert.ok(ts.isPropertyAssignment(p), `an entry of the table is id: command (${p.getText(source)})`);
    assert.ok(ts.isStringLiteral(p.name), `a command id is a string literal (${p.name.getText(source)})`);
    return p.name.text;
  });
}

/** The ids of package.json's `contributes.commands`, in order, duplicates kept. */
function contributedIds(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    contributes: { commands: Array<{ command: string }> };
  };
  return manifest.contributes.commands.map((c) => c.command);
}

const duplicates = (ids: string[]): string[] => ids.filter((id, i) => ids.indexOf(id) !== i);

describe('the command table (src/extension/commands/table.ts)', () => {
  it('has exactly one entry for every command package.json contributes, and no other', () => {
    const table = tableIds();
    const contributed = contributedIds();
    assert.ok(table.length > 20, `the table was read: ${table.length} entries`);
    assert.deepEqual(duplicates(table), [], 'an id twice in the table');
    assert.deepEqual(duplicates(contributed), [], 'an id twice in package.json');
    assert.deepEqual(
      contributed.filter((id) => !table.includes(id)),
      [],
      'contributed in package.json, with no entry in the table',
    );
    assert.deepEqual(
      table.filter((id) => !contributed.includes(id)),
      [],
      'in the table, not contributed in package.json',
    );
    assert.deepEqual(table, contributed, 'in the order of package.json');
  });

  it('is the only way a command is registered: no registerCommand outside commands/register.ts', () => {
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) walk(path);
        else if (entry.name.endsWith('.ts') && /\bregisterCommand\(/.test(readFileSync(path, 'utf8')))
          offenders.push(path.slice(ROOT.length + 1));
      }
    };
    walk(join(ROOT, 'src'));
    assert.deepEqual(offenders, ['src/extension/commands/register.ts']);
  });
});
