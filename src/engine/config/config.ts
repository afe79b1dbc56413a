import { findNodeAtLocation, parseTree, printParseErrorCode, type Node as JsonNode, type ParseError } from 'jsonc-parser';
import { z } from 'zod';
import { issue, type Issue, type Range } from '../model/issue';
import { LineIndex } from '../util/lineIndex';

export const DEFAULT_RISK_TAGS = ['database', 'security', 'migration', 'production', 'secrets'];

/**
 * `.baton/config.json` (docs/config.md). The JSON schema published for editor completion
 * (schemas/config.schema.json) is generated from this one definition.
 */
export const configSchema = z.object({
  $schema: z.string().optional(),
  riskTags: z
    .array(z.string().min(1))
    .default(DEFAULT_RISK_TAGS)
    .describe('Tasks carrying any of these risk tags wait at a risk_approval gate until someone approves them.'),
  leaseSeconds: z
    .number()
    .int()
    .min(5)
    .max(86_400)
    .default(120)
    .describe('How long a worker runtime holds its lease without a heartbeat before it is stale.'),
  maxAttempts: z
    .number()
    .int()
    .min(1)
    .max(20)
    .default(2)
    .describe('Attempts per task before a failed or stale attempt fails the task.'),
});

export type BatonConfig = z.output<typeof configSchema>;

export const DEFAULT_CONFIG: BatonConfig = configSchema.parse({});

const KNOWN_KEYS = new Set(Object.keys(configSchema.shape));

export interface ParsedConfig {
  config: BatonConfig;
  issues: Issue[];
}

/** Parses config text (JSON with comments allowed). Never throws; issues carry ranges into the text. */
export function parseConfig(text: string): ParsedConfig {
  const lines = new LineIndex(text);
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const issues: Issue[] = errors.map((e) =>
    issue('config.json-syntax', '', `JSON syntax error: ${printParseErrorCode(e.error)}.`, 'Fix the JSON syntax.', lines.range(e.offset, e.offset + e.length)),
  );
  if (issues.length > 0 || !root) {
    if (!root && issues.length === 0) issues.push(issue('config.json-syntax', '', 'The config file is empty.', 'Write a JSON object, e.g. {}.'));
    return { config: DEFAULT_CONFIG, issues };
  }
  if (root.type !== 'object') {
    return { config: DEFAULT_CONFIG, issues: [issue('config.not-an-object', '', 'The config must be a JSON object.', 'Wrap the settings in { }.', nodeRange(lines, root))] };
  }
  for (const property of root.children ?? []) {
    const key = property.children?.[0];
    if (key && typeof key.value === 'string' && !KNOWN_KEYS.has(key.value)) {
      issues.push(
        issue('config.unknown-field', key.value, `Unknown setting "${key.value}" is ignored.`, `Known settings: ${[...KNOWN_KEYS].join(', ')}.`, nodeRange(lines, key), 'warning'),
      );
    }
  }
  const value = JSON.parse(JSON.stringify(nodeValue(root))) as Record<string, unknown>;
  for (const key of Object.keys(value)) if (!KNOWN_KEYS.has(key)) delete value[key];
  const parsed = configSchema.safeParse(value);
  if (parsed.success) return { config: parsed.data, issues };
  for (const zodIssue of parsed.error.issues) {
    const path = zodIssue.path.filter((p): p is string | number => typeof p !== 'symbol');
    const node = findNodeAtLocation(root, path) ?? findNodeAtLocation(root, path.slice(0, 1));
    issues.push(
      issue(
        'config.invalid-field',
        path.join('.'),
        `${path.join('.') || 'config'}: ${zodIssue.message}.`,
        describeField(String(path[0] ?? '')),
        node ? nodeRange(lines, node) : undefined,
      ),
    );
  }
  return { config: DEFAULT_CONFIG, issues };
}

function describeField(key: string): string {
  const field = (configSchema.shape as Record<string, z.ZodType>)[key];
  return field?.description ?? 'See docs/config.md.';
}

function nodeValue(node: JsonNode): unknown {
  switch (node.type) {
    case 'object':
      return Object.fromEntries((node.children ?? []).map((p) => [p.children?.[0]?.value as string, p.children?.[1] ? nodeValue(p.children[1]) : undefined]));
    case 'array':
      return (node.children ?? []).map(nodeValue);
    default:
      return node.value;
  }
}

function nodeRange(lines: LineIndex, node: JsonNode): Range {
  return lines.range(node.offset, node.offset + node.length);
}

export function configJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(configSchema, { io: 'input' }) as Record<string, unknown>;
}
