// No import loop among the executor's files, type imports included (issue 28: the Attempt type
// tied attemptSupervisor.ts to agentStreamFollower.ts and heartbeatRelay.ts in a loop): each part
// can be read, and tested, from the bottom up.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

const EXECUTOR = resolve(__dirname, '../../../src/engine/executor');

/** file → the files of the same folder it imports (values and types alike). */
function importGraph(dir: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.ts'))) {
    const path = join(dir, name);
    const source = ts.createSourceFile(path, readFileSync(path, 'utf8'), ts.ScriptTarget.Latest);
    const targets: string[] = [];
    for (const statement of source.statements) {
      const specifier =
        (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) && statement.moduleSpecifier
          ? (statement.moduleSpecifier as ts.StringLiteral).text
          : undefined;
      if (specifier?.startsWith('./')) targets.push(`${resolve(dirname(path), specifier).split('/').pop()}.ts`);
    }
    graph.set(name, targets);
  }
  return graph;
}

/** The strongly connected components with more than one file (or a file importing itself): Tarjan's algorithm. */
export function importLoops(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || (graph.get(file) ?? []).includes(file)) loops.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return loops;
}

describe('the executor’s files import one another without a loop', () => {
  it('has no import loop, type imports included', () => {
    assert.deepEqual(importLoops(importGraph(EXECUTOR)), []);
  });

  it('the check bites: a loop through a type import is found', () => {
    const graph = new Map([
      ['attemptSupervisor.ts', ['agentStreamFollower.ts', 'attempt.ts']],
      ['agentStreamFollower.ts', ['attemptSupervisor.ts']],
      ['attempt.ts', []],
    ]);
    assert.deepEqual(importLoops(graph), [['agentStreamFollower.ts', 'attemptSupervisor.ts']]);
  });
});
