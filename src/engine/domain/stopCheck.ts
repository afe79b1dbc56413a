import { formatIssue, type Issue } from './issue';
import { counted } from './plural';

/**
 * Repair inside the session (docs/agents.md, "The stop hook"): when an agent whose CLI has a
 * stop hook tries to end, its attempt's result is checked as ingestion would check it, and while
 * it has issues and rounds are left the issues go back to the agent, which fixes them in the same
 * session. The decisions are here; the check is judgeArtifact's, the round count the store's.
 */

/** What the hook found and what the attempt has used so far. */
export interface StopCheckFacts {
  /** Issues of severity error in the result the agent is about to end with (none: ingestion would accept it). */
  errors: number;
  /** Rounds of this attempt whose issues were already sent back to the agent. */
  roundsSentBack: number;
  /** The run's repairRounds: how many times an attempt may be sent back. */
  repairRounds: number;
}

/**
 * `repair`: the agent gets the issues and goes on (round `round` of `repairRounds`). `finish`: the
 * agent may end, and ingestion judges the result as it would without the hook — `acceptable` (nothing
 * to fix) or `rounds-spent` (issues remain, no round left).
 */
export type StopVerdict =
  { kind: 'repair'; round: number } | { kind: 'finish'; round: number; why: 'acceptable' | 'rounds-spent' };

/**
 * Whether the agent is sent back. Claude Code's own advice for a stop hook is to let the agent end
 * whenever `stop_hook_active` is set (a loop guard); that would allow one round. Baton's loop guard is
 * its count of rounds in the store instead — durable, per attempt, bounded by repairRounds (at most 5,
 * under Claude Code's own cap of 8 blocks) — so `stop_hook_active` decides nothing here.
 */
export function stopVerdict(facts: StopCheckFacts): StopVerdict {
  const round = facts.roundsSentBack + 1;
  if (facts.errors === 0) return { kind: 'finish', round, why: 'acceptable' };
  if (facts.roundsSentBack >= facts.repairRounds) return { kind: 'finish', round, why: 'rounds-spent' };
  return { kind: 'repair', round };
}

/**
 * What the agent reads (the hook's stderr, which Claude Code hands to the model): each issue as
 * `baton check-result` prints it, where the result was read, and what to do — written for a model.
 */
export function repairFeedback(input: {
  delegationId: string;
  /** Where the checked result stood: the artifact's workspace-relative path, or the final message. */
  source: string;
  artifactPath: string;
  issues: readonly Issue[];
  round: number;
  repairRounds: number;
}): string {
  const errors = input.issues.filter((i) => i.severity === 'error');
  const left = input.repairRounds - input.round;
  return [
    `Baton checked the result you are about to end ${input.delegationId} with (${input.source}), as ingestion will: ${counted(errors.length, 'issue')} to fix.`,
    ...input.issues.map((i) => `- ${formatIssue(i, input.source)}`),
    `Fix them and end again: write the corrected baton-result block to ${input.artifactPath} or end with it as your final message.` +
      (left > 0
        ? ` (Check ${input.round} of ${input.repairRounds}.)`
        : ` This was the last check (${input.round} of ${input.repairRounds}): the next result goes to ingestion as it is.`),
  ].join('\n');
}

/** The part of Claude Code's Stop hook input Baton reads (checked with 2.1.332); anything else is ignored. */
export interface StopHookInput {
  /** Set when the agent goes on because a stop hook sent it back (Baton's or another). */
  stopHookActive: boolean;
  /** The text of the agent's last message: its result when it wrote no artifact file. */
  lastAssistantMessage?: string;
}

/**
 * Reads the hook's stdin. Tolerant: a hook input that is not the JSON it expects is read as a stop with
 * no last message (the artifact file is then checked alone) — the hook never fails the agent's stop on it.
 */
export function parseStopHookInput(text: string): StopHookInput {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { stopHookActive: false };
  }
  if (!value || typeof value !== 'object') return { stopHookActive: false };
  const o = value as Record<string, unknown>;
  return {
    stopHookActive: o.stop_hook_active === true,
    ...(typeof o.last_assistant_message === 'string' ? { lastAssistantMessage: o.last_assistant_message } : {}),
  };
}
