import * as vscode from 'vscode';
import { BatonError, type Engine, type Gate } from '../../engine/index';
import { describeDecision } from '../model/gateNotice';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { continueIfReleased } from './drive';

/** Approve: a `verification_failed` gate asks whether to retry the task or accept the result. */
export const approveGate = folderCommand((ctx, node: CommandNode) => decide(ctx, node, 'approved'));

/** Reject…: asks why (kept with the decision). */
export const rejectGate = folderCommand((ctx, node: CommandNode) => decide(ctx, node, 'rejected'));

/** What deciding a gate came to: decided now, or decided before (by whom, when: said to the person). */
export type GateDecisionOutcome =
  | { readonly kind: 'decided'; readonly gate: Gate }
  | { readonly kind: 'already-decided'; readonly gate: Gate; readonly said: string };

/**
 * Decides a gate: from the Gates view, a notification, the dashboard, a chat tool. A gate decided
 * meanwhile (elsewhere, or from a surface that had not caught up) is not an error: the outcome says
 * who decided it, and nothing changes.
 */
async function decide(ctx: CommandContext, node: CommandNode, decision: 'approved' | 'rejected'): Promise<void> {
  const e = await ctx.session.engine();
  const gateId = node?.kind === 'gate' ? node.gateId : await pickGate(e);
  if (!gateId) return;
  const gate = await gateToDecide(ctx, gateId, node?.kind === 'gate' ? node.runId : undefined);
  if (gate.status !== 'open') return tell(await decideGateAs(ctx, { gate, decision }));
  let accept = false;
  let note: string | undefined;
  const givenAccept = (node as { accept?: unknown } | undefined)?.accept;
  if (decision === 'approved' && gate.kind === 'verification_failed' && typeof givenAccept === 'boolean')
    accept = givenAccept;
  else if (decision === 'approved' && gate.kind === 'verification_failed') {
    const pick = await vscode.window.showQuickPick(
      [
        { label: 'Retry the task', description: 'a new attempt', accept: false },
        { label: 'Accept the result', description: 'as it is, although verification failed', accept: true },
      ],
      { title: `Approve ${gate.id}` },
    );
    if (!pick) return;
    accept = pick.accept;
  }
  const given = (node as { note?: unknown } | undefined)?.note;
  if (typeof given === 'string' && given.trim()) note = given.trim();
  else if (decision === 'rejected') {
    note = await vscode.window.showInputBox({
      title: `Reject ${gate.id}`,
      prompt: gate.reason,
      placeHolder: 'Why? (kept with the decision)',
      validateInput: (v) => (v.trim() ? undefined : 'Say why, for the record.'),
    });
    if (note === undefined) return;
  }
  tell(await decideGateAs(ctx, { gate, decision, ...(note ? { note } : {}), ...(accept ? { accept } : {}) }));
}

function tell(outcome: GateDecisionOutcome): void {
  if (outcome.kind === 'already-decided') void vscode.window.showInformationMessage(outcome.said);
}

/** The gate with this id (of this run, when given); none is the person's error, said in one line. */
export async function gateToDecide(ctx: CommandContext, gateId: string, runId?: string): Promise<Gate> {
  const e = await ctx.session.engine();
  const gate = (await e.listGates(runId ? { runId } : {})).find((g) => g.id === gateId);
  if (!gate) throw new UserFacingError(`There is no gate ${gateId}.`);
  return gate;
}

/**
 * The one way the editor decides a gate, whatever asked (a command, a chat tool): the engine's
 * decision, logged, the views refreshed, and the run driven on from this window when nothing
 * drives it. A gate already decided changes nothing; approved as this person wanted, the run
 * goes on here all the same.
 */
export async function decideGateAs(
  ctx: CommandContext,
  input: { gate: Gate; decision: 'approved' | 'rejected'; note?: string; accept?: boolean },
): Promise<GateDecisionOutcome> {
  const { gate, decision, note, accept } = input;
  const e = await ctx.session.engine();
  if (gate.status !== 'open') return alreadyDecided(ctx, gate, decision);
  let outcome: Awaited<ReturnType<Engine['decideGate']>>;
  try {
    outcome = await e.decideGate({
      gateId: gate.id,
      decision,
      ...(note ? { note } : {}),
      ...(accept ? { accept } : {}),
    });
  } catch (err) {
    // Decided by someone else while the quick pick or the note was open.
    if (!BatonError.is(err, 'gate.already-decided')) throw err;
    const now = (await e.listGates({ runId: gate.runId })).find((g) => g.id === gate.id);
    if (!now || now.status === 'open') throw err;
    return alreadyDecided(ctx, now, decision);
  }
  if (outcome.alreadyDecided) return alreadyDecided(ctx, outcome.gate, decision);
  ctx.log.info(`${gate.id} ${decision}${accept ? ' (accepted)' : ''} by ${outcome.gate.decidedBy}`);
  await ctx.session.runState?.refreshNow();
  // Either way: a rejection releases work too (an isolation gate's other tasks, a task's siblings).
  await continueIfReleased(ctx, gate.runId);
  return { kind: 'decided', gate: outcome.gate };
}

/**
 * The gate was decided before this decision arrived: say by whom, change nothing. When it was
 * approved, as this person wanted, the run goes on here if nobody drives it.
 */
async function alreadyDecided(
  ctx: CommandContext,
  gate: Gate,
  wanted: 'approved' | 'rejected',
): Promise<GateDecisionOutcome> {
  const said = describeDecision(gate, (await ctx.session.engine()).now());
  ctx.log.info(`${wanted === 'approved' ? 'Approve' : 'Reject'} ${gate.id}: ${said}`);
  await ctx.session.runState?.refreshNow();
  if (wanted === 'approved' && gate.status === 'approved') await continueIfReleased(ctx, gate.runId);
  return { kind: 'already-decided', gate, said };
}

/** A gate to decide, from a quick pick; none waiting is information, not an error. */
async function pickGate(e: Engine): Promise<string | undefined> {
  const open = await e.listGates({ status: 'open' });
  if (open.length === 0) {
    void vscode.window.showInformationMessage('No gate is waiting for a decision.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    open.map((g) => ({ label: g.id, description: g.kind, detail: g.reason })),
    { title: 'Baton: which gate?' },
  );
  return pick?.label;
}
