import type { AgentEvent } from './agentEvents';
import { agentStreamParser, type AgentKind } from './agentActivity';

/**
 * A CLI said its account hit a usage limit, a rate limit or a quota (docs/agents.md, "Usage limits park"):
 * the attempt is parked, not failed. `resetAt` when the CLI said when the limit lifts (epoch ms).
 */
export interface UsageLimit {
  resetAt?: number;
  /** What the CLI said, as it said it (one line). */
  said: string;
}

/**
 * The limit signal in one stream event of an agent CLI, if any. Which texts count:
 * - an error the CLI reported, or the final text of a run that ended in failure: the CLI's own limit message, or a
 *   plain rate limit (HTTP 429, `rate_limit_error`, `RESOURCE_EXHAUSTED`) — only when fatal, as a CLI retries a
 *   transient 429 by itself;
 * - the final text of a run that ended "ok": only when it *is* the CLI's limit message (it starts with it and is
 *   short). Claude Code ends a run that hit its plan's limit with that message as its result; an agent that merely
 *   mentions rate limits in its answer (it wrote a rate limiter) is not parked.
 */
export function usageLimitOf(kind: AgentKind, event: AgentEvent, now: number): UsageLimit | undefined {
  if (event.kind === 'error') return usageLimitIn(kind, event.message, now, { plainRateLimit: event.fatal });
  if (event.kind !== 'end' || !event.finalText) return undefined;
  if (!event.ok) return usageLimitIn(kind, event.finalText, now, { plainRateLimit: true });
  const said = event.finalText.trim();
  if (said.length > MAX_LIMIT_MESSAGE) return undefined;
  const limit = usageLimitIn(kind, said, now, { plainRateLimit: false });
  return limit && LIMIT_FIRST[kind].test(said) ? limit : undefined;
}

/** The last limit signal in a stream (an exited attempt's log, read by whoever settles it), if any. */
export function usageLimitInStream(kind: AgentKind, lines: Iterable<string>, now: number): UsageLimit | undefined {
  const parser = agentStreamParser(kind);
  let limit: UsageLimit | undefined;
  for (const line of lines) for (const event of parser.feed(line)) limit = usageLimitOf(kind, event, now) ?? limit;
  for (const event of parser.end()) limit = usageLimitOf(kind, event, now) ?? limit;
  return limit;
}

/** A limit message is one or two sentences; a longer final text is an answer that quotes one. */
const MAX_LIMIT_MESSAGE = 400;

/** How each CLI's own limit message begins (for a final text that is nothing but the message). */
const LIMIT_FIRST: Record<AgentKind, RegExp> = {
  'claude-code':
    /^(?:Claude AI usage limit reached|Claude usage limit reached|You've hit your limit|\d+-hour limit reached|Weekly limit reached|You have reached your specified API usage limits)/i,
  codex: /^(?:■\s*)?You've hit your usage limit/i,
  gemini: /^(?:Quota exceeded|You have exhausted your capacity|Resource has been exhausted)/i,
  opencode: /^(?:Claude AI usage limit reached|You've hit your usage limit|Rate limit(?:ed)? exceeded)/i,
};

/** The limit message in a text the CLI printed, per CLI; `plainRateLimit`: a bare 429 counts too. */
export function usageLimitIn(
  kind: AgentKind,
  said: string,
  now: number,
  options: { plainRateLimit: boolean },
): UsageLimit | undefined {
  const line = said.replace(/\s+/g, ' ').trim().slice(0, 300);
  const own = OWN_MESSAGES[kind](said, now);
  if (own) return { ...own, said: line };
  if (options.plainRateLimit && PLAIN_RATE_LIMIT.test(said)) {
    const resetAt = retryAfter(said, now);
    return { ...(resetAt !== undefined ? { resetAt } : {}), said: line };
  }
  return undefined;
}

/** An HTTP 429 as the CLIs pass it on (Anthropic, OpenAI, Gemini error bodies). */
const PLAIN_RATE_LIMIT =
  /\b429\b|rate_limit_error|rate[ -]limit(?:ed)? (?:exceeded|reached)|RESOURCE_EXHAUSTED|Too Many Requests|exceeded your current quota|Quota exceeded/i;

type OwnMessage = (said: string, now: number) => Omit<UsageLimit, 'said'> | undefined;

/**
 * Claude Code (from its issue tracker, versions 1.0.x–2.1.x): "Claude AI usage limit reached|1753441200" (the reset
 * in epoch seconds), "Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).", "5-hour limit
 * reached ∙ resets 3pm", "You've hit your limit · resets 3pm (Europe/Berlin)", and the API's "You have reached your
 * specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC."
 */
const claudeCodeMessage: OwnMessage = (said, now) => {
  const epoch = /Claude AI usage limit reached\|(\d{9,13})/i.exec(said);
  if (epoch) {
    const value = Number(epoch[1]);
    return { resetAt: value < 1e11 ? value * 1000 : value };
  }
  const regain = /regain access on (\d{4}-\d{2}-\d{2}) at (\d{1,2}:\d{2}) UTC/i.exec(said);
  if (regain) return atMs(Date.parse(`${regain[1]}T${regain[2]!.padStart(5, '0')}:00Z`));
  if (!/usage limit reached|limit reached|hit your limit|reached your specified API usage limits/i.test(said))
    return undefined;
  const resets = /resets?(?: at)? (\d{1,2})(?::(\d{2}))? ?([ap]m)?(?: \(([^)]+)\))?/i.exec(said);
  if (!resets) return {};
  return atMs(nextClockTime(clockHour(resets[1]!, resets[3]), Number(resets[2] ?? 0), resets[4], now));
};

/**
 * Codex (openai/codex issues, 0.3x–0.5x): "You've hit your usage limit. Upgrade to Pro (…) or try again in 4 days 20
 * hours 9 minutes.", "… or try again at Jul 5th, 2026 8:19 PM.", and `codex exec`'s "Quota exceeded. Check your plan
 * and billing details."
 */
const codexMessage: OwnMessage = (said, now) => {
  if (!/hit your usage limit|usage limit reached|Quota exceeded/i.test(said)) return undefined;
  const inside = /try again in ((?:\d+ ?(?:days?|hours?|minutes?|mins?|seconds?|secs?|[dhms])[ ,]*(?:and )?)+)/i.exec(
    said,
  );
  if (inside) return atMs(now + durationMs(inside[1]!));
  const at = /try again at (.+?)\.?$/im.exec(said);
  if (at) return atMs(Date.parse(at[1]!.replace(/(\d)(?:st|nd|rd|th)\b/, '$1')));
  return {};
};

/**
 * Gemini CLI (google-gemini/gemini-cli issues, 0.1–0.45): "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests'
 * …", "Resource has been exhausted (e.g. check quota).", "You have exhausted your capacity on this model. Your quota
 * will reset after 2h13m.", with "Please retry in 34.5s." where the API says so.
 */
const geminiMessage: OwnMessage = (said, now) => {
  if (!/Quota exceeded|exhausted your capacity|Resource has been exhausted|RESOURCE_EXHAUSTED/i.test(said))
    return undefined;
  const after = /reset after ((?:\d+ ?[hms] ?)+)/i.exec(said);
  if (after) return atMs(now + durationMs(after[1]!));
  const resetAt = retryAfter(said, now);
  return resetAt !== undefined ? { resetAt } : {};
};

/** opencode passes its provider's message on: Anthropic's, OpenAI's or Gemini's. */
const opencodeMessage: OwnMessage = (said, now) =>
  claudeCodeMessage(said, now) ?? codexMessage(said, now) ?? geminiMessage(said, now);

const OWN_MESSAGES: Record<AgentKind, OwnMessage> = {
  'claude-code': claudeCodeMessage,
  codex: codexMessage,
  gemini: geminiMessage,
  opencode: opencodeMessage,
};

/** "Please retry in 34.5s", "retry after 60 seconds", "Retry-After: 120". */
function retryAfter(said: string, now: number): number | undefined {
  const m = /retry(?:[- ]after:?| in) ?(\d+(?:\.\d+)?) ?(s|sec|secs|seconds?|ms)?\b/i.exec(said);
  if (!m) return undefined;
  const value = Number(m[1]);
  return now + Math.ceil(m[2] === 'ms' ? value : value * 1000);
}

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/** "4 days 20 hours 9 minutes", "2h13m", "30s" in ms. */
export function durationMs(text: string): number {
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?) ?(days?|d|hours?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])/gi)) {
    total += Number(m[1]) * UNIT_MS[m[2]!.toLowerCase()[0]!]!;
  }
  return total;
}

function atMs(ms: number | undefined): Omit<UsageLimit, 'said'> {
  return ms !== undefined && Number.isFinite(ms) ? { resetAt: ms } : {};
}

function clockHour(hour: string, meridiem: string | undefined): number {
  const h = Number(hour) % 12;
  if (!meridiem) return Number(hour);
  return meridiem.toLowerCase() === 'pm' ? h + 12 : h;
}

/**
 * The next moment after `now` when the clock in `zone` (an IANA name; the machine's zone when absent or unknown)
 * shows hour:minute — "resets 3pm" said at 4pm means tomorrow.
 */
export function nextClockTime(hour: number, minute: number, zone: string | undefined, now: number): number | undefined {
  if (hour > 23 || minute > 59) return undefined;
  const offset = zoneOffsetMs(zone, now);
  const wall = new Date(now + offset);
  let at = Date.UTC(wall.getUTCFullYear(), wall.getUTCMonth(), wall.getUTCDate(), hour, minute) - offset;
  if (at <= now) at += 86_400_000;
  return at;
}

/** How far the zone's wall clock is ahead of UTC at `at`. */
function zoneOffsetMs(zone: string | undefined, at: number): number {
  const machine = -new Date(at).getTimezoneOffset() * 60_000;
  if (!zone) return machine;
  try {
    const parts = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    }).formatToParts(at);
    const part = (type: string): number => Number(parts.find((p) => p.type === type)?.value ?? 0);
    const wall = Date.UTC(part('year'), part('month') - 1, part('day'), part('hour'), part('minute'), part('second'));
    return wall - (at - (at % 1000));
  } catch {
    return machine; // not a zone this Node knows: the machine's
  }
}
