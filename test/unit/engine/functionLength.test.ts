// No function in the engine is longer than MAX_LINES (issue 28: a 267-line AttemptLauncher.start
// and a 271-line reconcileRun had grown there). Measured on the parsed source, so a function
// nested in another counts on its own and also as part of the one around it.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const MAX_LINES = 150;
const ROOT = resolve(__dirname, '../../..');
const ENGINE = join(ROOT, 'src/engine');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Every function, method, accessor, constructor and arrow function with a body longer than `max` lines. */
export function longFunctions(fileName: string, text: string, max = MAX_LINES): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as ts.FunctionLikeDeclaration).body) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      const name = (node as { name?: ts.Node }).name?.getText(source) ?? '(anonymous)';
      if (lines > max) found.push(`${fileName}:${first + 1} ${name}: ${lines} lines`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length in the engine', () => {
  it(`has no function over ${MAX_LINES} lines`, () => {
    const offenders = sourceFiles(ENGINE).flatMap((file) =>
      longFunctions(relative(ROOT, file), readFileSync(file, 'utf8')),
    );
    assert.deepEqual(offenders, [], 'split these into named steps');
  });

  it('the check bites: a function one line too long is named, nested ones too', () => {
    const body = (n: number) => Array.from({ length: n - 2 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const long = `export function tooLong(): void {\n${body(MAX_LINES + 1)}\n}\n`;
    const fits = `export function fits(): void {\n${body(MAX_LINES)}\n}\n`;
    assert.deepEqual(longFunctions('probe.ts', long), [`probe.ts:1 tooLong: ${MAX_LINES + 1} lines`]);
    assert.deepEqual(longFunctions('probe.ts', fits), []);
    const nested = `class C {\n  m(): void {\n    const f = () => {\n${body(MAX_LINES + 1)}\n    };\n  }\n}\n`;
    assert.equal(longFunctions('probe.ts', nested).length, 2, 'the arrow function and the method around it');
  });
});
