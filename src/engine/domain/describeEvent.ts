import type { RunEvent } from './types';

/**
 * One line of plain text for an event, for people: the CLI's `events`, the dashboard's
 * timeline. Unknown types fall back to their data.
 */
export function describeEvent(e: Pick<RunEvent, 'type' | 'data'>, maxField = 100): string {
  const d = e.data;
  const text = (key: string): string => (typeof d[key] === 'string' ? oneLine(d[key] as string, maxField) : '');
  let what: string;
  switch (e.type) {
    case 'run:created':
      what = `run created from ${text('planPath')} (${String(d.tasks)} tasks)`;
      break;
    case 'run:status':
    case 'task:status':
    case 'delegation:status':
      what = `${text('delegationId') || text('taskId') || 'run'} ${text('from')} → ${text('to')}${d.reason ? `  (${text('reason')})` : ''}`;
      break;
    case 'delegation:created':
      what = `${text('delegationId')} queued (task ${text('taskId')}, attempt ${String(d.attempt)})`;
      break;
    case 'delegation:claimed':
      what = `${text('delegationId')} claimed by runtime ${text('runtimeId')} (epoch ${String(d.epoch)})`;
      break;
    case 'runtime:heartbeat':
      what = `${text('runtimeId')} heartbeat ${String(d.heartbeatCount)}${d.progress ? `: ${text('progress')}` : ''}`;
      break;
    case 'runtime:stale':
      what = `${text('runtimeId')} went stale (${text('delegationId')})`;
      break;
    case 'gate:opened':
      what = `${text('gateId')} opened (${text('kind')}): ${text('reason')}`;
      break;
    case 'gate:decided':
      what = `${text('gateId')} ${text('decision')} by ${text('by')}${d.note ? `: ${text('note')}` : ''}`;
      break;
    case 'gate:updated':
      what = `${text('gateId')} updated: ${text('reason')}`;
      break;
    case 'ingestion:recorded':
      what = `${text('ingestionId')} ${d.accepted ? `accepted ${text('resultStatus')}` : `rejected (${String(d.issues)} issues)`} for ${text('delegationId')}`;
      break;
    case 'verification:receipt':
      what = `${text('delegationId')} \`${Array.isArray(d.command) ? (d.command as string[]).join(' ') : ''}\` ${d.timedOut ? 'timed out' : `exited ${String(d.exitCode)}`} (${String(d.durationMs)} ms)`;
      break;
    case 'coordinator:acquired':
      what = `coordinated by ${text('holder')} (epoch ${String(d.epoch)})${d.tookOverFrom ? `, taking over from ${text('tookOverFrom')}` : ''}`;
      break;
    case 'coordinator:released':
      what = `coordinator (epoch ${String(d.epoch)}) let go`;
      break;
    case 'stop:requested':
      what = `${text('stopId')} ${text('mode')} stop of ${text('delegationId') || 'the run'} requested by ${text('by')}`;
      break;
    case 'stop:applied':
      what = `${text('stopId')} applied to ${String(d.attempts)} attempt(s)${d.confirmed ? '' : '; some termination NOT confirmed'}`;
      break;
    case 'run:resumed':
      what = 'run resumed';
      break;
    case 'integration:committed':
      what = `${text('delegationId')} committed as ${text('sourceHead').slice(0, 8)} (${String(d.changedFiles)} file(s) changed)`;
      break;
    case 'integration:done':
      what = `${text('delegationId')} ${d.alreadyOnTarget ? 'was already on the target' : `integrated by ${text('strategy')}`}: ${text('targetBefore').slice(0, 8)} → ${text('targetAfter').slice(0, 8)}`;
      break;
    default:
      what = oneLine(JSON.stringify(d), maxField);
  }
  return what;
}

/**
 * One line: control characters (newlines, escapes a worker may have printed) become spaces; at most `max` characters.
 */
export function oneLine(value: string, max = 80): string {
  // eslint-disable-next-line no-control-regex
  const clean = value.replace(/[\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
