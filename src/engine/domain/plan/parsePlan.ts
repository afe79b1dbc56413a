import { isMap, isSeq } from 'yaml';
import type { Node } from 'yaml';
import * as z from 'zod';
import { issue } from '../issue';
import type { Issue, Range } from '../issue';
import { PERMISSION_PROFILES, type PermissionProfile } from '../agents/presets';
import type { ParsedPlan, PlanTask } from '../types';
import { LineIndex } from '../lineIndex';
import { findFencedBlocks } from './markdownFences';
import type { FencedBlock } from './markdownFences';
import {
  YamlBlock,
  describeNode,
  isNullNode,
  openingFenceRange,
  scalarString,
  scalarText,
  sortIssuesByPosition,
} from './yamlBlock';

/**
 * The plan format (DESIGN §6, docs/plan-format.md): each task is a fenced
 * `baton-task` YAML block followed by free text, the task's instructions.
 * Every problem is an Issue with a range into the markdown file; nothing throws.
 */

export const TASK_BLOCK_INFO = 'baton-task';

/** Task ids end up in delegation ids and git branch names, so the charset is narrow. */
export const TASK_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;
export const taskIdSchema = z.string().regex(TASK_ID_PATTERN);
/** Agent names share the task id charset (they appear in delegation ids `D-<task>-<agent>-<NNN>`). */
export const agentNameSchema = taskIdSchema;
const nonEmptyStringSchema = z.string().trim().min(1);

export const DEFAULT_AGENT = 'agent';
export const PLAN_TASK_FIELDS = [
  'id',
  'title',
  'agent',
  'worker',
  'depends',
  'risk',
  'files',
  'verify',
  'isolation',
  'permissions',
] as const;
export const TASK_ISOLATION_MODES = ['worktree', 'none'] as const;
export type PlanTaskField = (typeof PLAN_TASK_FIELDS)[number];

const ID_RULE = 'a letter or digit, then up to 63 letters, digits, "_", "." or "-"';
const SHELL_OPERATORS = new Set(['|', '||', '&', '&&', ';', ';;', '>', '>>', '<', '<<', '2>', '2>&1', '&>']);

export type SplitCommandResult = { argv: string[]; error?: undefined } | { argv?: undefined; error: string };

/**
 * Splits a verify command line into argv. This is not a shell: words are separated
 * by whitespace; '…' is literal; "…" is literal except for \" and \\; quoted and
 * unquoted parts next to each other form one word; a backslash outside quotes is
 * an ordinary character. No variables, globs, pipes or redirections: an unquoted
 * shell operator (`&&`, `|`, `>` …) is an error rather than a silent argument.
 */
export function splitCommandLine(line: string): SplitCommandResult {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  let i = 0;
  const finishWord = (): string | undefined => {
    if (!inWord) return undefined;
    if (!quoted && SHELL_OPERATORS.has(word)) {
      return `"${word}" is a shell operator, and verify commands never run through a shell`;
    }
    argv.push(word);
    word = '';
    inWord = false;
    quoted = false;
    return undefined;
  };
  while (i < line.length) {
    const ch = line[i] as string;
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r') {
      const error = finishWord();
      if (error) return { error };
      i++;
    } else if (ch === "'") {
      const close = line.indexOf("'", i + 1);
      if (close === -1) return { error: `the single quote at character ${i + 1} is never closed` };
      word += line.slice(i + 1, close);
      inWord = true;
      quoted = true;
      i = close + 1;
    } else if (ch === '"') {
      let j = i + 1;
      let closed = false;
      while (j < line.length) {
        const c = line[j] as string;
        if (c === '\\' && (line[j + 1] === '"' || line[j + 1] === '\\')) {
          word += line[j + 1];
          j += 2;
        } else if (c === '"') {
          closed = true;
          break;
        } else {
          word += c;
          j++;
        }
      }
      if (!closed) return { error: `the double quote at character ${i + 1} is never closed` };
      inWord = true;
      quoted = true;
      i = j + 1;
    } else {
      word += ch;
      inWord = true;
      i++;
    }
  }
  const error = finishWord();
  if (error) return { error };
  return { argv };
}

interface TaskDraft {
  task: PlanTask;
  idRange: Range;
  /** Parallel to task.depends: where each entry is written. */
  dependsRanges: Range[];
}

interface BlockOutcome {
  draft?: TaskDraft;
  /** An id that exists in the file even though its task could not be read (it still satisfies `depends`). */
  knownId?: string;
}

class TaskBlockReader {
  private readonly fields = new Map<PlanTaskField, { key: Node; value: unknown }>();

  constructor(
    private readonly yb: YamlBlock,
    private readonly issues: Issue[],
  ) {}

  read(instructions: string): BlockOutcome {
    const { yb } = this;
    if (yb.syntaxErrors.length > 0 || !yb.doc) {
      for (const error of yb.syntaxErrors) {
        this.add(
          'plan.yaml-syntax',
          '',
          `YAML syntax error in the baton-task block: ${error.message}`,
          'Fix the YAML so the block is a mapping of task fields.',
          error.range,
        );
      }
      const root = yb.doc ? yb.deref(yb.doc.contents) : undefined;
      const id = isMap(root) ? scalarString(yb.deref(root.get('id', true))) : undefined;
      return id !== undefined && TASK_ID_PATTERN.test(id) ? { knownId: id } : {};
    }
    const root = yb.deref(yb.doc.contents);
    if (!isMap(root)) {
      const empty = isNullNode(root);
      this.add(
        'plan.not-a-mapping',
        '',
        empty
          ? 'The baton-task block is empty.'
          : `A baton-task block must be a YAML mapping of task fields, not ${describeNode(root)}.`,
        'Write the task as `key: value` lines, at least `id: T1`.',
        empty ? yb.openingFenceRange() : yb.nodeRange(root as Node),
      );
      return {};
    }
    for (const pair of root.items) {
      const keyNode = yb.deref(pair.key);
      const name = scalarString(keyNode);
      if (name !== undefined && (PLAN_TASK_FIELDS as readonly string[]).includes(name)) {
        this.fields.set(name as PlanTaskField, { key: pair.key as Node, value: yb.deref(pair.value) });
        continue;
      }
      const shown = name ?? scalarText(keyNode) ?? describeNode(keyNode);
      const suggestion = name !== undefined ? closest(name, PLAN_TASK_FIELDS) : undefined;
      this.add(
        'plan.unknown-field',
        name ?? '',
        `Unknown task field "${shown}"; it is ignored.`,
        suggestion
          ? `Did you mean "${suggestion}"? Known fields: ${PLAN_TASK_FIELDS.join(', ')}.`
          : `Known fields: ${PLAN_TASK_FIELDS.join(', ')}.`,
        yb.nodeRange((pair.key as Node | null) ?? undefined),
        'warning',
      );
    }

    const id = this.readId();
    const title = this.readString('title') ?? id?.value ?? '';
    const agent = this.readName('agent') ?? DEFAULT_AGENT;
    const worker = this.readString('worker');
    const depends = this.readList('depends', 'a task id or a list of task ids', (text) => text.split(/[\s,]+/));
    const risk = this.readList('risk', 'a risk tag or a list of risk tags', (text) => text.split(','));
    const files = this.readList('files', 'a glob or a list of globs', (text) => [text]).filter((f) =>
      this.checkFileGlob(f),
    );
    const verify = this.readVerify();
    const isolation = this.readIsolation();
    const permissions = this.readPermissions();
    if (!id) return {};
    const uniqueDepends: string[] = [];
    const dependsRanges: Range[] = [];
    for (const entry of depends) {
      if (uniqueDepends.includes(entry.value)) continue;
      uniqueDepends.push(entry.value);
      dependsRanges.push(entry.range);
    }
    const task: PlanTask = {
      id: id.value,
      title,
      agent,
      depends: uniqueDepends,
      risk: dedupe(risk.map((r) => r.value)),
      files: files.map((f) => f.value),
      verify,
      instructions,
      range: yb.blockRange(),
    };
    if (worker !== undefined) task.worker = worker;
    if (isolation !== undefined) task.isolation = isolation;
    if (permissions !== undefined) task.permissions = permissions;
    return { draft: { task, idRange: id.range, dependsRanges } };
  }

  private add(
    code: string,
    field: string,
    message: string,
    recommendation: string,
    range: Range,
    severity: 'error' | 'warning' = 'error',
  ): void {
    this.issues.push(issue(code, field, message, recommendation, range, severity));
  }

  /**
   * A `files:` glob names files of this workspace: not absolute, not a drive, not `~`, no
   * `..` segment, no control characters, at most 1,024 characters. Others are refused (and
   * dropped) with an issue at the glob.
   */
  private checkFileGlob(entry: { value: string; range: Range }): boolean {
    const glob = entry.value;
    const why =
      glob.length > 1024
        ? `is ${glob.length} characters long (at most 1,024)`
        : // eslint-disable-next-line no-control-regex
          /[\u0000-\u001f\u007f]/.test(glob)
          ? 'contains a control character'
          : /^([\\/]|[A-Za-z]:|~)/.test(glob)
            ? 'is absolute'
            : glob.split(/[\\/]/).includes('..')
              ? 'climbs out with ".."'
              : undefined;
    if (!why) return true;
    this.add(
      'plan.invalid-field',
      'files',
      `The files glob "${glob.slice(0, 80)}" ${why}; files: names files of this workspace.`,
      'Write a glob relative to the workspace, e.g. src/auth/**.',
      entry.range,
    );
    return false;
  }

  private invalid(field: string, node: unknown, message: string, recommendation: string): void {
    this.add('plan.invalid-field', field, message, recommendation, this.yb.nodeRange(node as Node));
  }

  private readId(): { value: string; range: Range } | undefined {
    const entry = this.fields.get('id');
    if (!entry || isNullNode(entry.value)) {
      this.add(
        'plan.missing-id',
        'id',
        entry ? 'The task id is empty.' : 'The task has no id.',
        'Add `id: T1` (a unique id: letters, digits, "_", "." or "-").',
        entry ? this.yb.nodeRange(entry.key) : this.yb.openingFenceRange(),
      );
      return undefined;
    }
    const range = this.yb.nodeRange(entry.value as Node);
    const text = scalarString(entry.value);
    if (text === undefined) {
      const written = scalarText(entry.value);
      this.add(
        'plan.invalid-id',
        'id',
        `The task id must be a string, not ${describeNode(entry.value)}.`,
        written !== undefined ? `Quote it: id: "${written}".` : `Use ${ID_RULE}.`,
        range,
      );
      return undefined;
    }
    if (!taskIdSchema.safeParse(text).success) {
      this.add(
        'plan.invalid-id',
        'id',
        `The task id "${text}" is not valid: ids appear in delegation ids and git branch names.`,
        `Use ${ID_RULE}.`,
        range,
      );
      return undefined;
    }
    return { value: text, range };
  }

  private readString(field: 'title' | 'worker'): string | undefined {
    const entry = this.fields.get(field);
    if (!entry || isNullNode(entry.value)) return undefined;
    const text = scalarString(entry.value);
    if (text === undefined || !nonEmptyStringSchema.safeParse(text).success) {
      this.invalid(
        field,
        entry.value,
        `"${field}" must be a non-empty string, not ${text === undefined ? describeNode(entry.value) : 'an empty string'}.`,
        `Write ${field}: "…" on one line.`,
      );
      return undefined;
    }
    return text.trim();
  }

  private readIsolation(): PlanTask['isolation'] {
    const entry = this.fields.get('isolation');
    if (!entry || isNullNode(entry.value)) return undefined;
    const text = scalarString(entry.value);
    if (text === undefined || !(TASK_ISOLATION_MODES as readonly string[]).includes(text)) {
      this.invalid(
        'isolation',
        entry.value,
        `"isolation" is ${text === undefined ? describeNode(entry.value) : `"${text}"`}; it must be worktree or none.`,
        'Write isolation: worktree (its own git worktree) or isolation: none (the shared working tree).',
      );
      return undefined;
    }
    return text as PlanTask['isolation'];
  }

  /**
   * `permissions: read-only | edit | full`, or a mapping `{ profile, allow, deny }` whose tool
   * lists go to the CLIs that have them (docs/plan-format.md).
   */
  private readPermissions(): PlanTask['permissions'] {
    const entry = this.fields.get('permissions');
    if (!entry || isNullNode(entry.value)) return undefined;
    const profileOf = (node: unknown, where: string): PermissionProfile | undefined => {
      const text = scalarString(node);
      if (text !== undefined && (PERMISSION_PROFILES as readonly string[]).includes(text))
        return text as PermissionProfile;
      this.invalid(
        'permissions',
        node,
        `"${where}" is ${text === undefined ? describeNode(node) : `"${text}"`}; it must be ${PERMISSION_PROFILES.join(', ')}.`,
        'read-only: look and answer; edit: change files in its folder; full: change files and run commands.',
      );
      return undefined;
    };
    if (!isMap(entry.value)) {
      const profile = profileOf(entry.value, 'permissions');
      return profile ? { profile } : undefined;
    }
    const { yb } = this;
    const map = entry.value;
    const profile = profileOf(yb.deref(map.get('profile', true)), 'permissions.profile');
    if (!profile) return undefined;
    const tools = (key: 'allow' | 'deny'): string[] | undefined => {
      const node = yb.deref(map.get(key, true));
      if (node === undefined || isNullNode(node)) return undefined;
      const items = isSeq(node) ? node.items.map((i) => scalarString(yb.deref(i))) : [scalarString(node)];
      if (items.some((t) => t === undefined || !t.trim())) {
        this.invalid(
          'permissions',
          node,
          `permissions.${key} must be a tool name or a list of tool names.`,
          `Write ${key}: [Bash, WebFetch] (the CLI's own tool names).`,
        );
        return undefined;
      }
      return items.map((t) => t!.trim());
    };
    const allow = tools('allow');
    const deny = tools('deny');
    return { profile, ...(allow ? { allowTools: allow } : {}), ...(deny ? { denyTools: deny } : {}) };
  }

  private readName(field: 'agent'): string | undefined {
    const entry = this.fields.get(field);
    if (!entry || isNullNode(entry.value)) return undefined;
    const text = scalarString(entry.value);
    if (text === undefined || !agentNameSchema.safeParse(text).success) {
      this.invalid(
        field,
        entry.value,
        text === undefined
          ? `"${field}" must be a string, not ${describeNode(entry.value)}.`
          : `"${field}" is "${text}", which is not a valid agent name.`,
        `Use ${ID_RULE}, e.g. agent: coder.`,
      );
      return undefined;
    }
    return text;
  }

  /** A list of strings written as a YAML list, or as one string cut by `split`. */
  private readList(
    field: 'depends' | 'risk' | 'files',
    expected: string,
    split: (text: string) => string[],
  ): Array<{ value: string; range: Range }> {
    const entry = this.fields.get(field);
    if (!entry || isNullNode(entry.value)) return [];
    const { yb } = this;
    const out: Array<{ value: string; range: Range }> = [];
    const text = scalarString(entry.value);
    if (text !== undefined) {
      let cursor = 0;
      for (const part of split(text)) {
        const value = part.trim();
        if (!value) continue;
        const located = yb.tokenRange(entry.value as Node, value, cursor);
        cursor = located.nextIndex;
        out.push({ value, range: located.range });
      }
      return out;
    }
    if (!isSeq(entry.value)) {
      this.invalid(
        field,
        entry.value,
        `"${field}" must be ${expected}, not ${describeNode(entry.value)}.`,
        `Write ${field}: [a, b] or one entry per line starting with "- ".`,
      );
      return [];
    }
    entry.value.items.forEach((raw, index) => {
      const item = yb.deref(raw);
      const value = scalarString(item);
      if (value === undefined || !nonEmptyStringSchema.safeParse(value).success) {
        const written = scalarText(item);
        this.invalid(
          field,
          item,
          `${field}[${index}] must be a non-empty string, not ${value === undefined ? describeNode(item) : 'an empty string'}.`,
          written !== undefined && value === undefined
            ? `Quote it: "${written}".`
            : `Each entry of "${field}" is ${expected.replace(/^a (.*?) or a list of .*$/, 'a $1')}.`,
        );
        return;
      }
      out.push({ value, range: yb.nodeRange(item as Node) });
    });
    return out;
  }

  private readVerify(): string[][] {
    const entry = this.fields.get('verify');
    if (!entry || isNullNode(entry.value)) return [];
    const commands: string[][] = [];
    if (scalarString(entry.value) !== undefined) {
      const argv = this.readCommand(entry.value, 'verify');
      if (argv) commands.push(argv);
      return commands;
    }
    if (!isSeq(entry.value)) {
      this.invalid(
        'verify',
        entry.value,
        `"verify" must be a list of commands, not ${describeNode(entry.value)}.`,
        'Write each command as a list item: `- [node, --test]` (argv) or `- npm test` (split at spaces, never run through a shell).',
      );
      return commands;
    }
    entry.value.items.forEach((raw, index) => {
      const argv = this.readCommand(this.yb.deref(raw), `verify[${index}]`);
      if (argv) commands.push(argv);
    });
    return commands;
  }

  private readCommand(node: unknown, where: string): string[] | undefined {
    const { yb } = this;
    let argv: string[] | undefined;
    const line = scalarString(node);
    if (line !== undefined) {
      const split = splitCommandLine(line);
      if (split.error !== undefined) {
        this.invalid(
          'verify',
          node,
          `${where}: ${split.error}.`,
          'Quote the argument, split the command into an argv list, or run a script; use [sh, -c, "…"] only if you really want a shell.',
        );
        return undefined;
      }
      argv = split.argv;
    } else if (isSeq(node)) {
      argv = [];
      for (let j = 0; j < node.items.length; j++) {
        const item = yb.deref(node.items[j]);
        const text = scalarText(item);
        if (text === undefined) {
          this.invalid(
            'verify',
            item,
            `${where}[${j}] must be a string, not ${describeNode(item)}.`,
            'Each argv entry is a string, e.g. [node, -e, "process.exit(0)"].',
          );
          return undefined;
        }
        argv.push(text);
      }
    } else {
      this.invalid(
        'verify',
        node,
        `${where} must be a command line string or an argv list, not ${describeNode(node)}.`,
        'Write `- [node, --test]` or `- npm test`.',
      );
      return undefined;
    }
    const program = argv[0];
    if (program === undefined || program.trim() === '') {
      this.invalid('verify', node, `${where} is an empty command.`, 'Give the program to run, e.g. [npm, test].');
      return undefined;
    }
    if (program.startsWith('-')) {
      this.invalid(
        'verify',
        node,
        `${where} starts with "${program}", which is an option, not a program.`,
        'An argv list needs its own brackets inside the verify list: `verify: [[node, -e, "…"]]` or `- [node, -e, "…"]`.',
      );
      return undefined;
    }
    return argv;
  }
}

/** Parses a plan. Tasks keep the order of the file; every problem is an issue with a range in the markdown. */
export function parsePlan(markdown: string): ParsedPlan {
  const text = typeof markdown === 'string' ? markdown : '';
  const lines = new LineIndex(text);
  const issues: Issue[] = [];
  const blocks = findFencedBlocks(text).filter((b) => b.info === TASK_BLOCK_INFO);
  if (blocks.length === 0) {
    const firstLineEnd = text.search(/\r?\n|$/);
    issues.push(
      issue(
        'plan.empty',
        '',
        'The plan has no ```baton-task block, so it has no tasks.',
        'Add a task: a fenced block opened with ```baton-task containing at least `id: T1`, followed by its instructions.',
        lines.range(0, Math.max(0, firstLineEnd)),
      ),
    );
    return { tasks: [], issues };
  }

  const drafts: TaskDraft[] = [];
  const firstById = new Map<string, TaskDraft>();
  const knownIds = new Set<string>();
  blocks.forEach((block, index) => {
    if (!block.closed) {
      issues.push(
        issue(
          'plan.unclosed-block',
          '',
          `The baton-task block opened at line ${block.openLine} is never closed, so the rest of the file is inside it.`,
          `Close the block with a line of ${block.fenceLength} ${block.fenceChar === '`' ? 'backticks' : 'tildes'} (${block.fenceChar.repeat(block.fenceLength)}).`,
          openingFenceRange(text, lines, block),
        ),
      );
      return;
    }
    const yb = new YamlBlock(text, lines, block);
    const outcome = new TaskBlockReader(yb, issues).read(instructionsAfter(text, block, blocks[index + 1]));
    if (outcome.knownId) knownIds.add(outcome.knownId);
    const draft = outcome.draft;
    if (!draft) return;
    const first = firstById.get(draft.task.id);
    if (first) {
      issues.push(
        issue(
          'plan.duplicate-id',
          'id',
          `The task id "${draft.task.id}" is already used by the task at line ${first.idRange.start.line}.`,
          'Give each task a unique id.',
          draft.idRange,
        ),
      );
      return;
    }
    firstById.set(draft.task.id, draft);
    knownIds.add(draft.task.id);
    drafts.push(draft);
  });

  for (const draft of drafts) {
    draft.task.depends.forEach((dep, i) => {
      if (knownIds.has(dep)) return;
      const suggestion = closest(dep, [...knownIds]);
      issues.push(
        issue(
          'plan.unknown-dependency',
          'depends',
          `Task "${draft.task.id}" depends on "${dep}", which is not a task in this plan.`,
          suggestion
            ? `Did you mean "${suggestion}"? Otherwise remove it or add a task with that id.`
            : 'Remove it or add a task with that id.',
          draft.dependsRanges[i],
        ),
      );
    });
  }
  issues.push(...findCycles(drafts));

  return { tasks: drafts.map((d) => d.task), issues: sortIssuesByPosition(issues) };
}

const ATX_HEADING = /^ {0,3}#{1,6}(?:[ \t].*)?$/;
const THEMATIC_BREAK = /^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$/;
const SETEXT_UNDERLINE = /^ {0,3}(?:=+|-+)[ \t]*$/;
const FENCE_LINE = /^ {0,3}(?:`{3,}|~{3,})/;

/** A line that can be the text of a setext heading (so the `---` under it is an underline, not a break). */
function isParagraphLine(line: string | undefined): boolean {
  return (
    line !== undefined &&
    line.trim() !== '' &&
    !FENCE_LINE.test(line) &&
    !ATX_HEADING.test(line) &&
    !THEMATIC_BREAK.test(line)
  );
}

/**
 * The text between a task block and the next baton-task block. Headings and
 * thematic breaks at its end introduce the next task, so they are not part of
 * this task's instructions.
 */
function instructionsAfter(text: string, block: FencedBlock, next: FencedBlock | undefined): string {
  const lines = text.slice(block.after, next ? next.lineStart : text.length).split(/\r?\n/);
  for (;;) {
    const last = lines[lines.length - 1];
    if (last === undefined) break;
    if (last.trim() === '' || ATX_HEADING.test(last)) {
      lines.pop();
    } else if (SETEXT_UNDERLINE.test(last) && isParagraphLine(lines[lines.length - 2])) {
      lines.splice(lines.length - 2, 2);
    } else if (THEMATIC_BREAK.test(last)) {
      lines.pop();
    } else {
      break;
    }
  }
  return lines.join('\n').trim();
}

/**
 * One issue per strongly connected group of tasks (a self-dependency counts). The
 * message names the shortest cycle through the group's first task in file order.
 */
function findCycles(drafts: TaskDraft[]): Issue[] {
  const index = new Map(drafts.map((d, i) => [d.task.id, i]));
  const edges = drafts.map((d) =>
    d.task.depends.map((dep) => index.get(dep)).filter((i): i is number => i !== undefined),
  );
  const groups = stronglyConnected(edges);
  const issues: Issue[] = [];
  for (const group of groups) {
    const members = new Set(group);
    const start = Math.min(...group);
    const selfLoop = (edges[start] ?? []).includes(start);
    if (group.length === 1 && !selfLoop) continue;
    const path = selfLoop ? [start, start] : shortestCycle(start, edges, members);
    const startDraft = drafts[start] as TaskDraft;
    const next = path[1] ?? start;
    const nextId = (drafts[next] as TaskDraft).task.id;
    const entry = Math.max(0, startDraft.task.depends.indexOf(nextId));
    const names = path.map((i) => (drafts[i] as TaskDraft).task.id);
    const extra =
      group.length > path.length - 1
        ? ` Tasks ${[...group]
            .sort((a, b) => a - b)
            .map((i) => (drafts[i] as TaskDraft).task.id)
            .join(', ')} all depend on each other.`
        : '';
    issues.push(
      issue(
        'plan.dependency-cycle',
        'depends',
        `Dependency cycle: ${names.join(' → ')}.${extra}`,
        'Remove one of these dependencies so the tasks can run in order.',
        startDraft.dependsRanges[entry] ?? startDraft.idRange,
      ),
    );
  }
  return issues;
}

function shortestCycle(start: number, edges: number[][], members: Set<number>): number[] {
  const previous = new Map<number, number>();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const node = queue[q] as number;
    for (const next of edges[node] ?? []) {
      if (!members.has(next)) continue;
      if (next === start) {
        const path = [start];
        for (let at: number | undefined = node; at !== undefined && at !== start; at = previous.get(at))
          path.splice(1, 0, at);
        path.push(start);
        return path;
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return [start, start];
}

/** Tarjan's algorithm without recursion, so a long chain of tasks cannot overflow the stack. */
function stronglyConnected(edges: number[][]): number[][] {
  const order = new Array<number>(edges.length).fill(-1);
  const low = new Array<number>(edges.length).fill(0);
  const onStack = new Array<boolean>(edges.length).fill(false);
  const stack: number[] = [];
  const groups: number[][] = [];
  let counter = 0;
  for (let root = 0; root < edges.length; root++) {
    if (order[root] !== -1) continue;
    const work: Array<{ node: number; edge: number }> = [{ node: root, edge: 0 }];
    order[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = true;
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: number; edge: number };
      const out = edges[frame.node] ?? [];
      if (frame.edge < out.length) {
        const next = out[frame.edge++] as number;
        if (order[next] === -1) {
          order[next] = low[next] = counter++;
          stack.push(next);
          onStack[next] = true;
          work.push({ node: next, edge: 0 });
        } else if (onStack[next]) {
          low[frame.node] = Math.min(low[frame.node] as number, order[next] as number);
        }
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low[parent.node] = Math.min(low[parent.node] as number, low[frame.node] as number);
      if (low[frame.node] === order[frame.node]) {
        const group: number[] = [];
        let member: number | undefined;
        do {
          member = stack.pop();
          if (member === undefined) break;
          onStack[member] = false;
          group.push(member);
        } while (member !== frame.node);
        groups.push(group);
      }
    }
  }
  return groups;
}

function dedupe(values: string[]): string[] {
  return [...new Set(values)];
}

/** The known name closest to `name` when it is a likely typo (edit distance ≤ 2), for "did you mean". */
function closest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    if (candidate === name) continue;
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase(), bestDistance);
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string, cap: number): number {
  if (Math.abs(a.length - b.length) >= cap) return cap;
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] ?? cap;
}
