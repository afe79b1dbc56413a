import { MAX_FOLLOW_UP_BYTES } from './followUp';

/**
 * Review comments (docs/extension.md, "Review comments"): a person comments on lines of what an attempt changed (the
 * editor's Show Changes) and sends them all to the task's agent as one follow-up message. The message is written here,
 * once, for every caller (the editor's *Send Review to Agent*, a `review` gate's *Request Changes*).
 */

/** One comment on the changed (right-hand) side of an attempt's diff. */
export interface ReviewComment {
  /** The file, workspace-relative, forward slashes. */
  path: string;
  /** The first line commented on, 1-based. */
  line: number;
  /** The last line, when the comment spans more than one. */
  endLine?: number;
  /** The commented line(s) as the attempt left them (what the agent finds there), for the agent to find them again. */
  quote: string;
  /** What the person said. */
  text: string;
}

/** At most this many comments go in one review: more is a conversation, not a review. */
export const MAX_REVIEW_COMMENTS = 100;
/** A quote is the commented lines, at most this many of them, each cut at QUOTE_LINE_CHARS. */
const QUOTE_LINES = 5;
const QUOTE_LINE_CHARS = 200;

/** Why these comments are not a review Baton sends, or undefined. */
export function reviewProblem(comments: readonly ReviewComment[]): string | undefined {
  if (comments.length === 0) return 'The review has no comment; add a comment on a changed line first.';
  if (comments.length > MAX_REVIEW_COMMENTS)
    return `The review has ${comments.length} comments; one review holds at most ${MAX_REVIEW_COMMENTS}.`;
  for (const c of comments) {
    if (!c.path.trim()) return 'A review comment names no file.';
    if (!Number.isInteger(c.line) || c.line < 1) return `A review comment on ${c.path} names no line (${c.line}).`;
    if (c.endLine !== undefined && (!Number.isInteger(c.endLine) || c.endLine < c.line))
      return `A review comment on ${c.path}:${c.line} ends before it starts (line ${c.endLine}).`;
    if (!c.text.trim()) return `The comment on ${c.path}:${c.line} is empty; say what the agent should change.`;
  }
  return undefined;
}

/** The commented lines as a quote keeps them: at most QUOTE_LINES, each at most QUOTE_LINE_CHARS, ends trimmed. */
export function quoteOf(lines: readonly string[]): string {
  const kept = lines.slice(0, QUOTE_LINES).map((l) => {
    const line = l.replace(/\s+$/, '');
    return line.length > QUOTE_LINE_CHARS ? `${line.slice(0, QUOTE_LINE_CHARS - 1)}…` : line;
  });
  if (lines.length > QUOTE_LINES) kept.push(`… (${lines.length - QUOTE_LINES} more lines)`);
  return kept.join('\n');
}

/** `src/a.ts, line 3` / `src/a.ts, lines 3–5`. */
export function commentPlace(c: Pick<ReviewComment, 'path' | 'line' | 'endLine'>): string {
  return c.endLine !== undefined && c.endLine > c.line
    ? `${c.path}, lines ${c.line}–${c.endLine}`
    : `${c.path}, line ${c.line}`;
}

/**
 * The follow-up message a review is: one numbered item per comment — its file (workspace-relative) and line, the line
 * quoted as the attempt left it, the comment — ordered by file and line. Every line of a quote or a comment is indented
 * under its item, so none can start a heading of the prompt it opens (domain/prompt.ts, `messagesFirst`). Throws no
 * error: check `reviewProblem` and the size (`reviewMessageProblem`) first.
 */
export function reviewMessage(comments: readonly ReviewComment[], reviewed?: string): string {
  const sorted = [...comments].sort((a, b) => (a.path === b.path ? a.line - b.line : a.path < b.path ? -1 : 1));
  const count = sorted.length === 1 ? 'one comment' : `${sorted.length} comments`;
  const lines = [
    `Review of your changes${reviewed ? ` (${reviewed})` : ''}: ${count}. Each names a file (relative to the workspace) and a line, quotes that line as you left it, and says what to change. Address every comment.`,
    '',
  ];
  sorted.forEach((c, i) => {
    lines.push(`${i + 1}. ${commentPlace(c)}:`);
    const quote = c.quote.split('\n');
    if (quote.some((l) => l.trim())) for (const l of quote) lines.push(`   > ${l}`);
    else lines.push('   > (an empty line)');
    for (const l of c.text.trim().split(/\r?\n/)) lines.push(l.trim() ? `   ${l}` : '');
    lines.push('');
  });
  return lines.join('\n').trimEnd();
}

/** Why the review's message is too long to send, or undefined. */
export function reviewMessageProblem(message: string): string | undefined {
  const bytes = Buffer.byteLength(message);
  return bytes > MAX_FOLLOW_UP_BYTES
    ? `The review is ${bytes.toLocaleString('en-US')} bytes as a message; a follow-up holds at most ${MAX_FOLLOW_UP_BYTES.toLocaleString('en-US')}: send fewer or shorter comments.`
    : undefined;
}
