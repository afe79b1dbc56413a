import type { FollowUpMessage } from './followUp';
import type { Issue } from './issue';
import { counted } from './plural';
import type { DelegationStatus, Task } from './types';

export interface PromptInput {
  task: Task;
  delegationId: string;
  agent: string;
  /** Workspace-relative path where the result artifact is expected. */
  artifactPath: string;
  dependencies: Array<{ id: string; title: string }>;
  /** The task's attempts before this one, oldest first (queries/earlierAttempts.ts); none for a first attempt. */
  earlierAttempts?: readonly EarlierAttempt[];
  /**
   * The attempt's MCP tools its agent may call (an agent preset wired to `baton mcp`: presets.ts batonMcpTools): the
   * prompt names them instead of the `baton` commands a plain process runs.
   */
  batonTools?: readonly string[];
  /** A person's follow-up messages the attempt carries (domain/followUp.ts), oldest first: the prompt opens so. */
  followUps?: readonly FollowUpMessage[];
}

/** What each of the attempt's MCP tools is for, as a prompt tells an agent (docs/agents.md). */
const BATON_TOOL_USES: Readonly<Record<string, string>> = {
  baton_task: 'this task as Baton holds it: instructions, files, the result contract, what went wrong before.',
  baton_progress: 'a few words on what you are doing now; they show in Baton while you work.',
  baton_check_result:
    'checks your result file before you finish and lists what Baton would reject, at its line and column.',
  baton_submit_result: 'hands your result in. The attempt ends with it, accepted or not: check first.',
  baton_ask: 'a question to a person, when you cannot go on without one; it waits for the answer.',
};

/** How the prompt names the attempt as the seed's delegation queue does (docs/workers.md, "The prompt"). */
export const QUEUE_ITEM_LABEL = 'Queue item id:';

/** The seed's queue item id of an attempt: `<run>:<delegation>`. */
export function queueItemId(runId: string, delegationId: string): string {
  return `${runId}:${delegationId}`;
}

/**
 * The prompt a worker receives (docs/workers.md): the task's instructions, the files it
 * may change, what it builds on, where to put the result and the result contract, and how
 * to report progress. Plain markdown, so a person can read it too.
 */
export function buildPrompt(input: PromptInput): string {
  const { task } = input;
  const lines = [
    ...messagesFirst(input.followUps ?? []),
    `You are the "${input.agent}" agent. Baton delegated task ${task.id} of a plan to you (attempt ${input.delegationId}).`,
    '',
    // The seed's (sdd-agent-platform) line, `<run>:<delegation>`: a host written for the seed looks for it.
    `${QUEUE_ITEM_LABEL} ${queueItemId(task.runId, input.delegationId)}`,
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
  // Before "When you are done": the result's instructions stay the prompt's last word, after what to fix in it.
  lines.push(...whatWentWrongBefore(input.earlierAttempts ?? []));
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
    ...howToReport(input.batonTools),
  );
  return lines.join('\n');
}

/**
 * "## Message from <person>": a follow-up's messages open the prompt (docs/agents.md, "Follow-up messages"), before
 * the task it restates — an agent that continues its session reads first what the person asked for now. A message is
 * shown as written: it is the person's own text, fenced only when it could otherwise start a heading of the prompt.
 */
export function messagesFirst(messages: readonly FollowUpMessage[]): string[] {
  const lines: string[] = [];
  for (const m of messages) {
    const text = m.message.trim();
    const fence = /^#/m.test(text) ? '`'.repeat(Math.max(3, longestBacktickRun(text) + 1)) : undefined;
    lines.push(`## Message from ${oneLine(m.by)}`, '', ...(fence ? [`${fence}text`, text, fence] : [text]), '');
  }
  if (lines.length > 0)
    lines.push(
      messages.length === 1
        ? 'Do what this message asks, in the task below; the result you hand in must cover it.'
        : 'Do what these messages ask, in the task below; the result you hand in must cover them.',
      '',
    );
  return lines;
}

/** The prompt's last word: how the worker tells Baton what it does — the attempt's MCP tools, or the CLI. */
function howToReport(tools: readonly string[] | undefined): string[] {
  if (!tools?.length)
    return [
      'Baton keeps your lease while your process runs. To show what you are doing, run `baton heartbeat --progress "<a few words>"`.',
      '',
    ];
  return [
    'Baton keeps your lease while your process runs. These tools of its MCP server `baton` are yours to call, no shell needed:',
    ...tools.map((tool) => `- \`${tool}\`: ${BATON_TOOL_USES[tool] ?? 'see its description.'}`),
    '',
  ];
}

/** How many of a task's earlier attempts a retry's prompt tells about: the latest ones. */
export const EARLIER_ATTEMPTS_SHOWN = 3;
/** How many issues of one rejected result it lists. */
export const EARLIER_ISSUES_SHOWN = 20;
/** The most of a failed verify command's output it shows: its last lines, within this many bytes. */
export const VERIFY_TAIL_LINES = 40;
export const VERIFY_TAIL_BYTES = 4 * 1024;

/**
 * What went wrong in one earlier attempt of a task, as the store keeps it (queries/earlierAttempts.ts), with its
 * failed verify command's output read from its log (the use case reads it: domain/ does no I/O).
 */
export interface EarlierAttempt {
  attempt: number;
  delegationId: string;
  status: DelegationStatus;
  /** The delegation's last reason: how it ended, or the decision that ended it ("retry approved at G-3: …"). */
  reason?: string;
  /** Why its worker's lease ended (timed out, stopped, stale, result ingested). */
  leaseEndReason?: string;
  /** Its latest result, when that one was rejected: its errors, at most EARLIER_ISSUES_SHOWN, and how many more. */
  rejectedResult?: { artifactPath: string; issues: Issue[]; omitted: number };
  /** Its last failed verify command, with the end of its output when it could be read. */
  failedVerification?: {
    command: string[];
    exitCode: number | null;
    timedOut: boolean;
    logPath: string;
    output?: string;
  };
}

/**
 * "## What went wrong before": for a retry, each earlier attempt (the last EARLIER_ATTEMPTS_SHOWN) and how it ended —
 * its rejected result's issues at their lines, its failed verify command with the end of its output, the reason its
 * worker stopped — so the next attempt does not fail the same way. Nothing for a first attempt: its prompt is the one
 * it always was.
 */
export function whatWentWrongBefore(attempts: readonly EarlierAttempt[]): string[] {
  const shown = attempts.slice(-EARLIER_ATTEMPTS_SHOWN);
  if (shown.length === 0) return [];
  const lines = [
    '## What went wrong before',
    '',
    `This task was tried before and did not succeed. Fix what went wrong, and do not repeat it.${
      shown[0]!.attempt > 1 ? ` (The last ${counted(shown.length, 'attempt')} are shown.)` : ''
    }`,
    '',
  ];
  for (const attempt of shown) lines.push(...describeEarlierAttempt(attempt));
  return lines;
}

function describeEarlierAttempt(a: EarlierAttempt): string[] {
  const lines = [
    `### Attempt ${a.attempt} (${a.delegationId}): ${a.status}${a.reason ? ` — ${oneLine(a.reason)}` : ''}`,
    '',
  ];
  if (a.leaseEndReason && a.leaseEndReason !== a.reason)
    lines.push(`Its worker's lease ended: ${oneLine(a.leaseEndReason)}.`, '');
  if (a.rejectedResult) {
    const { artifactPath, issues, omitted } = a.rejectedResult;
    lines.push(`Its result \`${artifactPath}\` was rejected:`);
    for (const i of issues) {
      const where = i.range ? `line ${i.range.start.line}, column ${i.range.start.column}: ` : '';
      lines.push(
        `- ${where}\`${i.code}\` ${oneLine(i.message)}${i.recommendation ? ` ${oneLine(i.recommendation)}` : ''}`,
      );
    }
    if (omitted > 0) lines.push(`- and ${counted(omitted, 'more issue')}.`);
    lines.push('');
  }
  if (a.failedVerification) lines.push(...describeFailedVerification(a.failedVerification));
  return lines;
}

function describeFailedVerification(v: NonNullable<EarlierAttempt['failedVerification']>): string[] {
  const how = v.timedOut
    ? 'timed out'
    : v.exitCode === null
      ? 'did not run to an exit code'
      : `exited with ${v.exitCode}`;
  const lines = [`Its result said PASS, but its verification failed: \`${v.command.join(' ')}\` ${how}.`];
  if (v.output === undefined || v.output === '') {
    lines.push(`(Its output is in \`${v.logPath}\`${v.output === '' ? ', and was empty' : ''}.)`, '');
    return lines;
  }
  const fence = '`'.repeat(Math.max(3, longestBacktickRun(v.output) + 1));
  lines.push(`The end of its output (all of it: \`${v.logPath}\`):`, '', `${fence}text`, v.output, fence, '');
  return lines;
}

/**
 * A reason or an issue on one line: a note or a result's own text can hold line breaks, which would end its list item
 * or start a heading of its own in the prompt.
 */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

function longestBacktickRun(text: string): number {
  return Math.max(0, ...(text.match(/`+/g) ?? []).map((run) => run.length));
}

/**
 * The end of a verify log, as a retry's prompt shows it: the output of the failed command only (the log holds every
 * command of the attempt, each after a `$ <command>` line), its last VERIFY_TAIL_LINES lines. `cut`: `text` is the
 * end of a longer log, so its first line is partial and dropped.
 */
export function verifyOutputTail(text: string, command: readonly string[], cut: boolean): string {
  let lines = text.replace(/\n$/, '').split('\n');
  if (cut) lines = lines.slice(1);
  const header = lines.lastIndexOf(`$ ${command.join(' ')}`);
  if (header !== -1) lines = lines.slice(header + 1);
  return lines.slice(-VERIFY_TAIL_LINES).join('\n');
}

/** The most a prompt passed as one argv element may hold (Linux refuses a single argument over 128 KiB). */
export const ARGV_PROMPT_MAX_BYTES = 120 * 1024;
/** The most a prompt on stdin may hold: a plan's instructions are not a place for megabytes. */
export const STDIN_PROMPT_MAX_BYTES = 1024 * 1024;

/**
 * The prompt for `input`, fitted to `maxBytes`. fitPrompt keeps the head and cuts the tail, where the result's
 * instructions are; so a retry's "What went wrong before" gives way first — its oldest attempts left out, then all
 * of it — and only a prompt too long without it is cut.
 */
export function buildFittedPrompt(input: PromptInput, maxBytes: number): { text: string; truncated: boolean } {
  const earlier = input.earlierAttempts ?? [];
  for (let from = 0; from < earlier.length; from++) {
    const prompt = buildPrompt({ ...input, earlierAttempts: earlier.slice(from) });
    if (Buffer.byteLength(prompt) <= maxBytes) return { text: prompt, truncated: false };
  }
  return fitPrompt(buildPrompt({ ...input, earlierAttempts: [] }), maxBytes);
}

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
