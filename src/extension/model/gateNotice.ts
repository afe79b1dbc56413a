import type { Gate, GateKind } from '../../engine/index';
import { formatDuration } from '../../protocol/time';

/** An open gate as the notification tells it: what waits, for which task. */
export interface OpenGateNotice {
  gateId: string;
  runId: string;
  kind: GateKind;
  reason: string;
  taskId?: string;
  taskTitle?: string;
}

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

/** `command:` link of a notification message (VS Code runs these from notifications; the args are JSON). */
export function commandLink(label: string, command: string, args?: unknown): string {
  const query = args === undefined ? '' : `?${encodeURIComponent(JSON.stringify([args]))}`;
  // A link target ends at the first `)` or space: encodeURIComponent leaves parentheses alone.
  return `[${label}](command:${command}${query.replace(/\(/g, '%28').replace(/\)/g, '%29')})`;
}

/** "T3 “Change the storage”", or the gate id when it holds no task. */
function subject(gate: OpenGateNotice): string {
  if (!gate.taskId) return plain(gate.gateId);
  return gate.taskTitle ? `${plain(gate.taskId)} “${plain(gate.taskTitle)}”` : plain(gate.taskId);
}

/**
 * The one notification's text (docs/extension.md, "Gate notifications"): exactly the open
 * gates, in the order they opened. One gate: what waits and why, with Approve, Reject and Show
 * Gates. Several: each gate on its task, and Show Gates (the Gates view decides each one).
 * VS Code shows a notification on one line (an expand chevron reveals the rest) and keeps at
 * most 1000 characters.
 */
export function gateNoticeMessage(gates: readonly OpenGateNotice[]): string {
  const show = commandLink('Show Gates', 'baton.gates.focus');
  const settings = commandLink('Notification Settings', 'workbench.action.openSettings', 'baton.notifyOnGate');
  if (gates.length === 1) {
    const gate = gates[0]!;
    const node = { kind: 'gate', id: `gate:${gate.gateId}`, runId: gate.runId, gateId: gate.gateId };
    if (gate.kind === 'question') {
      // A question takes an answer, not a decision (docs/agents.md).
      const answer = commandLink('Answer…', 'baton.answerQuestion', node);
      return `Baton: ${subject(gate)} asks a question (${plain(gate.gateId)}): ${oneLine(gate.reason, 300)} ${answer} · ${show}`;
    }
    const approve = commandLink('Approve', 'baton.approveGate', node);
    const reject = commandLink('Reject', 'baton.rejectGate', node);
    return `Baton: ${subject(gate)} waits for a decision (${plain(gate.gateId)}, ${KIND_WORDS[gate.kind]}): ${oneLine(gate.reason, 300)} ${approve} · ${reject} · ${show}`;
  }
  const list = gates.map((g) => `${plain(g.gateId)} ${subject(g)} (${KIND_WORDS[g.kind]})`).join('; ');
  return `Baton: ${gates.length} gates wait for a decision — ${oneLine(list, 700)}. ${show} · ${settings}`;
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
