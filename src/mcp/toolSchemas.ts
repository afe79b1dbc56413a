import * as z from 'zod';
import { QUESTION_LIMITS } from '../engine/index';

/**
 * The input and output of each tool of `baton mcp` (docs/agents.md), declared once: the server
 * registers them (the SDK validates every call's arguments against the input and each result
 * against the output), and their JSON Schema is what an agent sees in `tools/list`. Inputs are
 * strict objects: an unknown field (a `token`, a `delegation`) is refused by name, since the
 * attempt comes from the server's environment only.
 */

const note = z
  .string()
  .trim()
  .min(1, 'a progress note is a few words on what you are doing')
  .max(500, 'a progress note is at most 500 characters');
const draftPath = z
  .string()
  .min(1)
  .max(4096)
  .refine((p) => !p.includes('\0'), 'a path has no NUL character')
  .describe(
    "The result artifact to read: absolute, or relative to your working folder. Default: the attempt's artifact path (BATON_ARTIFACT_PATH).",
  );

const question = z
  .string()
  .trim()
  .min(1, 'a question has some text')
  .max(QUESTION_LIMITS.text, `a question is at most ${QUESTION_LIMITS.text} characters`);
const choice = z
  .string()
  .trim()
  .min(1, 'a choice has some text')
  .max(QUESTION_LIMITS.choice, `a choice is at most ${QUESTION_LIMITS.choice} characters`)
  .refine((c) => !/[\n\r]/.test(c), 'a choice is one line');

export const TASK_INPUT = z.strictObject({});
export const PROGRESS_INPUT = z.strictObject({ note: note.describe('What you are doing now, in a few words.') });
export const CHECK_RESULT_INPUT = z.strictObject({ path: draftPath.optional() });
export const SUBMIT_RESULT_INPUT = z.strictObject({ path: draftPath.optional() });
export const ASK_INPUT = z.strictObject({
  question: question.describe('What you need a person to decide or tell you, in full: they see only this text.'),
  choices: z
    .array(choice)
    .max(QUESTION_LIMITS.choices, `at most ${QUESTION_LIMITS.choices} choices`)
    .optional()
    .describe('The answers you can work with; the person picks one of them. Without choices they answer freely.'),
});

const position = z.object({ line: z.number().int(), column: z.number().int() });
const issue = z.object({
  code: z.string(),
  severity: z.enum(['error', 'warning']),
  field: z.string(),
  message: z.string(),
  recommendation: z.string(),
  range: z.object({ start: position, end: position }).optional(),
});
const resultStatus = z.enum(['PASS', 'FAIL', 'BLOCKED']);

export const TASK_OUTPUT = z.object({
  runId: z.string(),
  delegationId: z.string(),
  attempt: z.number().int(),
  agent: z.string(),
  task: z.object({
    id: z.string(),
    title: z.string(),
    instructions: z.string(),
    files: z.array(z.string()),
    dependencies: z.array(z.object({ id: z.string(), title: z.string() })),
    verify: z.array(z.array(z.string())),
  }),
  workspace: z.string(),
  workingFolder: z.string(),
  result: z.object({
    path: z.string(),
    workspacePath: z.string(),
    contract: z.object({
      block: z.literal('baton-result'),
      contract: z.literal('baton-result-v1'),
      statuses: z.array(resultStatus),
      template: z.string(),
      rules: z.array(z.string()),
    }),
  }),
  lease: z.object({ status: z.string(), expiresAt: z.number() }),
});

export const PROGRESS_OUTPUT = z.object({
  /** `sent`: a heartbeat now; `coalesced`: kept for the end of the rate window (a newer note replaces it). */
  delivery: z.enum(['sent', 'coalesced']),
  /** When a coalesced note goes out (epoch ms). */
  sendAt: z.number().optional(),
  /** A coalesced note that took the place of one still waiting. */
  replaced: z.boolean().optional(),
  heartbeatCount: z.number().int().optional(),
  leaseExpiresAt: z.number().optional(),
  message: z.string(),
});

export const CHECK_RESULT_OUTPUT = z.object({
  path: z.string(),
  acceptable: z.boolean(),
  resultStatus: resultStatus.optional(),
  issues: z.array(issue),
  /** Always false: the dry run writes nothing to the store. */
  recorded: z.literal(false),
});

export const SUBMIT_RESULT_OUTPUT = z.object({
  ingestionId: z.string(),
  accepted: z.boolean(),
  duplicate: z.boolean(),
  resultStatus: resultStatus.optional(),
  issues: z.array(issue),
  delegation: z.object({ id: z.string(), status: z.string() }),
  message: z.string(),
});

export const ASK_OUTPUT = z.object({
  /** The question gate (`baton gates` lists it). */
  gateId: z.string(),
  answer: z.string(),
  /** Who answered. */
  by: z.string(),
  answeredAt: z.number(),
  /** How long the question waited for the answer; not counted against the task timeout. */
  waitedMs: z.number(),
});

export type TaskOutput = z.infer<typeof TASK_OUTPUT>;
export type ProgressOutput = z.infer<typeof PROGRESS_OUTPUT>;
export type CheckResultOutput = z.infer<typeof CHECK_RESULT_OUTPUT>;
export type SubmitResultOutput = z.infer<typeof SUBMIT_RESULT_OUTPUT>;
export type AskOutput = z.infer<typeof ASK_OUTPUT>;
