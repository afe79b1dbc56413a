import * as vscode from 'vscode';
import { BatonError, counted, isFinishedRun, type Run } from '../../engine/index';
import { describeError, UserFacingError } from '../session';
import type { CommandContext } from './context';

// Where a command leaves a run: driven from this window when nothing else drives it.

/** Coordinates the run from this window and says so (or who drives it instead). */
export async function driveAndTell(ctx: CommandContext, run: Run, verb: string): Promise<void> {
  void vscode.window.showInformationMessage(await driveFromHere(ctx, run, verb));
  void vscode.commands.executeCommand('baton.runs.focus');
}

/**
 * Coordinates the run from this window — or joins it, when another machine drives it on a team store (docs/team.md,
 * "Every machine works"); what that came to, in one line (who drives it, when another does).
 */
export async function driveFromHere(ctx: CommandContext, run: Run, verb: string): Promise<string> {
  const driving = await ctx.session.drive(run.id, { join: true });
  if (driving === 'joined')
    return `Run ${run.id} is driven by another machine; this window joins it and runs its tasks too.`;
  return driving
    ? `Baton ${verb} run ${run.id} of ${run.planPath}.`
    : `Run ${run.id} is already driven by another window or process; this window shows it.`;
}

/**
 * The plan's run to go on with: its active run, or a new one. When the plan changed since its
 * active run started, the person chooses: a new run of the plan as it is now, or a replan of
 * that run (its completed tasks carry over); undefined when they choose neither. Never the
 * engine's "start fresh with --new", a CLI flag (issue #14). Without `askWhenChanged` (a chat tool) the changed plan
 * is refused with what to do instead.
 */
export async function runOfPlan(
  ctx: CommandContext,
  plan: { uri: vscode.Uri; path: string },
  { askWhenChanged = true } = {},
): Promise<{ run: Run; verb: string } | undefined> {
  const e = await ctx.session.engine();
  try {
    const opened = await e.runForPlan(plan.uri.fsPath);
    return { run: opened.run, verb: opened.created ? 'started' : 'continues' };
  } catch (err) {
    if (!BatonError.is(err, 'run.plan-changed')) throw err;
  }
  const active = (await e.listRuns()).find((r) => r.planPath === plan.path && !isFinishedRun(r.status));
  // A chat tool cannot show the question: it says what to do instead.
  if (!askWhenChanged)
    throw new UserFacingError(
      `${plan.path} changed since run ${active?.id ?? ''} started from it: ask for a new run of the plan as it is now (newRun: true), or replan ${active?.id ?? 'that run'} from the Runs view (its completed tasks carry over).`,
    );
  const NEW = 'Start a New Run';
  const REPLAN = 'Replan';
  const pick = await vscode.window.showWarningMessage(
    `${plan.path} changed since run ${active?.id ?? ''} started from it. Start a new run of the plan as it is now, or replan ${active?.id ?? 'that run'} (its completed tasks carry over)?`,
    NEW,
    ...(active ? [REPLAN] : []),
  );
  if (pick === NEW) return { run: (await e.runForPlan(plan.uri.fsPath, { fresh: true })).run, verb: 'started a new' };
  if (pick === REPLAN && active) return replanOnto(ctx, active.id, plan.uri);
  return undefined;
}

/** Maps a run onto a plan (its completed tasks carry over); the caller drives the new run. */
async function replanOnto(
  ctx: CommandContext,
  runId: string,
  planUri: vscode.Uri,
): Promise<{ run: Run; verb: string }> {
  const outcome = await (await ctx.session.engine()).replan({ runId, planPath: planUri.fsPath });
  const carried = counted(outcome.carried.length, 'completed task');
  ctx.log.info(`${runId} replanned as ${outcome.run.id}; ${carried} carried over`);
  await ctx.session.runState?.refreshNow();
  return { run: outcome.run, verb: `replanned ${runId} (${carried} carried over) as` };
}

/**
 * A decision taken here (approve, reject, the isolation answer, a replan, a result ingested)
 * may have released work: when nothing drives the run, this window drives it on — in a
 * trusted workspace. A run another window or process drives is left to it.
 */
export async function continueIfReleased(ctx: CommandContext, runId: string): Promise<void> {
  if (!vscode.workspace.isTrusted || ctx.session.drivenRuns.includes(runId)) return;
  const run = await (await ctx.session.engine()).getRun(runId);
  if (run.status !== 'running') return;
  await ctx.session.drive(run.id).catch((err: unknown) => ctx.log.warn(describeError(err)));
}
