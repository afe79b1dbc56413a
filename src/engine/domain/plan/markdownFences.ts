/**
 * A small scanner for CommonMark fenced code blocks (spec 0.31, §4.5), enough to find
 * `baton-task` and `baton-result` blocks exactly where a markdown renderer would.
 *
 * Faithful to the spec for top-level blocks:
 * - an opening fence is 3+ backticks or tildes indented by at most 3 spaces; a
 *   backtick fence's info string may not contain a backtick;
 * - the info string is trimmed and its first word is the language (`info`);
 * - the closing fence uses the same character, is at least as long as the opening
 *   fence, is indented by at most 3 spaces and is followed only by spaces or tabs;
 * - up to `indent` spaces (the opening fence's indentation) are removed from each
 *   content line;
 * - a block that is never closed runs to the end of the document (`closed: false`);
 * - HTML comment blocks (`<!--` … `-->`, spec §4.6 kind 2) hide fences, so a task
 *   commented out in the markdown is not a task.
 *
 * Not handled (documented in docs/plan-format.md): blocks nested in block quotes or
 * list items deeper than 3 spaces, tab-expanded indentation (a tab before the fence
 * means "not a fence"), backslash escapes and entities in the info string.
 *
 * Line endings are `\n` or `\r\n`; offsets are UTF-16 offsets into the input string.
 */

/**
 * One content line of a fenced block: its text (indentation and `\r` removed) and where that text starts in the
 * document.
 */
export interface FencedBlockLine {
  offset: number;
  text: string;
}

export interface FencedBlock {
  /** The first word of the info string (the language), '' when there is none. */
  info: string;
  /** The whole trimmed info string. */
  infoString: string;
  fenceChar: '`' | '~';
  fenceLength: number;
  /** Spaces before the opening fence (0–3). */
  indent: number;
  /** The block's content, one `\n`-terminated line per content line (CommonMark's literal content). */
  content: string;
  /** Content lines with their document offsets; `content` is these texts joined by `\n`. */
  lines: FencedBlockLine[];
  /** Offset of the first content line (just after the opening fence line's line break). */
  contentStart: number;
  /** Offset just after the last content line's line break: the closing fence line start, or the document end. */
  contentEnd: number;
  /** Offset of the opening fence's first fence character. */
  openStart: number;
  /** Offset of the end of the opening fence line (before its line break). */
  openEnd: number;
  /** Offset of the closing fence's first fence character, when closed. */
  closeStart?: number;
  /** Offset of the end of the closing fence line (before its line break), when closed. */
  closeEnd?: number;
  /** Offset of the start of the opening fence line (before the indentation). */
  lineStart: number;
  /** Offset just after the block: after the closing fence line's line break, or the document end. */
  after: number;
  /** 1-based line of the opening fence. */
  openLine: number;
  /** 1-based line of the closing fence, when closed. */
  closeLine?: number;
  /** 1-based last line of the block (the closing fence line, or the last line of the document). */
  endLine: number;
  closed: boolean;
}

interface SourceLine {
  /** Offset of the first character of the line. */
  start: number;
  /** Offset of the end of the line's text (before `\r\n` or `\n`). */
  end: number;
  /** Offset of the next line (after the line break), or the document length. */
  next: number;
  text: string;
}

function splitLines(text: string): SourceLine[] {
  const lines: SourceLine[] = [];
  // A byte order mark is not content: skip it so a fence on the first line is still a fence.
  let start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (start < text.length) {
    const nl = text.indexOf('\n', start);
    const lineBreak = nl === -1 ? text.length : nl;
    const end = lineBreak > start && text.charCodeAt(lineBreak - 1) === 13 ? lineBreak - 1 : lineBreak;
    const next = nl === -1 ? text.length : nl + 1;
    lines.push({ start, end, next, text: text.slice(start, end) });
    start = next;
  }
  return lines;
}

interface Fence {
  indent: number;
  char: '`' | '~';
  length: number;
  rest: string;
}

function readFence(line: string): Fence | undefined {
  let i = 0;
  while (i < line.length && line.charCodeAt(i) === 32) i++;
  if (i > 3) return undefined;
  const ch = line[i];
  if (ch !== '`' && ch !== '~') return undefined;
  let j = i;
  while (line[j] === ch) j++;
  if (j - i < 3) return undefined;
  return { indent: i, char: ch, length: j - i, rest: line.slice(j) };
}

const TRAILING_BLANK = /^[ \t]*$/;
const HTML_COMMENT_START = /^ {0,3}<!--/;

function isClosingFence(line: string, open: Fence): boolean {
  const fence = readFence(line);
  return (
    fence !== undefined && fence.char === open.char && fence.length >= open.length && TRAILING_BLANK.test(fence.rest)
  );
}

function stripIndent(text: string, indent: number): number {
  let i = 0;
  while (i < indent && i < text.length && text.charCodeAt(i) === 32) i++;
  return i;
}

/** Finds every top-level fenced code block, in document order. Never throws. */
export function findFencedBlocks(text: string): FencedBlock[] {
  const lines = splitLines(text);
  const blocks: FencedBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i] as SourceLine;
    if (HTML_COMMENT_START.test(line.text)) {
      while (i < lines.length && !(lines[i] as SourceLine).text.includes('-->')) i++;
      i++;
      continue;
    }
    const open = readFence(line.text);
    if (!open || (open.char === '`' && open.rest.includes('`'))) {
      i++;
      continue;
    }
    // CommonMark whitespace is ASCII only; String.prototype.trim would also eat NBSP and BOM.
    const infoString = open.rest.replace(/^[ \t\v\f]+|[ \t\v\f]+$/g, '');
    const info = infoString.split(/[ \t\v\f]/, 1)[0] ?? '';
    const content: FencedBlockLine[] = [];
    let j = i + 1;
    let closing: SourceLine | undefined;
    for (; j < lines.length; j++) {
      const candidate = lines[j] as SourceLine;
      if (isClosingFence(candidate.text, open)) {
        closing = candidate;
        break;
      }
      const cut = stripIndent(candidate.text, open.indent);
      content.push({ offset: candidate.start + cut, text: candidate.text.slice(cut) });
    }
    const contentStart = line.next;
    const block: FencedBlock = {
      info,
      infoString,
      fenceChar: open.char,
      fenceLength: open.length,
      indent: open.indent,
      content: content.map((l) => l.text + '\n').join(''),
      lines: content,
      contentStart,
      contentEnd: closing ? closing.start : text.length,
      openStart: line.start + open.indent,
      openEnd: line.end,
      lineStart: line.start,
      after: closing ? closing.next : text.length,
      openLine: i + 1,
      endLine: closing ? j + 1 : Math.max(i + 1, lines.length),
      closed: closing !== undefined,
    };
    if (closing) {
      block.closeStart = closing.start + (readFence(closing.text)?.indent ?? 0);
      block.closeEnd = closing.end;
      block.closeLine = j + 1;
    }
    blocks.push(block);
    i = closing ? j + 1 : lines.length;
  }
  return blocks;
}

/**
 * Maps an offset into `block.content` (as a YAML parser reports it) to an offset into
 * the markdown document. Offsets past a line's text map to that line's end; offsets
 * past the content map to `contentEnd`.
 */
export function contentOffsetToDocument(block: FencedBlock, contentOffset: number): number {
  if (!Number.isFinite(contentOffset) || contentOffset <= 0) return block.lines[0]?.offset ?? block.contentEnd;
  let lineStartInContent = 0;
  for (const line of block.lines) {
    const lineEndInContent = lineStartInContent + line.text.length;
    if (contentOffset <= lineEndInContent) return line.offset + (contentOffset - lineStartInContent);
    lineStartInContent = lineEndInContent + 1;
  }
  return block.contentEnd;
}
