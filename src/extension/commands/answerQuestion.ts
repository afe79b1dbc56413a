import * as vscode from 'vscode';
import { BatonError, questionOf, type Engine, type Gate } from '../../engine/index';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';

/**
 * Answer…, on a question gate (an agent asked with `baton_ask` / `baton ask`): a quick pick of
 * its choices, or an input box when it offers none; the same engine operation as `baton answer`.
 * A question answered (or closed) meanwhile is not an error: the person is told the first answer.
 */
export const answerQuestion = folderCommand(async (ctx, node: CommandNode) => {
  const e = await ctx.session.engine();
  const gate = await questionGate(e, node?.kind === 'gate' ? node.gateId : undefined);
  if (!gate) return;
  const question = questionOf(gate)!;
  const title = `Answer ${gate.id} (${gate.delegationId ?? gate.taskId ?? 'an agent'})`;
  const answer = question.choices
    ? await vscode.window.showQuickPick(question.choices, { title, placeHolder: question.text })
    : await vscode.window.showInputBox({
        title,
        prompt: question.text,
        validateInput: (v) => (v.trim() ? undefined : 'An answer has some text.'),
      });
  if (answer === undefined) return;
  const outcome = await answerQuestionAs(ctx, gate, answer);
  if (outcome.kind === 'too-late') void vscode.window.showInformationMessage(outcome.said);
});

/** What answering a question came to: answered now, or answered (or closed) before — said to the person. */
export type AnswerOutcome =
  { readonly kind: 'answered'; readonly gate: Gate } | { readonly kind: 'too-late'; readonly said: string };

/**
 * The one way the editor answers a question gate, whatever asked (Answer…, a chat tool): the
 * engine's `answerQuestion` (the first answer wins), logged, the views refreshed.
 */
export async function answerQuestionAs(ctx: CommandContext, gate: Gate, answer: string): Promise<AnswerOutcome> {
  const e = await ctx.session.engine();
  if (gate.status !== 'open') return { kind: 'too-late', said: closedQuestion(gate) };
  let outcome: AnswerOutcome;
  try {
    const answered = await e.answerQuestion({ gateId: gate.id, answer });
    ctx.log.info(`${gate.id} answered by ${answered.decidedBy}: ${answered.note ?? ''}`);
    outcome = { kind: 'answered', gate: answered };
  } catch (err) {
    // Answered elsewhere (another window, the CLI) while the pick was open: the first answer stands.
    if (!BatonError.is(err, 'gate.already-decided')) throw err;
    outcome = { kind: 'too-late', said: err.message };
  }
  await ctx.session.runState?.refreshNow();
  return outcome;
}

/** The gate named, when it is a question (any status); a gate of another kind is refused with what to do instead. */
export async function questionGateNamed(e: Engine, gateId: string): Promise<Gate> {
  const gate = (await e.listGates({})).find((g) => g.id === gateId);
  if (!gate) throw new UserFacingError(`There is no gate ${gateId}.`);
  if (gate.kind !== 'question') throw new UserFacingError(`${gate.id} is a ${gate.kind} gate: approve or reject it.`);
  return gate;
}

function closedQuestion(gate: Gate): string {
  return gate.status === 'answered'
    ? `${gate.id} was already answered by ${gate.decidedBy ?? 'someone'}: ${gate.note ?? ''}`
    : `${gate.id} is closed (${gate.note ?? gate.status}); nobody waits for an answer.`;
}

/** The open question gate named, or one picked from those open; none waiting is information, not an error. */
async function questionGate(e: Engine, gateId: string | undefined): Promise<Gate | undefined> {
  if (gateId) {
    const gate = await questionGateNamed(e, gateId);
    if (gate.status !== 'open') {
      void vscode.window.showInformationMessage(closedQuestion(gate));
      return undefined;
    }
    return gate;
  }
  const open = (await e.listGates({ status: 'open' })).filter((g) => g.kind === 'question');
  if (open.length === 0) {
    void vscode.window.showInformationMessage('No agent is waiting for an answer.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    open.map((g) => ({
      label: g.id,
      description: g.delegationId ?? '',
      detail: questionOf(g)?.text ?? g.reason,
      gate: g,
    })),
    { title: 'Baton: which question?' },
  );
  return pick?.gate;
}
