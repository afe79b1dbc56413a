import { agentStreamParser, applyAgentEvent, describeToolCall, emptyActivity, type AgentKind } from './agentActivity';
import { jsonLine, type AgentEvent } from './agentEvents';

/**
 * An agent attempt's log as a person reads it ("Show Output", `baton logs`): the event
 * stream becomes one line per thing the agent did — its session, each turn, each tool call
 * and how it ended, its messages in full, usage, errors, the end — and whatever the CLI
 * printed that is not an event (a warning on stderr) is kept as it is. The log itself stays
 * the complete transcript.
 */
export function renderTranscript(kind: AgentKind, lines: Iterable<string>, cwd?: string): string {
  const parser = agentStreamParser(kind, cwd ? { cwd } : {});
  const out: string[] = [];
  let turn = 0;
  let activity = emptyActivity();
  const write = (event: AgentEvent): void => {
    activity = applyAgentEvent(activity, event);
    switch (event.kind) {
      case 'session':
        out.push(`── ${kind} session ${event.sessionId}${event.model ? ` · ${event.model}` : ''}`);
        break;
      case 'turn':
        out.push('', `▸ turn ${++turn}`);
        break;
      case 'tool':
        if (event.phase === 'started') out.push(`  → ${describeToolCall(event.tool, event.target)}`);
        else if (event.ok === false)
          out.push(`  ✗ ${event.tool} refused or failed${event.detail ? `: ${firstLine(event.detail)}` : ''}`);
        break;
      case 'message':
        out.push(...event.text.split('\n').map((l) => `  ${l}`));
        break;
      case 'usage':
        break; // the totals are shown at the end

      case 'error':
        out.push(`  ! ${event.fatal ? 'error' : 'warning'}: ${event.message}`);
        break;
      case 'end': {
        const cost = activity.costUsd !== undefined ? `, $${activity.costUsd.toFixed(4)}` : '';
        const tokens = `${activity.inputTokens} tokens in, ${activity.outputTokens} out${cost}`;
        out.push('', `■ ${event.ok ? 'finished' : 'ended with an error'} · ${tokens}`);
        break;
      }
    }
  };
  for (const line of lines) {
    const events = parser.feed(line);
    for (const event of events) write(event);
    if (events.length === 0 && line.trim() && !jsonLine(line)) out.push(`│ ${line}`);
  }
  for (const event of parser.end()) write(event);
  return `${out.join('\n')}\n`;
}

function firstLine(value: string): string {
  return (
    value
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? ''
  );
}
