import type { Task } from './types';

export interface PromptInput {
  task: Task;
  delegationId: string;
  agent: string;
  /** Workspace-relative path where the result artifact is expected. */
  artifactPath: string;
  dependencies: Array<{ id: string; title: string }>;
}

/**
 * The prompt a worker receives (docs/workers.md): the task's instructions, the files it
 * may change, what it builds on, where to put the result and the result contract, and how
 * to report progress. Plain markdown, so a person can read it too.
 */
export function buildPrompt(input: PromptInput): string {
  const { task } = input;
  const lines = [
    `You are the "${input.agent}" agent. Baton delegated task ${task.id} of a plan to you (attempt ${input.delegationId}).`,
    '',
    `# ${task.id}: ${task.title}`,
    '',
    task.instructions.trim() || '(The plan gives no further instructions for this task.)',
    '',
  ];
  if (task.files.length > 0) {
    lines.push('## Files', '', 'Change only files matching:', ...task.files.map((f) => `- \`${f}\``), '');
  }
  if (input.dependencies.length > 0) {
    lines.push(
      '## Already done',
      '',
      'This task builds on completed tasks:',
      ...input.dependencies.map((d) => `- ${d.id}: ${d.title}`),
      '',
    );
  }
  if (task.verify.length > 0) {
    lines.push(
      '## Verification',
      '',
      'After you report PASS, Baton runs these commands in your working folder; each must exit 0:',
      ...task.verify.map((c) => `- \`${c.join(' ')}\``),
      '',
    );
  }
  lines.push(
    '## When you are done',
    '',
    `Write your result to \`${input.artifactPath}\`: a short markdown report that ends with exactly one block like this:`,
    '',
    '```baton-result',
    'contract: baton-result-v1',
    `task: ${task.id}`,
    `agent: ${input.agent}`,
    'status: PASS',
    'summary: One line on what you did.',
    'artifacts:',
    '  - path/of/a/file/you/created/or/changed',
    '```',
    '',
    'status is PASS (done), FAIL (you tried and it does not work) or BLOCKED (you need a person to decide or help).',
    'artifacts lists workspace-relative paths of files that exist. If you cannot write files, print the report with its block on standard output instead.',
    '',
    'Baton keeps your lease while your process runs. To show what you are doing, run `baton heartbeat --progress "<a few words>"`.',
    '',
  );
  return lines.join('\n');
}

/** The most a prompt passed as one argv element may hold (Linux refuses a single argument over 128 KiB). */
export const ARGV_PROMPT_MAX_BYTES = 120 * 1024;
/** The most a prompt on stdin may hold: a plan's instructions are not a place for megabytes. */
export const STDIN_PROMPT_MAX_BYTES = 1024 * 1024;

/**
 * The prompt cut to `maxBytes` (on a character boundary) with a last line that says so, or
 * as it is. What is returned is what the worker gets: its digest is the prompt's provenance.
 */
export function fitPrompt(prompt: string, maxBytes: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(prompt, 'utf8');
  if (bytes.length <= maxBytes) return { text: prompt, truncated: false };
  const note = `\n\n[Baton cut this prompt at ${maxBytes} bytes of ${bytes.length} to fit how the worker takes it.]\n`;
  const keep = bytes
    .subarray(0, maxBytes - Buffer.byteLength(note))
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  return { text: `${keep}${note}`, truncated: true };
}
