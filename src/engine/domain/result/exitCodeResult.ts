/**
 * The result artifact Baton writes for a plain command worker (`"result": "exit-code"`,
 * docs/workers.md): exit 0 is PASS with the files the attempt changed as artifacts, anything
 * else is FAIL; the summary says how the command ended.
 */
export function exitCodeResultText(
  attempt: { taskId: string; agent: string },
  command: string,
  exit: { exitCode: number | null; signal: string | null },
  artifacts: { paths: readonly string[]; note?: string },
  lastOutput?: string,
): string {
  const passed = exit.exitCode === 0;
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${String(exit.exitCode)}`;
  const said = !passed && lastOutput ? `: ${lastOutput}` : '';
  const summary = `${command} ${how}${said}${artifacts.note ? `; ${artifacts.note}` : ''}`;
  return [
    `${command} ${how}.`,
    '',
    '```baton-result',
    'contract: baton-result-v1',
    `task: ${attempt.taskId}`,
    `agent: ${attempt.agent}`,
    `status: ${passed ? 'PASS' : 'FAIL'}`,
    `summary: ${JSON.stringify(summary)}`,
    artifacts.paths.length
      ? `artifacts:\n${artifacts.paths.map((p) => `  - ${JSON.stringify(p)}`).join('\n')}`
      : 'artifacts: []',
    '```',
    '',
  ].join('\n');
}

// A colour or cursor sequence, and any other control character: a terminal's, not the command's words.
// eslint-disable-next-line no-control-regex
const TERMINAL_ESCAPE = /\u001b\[[0-9;?]*[A-Za-z]/g;
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/g;

/** At most this many characters of a failed command's last output line go into its result's summary. */
const LAST_OUTPUT_CHARS = 200;

/**
 * The last line a command printed that says something (its log's end): what a person reads first when it failed.
 * Control characters (colours, a carriage return's progress bar) are dropped; a long line is cut with "…".
 */
export function lastOutputLine(logTail: string): string | undefined {
  const lines = logTail
    .split(/\r?\n|\r/)
    .map((line) => line.replace(TERMINAL_ESCAPE, '').replace(CONTROL_CHARACTER, '').trim())
    .filter(Boolean);
  const last = lines[lines.length - 1];
  if (!last) return undefined;
  return last.length > LAST_OUTPUT_CHARS ? `${last.slice(0, LAST_OUTPUT_CHARS - 1)}…` : last;
}
