import type { Gate, GateKind } from '../engine/index';
import { formatDuration } from '../protocol/time';

// A gate in words, as every surface a person reads says it: the editor's notifications and chat tools, and
// `baton mcp --for-person` (src/extension/model/gateNotice.ts re-exports these).

const KIND_WORDS: Record<GateKind, string> = {
  risk_approval: 'risk approval',
  manual_handoff: 'hand-off',
  ingestion_failed: 'rejected result',
  verification_failed: 'failed verification',
  integration_conflict: 'integration conflict',
  budget: 'budget',
  isolation: 'isolation',
  target_moved: 'target branch moved',
  undeclared_files: 'files outside the declaration',
  // The merged tree failed a verify command, or (integration: branch) the remote refused the push.
  integration_failed: 'integration failed',
  config_changed: 'config change',
  question: 'question from the agent',
  review: 'review',
};

/** A gate's kind in words ("risk approval", "question from the agent"). */
export function gateKindWords(kind: GateKind): string {
  return KIND_WORDS[kind];
}

/**
 * What a person reads who acts on a gate that was decided meanwhile (a stale notification, a
 * view that had not caught up): who decided it, when, and that nothing changed.
 */
export function describeDecision(gate: Gate, now: number): string {
  const what = plain(`${gate.id} (${KIND_WORDS[gate.kind]}${gate.taskId ? ` of ${gate.taskId}` : ''})`);
  const when = gate.decidedAt !== undefined ? ` ${formatDuration(now - gate.decidedAt)} ago` : '';
  const who = gate.decidedBy === 'baton' ? 'Baton' : plain(gate.decidedBy ?? 'someone');
  const note = gate.note ? ` (“${oneLine(gate.note, 200)}”)` : '';
  return `${what} was already ${gate.status} by ${who}${when}${note}; nothing changed.`;
}

/**
 * Text from the store (a reason may quote a worker's summary, a title comes from the plan) with
 * no square brackets: a notification turns `[label](command:…)` into a link that runs a
 * command, and only Baton's own links may do that.
 */
export function plain(text: string): string {
  return text.replace(/\[/g, '(').replace(/\]/g, ')');
}

function oneLine(text: string, max: number): string {
  const line = plain(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
