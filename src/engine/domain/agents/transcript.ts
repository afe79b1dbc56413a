import { agentStreamParser, applyAgentEvent, describeToolCall, emptyActivity, type AgentKind } from './agentActivity';
import { jsonLine, type AgentEvent, type AgentStreamParser } from './agentEvents';

/**
 * An agent attempt's log as a person reads it ("Show Output", `baton logs`): the event
 * stream becomes one line per thing the agent did — its session, each turn, each tool call
 * and how it ended, its messages in full, usage, errors, the end — and whatever the CLI
 * printed that is not an event (a warning on stderr) is kept as it is. The log itself stays
 * the complete transcript.
 */
export function renderTranscript(kind: AgentKind, lines: Iterable<string>, cwd?: string): string {
  const renderer = new TranscriptRenderer(kind, cwd);
  const out = [...lines].map((line) => renderer.line(line)).join('');
  return `${out}${renderer.end()}`;
}

/**
 * The same rendering, fed as the log grows ("Show Output" follows a running agent): `write`
 * takes any chunk of the log and returns the text of the lines it completed; a partial last
 * line waits for its newline, and `end` renders it with what is still pending.
 */
export class TranscriptRenderer {
  private readonly parser: AgentStreamParser;
  private activity = emptyActivity();
  private turn = 0;
  private partial = '';

  constructor(
    private readonly kind: AgentKind,
    cwd?: string,
  ) {
    this.parser = agentStreamParser(kind, cwd ? { cwd } : {});
  }

  write(chunk: string): string {
    const lines = (this.partial + chunk).split('\n');
    this.partial = lines.pop() ?? '';
    return lines.map((line) => this.line(line)).join('');
  }

  end(): string {
    const last = this.partial ? this.line(this.partial) : '';
    this.partial = '';
    return (
      last +
      this.parser
        .end()
        .map((event) => this.event(event))
        .join('')
    );
  }

  /** One complete line of the log: what it says, as text ending with a newline (or nothing). */
  line(line: string): string {
    const events = this.parser.feed(line);
    const text = events.map((event) => this.event(event)).join('');
    if (events.length === 0 && line.trim() && !jsonLine(line)) return `${text}│ ${line}\n`;
    return text;
  }

  private event(event: AgentEvent): string {
    this.activity = applyAgentEvent(this.activity, event);
    const out: string[] = [];
    switch (event.kind) {
      case 'session':
        out.push(`── ${this.kind} session ${event.sessionId}${event.model ? ` · ${event.model}` : ''}`);
        break;
      case 'turn':
        out.push('', `▸ turn ${++this.turn}`);
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
        const a = this.activity;
        const cost = a.costUsd !== undefined ? `, $${a.costUsd.toFixed(4)}` : '';
        out.push(
          '',
          `■ ${event.ok ? 'finished' : 'ended with an error'} · ${a.inputTokens} tokens in, ${a.outputTokens} out${cost}`,
        );
        break;
      }
    }
    return out.map((l) => `${l}\n`).join('');
  }
}

function firstLine(value: string): string {
  return (
    value
      .split('\n')
      .find((l) => l.trim())
      ?.trim() ?? ''
  );
}
