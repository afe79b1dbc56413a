import * as vscode from 'vscode';
import { hasErrors, isFinishedRun, readPlan, type Delegation, type Run, type RunStatus } from '../../engine/index';
import { latestStartedAttempt } from '../model/attempts';
import { UserFacingError } from '../session';
import type { CommandContext, CommandNode } from './context';

// What a command is for: the node it was invoked on, else what the person picks. Nothing is
// guessed: no choice is an error that says so, and a node a command does not apply to is refused.

/** The runs a command applies to, by status (the same rule as the menus' when-clauses, viewRows.runActions). */
const APPLIES: Record<'stop' | 'resume' | 'cancel' | 'any', (status: RunStatus) => boolean> = {
  stop: (status) => status === 'running' || status === 'stopping',
  resume: (status) => !isFinishedRun(status),
  cancel: (status) => !isFinishedRun(status),
  any: (status) => status !== 'superseded',
};

/**
 * The run a command is for: the node's, else a quick pick of the runs it applies to. A run
 * given that it does not apply to (a stale menu, a palette argument) is refused with why.
 */
export async function pickRun(
  ctx: CommandContext,
  node: CommandNode,
  what: string,
  applies: keyof typeof APPLIES = 'any',
): Promise<string> {
  const engine = await ctx.session.engine();
  if (node && 'runId' in node) return (await runThatApplies(ctx, node.runId, what, applies)).id;
  const runs = (await engine.listRuns()).filter((r) => APPLIES[applies](r.status));
  if (runs.length === 0)
    throw new UserFacingError(
      applies === 'any'
        ? 'There is no Baton run in this workspace yet.'
        : `No run is in a state to ${what.toLowerCase()}.`,
    );
  if (runs.length === 1) return runs[0]!.id;
  const pick = await vscode.window.showQuickPick(
    runs.map((r) => ({ label: r.id, description: `${r.status} · ${r.planPath}` })),
    { title: `Baton: ${what}`, placeHolder: 'Which run?' },
  );
  if (!pick) throw new UserFacingError('No run chosen.');
  return pick.label;
}

/** The run with this id, when the command applies to it (a stale menu, a palette or chat argument is refused). */
export async function runThatApplies(
  ctx: CommandContext,
  runId: string,
  what: string,
  applies: keyof typeof APPLIES = 'any',
): Promise<Run> {
  const run = await (await ctx.session.engine()).getRun(runId);
  if (!APPLIES[applies](run.status))
    throw new UserFacingError(`Run ${run.id} is ${run.status}: ${what} does not apply to it.`);
  return run;
}

export async function pickPlan(ctx: CommandContext, uri?: vscode.Uri): Promise<vscode.Uri> {
  if (uri instanceof vscode.Uri) return uri;
  const active = vscode.window.activeTextEditor?.document;
  if (active?.languageId === 'markdown' && active.getText().includes('```baton-task')) return active.uri;
  const candidates: vscode.Uri[] = [];
  for (const file of await vscode.workspace.findFiles(
    new vscode.RelativePattern(ctx.session.folder, '**/*.md'),
    '{**/node_modules/**,**/.baton/**}',
    200,
  )) {
    const text = Buffer.from(await vscode.workspace.fs.readFile(file)).toString('utf8');
    if (text.includes('```baton-task')) candidates.push(file);
  }
  if (candidates.length === 0)
    throw new UserFacingError(
      'No plan found: a plan is a markdown file with ```baton-task blocks. Run "Baton: Create Example Plan" to get one.',
    );
  if (candidates.length === 1) return candidates[0]!;
  const pick = await vscode.window.showQuickPick(
    candidates.map((u) => ({ label: vscode.workspace.asRelativePath(u), uri: u })),
    { title: 'Baton: Start Run', placeHolder: 'Which plan?' },
  );
  if (!pick) throw new UserFacingError('No plan chosen.');
  return pick.uri;
}

/**
 * A plan the person chose, checked: with errors it is opened and refused (the errors are in
 * Problems). An edit left unsaved in an editor is saved first: a run is of the plan as the
 * person sees it, not of an older text on disk (as Ingest saves an artifact first).
 */
export async function validPlan(ctx: CommandContext, uri?: vscode.Uri): Promise<{ uri: vscode.Uri; path: string }> {
  const planUri = await pickPlan(ctx, uri);
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === planUri.toString());
  if (open?.isDirty && !(await open.save()))
    throw new UserFacingError(
      `${vscode.workspace.asRelativePath(planUri)} could not be saved; save it to start a run.`,
    );
  const plan = readPlan(ctx.session.workspace, planUri.fsPath);
  if (hasErrors(plan.parsed.issues)) {
    await vscode.window.showTextDocument(planUri);
    throw new UserFacingError(`${plan.path} has errors (see Problems); fix them to start a run.`);
  }
  return { uri: planUri, path: plan.path };
}

/** The delegation a node stands for: a delegation's own, or the one a worker holds. */
export async function delegationOf(ctx: CommandContext, node: CommandNode): Promise<Delegation> {
  const e = await ctx.session.engine();
  if (node?.kind === 'delegation') {
    const found = (await e.overview(node.runId)).delegations.find((d) => d.id === node.delegationId);
    if (found) return found;
  }
  if (node?.kind === 'runtime') {
    const view = await e.overview(node.runId);
    const runtime = view.runtimes.find((r) => r.id === node.runtimeId);
    const found = view.delegations.find((d) => d.id === runtime?.delegationId);
    if (found) return found;
  }
  throw new UserFacingError('Choose a delegation in the Runs view.');
}

/** The attempt a node stands for: a delegation, a worker's, a task's latest; else picked from the newest runs. */
export async function attemptOf(
  ctx: CommandContext,
  node: CommandNode,
  what: string,
): Promise<{ runId: string; delegationId: string }> {
  if (node?.kind === 'delegation') return { runId: node.runId, delegationId: node.delegationId };
  const e = await ctx.session.engine();
  if (node?.kind === 'runtime' || node?.kind === 'task') {
    const view = await e.overview(node.runId);
    const found =
      node.kind === 'task'
        ? latestStartedAttempt(view, node.taskId)
        : view.delegations.find((d) => d.id === view.runtimes.find((r) => r.id === node.runtimeId)?.delegationId);
    if (!found)
      throw new UserFacingError(node.kind === 'task' ? `${node.taskId} has not started yet.` : 'That worker is gone.');
    return { runId: found.runId, delegationId: found.id };
  }
  const attempts: Delegation[] = [];
  for (const run of (await e.listRuns()).slice(0, 3))
    attempts.push(...(await e.overview(run.id)).delegations.filter((d) => d.startedAt !== undefined).reverse());
  if (attempts.length === 0) throw new UserFacingError('No attempt has started yet.');
  const pick = await vscode.window.showQuickPick(
    attempts.map((d) => ({ label: d.id, description: `${d.status} · ${d.runId}`, d })),
    { title: `Baton: ${what}`, placeHolder: 'Which attempt?' },
  );
  if (!pick) throw new UserFacingError('No attempt chosen.');
  return { runId: pick.d.runId, delegationId: pick.d.id };
}
