import { isAlias, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { Document, Node } from 'yaml';
import type { Issue, Range } from '../issue';
import type { LineIndex } from '../lineIndex';
import type { FencedBlock } from './markdownFences';
import { contentOffsetToDocument } from './markdownFences';

/** A YAML syntax error with its range in the markdown document. */
export interface YamlSyntaxError {
  message: string;
  range: Range;
}

const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

/**
 * The YAML inside one fenced block, with every node position translated into a
 * range of the markdown document that holds the block (shared by the plan and the
 * result parsers, so both report issues where the user can click them).
 */
export class YamlBlock {
  readonly doc: Document.Parsed | undefined;
  readonly syntaxErrors: YamlSyntaxError[] = [];

  constructor(
    private readonly markdown: string,
    private readonly lines: LineIndex,
    readonly block: FencedBlock,
  ) {
    try {
      this.doc = parseDocument(block.content, { prettyErrors: false, uniqueKeys: true });
      for (const error of this.doc.errors) {
        this.syntaxErrors.push({ message: error.message, range: this.contentRange(error.pos[0], error.pos[1]) });
      }
    } catch (error) {
      // The yaml package reports problems as document errors; this guards the "never throws" promise.
      this.doc = undefined;
      this.syntaxErrors.push({
        message: error instanceof Error ? error.message : String(error),
        range: this.openingFenceRange(),
      });
    }
  }

  /** A range given in offsets of the markdown document, with trailing whitespace and line breaks left out. */
  documentRange(start: number, end: number): Range {
    const from = clamp(start, 0, this.markdown.length);
    let to = clamp(end, from, this.markdown.length);
    while (to > from && WHITESPACE.has(this.markdown[to - 1] as string)) to--;
    return this.lines.range(from, to);
  }

  /** A range given in offsets of the block's content (as the YAML parser reports them). */
  contentRange(start: number, end: number): Range {
    // The parser reports "unexpected end" at the end of the content; show it at the end of the last line, not on the
    // closing fence.
    const last = Math.max(0, this.block.content.length - 1);
    const from = contentOffsetToDocument(this.block, Math.min(start, last));
    return this.documentRange(from, Math.max(from, contentOffsetToDocument(this.block, Math.min(end, last))));
  }

  /** The range of a node's value (comments and trailing line breaks excluded). */
  nodeRange(node: Node | null | undefined): Range {
    const range = node?.range;
    if (!range) return this.openingFenceRange();
    return this.contentRange(range[0], range[1]);
  }

  /** The range of `token` inside a scalar node's source, or the whole node when it cannot be found verbatim. */
  tokenRange(node: Node, token: string, fromIndex = 0): { range: Range; nextIndex: number } {
    const range = node.range;
    if (range && token.length > 0) {
      const source = this.block.content.slice(range[0], range[1]);
      const at = source.indexOf(token, fromIndex);
      if (at >= 0) {
        return { range: this.contentRange(range[0] + at, range[0] + at + token.length), nextIndex: at + token.length };
      }
    }
    return { range: this.nodeRange(node), nextIndex: fromIndex };
  }

  /** The opening fence line, from the first fence character to the end of the info string. */
  openingFenceRange(): Range {
    return openingFenceRange(this.markdown, this.lines, this.block);
  }

  /** The whole block, opening fence to closing fence (or the end of the document when unclosed). */
  blockRange(): Range {
    return blockRange(this.markdown, this.lines, this.block);
  }

  /** An alias stands for the node it names; anything else stands for itself. */
  deref(node: unknown): unknown {
    if (isAlias(node) && this.doc) {
      try {
        return node.resolve(this.doc);
      } catch {
        return undefined;
      }
    }
    return node;
  }
}

/** The whole fenced block as a range of the markdown document. */
export function blockRange(markdown: string, lines: LineIndex, block: FencedBlock): Range {
  let end = block.closeEnd ?? block.contentEnd;
  while (end > block.openStart && WHITESPACE.has(markdown[end - 1] as string)) end--;
  return lines.range(block.openStart, Math.max(block.openEnd, end));
}

/** The opening fence line of a block as a range of the markdown document. */
export function openingFenceRange(markdown: string, lines: LineIndex, block: FencedBlock): Range {
  let end = block.openEnd;
  while (end > block.openStart && WHITESPACE.has(markdown[end - 1] as string)) end--;
  return lines.range(block.openStart, end);
}

/** A scalar's string value, or undefined for anything else (numbers, booleans, null, collections). */
export function scalarString(node: unknown): string | undefined {
  return isScalar(node) && typeof node.value === 'string' ? node.value : undefined;
}

/** A plain (unquoted) scalar as written, e.g. `4096` or `true`; quoted and block scalars give their string value. */
export function scalarText(node: unknown): string | undefined {
  if (!isScalar(node)) return undefined;
  if (typeof node.value === 'string') return node.value;
  if (node.value === null || node.value === undefined) return undefined;
  if (typeof node.value === 'number' || typeof node.value === 'boolean' || typeof node.value === 'bigint') {
    return node.source ?? String(node.value);
  }
  return undefined;
}

/** Whether a node is an empty value (`key:` with nothing after it, `~` or `null`). */
export function isNullNode(node: unknown): boolean {
  return node === null || node === undefined || (isScalar(node) && (node.value === null || node.value === undefined));
}

/** A short name for a YAML node's kind, for messages ("a list", "a number"). */
export function describeNode(node: unknown): string {
  if (isNullNode(node)) return 'nothing';
  if (isScalar(node)) {
    const v = node.value;
    if (typeof v === 'string') return 'a string';
    if (typeof v === 'number' || typeof v === 'bigint') return 'a number';
    if (typeof v === 'boolean') return 'a boolean';
    return 'a scalar';
  }
  if (isMap(node)) return 'a mapping';
  if (isSeq(node)) return 'a list';
  return 'a value of another kind';
}

function clamp(value: number, min: number, max: number): number {
  if (!Number.isFinite(value)) return min;
  return Math.min(Math.max(value, min), max);
}

/** Issues in document order (stable; issues without a range keep their place relative to each other and go first). */
export function sortIssuesByPosition(issues: Issue[]): Issue[] {
  return issues
    .map((value, index) => ({ value, index }))
    .sort((a, b) => {
      const pa = a.value.range?.start;
      const pb = b.value.range?.start;
      if (!pa || !pb) return pa === pb ? a.index - b.index : pa ? 1 : -1;
      return pa.line - pb.line || pa.column - pb.column || a.index - b.index;
    })
    .map((x) => x.value);
}
