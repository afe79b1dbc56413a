import {
  findNodeAtLocation,
  parseTree,
  printParseErrorCode,
  type Node as JsonNode,
  type ParseError,
} from 'jsonc-parser';
import * as z from 'zod';
import { urlHasPassword } from './credentials';
import { issue, type Issue, type Range } from './issue';
import { describeUnpriced, unpricedWorkers } from './agents/budget';
import { LineIndex } from './lineIndex';

export const DEFAULT_RISK_TAGS = ['database', 'security', 'migration', 'production', 'secrets'];

/** Placeholders a process worker's arguments may use (docs/workers.md). */
export const WORKER_PLACEHOLDERS = ['prompt', 'promptFile', 'artifactPath', 'taskId', 'workspace'] as const;
const PLACEHOLDER = /\{([A-Za-z]+)\}/g;

const workerArgs = z
  .array(z.string())
  .default([])
  .superRefine((args, ctx) => {
    args.forEach((arg, index) => {
      for (const match of arg.matchAll(PLACEHOLDER)) {
        if (!(WORKER_PLACEHOLDERS as readonly string[]).includes(match[1]!)) {
          ctx.addIssue({
            code: 'custom',
            path: [index],
            message: `Unknown placeholder {${match[1]}}; use ${WORKER_PLACEHOLDERS.map((p) => `{${p}}`).join(', ')}`,
          });
        }
      }
    });
  });

const processWorkerSchema = z
  .object({
    type: z.literal('process'),
    command: z.string().min(1).describe('The program to run (a path or a name on PATH). Never run through a shell.'),
    args: workerArgs.describe(
      'Arguments, each one argv element; may contain {prompt}, {promptFile}, {artifactPath}, {taskId}, {workspace}.',
    ),
    promptOnStdin: z
      .boolean()
      .optional()
      .describe('Write the prompt to stdin. Default: true unless an argument uses {prompt} or {promptFile}.'),
    result: z
      .enum(['block', 'exit-code'])
      .optional()
      .describe(
        'How its result is taken: "block" (default), the result block it writes; "exit-code", a plain command: exit 0 is PASS with the files it changed as artifacts, anything else FAIL.',
      ),
    env: z.record(z.string(), z.string()).default({}).describe('Extra environment variables.'),
  })
  .strict();

/** The agent CLIs with a preset of their own (docs/workers.md, "Agent presets"). */
function agentWorkerSchema<K extends 'claude-code' | 'codex' | 'gemini' | 'opencode'>(
  type: K,
  cli: string,
  executable: string,
) {
  return z
    .object({
      type: z.literal(type),
      executable: z.string().min(1).default(executable).describe(`Path to the ${cli} executable (or a name on PATH).`),
      model: z.string().min(1).optional().describe('The model the CLI asks for (its own default when absent).'),
      args: workerArgs.describe("Extra arguments, after the preset's own and before the prompt."),
      env: z
        .record(z.string(), z.string())
        .default({})
        .describe('Extra environment variables (e.g. an API key variable).'),
      continueSession: z
        .boolean()
        .default(false)
        .describe(`A retried task continues the ${cli} session of its previous attempt instead of starting over.`),
      fallbackWorker: z
        .string()
        .min(1)
        .optional()
        .describe(
          `While this worker waits for its ${cli} usage limit to reset, its tasks run on this worker instead (a worker id; docs/agents.md, "Usage limits park").`,
        ),
    })
    .strict();
}

const manualWorkerSchema = z.object({ type: z.literal('manual') }).strict();

/** A PostgreSQL schema name Baton uses unquoted everywhere (search_path, its notification channel). */
/** The highest maxArtifactBytes a config may set: what `baton ingest --artifact -` reads from stdin at most. */
export const MAX_ARTIFACT_BYTES_CEILING = 16 * 1024 * 1024;

export const STORE_SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,39}$/;

/**
 * Where the workspace's store lives (docs/team.md): its own files, or a PostgreSQL database a
 * team shares. The config is committed with the workspace, so a URL here may not hold a
 * password: the whole URL goes in BATON_STORE_URL, or the password in PGPASSWORD / ~/.pgpass.
 */
const storeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('file') }).strict(),
  z
    .object({
      kind: z.literal('postgres'),
      url: z
        .string()
        .regex(/^postgres(?:ql)?:\/\//i, 'must start with postgres:// or postgresql://')
        .refine((url) => !urlHasPassword(url), {
          message:
            'must not hold a password (this file is shared with the workspace): set the whole URL in BATON_STORE_URL, or the password in PGPASSWORD or ~/.pgpass',
        })
        .optional()
        .describe('postgres://user@host:port/database (no password). BATON_STORE_URL, when set, is used instead.'),
      schema: z
        .string()
        .regex(STORE_SCHEMA_NAME, 'must be lower-case letters, digits and _ (at most 40)')
        .default('baton')
        .describe("The PostgreSQL schema that holds this workspace's store; teams sharing a run use the same one."),
    })
    .strict(),
]);
export type StoreSetting = z.output<typeof storeSchema>;

/**
 * A store other machines open too (docs/team.md): its coordinator may be succeeded from another
 * host, so its workers run under a lease watchdog and a foreign holder is taken over after its lease.
 */
export function isSharedStore(config: Pick<BatonConfig, 'store'>): boolean {
  return config.store.kind === 'postgres';
}

/** A spending limit: US dollars, tokens (input and output together), or both. */
const budgetLimit = z
  .object({
    usd: z.number().positive().optional(),
    tokens: z.number().int().positive().optional(),
  })
  .strict();

export const workerSchema = z.discriminatedUnion('type', [
  processWorkerSchema,
  agentWorkerSchema('claude-code', 'Claude Code', 'claude'),
  agentWorkerSchema('codex', 'Codex', 'codex'),
  agentWorkerSchema('gemini', 'Gemini CLI', 'gemini'),
  agentWorkerSchema('opencode', 'opencode', 'opencode'),
  manualWorkerSchema,
]);
export type WorkerDefinition = z.output<typeof workerSchema>;

/** Always available, whatever the config says (a config entry with the same id replaces one). */
export const BUILTIN_WORKERS: Readonly<Record<string, WorkerDefinition>> = {
  'claude-code': { type: 'claude-code', executable: 'claude', args: [], env: {}, continueSession: false },
  manual: { type: 'manual' },
};

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
  coordinatorLeaseSeconds: z
    .number()
    .int()
    .min(5)
    .max(3600)
    .default(30)
    .describe(
      "How long a run's coordinator holds the run without renewing (it renews every third of it). When its process dies, is stopped or loses the store, another takes over after this — on a shared store, from another machine, after its workers' watchdogs had time to end them (docs/team.md).",
    ),
  maxAttempts: z
    .number()
    .int()
    .min(1)
    .max(20)
    .default(2)
    .describe('Attempts per task before a failed or stale attempt fails the task.'),
  repairRounds: z
    .number()
    .int()
    .min(0)
    .max(5)
    .default(2)
    .describe(
      "How many times an agent whose CLI has a stop hook (Claude Code) is sent its result's issues back before it may finish: Baton checks the result as ingestion would when the agent tries to end, and while issues remain and rounds are left the agent fixes them in the same session. 0: no hook, ingestion alone judges (docs/agents.md).",
    ),
  maxConcurrency: z.number().int().min(1).max(256).default(4).describe('How many workers a run drives at once.'),
  taskTimeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(7 * 86_400)
    .default(3600)
    .describe('An attempt still running after this long is stopped and fails.'),
  verifyTimeoutSeconds: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(600)
    .describe('Each verify command is stopped after this long and counts as failed.'),
  retryBackoffSeconds: z
    .number()
    .min(0)
    .max(3600)
    .default(10)
    .describe('Wait before a retry; doubles with each further attempt (at most 10 minutes).'),
  stopGraceSeconds: z
    .number()
    .min(0)
    .max(300)
    .default(5)
    .describe('After SIGTERM, how long a stopped worker gets before SIGKILL.'),
  quotaWaitSeconds: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(900)
    .describe(
      'An agent that hit its usage limit without saying when it resets: how long its worker is held before the parked task resumes (docs/agents.md, "Usage limits park").',
    ),
  silenceSeconds: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .default(300)
    .describe(
      'An agent preset whose stream says nothing this long while its process lives is shown "silent" (an event), and silenceAction applies.',
    ),
  silenceAction: z
    .enum(['wait', 'stop'])
    .default('wait')
    .describe(
      'What a silent agent gets: wait (shown, the task timeout stays the last resort), or stop (ended gracefully and parked: the next attempt continues its session; not counted against maxAttempts).',
    ),
  maxArtifactBytes: z
    .number()
    .int()
    .min(1024)
    .max(MAX_ARTIFACT_BYTES_CEILING)
    .default(1024 * 1024)
    .describe(
      "The largest result artifact a run takes, in bytes (default 1 MiB). The artifact's content is kept in the store, so a team's machines read it from there; a larger one is refused (docs/team-artifacts.md).",
    ),
  isolation: z
    .enum(['auto', 'worktree', 'none'])
    .default('auto')
    .describe(
      'worktree: each task works in its own git worktree and is integrated after it passed; none: the shared working tree; auto: worktree when the workspace is a git repository and maxConcurrency > 1 (docs/isolation.md).',
    ),
  integration: z
    .enum(['merge', 'rebase', 'cherry-pick', 'branch'])
    .default('merge')
    .describe(
      'How a passed task joins the target branch: merge (one --no-ff merge commit per task), rebase then fast-forward, cherry-pick, or branch (the target does not move: the task\'s branch is pushed to integrationRemote and a pull request is suggested, or opened with gh; docs/isolation.md, "Branch and pull request").',
    ),
  integrationRemote: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/,
      "a git remote name (git remote -v lists them), not a URL: the URL and its credentials stay in git's config",
    )
    .default('origin')
    .describe(
      'With integration: branch, the git remote (its name) each passed task\'s branch is pushed to (default origin). Pushed by git as you would push: your remote config, credentials and pre-push hook (docs/isolation.md, "Branch and pull request").',
    ),
  verifyIntegrated: z
    .array(z.array(z.string().min(1)).min(1))
    .max(32)
    .optional()
    .describe(
      'Commands (argv, never a shell) run on the merged tree — the target branch plus a passed task, combined as the integration strategy will — before the target branch moves, together with that task\'s own verify commands; a failure opens an integration_failed gate. [] verifies only each task\'s own commands there; absent: no merged-tree verification (docs/isolation.md, "The merge queue").',
    ),
  integrationBatch: z
    .number()
    .int()
    .min(1)
    .max(64)
    .default(1)
    .describe(
      'With verifyIntegrated: how many passed tasks waiting for integration are merged onto the target together and verified once (default 1: one at a time). A failing batch is split in halves until the task that breaks it is found; the others integrate (docs/isolation.md, "Batching with bisection").',
    ),
  review: z
    .enum(['none', 'required'])
    .default('none')
    .describe(
      'required: a task whose result passed (its verify commands too) waits at a review gate before its work is integrated or the task completes; approve integrates, Request Changes (or baton message) sends the review back to the agent as a follow-up, reject fails the task (docs/extension.md, "Review required").',
    ),
  defaultWorker: z
    .string()
    .min(1)
    .default('claude-code')
    .describe('The worker for tasks whose plan block names none: a key of workers, or claude-code / manual.'),
  workers: z
    .record(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/), workerSchema)
    .default({})
    .describe('Worker definitions by id (docs/workers.md).'),
  budget: z
    .object({
      run: budgetLimit.optional().describe('What one run may spend, all its attempts together.'),
      task: budgetLimit.optional().describe('What one task may spend, all its attempts together.'),
      agent: budgetLimit.optional().describe('What one plan agent (coder, reviewer, …) may spend in a run.'),
    })
    .strict()
    .default({})
    .describe('Limits that stop work when crossed: the attempt is stopped and a budget gate opens (docs/workers.md).'),
  prices: z
    .record(
      z.string().min(1),
      z
        .object({
          inputPerMTok: z.number().min(0).describe('US dollars per million input tokens.'),
          outputPerMTok: z.number().min(0).describe('US dollars per million output tokens.'),
        })
        .strict(),
    )
    .default({})
    .describe(
      'Prices by model name, for CLIs that report tokens but no cost (Codex, Gemini CLI); a CLI that prices its own calls (Claude Code, opencode) is taken at its word.',
    ),
  store: storeSchema
    .default({ kind: 'file' })
    .describe(
      'Where the store lives: { "kind": "file" } (.baton/store, the default) or { "kind": "postgres", "url", "schema" } for a team (docs/team.md).',
    ),
  permissionPolicy: z
    .object({
      forbid: z
        .array(z.enum(['read-only', 'edit', 'full']))
        .default([])
        .describe('Profiles no task may run with: such a task waits at a gate instead of being dispatched.'),
      forbidForRisk: z
        .record(z.string().min(1), z.array(z.enum(['read-only', 'edit', 'full'])))
        .default({})
        .describe('By risk tag: profiles a task with that tag may not run with (e.g. { "production": ["full"] }).'),
    })
    .strict()
    .default({ forbid: [], forbidForRisk: {} })
    .describe('Which permission profiles tasks may use (docs/workers.md, "Permission profiles").'),
});

export type BatonConfig = z.output<typeof configSchema>;

/** The warning code of a `usd` budget that a worker's spend escapes (no price for its model). */
export const BUDGET_UNPRICED = 'config.budget-unpriced';

export const DEFAULT_CONFIG: BatonConfig = configSchema.parse({});

const KNOWN_KEYS = new Set(Object.keys(configSchema.shape));

export interface ParsedConfig {
  config: BatonConfig;
  issues: Issue[];
}

/** The largest config Baton reads (docs/config.md); a real one is a few KiB. */
export const MAX_CONFIG_BYTES = 256 * 1024;
/** How deep objects and arrays may nest in the config; the deepest real setting is 4 levels down. */
export const MAX_CONFIG_DEPTH = 32;

/** Parses config text (JSON with comments allowed). Never throws; issues carry ranges into the text. */
export function parseConfig(source: string): ParsedConfig {
  // A byte order mark is accepted, as in plans; a space in its place keeps every offset and column.
  const text = source.charCodeAt(0) === 0xfeff ? ` ${source.slice(1)}` : source;
  const size = Buffer.byteLength(text, 'utf8');
  if (size > MAX_CONFIG_BYTES) {
    const message = `The config is ${size} bytes; the limit is ${MAX_CONFIG_BYTES} bytes (256 KiB).`;
    return {
      config: DEFAULT_CONFIG,
      issues: [issue('config.too-large', '', message, 'Keep only Baton settings in it.')],
    };
  }
  const lines = new LineIndex(text);
  // The JSON parser and the schema walk recurse: a config nested 100,000 levels deep must be an
  // issue, not a stack overflow.
  const tooDeep = offsetBeyondDepth(text, MAX_CONFIG_DEPTH);
  if (tooDeep !== undefined) {
    return {
      config: DEFAULT_CONFIG,
      issues: [
        issue(
          'config.too-deep',
          '',
          `Objects and arrays nest more than ${MAX_CONFIG_DEPTH} levels deep.`,
          'A Baton config nests a few levels at most: see docs/config.md.',
          lines.range(tooDeep, tooDeep + 1),
        ),
      ],
    };
  }
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  const issues: Issue[] = errors.map((e) =>
    issue(
      'config.json-syntax',
      '',
      `JSON syntax error: ${printParseErrorCode(e.error)}.`,
      'Fix the JSON syntax.',
      lines.range(e.offset, e.offset + e.length),
    ),
  );
  if (issues.length > 0 || !root) {
    if (!root && issues.length === 0)
      issues.push(issue('config.json-syntax', '', 'The config file is empty.', 'Write a JSON object, e.g. {}.'));
    return { config: DEFAULT_CONFIG, issues };
  }
  if (root.type !== 'object') {
    return {
      config: DEFAULT_CONFIG,
      issues: [
        issue(
          'config.not-an-object',
          '',
          'The config must be a JSON object.',
          'Wrap the settings in { }.',
          nodeRange(lines, root),
        ),
      ],
    };
  }
  for (const property of root.children ?? []) {
    const key = property.children?.[0];
    if (key && typeof key.value === 'string' && !KNOWN_KEYS.has(key.value)) {
      issues.push(
        issue(
          'config.unknown-field',
          key.value,
          `Unknown setting "${key.value}" is ignored.`,
          `Known settings: ${[...KNOWN_KEYS].join(', ')}.`,
          nodeRange(lines, key),
          'warning',
        ),
      );
    }
  }
  const value = JSON.parse(JSON.stringify(nodeValue(root))) as Record<string, unknown>;
  for (const key of Object.keys(value)) if (!KNOWN_KEYS.has(key)) delete value[key];
  const parsed = configSchema.safeParse(value);
  if (parsed.success) {
    // A dollar limit that cannot see a worker's spend is kept (tokens still bind) but said.
    for (const unpriced of unpricedWorkers(parsed.data)) {
      const { message, recommendation } = describeUnpriced(unpriced);
      const node =
        findNodeAtLocation(root, ['workers', unpriced.worker, 'model']) ??
        findNodeAtLocation(root, ['workers', unpriced.worker]);
      issues.push(
        issue(
          BUDGET_UNPRICED,
          `workers.${unpriced.worker}`,
          message,
          recommendation,
          node ? nodeRange(lines, node) : undefined,
          'warning',
        ),
      );
    }
    return { config: parsed.data, issues };
  }
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
      return Object.fromEntries(
        (node.children ?? []).map((p) => [
          p.children?.[0]?.value as string,
          p.children?.[1] ? nodeValue(p.children[1]) : undefined,
        ]),
      );
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

/**
 * Where `{` or `[` first opens past `maxDepth` levels, skipping strings and comments (JSON with
 * comments); undefined when the text never nests that deep. One pass, no recursion.
 */
function offsetBeyondDepth(text: string, maxDepth: number): number | undefined {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (c === '{' || c === '[') {
      if (++depth > maxDepth) return i;
    } else if (c === '}' || c === ']') {
      depth--;
    }
  }
  return undefined;
}
