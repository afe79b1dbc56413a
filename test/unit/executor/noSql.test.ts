// The executor holds no SQL (issue 28): it reads through queries/ and writes through operations/,
// so every statement has one home that the ownership test and the views share.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';

const EXECUTOR = resolve(__dirname, '../../../src/engine/executor');
/** The engine writes its SQL keywords in capitals; an English sentence that starts with "select" is not one. */
const STATEMENT = /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/;

/** The string and template literals of a source that read as a SQL statement. */
export function sqlIn(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateHead(node)) {
      if (STATEMENT.test(node.text)) found.push(`${fileName}: ${node.text.slice(0, 60)}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the executor holds no SQL', () => {
  it('no statement in src/engine/executor', () => {
    const files = readdirSync(EXECUTOR).filter((name) => name.endsWith('.ts'));
    assert.deepEqual(
      files.flatMap((name) => sqlIn(name, readFileSync(join(EXECUTOR, name), 'utf8'))),
      [],
    );
  });

  it('the check bites: a statement in a string or a template is found', () => {
    const probe = "const a = 'SELECT id FROM gates';\nconst b = `\n  UPDATE runs SET status = ${'x'}`;\n";
    assert.equal(sqlIn('probe.ts', probe).length, 2);
    assert.equal(sqlIn('probe.ts', "const c = 'select the task';\n").length, 0, 'a sentence is not a statement');
  });
});
