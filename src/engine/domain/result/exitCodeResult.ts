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
): string {
  const passed = exit.exitCode === 0;
  const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${String(exit.exitCode)}`;
  const summary = `${command} ${how}${artifacts.note ? `; ${artifacts.note}` : ''}`;
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
