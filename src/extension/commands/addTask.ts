import { isAbsolute, resolve } from 'node:path';
import * as vscode from 'vscode';
import { hasErrors, isFinishedRun, nextTaskId, parsePlan, taskBlockText } from '../../engine/index';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { pickPlan } from './pick';
import { replanOnto } from './replanRun';

/**
 * Add Task…: a task appended to a plan without typing its block — title, instructions, worker and
 * dependencies asked for, the next free id taken, a well-formed `baton-task` block written
 * (domain/plan/taskBlock.ts) as an edit of the document: unsaved, and undone with Ctrl+Z like any
 * edit. A run of the plan that can go on runs the plan as it started; the person is offered to
 * save and replan it onto the plan with the new task (its completed tasks carry over).
 */
export const addTask = folderCommand(async (ctx, arg?: vscode.Uri | CommandNode) => {
  const planUri = await planOf(ctx, arg);
  const document = await vscode.workspace.openTextDocument(planUri);
  const name = vscode.workspace.asRelativePath(planUri);
  const parsed = parsePlan(document.getText());
  if (hasErrors(parsed.issues)) {
    await vscode.window.showTextDocument(document);
    throw new UserFacingError(`${name} has errors (see Problems); fix them before adding a task.`);
  }
  const id = nextTaskId(parsed.tasks.map((t) => t.id));
  const title = await vscode.window.showInputBox({
    title: `Add Task ${id} to ${name}`,
    prompt: 'Its title',
    validateInput: (value) => (value.trim() ? undefined : 'A task has a title.'),
  });
  if (title === undefined) return;
  const instructions = await vscode.window.showInputBox({
    title: `Add Task ${id}: ${title.trim()}`,
    prompt: 'What the agent should do: the task’s instructions (Markdown; more can be written in the plan)',
  });
  if (instructions === undefined) return;
  const config = (await ctx.session.engine()).config;
  const workers = Object.keys(config.workers ?? {});
  let worker: string | undefined;
  if (workers.length > 1) {
    const picked = await vscode.window.showQuickPick(
      [
        { label: 'The run’s default worker', description: config.defaultWorker ?? '', worker: undefined },
        ...workers.map((w) => ({ label: w, description: config.workers?.[w]?.type ?? '', worker: w })),
      ],
      { title: `Add Task ${id}: which worker?` },
    );
    if (!picked) return;
    worker = picked.worker;
  }
  let depends: string[] = [];
  if (parsed.tasks.length > 0) {
    const picked = await vscode.window.showQuickPick(
      parsed.tasks.map((t) => ({ label: t.id, description: t.title })),
      { title: `Add Task ${id}: it starts after (none: at once)`, canPickMany: true },
    );
    if (!picked) return;
    depends = picked.map((p) => p.label);
  }
  const text = document.getText();
  const block = taskBlockText(
    { id, title, depends, instructions, ...commonAgent(parsed.tasks), ...(worker ? { worker } : {}) },
    text,
  );
  // An edit of the open editor, not a WorkspaceEdit: VS Code saves a workspace edit's files that no editor shows
  // (`files.refactoring.autoSave`), and the person is told the edit is unsaved and Ctrl+Z takes it back.
  const editor = await vscode.window.showTextDocument(document);
  const end = document.positionAt(text.length);
  if (!(await editor.edit((builder) => builder.insert(end, block))))
    throw new UserFacingError(`${name} could not be edited.`);
  const idLine = document.positionAt(text.length + block.indexOf(`id: ${id}`));
  editor.selection = new vscode.Selection(idLine, idLine);
  editor.revealRange(new vscode.Range(idLine, idLine), vscode.TextEditorRevealType.InCenterIfOutsideViewport);

  const added = `${id} is added to ${name} (not saved yet; Ctrl+Z takes it back).`;
  const run = await activeRunOf(ctx, planUri);
  if (!run) {
    void vscode.window.showInformationMessage(added);
    return;
  }
  const pick = await vscode.window.showInformationMessage(
    `${added} Run ${run} runs the plan as it started; replan it to run ${id} too.`,
    'Save and Replan',
  );
  if (pick !== 'Save and Replan') return;
  if (!(await document.save())) throw new UserFacingError(`${name} could not be saved; save it, then replan.`);
  await replanOnto(ctx, run, planUri.fsPath);
});

/** The plan named: a URI, a run's plan (its node), else the active plan or a pick (as Start Run finds one). */
async function planOf(ctx: CommandContext, arg: vscode.Uri | CommandNode): Promise<vscode.Uri> {
  if (arg instanceof vscode.Uri) return arg;
  if (arg?.kind === 'run') {
    const run = (await (await ctx.session.engine()).listRuns()).find((r) => r.id === arg.runId);
    if (run)
      return vscode.Uri.file(isAbsolute(run.planPath) ? run.planPath : resolve(ctx.session.workspace, run.planPath));
  }
  return pickPlan(ctx);
}

/** The agent the plan's tasks name most (the new task joins them); none when the plan names none. */
function commonAgent(tasks: ReadonlyArray<{ agent: string }>): { agent?: string } {
  const counts = new Map<string, number>();
  for (const t of tasks) counts.set(t.agent, (counts.get(t.agent) ?? 0) + 1);
  const [agent] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
  return agent ? { agent } : {};
}

/** The newest run of the plan that can still go on (not finished), if any. */
async function activeRunOf(ctx: CommandContext, planUri: vscode.Uri): Promise<string | undefined> {
  const runs = await (await ctx.session.engine()).listRuns();
  const active = runs.find(
    (r) => resolve(ctx.session.workspace, r.planPath) === planUri.fsPath && !isFinishedRun(r.status),
  );
  return active?.id;
}
