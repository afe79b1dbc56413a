/**
 * What Baton says about a live worker runtime — the Workers view, the dashboard's Workers list
 * and `baton status` all say it with this function, from the same facts and the same `now`, so
 * they agree (docs/workers.md, "Liveness"). Pure: no vscode, no DOM, no engine.
 *
 * The facts behind it: a worker Baton started is supervised — its coordinator renews the lease
 * while the process runs — whether or not the worker sends heartbeats of its own. Such a worker
 * is *alive* (its pid, and for how long Baton has seen it). A worker that beats itself
 * (`baton heartbeat`) shows its last beat. *Stale* is kept for a real loss: the lease ran out,
 * so nothing — neither the worker nor its coordinator — renewed it in time.
 */
import { formatDuration } from './time';

export interface LivenessFacts {
  /** The runtime status the engine derived (claimed | active | stale | …). */
  status: string;
  leaseExpiresAt: number;
  /** The worker's own last heartbeat (not its coordinator's renewals). */
  workerBeatAt?: number;
  /** The worker's process, when Baton started (or adopted) one. */
  pid?: number;
  /** When Baton's supervisor first recorded that process. */
  processStartedAt?: number;
  /** A look at the machine found that process gone (pid and start time), its attempt not settled yet. */
  processGone?: boolean;
  /** Who holds the lease ("a person (manual)" for a hand-off). */
  holder?: string;
}

/**
 * `alive`: a process Baton supervises, no beats of its own; `active`: the worker beats itself;
 * `claimed`: held, but nothing seen of it yet (an external claim before its first beat, a person's
 * hand-off); `stale`: the lease ran out; `blocked`: its result waits at a gate, nothing runs; `gone`: its
 * process ended while no coordinator watched, and no coordinator has settled its attempt yet.
 */
export type LivenessState = 'alive' | 'active' | 'claimed' | 'stale' | 'blocked' | 'gone';

export interface Liveness {
  state: LivenessState;
  /** For a row: "beat 3s ago", "alive 2m 05s · pid 4242", "no beat yet", "STALE". */
  summary: string;
  /** "lease 27s", or "lease expired 5s ago". */
  lease: string;
  /** One or two sentences for a tooltip: what the state means. */
  explanation: string;
}

/** A lease that ran out by `now` is stale before any read says so (the engine derives it the same way). */
export function isStale(facts: Pick<LivenessFacts, 'status' | 'leaseExpiresAt'>, now: number): boolean {
  if (facts.status === 'stale') return true;
  return (facts.status === 'claimed' || facts.status === 'active') && facts.leaseExpiresAt <= now;
}

export function describeLiveness(facts: LivenessFacts, now: number): Liveness {
  if (facts.status === 'blocked')
    return {
      state: 'blocked',
      summary: 'waits at a gate',
      lease: `lease ${formatDuration(Math.max(0, facts.leaseExpiresAt - now))}`,
      explanation: 'Its worker handed in a result that waits at a gate; nothing runs for it now.',
    };
  if (isStale(facts, now)) {
    const ago = formatDuration(now - facts.leaseExpiresAt);
    return {
      state: 'stale',
      summary: 'STALE',
      lease: `lease expired ${ago} ago`,
      explanation: `Its lease ran out ${ago} ago: neither the worker nor its coordinator renewed it in time, so the attempt is lost (the retry policy applies).`,
    };
  }
  const lease = `lease ${formatDuration(facts.leaseExpiresAt - now)}`;
  // Checked before the beats and the pid: a process that is gone is never called alive, whatever its lease says.
  if (facts.pid !== undefined && facts.processGone)
    return {
      state: 'gone',
      summary: `ended · pid ${facts.pid}`,
      lease,
      explanation: `Its process ${facts.pid} has ended, and no coordinator has settled its attempt yet: the next one (baton resume, or the editor) settles it from the worker's exit record as if it had watched, or marks it STALE when there is none.`,
    };
  const supervised =
    facts.pid !== undefined
      ? `Baton supervises its process ${facts.pid}${facts.processStartedAt !== undefined ? ` (for ${formatDuration(now - facts.processStartedAt)})` : ''} and renews its lease while it runs.`
      : undefined;
  if (facts.workerBeatAt !== undefined) {
    const ago = formatDuration(now - facts.workerBeatAt);
    return {
      state: 'active',
      summary: `beat ${ago} ago`,
      lease,
      explanation: `The worker last sent a heartbeat ${ago} ago.${supervised ? ` ${supervised}` : ''}`,
    };
  }
  if (facts.pid !== undefined) {
    const age = facts.processStartedAt !== undefined ? ` ${formatDuration(now - facts.processStartedAt)}` : '';
    return {
      state: 'alive',
      summary: `alive${age} · pid ${facts.pid}`,
      lease,
      explanation: `${supervised} The worker sends no heartbeats of its own; that is fine.`,
    };
  }
  const person = facts.holder?.includes('manual') ?? false;
  return {
    state: 'claimed',
    summary: person ? 'waiting for a person' : 'no beat yet',
    lease,
    explanation: person
      ? 'A person does this task; Baton waits for the result to be ingested.'
      : 'Claimed, with no process Baton started and no heartbeat yet: the holder renews the lease with `baton heartbeat`.',
  };
}
