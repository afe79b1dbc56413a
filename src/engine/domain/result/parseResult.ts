import { isMap, isScalar, isSeq } from 'yaml';
import type { Node } from 'yaml';
import * as z from 'zod';
import { hasErrors, issue } from '../issue';
import type { Issue, IssueSeverity, Range } from '../issue';
import { RESULT_STATUSES } from '../types';
import type { ResultStatus } from '../types';
import { LineIndex } from '../lineIndex';
import { findFencedBlocks } from '../plan/markdownFences';
import type { FencedBlock } from '../plan/markdownFences';
import {
  YamlBlock,
  describeNode,
  isNullNode,
  openingFenceRange,
  scalarString,
  scalarText,
  sortIssuesByPosition,
} from '../plan/yamlBlock';

/**
 * The result contract (DESIGN §6, docs/result-contract.md): a worker's markdown
 * artifact holds exactly one fenced result block, either ```baton-result
 * (`contract: baton-result-v1`) or ```sdd-result (`contract: sdd-result-v1`).
 * Every problem is an Issue with a range into the artifact; nothing throws.
 */

export const RESULT_CONTRACTS = { 'baton-result': 'baton-result-v1', 'sdd-result': 'sdd-result-v1' } as const;
export type ResultBlockInfo = keyof typeof RESULT_CONTRACTS;
export type ResultContract = (typeof RESULT_CONTRACTS)[ResultBlockInfo];
export type ResultField = 'contract' | 'task' | 'agent' | 'status' | 'summary' | 'artifacts';

/** The opening fence of a result block (up to three spaces of indent, as CommonMark allows). */
export const RESULT_FENCE = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*(baton-result|sdd-result)\b/m;

/** Does the text (a log, an agent's last message) hold a result block? A quick look before parsing it. */
export function hasResultBlock(text: string): boolean {
  return RESULT_FENCE.test(text);
}

export interface ParsedResult {
  contract: ResultContract;
  task: string;
  agent: string;
  status: ResultStatus;
  /** '' for an sdd-result block, which has no summary. */
  summary: string;
  /** Workspace-relative paths exactly as written; checkArtifactPaths validates them. */
  artifacts: string[];
  /** sdd-result only. */
  version?: string | number;
  /** The whole result block, fence to fence. */
  blockRange: Range;
  /** Where each field's value is written. */
  fieldRanges: Partial<Record<ResultField, Range>>;
  /** Parallel to `artifacts`: where each entry is written. */
  artifactRanges: Range[];
}

export interface ExpectedIdentity {
  taskId: string;
  agent: string;
}

export interface ParsedResultArtifact {
  /** Present when the block satisfies its contract (identity and artifact paths are checked separately). */
  result?: ParsedResult;
  issues: Issue[];
}

type FieldName = ResultField | 'version';

const FIELDS: Record<ResultBlockInfo, readonly FieldName[]> = {
  'baton-result': ['contract', 'task', 'agent', 'status', 'summary', 'artifacts'],
  'sdd-result': ['contract', 'version', 'agent', 'task', 'status', 'artifacts'],
};

const nonEmptyString = z.string().trim().min(1);
const statusSchema = z.enum(RESULT_STATUSES);

function isResultBlockInfo(info: string): info is ResultBlockInfo {
  return info === 'baton-result' || info === 'sdd-result';
}

/**
 * Parses a result artifact. With `expected`, the task and agent the block names are
 * also compared with the delegation's (as checkResultIdentity does), even when
 * other fields are invalid, so one pass reports every problem.
 */
export function parseResultArtifact(markdown: string, expected?: ExpectedIdentity): ParsedResultArtifact {
  const text = typeof markdown === 'string' ? markdown : '';
  const lines = new LineIndex(text);
  const issues: Issue[] = [];
  const fenced = findFencedBlocks(text);
  const blocks = fenced.filter((b) => isResultBlockInfo(b.info));
  if (blocks.length === 0) {
    const nearMiss = fenced.find((b) => /result/i.test(b.info));
    issues.push(
      issue(
        'result.no-block',
        '',
        nearMiss
          ? `The artifact has no result block; the block at line ${nearMiss.openLine} is marked "${nearMiss.info}", not "baton-result".`
          : 'The artifact has no ```baton-result block.',
        'End the artifact with a fenced ```baton-result block holding contract, task, agent, status, summary and artifacts.',
        nearMiss ? openingFenceRange(text, lines, nearMiss) : lines.range(0, Math.max(0, text.search(/\r?\n|$/))),
      ),
    );
    return { issues };
  }
  const [block, ...extras] = blocks as [FencedBlock, ...FencedBlock[]];
  for (const extra of extras) {
    issues.push(
      issue(
        'result.multiple-blocks',
        '',
        `The artifact has more than one result block: the first is at line ${block.openLine}, another at line ${extra.openLine}.`,
        'Keep exactly one result block; move examples out of fenced result blocks.',
        openingFenceRange(text, lines, extra),
      ),
    );
  }
  if (!block.closed) {
    issues.push(
      issue(
        'result.unclosed-block',
        '',
        `The result block opened at line ${block.openLine} is never closed.`,
        `Close it with a line of ${block.fenceLength} ${block.fenceChar === '`' ? 'backticks' : 'tildes'} (${block.fenceChar.repeat(block.fenceLength)}).`,
        openingFenceRange(text, lines, block),
      ),
    );
    return { issues };
  }
  const reader = new ResultBlockReader(new YamlBlock(text, lines, block), block.info as ResultBlockInfo, issues);
  const result = reader.read();
  if (expected) {
    issues.push(...identityIssues(reader.identity, expected));
  }
  const sorted = sortIssuesByPosition(issues);
  return result && !hasErrors(issues.filter((i) => !IDENTITY_CODES.has(i.code)))
    ? { result, issues: sorted }
    : { issues: sorted };
}

const IDENTITY_CODES = new Set(['result.task-mismatch', 'result.agent-mismatch']);

/** Compares the task and agent a result names with the delegation it is ingested for. */
export function checkResultIdentity(
  result: Pick<ParsedResult, 'task' | 'agent' | 'fieldRanges'>,
  expected: ExpectedIdentity,
): Issue[] {
  return identityIssues({ task: result.task, agent: result.agent, ranges: result.fieldRanges }, expected);
}

/**
 * Identity issues for whichever of task and agent could be read; a field that is missing or invalid was reported
 * already.
 */
function identityIssues(found: ResultIdentity, expected: ExpectedIdentity): Issue[] {
  const issues: Issue[] = [];
  if (found.task !== undefined && found.task !== expected.taskId) {
    issues.push(
      issue(
        'result.task-mismatch',
        'task',
        `The result is for task "${found.task}", but this delegation is for task "${expected.taskId}".`,
        `Set task: ${expected.taskId}, or ingest the artifact for the delegation of task "${found.task}".`,
        found.ranges.task,
      ),
    );
  }
  if (found.agent !== undefined && found.agent !== expected.agent) {
    issues.push(
      issue(
        'result.agent-mismatch',
        'agent',
        `The result was written by agent "${found.agent}", but this delegation is assigned to agent "${expected.agent}".`,
        `Set agent: ${expected.agent}, or ingest the artifact for the matching delegation.`,
        found.ranges.agent,
      ),
    );
  }
  return issues;
}

interface ResultIdentity {
  task?: string;
  agent?: string;
  ranges: Partial<Record<ResultField, Range>>;
}

class ResultBlockReader {
  readonly identity: ResultIdentity = { ranges: {} };
  private readonly fields = new Map<FieldName, { key: Node; value: unknown }>();

  constructor(
    private readonly yb: YamlBlock,
    private readonly info: ResultBlockInfo,
    private readonly issues: Issue[],
  ) {}

  read(): ParsedResult | undefined {
    const { yb, info } = this;
    if (yb.syntaxErrors.length > 0 || !yb.doc) {
      for (const error of yb.syntaxErrors) {
        this.add(
          'result.yaml-syntax',
          '',
          `YAML syntax error in the ${info} block: ${error.message}`,
          'Fix the YAML so the block is a mapping of result fields.',
          error.range,
        );
      }
      return undefined;
    }
    const root = yb.deref(yb.doc.contents);
    if (!isMap(root)) {
      this.add(
        'result.invalid-field',
        '',
        `The ${info} block must be a YAML mapping of result fields, not ${describeNode(root)}.`,
        `Write the fields as \`key: value\` lines: ${FIELDS[info].join(', ')}.`,
        isNullNode(root) ? yb.openingFenceRange() : yb.nodeRange(root as Node),
      );
      return undefined;
    }
    const known = FIELDS[info];
    for (const pair of root.items) {
      const keyNode = yb.deref(pair.key);
      const name = scalarString(keyNode);
      if (name !== undefined && (known as readonly string[]).includes(name)) {
        this.fields.set(name as FieldName, { key: pair.key as Node, value: yb.deref(pair.value) });
        continue;
      }
      const shown = name ?? scalarText(keyNode) ?? describeNode(keyNode);
      this.add(
        'result.unknown-field',
        name ?? '',
        info === 'sdd-result' && name === 'summary'
          ? 'An sdd-result block has no summary field; it is ignored.'
          : `Unknown field "${shown}" in the ${info} block; it is ignored.`,
        `Fields of ${RESULT_CONTRACTS[info]}: ${known.join(', ')}.`,
        yb.nodeRange((pair.key as Node | null) ?? undefined),
        'warning',
      );
    }

    const contract = this.readContract();
    const task = this.readText('task');
    const agent = this.readText('agent');
    const status = this.readStatus();
    const summary = info === 'baton-result' ? this.readSummary() : '';
    const version = info === 'sdd-result' ? this.readVersion() : undefined;
    const artifacts = this.readArtifacts();
    this.identity.task = task?.value;
    this.identity.agent = agent?.value;
    if (task) this.identity.ranges.task = task.range;
    if (agent) this.identity.ranges.agent = agent.range;

    if (
      !contract ||
      !task ||
      !agent ||
      !status ||
      summary === undefined ||
      !artifacts ||
      (info === 'sdd-result' && version === undefined)
    )
      return undefined;
    const result: ParsedResult = {
      contract: contract.value,
      task: task.value,
      agent: agent.value,
      status: status.value,
      summary: typeof summary === 'string' ? summary : summary.value,
      artifacts: artifacts.entries.map((a) => a.value),
      blockRange: yb.blockRange(),
      fieldRanges: {
        contract: contract.range,
        task: task.range,
        agent: agent.range,
        status: status.range,
        artifacts: artifacts.range,
      },
      artifactRanges: artifacts.entries.map((a) => a.range),
    };
    if (typeof summary !== 'string') result.fieldRanges.summary = summary.range;
    if (version !== undefined) result.version = version;
    return result;
  }

  private add(
    code: string,
    field: string,
    message: string,
    recommendation: string,
    range: Range,
    severity: IssueSeverity = 'error',
  ): void {
    this.issues.push(issue(code, field, message, recommendation, range, severity));
  }

  /** The field's value node, or undefined after reporting `result.missing-field` (absent, or present with no value). */
  private required(field: FieldName): { node: unknown; range: Range } | undefined {
    const entry = this.fields.get(field);
    if (!entry || isNullNode(entry.value)) {
      this.add(
        'result.missing-field',
        field,
        entry ? `The field "${field}" has no value.` : `The ${this.info} block has no "${field}" field.`,
        `Add ${field}: … (fields of ${RESULT_CONTRACTS[this.info]}: ${FIELDS[this.info].join(', ')}).`,
        entry ? this.yb.nodeRange(entry.key) : this.yb.openingFenceRange(),
      );
      return undefined;
    }
    return { node: entry.value, range: this.yb.nodeRange(entry.value as Node) };
  }

  private readContract(): { value: ResultContract; range: Range } | undefined {
    const entry = this.required('contract');
    if (!entry) return undefined;
    const expected = RESULT_CONTRACTS[this.info];
    const value = scalarString(entry.node);
    if (value === expected) return { value: expected, range: entry.range };
    const other = (Object.keys(RESULT_CONTRACTS) as ResultBlockInfo[]).find((k) => RESULT_CONTRACTS[k] === value);
    if (other) {
      this.add(
        'result.contract-mismatch',
        'contract',
        `The contract "${value}" belongs in a \`\`\`${other} block, but this is a \`\`\`${this.info} block.`,
        `Write contract: ${expected}, or mark the block \`\`\`${other} and use its fields.`,
        entry.range,
      );
      return undefined;
    }
    this.add(
      'result.unknown-contract',
      'contract',
      `Unknown result contract ${value !== undefined ? `"${value}"` : `(${describeNode(entry.node)})`}.`,
      `A \`\`\`${this.info} block uses contract: ${expected}.`,
      entry.range,
    );
    return undefined;
  }

  private readText(field: 'task' | 'agent'): { value: string; range: Range } | undefined {
    const entry = this.required(field);
    if (!entry) return undefined;
    const value = scalarString(entry.node);
    if (value === undefined || !nonEmptyString.safeParse(value).success) {
      const written = scalarText(entry.node);
      this.add(
        'result.invalid-field',
        field,
        `"${field}" must be a non-empty string, not ${value === undefined ? describeNode(entry.node) : 'an empty string'}.`,
        written !== undefined && value === undefined
          ? `Quote it: ${field}: "${written}".`
          : `Write the ${field === 'task' ? 'task id' : 'agent name'} of the delegation.`,
        entry.range,
      );
      return undefined;
    }
    return { value: value.trim(), range: entry.range };
  }

  private readStatus(): { value: ResultStatus; range: Range } | undefined {
    const entry = this.required('status');
    if (!entry) return undefined;
    const value = scalarString(entry.node);
    const parsed = statusSchema.safeParse(value);
    if (parsed.success) return { value: parsed.data, range: entry.range };
    const written = value ?? scalarText(entry.node);
    const caseHint =
      written !== undefined && statusSchema.safeParse(written.trim().toUpperCase()).success
        ? ` Status is case-sensitive: write ${written.trim().toUpperCase()}.`
        : '';
    this.add(
      'result.invalid-status',
      'status',
      `The status ${written !== undefined ? `"${written}"` : `(${describeNode(entry.node)})`} is not one of PASS, FAIL, BLOCKED.`,
      `Use PASS (the task is done), FAIL (it was attempted and did not succeed) or BLOCKED (it cannot proceed without help).${caseHint}`,
      entry.range,
    );
    return undefined;
  }

  /** The summary may be empty (`summary: ""`) but must be present and a string. */
  private readSummary(): { value: string; range: Range } | undefined {
    const required = this.required('summary');
    if (!required) return undefined;
    const value = scalarString(required.node);
    if (value === undefined) {
      this.add(
        'result.invalid-field',
        'summary',
        `"summary" must be text, not ${describeNode(required.node)}.`,
        'Write the summary as a string; use `summary: |` for several lines.',
        required.range,
      );
      return undefined;
    }
    return { value: value.trim(), range: required.range };
  }

  private readVersion(): string | number | undefined {
    const entry = this.required('version');
    if (!entry) return undefined;
    const node = entry.node;
    const value = scalarString(node);
    if (value !== undefined && value.trim() !== '') return value;
    if (isScalar(node) && typeof node.value === 'number' && Number.isFinite(node.value)) return node.value;
    this.add(
      'result.invalid-field',
      'version',
      `"version" must be a string or a number, not ${describeNode(node)}.`,
      'Write version: 1.',
      entry.range,
    );
    return undefined;
  }

  private readArtifacts(): { entries: Array<{ value: string; range: Range }>; range: Range } | undefined {
    const entry = this.fields.get('artifacts');
    if (entry && isNullNode(entry.value)) {
      // `artifacts:` with nothing after it means "no artifacts", as `artifacts: []` does.
      return { entries: [], range: this.yb.nodeRange(entry.key) };
    }
    const required = this.required('artifacts');
    if (!required) return undefined;
    if (!isSeq(required.node)) {
      this.add(
        'result.invalid-field',
        'artifacts',
        `"artifacts" must be a list of workspace-relative paths, not ${describeNode(required.node)}.`,
        'Write artifacts: [] or one "- path/to/file" line per file.',
        required.range,
      );
      return undefined;
    }
    const out: Array<{ value: string; range: Range }> = [];
    let valid = true;
    required.node.items.forEach((raw, index) => {
      const item = this.yb.deref(raw);
      const value = scalarString(item);
      if (value === undefined || value === '') {
        valid = false;
        const written = scalarText(item);
        this.add(
          'result.invalid-field',
          'artifacts',
          `artifacts[${index}] must be a non-empty path string, not ${value === undefined ? describeNode(item) : 'an empty string'}.`,
          written !== undefined && value === undefined
            ? `Quote it: "${written}".`
            : 'Each entry is a workspace-relative path such as src/notes.ts.',
          this.yb.nodeRange(item as Node),
        );
        return;
      }
      out.push({ value, range: this.yb.nodeRange(item as Node) });
    });
    return valid ? { entries: out, range: required.range } : undefined;
  }
}
