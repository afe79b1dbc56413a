import type { GateKind } from '../../engine/index';
import { gateKindWords, plain } from '../../tools/gateWords';

// The words for a gate (its kind, a decision made meanwhile) are shared with `baton mcp --for-person`:
// src/tools/gateWords.ts.
export { describeDecision, gateKindWords, plain } from '../../tools/gateWords';

/** An open gate as the notification tells it: what waits, for which task. */
export interface OpenGateNotice {
  gateId: string;
  runId: string;
  kind: GateKind;
  reason: string;
  taskId?: string;
  taskTitle?: string;
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
    return `Baton: ${subject(gate)} waits for a decision (${plain(gate.gateId)}, ${gateKindWords(gate.kind)}): ${oneLine(gate.reason, 300)} ${approve} · ${reject} · ${show}`;
  }
  const list = gates.map((g) => `${plain(g.gateId)} ${subject(g)} (${gateKindWords(g.kind)})`).join('; ');
  return `Baton: ${gates.length} gates wait for a decision — ${oneLine(list, 700)}. ${show} · ${settings}`;
}

function oneLine(text: string, max: number): string {
  const line = plain(text).replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
