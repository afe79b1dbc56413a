// The write statements (INSERT, UPDATE, DELETE) a TypeScript file builds, read from its parsed
// source with the compiler API rather than from its text: a comment is no statement, and a
// statement split over a concatenation, a template or a constant is still found. Every string
// expression (string literal, template, `+` of strings) is evaluated as far as it can be known
// statically — literals, and constants declared once in the file or imported from one — and a
// part that cannot be known is a hole. A write whose table falls in a hole is reported as such.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import ts from 'typescript';

/** The table reported for a write whose table cannot be known statically. */
export const DYNAMIC_TABLE = '${…}';

/** Stands in the evaluated text for what cannot be known statically. */
const HOLE = '\u0000';

/** One write statement: its table (or DYNAMIC_TABLE) and where the string expression starts. */
export interface SqlWrite {
  readonly table: string;
  readonly line: number;
}

/**
 * A write keyword, then its table. Keywords in any case (SQL ignores it); not `DO UPDATE` (an
 * upsert's second half) nor `FOR UPDATE` (a row lock): their table is the statement's own.
 */
const WRITE = new RegExp(
  String.raw`(?<!\b(?:DO|FOR)\s+)\b(UPDATE|INSERT\s+(?:OR\s+\w+\s+|${HOLE}\s*)?INTO|DELETE\s+FROM)(?=[\s${HOLE}])\s*"?([A-Za-z_]\w*)?"?`,
  'gi',
);

/**
 * What follows the table of a statement (so that prose such as "Update Baton." is none): for
 * each verb its next clause, else a hole or the end of the string (the rest built elsewhere).
 */
const NEXT_CLAUSE: Readonly<Record<string, RegExp>> = {
  UPDATE: new RegExp(String.raw`^(?:\s+SET\b|\s*${HOLE}|\s*$)`, 'i'),
  INSERT: new RegExp(String.raw`^(?:\s*\(|\s+(?:VALUES|SELECT|DEFAULT)\b|\s*${HOLE}|\s*$)`, 'i'),
  DELETE: new RegExp(String.raw`^(?:\s+(?:WHERE|RETURNING)\b|\s*;|\s*${HOLE}|\s*$)`, 'i'),
};

/** Each write statement in an evaluated string (holes marked by HOLE), by its table. */
export function writesInText(text: string): string[] {
  const tables: string[] = [];
  for (const match of text.matchAll(WRITE)) {
    const [statement, verb, table] = match;
    const rest = text.slice(match.index + statement.length);
    if (table === undefined) {
      // `UPDATE ${table} SET …`: the table is what the hole holds.
      if (rest.startsWith(HOLE)) tables.push(DYNAMIC_TABLE);
    } else if (rest.startsWith(HOLE)) {
      // `UPDATE runs${suffix}`: the name goes on in the hole.
      tables.push(DYNAMIC_TABLE);
    } else if (NEXT_CLAUSE[verb!.split(/\s/)[0]!.toUpperCase()]!.test(rest)) {
      tables.push(table.toLowerCase());
    }
  }
  return tables;
}

/** What an expression evaluates to: its text (HOLE where unknown), and whether a string literal is in it. */
interface Evaluated {
  readonly text: string;
  readonly stringy: boolean;
}

const UNKNOWN: Evaluated = { text: HOLE, stringy: false };

/** A parsed file with its constants: a name declared exactly once, as a `const` with an initializer. */
export class ParsedFile {
  readonly source: ts.SourceFile;
  private readonly declarations = new Map<string, ts.Node[]>();
  private readonly imports = new Map<string, { module: string; name: string }>();

  constructor(
    readonly path: string,
    text: string,
  ) {
    this.source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
    const visit = (node: ts.Node): void => {
      const name = declaredName(node);
      if (name !== undefined) this.declarations.set(name, [...(this.declarations.get(name) ?? []), node]);
      if (ts.isImportSpecifier(node) && ts.isStringLiteral(node.parent.parent.parent.moduleSpecifier)) {
        const module = node.parent.parent.parent.moduleSpecifier.text;
        this.imports.set(node.name.text, { module, name: (node.propertyName ?? node.name).text });
      }
      ts.forEachChild(node, visit);
    };
    visit(this.source);
  }

  /** The initializer of the file's one `const` of that name, if that is what the name is. */
  constantInitializer(name: string): ts.Expression | undefined {
    const declarations = this.declarations.get(name);
    if (declarations?.length !== 1) return undefined;
    const [declaration] = declarations;
    if (!declaration || !ts.isVariableDeclaration(declaration) || !declaration.initializer) return undefined;
    const list = declaration.parent;
    if (!ts.isVariableDeclarationList(list) || !(list.flags & ts.NodeFlags.Const)) return undefined;
    return declaration.initializer;
  }

  importOf(name: string): { module: string; name: string } | undefined {
    return this.declarations.get(name)?.length === 1 ? this.imports.get(name) : undefined;
  }
}

/** The name a node declares in its file (variable, parameter, function, class, import…), if any. */
function declaredName(node: ts.Node): string | undefined {
  if (
    (ts.isVariableDeclaration(node) ||
      ts.isParameter(node) ||
      ts.isBindingElement(node) ||
      ts.isFunctionDeclaration(node) ||
      ts.isClassDeclaration(node) ||
      ts.isEnumDeclaration(node) ||
      ts.isImportSpecifier(node) ||
      ts.isImportClause(node) ||
      ts.isNamespaceImport(node)) &&
    node.name &&
    ts.isIdentifier(node.name)
  ) {
    return node.name.text;
  }
  return undefined;
}

const isStringNode = (node: ts.Node): boolean =>
  ts.isStringLiteral(node) ||
  ts.isNoSubstitutionTemplateLiteral(node) ||
  ts.isTemplateExpression(node) ||
  (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken);

/** Reads files once each, and evaluates string expressions across them. */
export class StringEvaluator {
  private readonly files = new Map<string, ParsedFile | undefined>();

  constructor(private readonly read: (path: string) => string | undefined = readIfThere) {}

  file(path: string, text?: string): ParsedFile | undefined {
    if (!this.files.has(path)) {
      const content = text ?? this.read(path);
      this.files.set(path, content === undefined ? undefined : new ParsedFile(path, content));
    }
    return this.files.get(path);
  }

  /**
   * Every string expression of the file, evaluated, outermost first: a string nested in another
   * is part of it (not found again), except inside a hole (a call in a template, say).
   */
  strings(file: ParsedFile): { text: string; line: number }[] {
    const consumed = new Set<ts.Node>();
    const found: { text: string; line: number }[] = [];
    const visit = (node: ts.Node): void => {
      if (isStringNode(node) && !consumed.has(node)) {
        const value = this.evaluate(file, node, consumed, new Set());
        if (value.stringy) {
          const { line } = file.source.getLineAndCharacterOfPosition(node.getStart(file.source));
          found.push({ text: value.text, line: line + 1 });
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(file.source);
    return found;
  }

  private evaluate(file: ParsedFile, node: ts.Node, consumed: Set<ts.Node>, resolving: Set<ts.Node>): Evaluated {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      consumed.add(node);
      return { text: node.text, stringy: true };
    }
    if (ts.isNumericLiteral(node)) return { text: node.text, stringy: false };
    if (ts.isTemplateExpression(node)) {
      consumed.add(node);
      let text = node.head.text;
      for (const span of node.templateSpans) {
        text += this.evaluate(file, span.expression, consumed, resolving).text + span.literal.text;
      }
      return { text, stringy: true };
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const left = this.evaluate(file, node.left, consumed, resolving);
      const right = this.evaluate(file, node.right, consumed, resolving);
      if (left.stringy || right.stringy) consumed.add(node);
      return { text: left.text + right.text, stringy: left.stringy || right.stringy };
    }
    if (
      ts.isParenthesizedExpression(node) ||
      ts.isAsExpression(node) ||
      ts.isSatisfiesExpression(node) ||
      ts.isNonNullExpression(node)
    ) {
      return this.evaluate(file, node.expression, consumed, resolving);
    }
    if (ts.isIdentifier(node)) return this.constant(file, node.text, resolving);
    return UNKNOWN;
  }

  /** The value of a name: the file's one `const` of it, or the constant it imports from a relative module. */
  private constant(file: ParsedFile, name: string, resolving: Set<ts.Node>): Evaluated {
    const initializer = file.constantInitializer(name);
    if (initializer) {
      if (resolving.has(initializer)) return UNKNOWN;
      // Its strings are found where it is declared; here only its value counts.
      return this.evaluate(file, initializer, new Set(), new Set([...resolving, initializer]));
    }
    const imported = file.importOf(name);
    if (!imported?.module.startsWith('.')) return UNKNOWN;
    const base = resolve(dirname(file.path), imported.module);
    const from = this.file(`${base}.ts`) ?? this.file(`${base}/index.ts`);
    return from ? this.constant(from, imported.name, resolving) : UNKNOWN;
  }
}

function readIfThere(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Every write statement the file at `path` builds (its text given, or read), with its table. */
export function writesInFile(evaluator: StringEvaluator, path: string, text?: string): SqlWrite[] {
  const file = evaluator.file(path, text);
  if (!file) throw new Error(`cannot read ${path}`);
  return evaluator.strings(file).flatMap(({ text: sql, line }) => writesInText(sql).map((table) => ({ table, line })));
}
