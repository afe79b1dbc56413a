import {
  counted,
  describeEvent,
  isFinishedRun,
  type CoordinatorOutcome,
  type RunStatus,
  type RunEvent,
} from '../../engine/index';

/**
 * What the extension says in notifications, the status bar's tooltip and the Baton log, as plain
 * text (no vscode: unit-tested). Sentences for people: no JSON, no "(s)".
 */

// The stop notice is shared with `baton mcp --for-person` (src/tools/stopWords.ts).
export { processesEnded, stopNotice, type StopNotice } from '../../tools/stopWords';
import type { StopNotice } from '../../tools/stopWords';

/** The status bar's tooltip: counts in words. */
export function statusTooltip(running: number, gates: number, drivenHere: readonly string[]): string {
  const workers = `${counted(running, 'worker')} running`;
  const waiting = `${counted(gates, 'gate')} waiting`;
  return `Baton — ${workers}, ${waiting}${drivenHere.length ? `; this window drives ${drivenHere.join(', ')}` : ''}`;
}

/** The ends a person is told of: the run did all it could, or stopped short. A cancel or replan is their own act. */
const TOLD_ENDS: readonly RunStatus[] = ['completed', 'failed', 'blocked'];

/**
 * The notice for a run that ended while this window watched without driving it — another window,
 * `baton start` in a terminal, a teammate's coordinator: a decision made anywhere can end a run,
 * and the person learns of it where they look. Only a change seen happen (`before` is a status
 * that was not an end); a run this window drives is told by its coordinator's outcome instead.
 */
export function runEndNotice(
  run: { id: string; planPath: string; status: RunStatus },
  before: RunStatus | undefined,
  tasks: ReadonlyArray<{ status: string }>,
  drivenBy?: string,
): StopNotice | undefined {
  if (before === undefined || isFinishedRun(before) || !TOLD_ENDS.includes(run.status)) return undefined;
  const count = (status: string): number => tasks.filter((t) => t.status === status).length;
  const done = `${count('completed')} of ${counted(tasks.length, 'task')} completed`;
  const short = ['failed', 'blocked', 'cancelled']
    .map((status) => [status, count(status)] as const)
    .filter(([, n]) => n > 0)
    .map(([status, n]) => `${n} ${status}`);
  const plan = run.planPath.split(/[\\/]/).pop();
  const by = drivenBy ? `, driven by ${drivenBy}` : '';
  return {
    level: run.status === 'completed' ? 'info' : 'warning',
    message: `Baton run ${run.id} (${plan}) ${run.status}${by}: ${[done, ...short].join(', ')}.`,
  };
}

/** One log line for how a coordinator of this window ended. */
export function outcomeLine(runId: string, outcome: CoordinatorOutcome): string {
  switch (outcome.kind) {
    case 'finished':
      return `[${runId}] the run is ${outcome.status}; this window stops driving it.`;
    case 'paused': {
      const why = outcome.stopped
        ? 'it was stopped'
        : `it waits for ${outcome.openGates === 1 ? 'a decision' : `${counted(outcome.openGates, 'decision')}`}`;
      return `[${runId}] the run is ${outcome.status}: ${why}; this window stops driving it until it continues.`;
    }
    case 'idle':
      return `[${runId}] nothing to do for now (${outcome.reason}); the run is ${outcome.status}.`;
    case 'lease-lost':
      return `[${runId}] another process took the run over: ${outcome.detail}`;
    case 'shut-down':
      return `[${runId}] this window stopped driving the run (it is closing).`;
    case 'handed-over':
      return `[${runId}] this window handed the run over with ${counted(outcome.workers, 'worker')} still running (it is closing); the next window takes it over.`;
    case 'holder-gone':
      return `[${runId}] the coordinator that held the run is gone; this window takes it over.`;
  }
}

/** One line of the run's event log in the Baton output channel: when, what, in words. */
export function eventLine(event: RunEvent): string {
  const at = new Date(event.at)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, 'Z');
  return `${String(event.seq).padStart(4)} ${at} ${event.type.padEnd(22)} ${describeEvent(event)}`;
}
