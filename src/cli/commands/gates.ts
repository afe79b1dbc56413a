import { BatonError, Engine, type GateDecision } from '../../engine/index';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { oneLine, paint, status, table, timestamp } from '../render';

/** Open gates (all runs, or one); --all includes decided ones. */
export async function listGates(ctx: CommandContext, options: { run?: string; all?: boolean }): Promise<void> {
  if (!Engine.hasStore(ctx.workspace)) {
    if (ctx.output.json) printJson(ctx, { gates: [] });
    else ctx.output.out('No gates: there is no Baton run here yet.');
    return;
  }
  await withEngine(ctx, async (engine) => {
    const gates = await engine.listGates({
      ...(options.run ? { runId: options.run } : {}),
      ...(options.all ? {} : { status: 'open' as const }),
    });
    if (ctx.output.json) return printJson(ctx, { gates });
    if (gates.length === 0) return ctx.output.out(options.all ? 'No gates.' : 'No open gates.');
    ctx.output.out(
      table(
        ctx.output,
        ['GATE', 'STATUS', 'KIND', 'RUN', 'TASK', 'OPENED', 'REASON'],
        gates.map((g) => [
          g.id,
          status(ctx.output, g.status),
          g.kind,
          g.runId,
          g.taskId ?? '-',
          timestamp(g.openedAt),
          oneLine(g.status === 'open' ? g.reason : `${g.decidedBy ?? ''}${g.note ? `: ${g.note}` : ''}`, 80),
        ]),
      ),
    );
  });
}

export async function decide(
  ctx: CommandContext,
  gateId: string,
  decision: GateDecision,
  note: string | undefined,
  accept = false,
): Promise<void> {
  requireStore(ctx, () => new BatonError('gate.unknown', `There is no gate ${gateId}.`));
  await withEngine(ctx, async (engine) => {
    const { gate, alreadyDecided } = await engine.decideGate({
      gateId,
      decision,
      ...(note ? { note } : {}),
      ...(accept ? { accept } : {}),
    });
    if (ctx.output.json) return printJson(ctx, { gate, alreadyDecided });
    const verb =
      decision === 'approved' ? paint(ctx.output, 'green', 'approved') : paint(ctx.output, 'red', 'rejected');
    ctx.output.out(
      alreadyDecided
        ? `Gate ${gate.id} was already ${verb} by ${gate.decidedBy ?? 'someone'}; nothing changed.`
        : `Gate ${gate.id} (${gate.kind}${gate.taskId ? `, task ${gate.taskId}` : ''}) ${verb}${gate.note ? `: ${gate.note}` : ''}.`,
    );
  });
}

/**
 * `baton answer <gate> "text"`: a person answers an attempt's question (a question gate); the
 * agent waiting in `baton_ask` / `baton ask` gets it. The first answer wins: a second one is
 * refused naming the first (`gate.already-decided`, exit 4), as the opposite decision of a gate
 * is; an answer that is not one of the question's choices, or a gate that is not a question, is
 * exit 2.
 */
export async function answer(ctx: CommandContext, gateId: string, text: string): Promise<void> {
  requireStore(ctx, () => new BatonError('gate.unknown', `There is no gate ${gateId}.`));
  await withEngine(ctx, async (engine) => {
    const gate = await engine.answerQuestion({ gateId, answer: text });
    if (ctx.output.json) return printJson(ctx, { gate });
    ctx.output.out(
      `Gate ${gate.id} (question of ${gate.delegationId ?? 'an attempt'}) ${paint(ctx.output, 'green', 'answered')}: ${oneLine(gate.note ?? '', 200)}`,
    );
  });
}

/**
 * `baton recheck [gate]`: "Check again" on an isolation gate (or on every open one): when the
 * working tree is clean now, the gate closes by itself and its task runs in a worktree once
 * the run is resumed. Exit 8 while a gate still waits (what is in the way is printed).
 */
export async function recheck(
  ctx: CommandContext,
  gateId: string | undefined,
  options: { run?: string },
): Promise<number> {
  requireStore(
    ctx,
    () => new BatonError('gate.unknown', gateId ? `There is no gate ${gateId}.` : 'There is no gate here yet.'),
  );
  return withEngine(ctx, async (engine) => {
    const checked = await engine.recheckIsolation({
      ...(gateId ? { gateId } : {}),
      ...(options.run ? { runId: options.run } : {}),
    });
    const waiting = checked.filter((c) => !c.resolved);
    const code = waiting.length > 0 ? 8 : 0;
    if (ctx.output.json) {
      printJson(ctx, { checked, exitCode: code });
      return code;
    }
    const o = ctx.output;
    if (checked.length === 0) o.out('No isolation gate is open.');
    for (const c of checked) {
      if (c.resolved) o.out(`${paint(o, 'green', '✓')} ${c.gate.id} closed: ${c.reason}.`);
      else o.out(`${paint(o, 'yellow', '✗')} ${c.gate.id} still waits: ${c.reason}`);
    }
    const runs = [...new Set(checked.filter((c) => c.resolved).map((c) => c.gate.runId))];
    for (const runId of runs) o.out(paint(o, 'dim', `Continue with: baton resume --run ${runId}`));
    return code;
  });
}
