import { counted, type StopReportEntry, type StopRequest } from '../engine/index';

// What a stop request did, in words: the editor's toast and chat tool, and `baton mcp --for-person`.

export interface StopNotice {
  level: 'info' | 'warning';
  message: string;
}

/**
 * The toast after a stop request. A graceful stop does not stop what runs — it lets it finish —
 * so it never says "Stopped" while a task still runs.
 */
export function stopNotice(
  runId: string,
  outcome: { request: StopRequest; repeated: boolean; appliedBy: 'coordinator' | 'this process' | 'pending' },
): StopNotice {
  const { request, repeated, appliedBy } = outcome;
  const finishing = request.report.filter((r) => r.note);
  const ended = request.report.filter((r) => !r.note);
  const unconfirmed = ended.filter((r) => !r.confirmed);
  if (request.mode === 'graceful') {
    const already = repeated ? `${runId} is already stopping. ` : '';
    if (appliedBy === 'pending' && request.report.length === 0)
      return {
        level: 'info',
        message: `${already}Stopping ${runId}: nothing new starts; what runs finishes first, then the run pauses.`,
      };
    if (finishing.length > 0) {
      const which = finishing.map((r) => r.delegationId).join(', ');
      return {
        level: 'info',
        message: `${already}Stopping ${runId} after the running ${finishing.length === 1 ? 'task finishes' : 'tasks finish'} (${which}): nothing new starts; the run pauses then. Stop Immediately ends ${finishing.length === 1 ? 'it' : 'them'} now.`,
      };
    }
    return {
      level: 'info',
      message: `${already}Stopped ${runId}: nothing was running, and nothing new starts. Resume continues it.`,
    };
  }
  const already = repeated ? 'already ' : '';
  if (ended.length === 0)
    return { level: 'info', message: `${runId} is ${already}stopped: nothing was running. Resume continues it.` };
  const gone = processesEnded(ended);
  return {
    level: unconfirmed.length ? 'warning' : 'info',
    message: `Stopped ${runId} ${already === '' ? '' : '(already) '}now: ${counted(ended.length, 'attempt')} ended${gone ? `, ${gone}` : ''}. Resume runs ${ended.length === 1 ? 'it' : 'them'} again.`,
  };
}

/**
 * What a stop proved of the ended attempts' processes, said only of attempts that had one running (an attempt whose
 * worker had already exited, or one a `baton claim` holds, had none for Baton to end); undefined when none had.
 */
export function processesEnded(report: readonly StopReportEntry[]): string | undefined {
  const unconfirmed = report.filter((r) => !r.confirmed);
  if (unconfirmed.length) return `${counted(unconfirmed.length, 'attempt')} NOT confirmed gone (see the Baton log)`;
  const had = report.filter((r) => r.processes.length > 0);
  if (had.length === 0) return undefined;
  if (had.length < report.length) return `the processes of ${counted(had.length, 'attempt')} are gone`;
  return had.length === 1 ? 'its processes are gone' : 'their processes are gone';
}
