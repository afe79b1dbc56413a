import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ConflictInWorktree, Gate } from '../../engine/index';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';
import { continueIfReleased } from './drive';

/** The two ways on from an integration conflict (docs/isolation.md, "Resolving a conflict"). */
export type ConflictResolution = 'mergeEditor' | 'agent';

/**
 * Resolve Conflict…, on an open integration_conflict gate (the Gates view, the dashboard, the palette): a person
 * resolves it in VS Code's merge editor, in the task's worktree — then approves the gate, which integrates — or it
 * goes back to the task's agent as a follow-up message naming the files and the target. `how` skips the pick (a
 * test, a chat tool).
 */
export const resolveConflict = folderCommand(async (ctx, node: CommandNode, how?: ConflictResolution) => {
  ctx.session.requireTrust('resolve an integration conflict');
  const gate = await conflictGate(ctx, node);
  if (!gate) return;
  const choice = how ?? (await pickResolution(gate));
  if (choice === 'mergeEditor') await openInMergeEditor(ctx, gate);
  else if (choice === 'agent') await sendToAgent(ctx, gate);
});

async function pickResolution(gate: Gate): Promise<ConflictResolution | undefined> {
  const files = gateFiles(gate);
  const task = gate.taskId ?? 'the task';
  const picked = await vscode.window.showQuickPick(
    [
      {
        label: '$(git-merge) Open in Merge Editor',
        detail: `Merge the target into ${gate.delegationId ?? task}'s worktree and resolve ${files} there; then Complete Merge and approve ${gate.id}: it integrates.`,
        how: 'mergeEditor' as const,
      },
      {
        label: '$(comment-discussion) Send to Agent',
        detail: `${task}'s agent gets ${files} and the target as a follow-up message; its next attempt merges its work and resolves them.`,
        how: 'agent' as const,
      },
    ],
    { title: `Resolve ${gate.id}: ${task} does not integrate cleanly`, placeHolder: 'How?' },
  );
  return picked?.how;
}

/**
 * Open in Merge Editor: the engine brings the target into the worktree and stops at the conflicts; each file then
 * opens in VS Code's merge editor — the git extension's, which knows the three versions from the index and stages
 * the file on Complete Merge — else, where the git extension is not there, as a text editor with its conflict
 * markers (VS Code's inline Accept Current / Incoming).
 */
async function openInMergeEditor(ctx: CommandContext, gate: Gate): Promise<void> {
  const e = await ctx.session.engine();
  const conflict = await e.mergeTargetIntoWorktree(gate.id);
  ctx.log.info(`${gate.id}: ${broughtIn(conflict)} (${conflict.state}: ${conflict.files.join(', ') || 'no conflict'})`);
  await ctx.session.runState?.refreshNow();
  if (conflict.files.length === 0) {
    const approve = 'Approve';
    const pick = await vscode.window.showInformationMessage(
      conflict.state === 'unfinished'
        ? `The ${conflict.move} in ${conflict.delegationId}'s worktree has no file in conflict left; ${conflict.move === 'rebase' ? 'finish it (git rebase --continue, Open Worktree in Terminal), then ' : ''}approve ${gate.id} to integrate.`
        : `${conflict.targetBranch} came into ${conflict.delegationId}'s worktree without a conflict now. Approve ${gate.id} to integrate.`,
      approve,
    );
    if (pick === approve) await vscode.commands.executeCommand('baton.approveGate', gateNode(gate));
    return;
  }
  let inMergeEditor = 0;
  for (const file of conflict.files)
    if (await openFileInMergeEditor(ctx, vscode.Uri.file(join(conflict.worktree, file)), conflict)) inMergeEditor++;
  void vscode.window.showInformationMessage(resolveNext(gate, conflict, inMergeEditor));
}

/** What the person does next, once the files are open. */
export function resolveNext(gate: Gate, conflict: ConflictInWorktree, inMergeEditor: number): string {
  const files = conflict.files.join(', ');
  const where = inMergeEditor === conflict.files.length ? 'in the merge editor' : 'in the editor (conflict markers)';
  const finish =
    conflict.move === 'merge'
      ? inMergeEditor === conflict.files.length
        ? 'choose Complete Merge'
        : 'save and mark it resolved (git add)'
      : 'mark it resolved and finish the rebase (git rebase --continue)';
  return `${broughtIn(conflict)}: resolve ${files} ${where}, ${finish}, then approve ${gate.id} — Baton commits the merge and integrates ${conflict.taskId}.`;
}

/** How the target came into the worktree, in words. */
function broughtIn(conflict: ConflictInWorktree): string {
  return conflict.move === 'merge'
    ? `${conflict.targetBranch} merged into ${conflict.delegationId}'s worktree`
    : `${conflict.delegationId}'s worktree rebased onto ${conflict.targetBranch}`;
}

/** The subset of the git extension's API (extensions/git/src/api/git.d.ts) this needs. */
interface GitExtension {
  getAPI(version: 1): { openRepository(root: vscode.Uri): Promise<unknown> };
}

/**
 * One file in the git extension's merge editor (`git.openMergeEditor`, which reads the three versions from the index
 * of the repository the file is in: the worktree, opened in the git extension first). True when a merge editor shows
 * it; else the file opens as text, with its markers.
 */
async function openFileInMergeEditor(
  ctx: CommandContext,
  file: vscode.Uri,
  conflict: ConflictInWorktree,
): Promise<boolean> {
  try {
    const git = vscode.extensions.getExtension<GitExtension>('vscode.git');
    if (git) {
      const api = (git.isActive ? git.exports : await git.activate()).getAPI(1);
      await api.openRepository(vscode.Uri.file(conflict.worktree));
      const shown = mergeEditorShown(file);
      await vscode.commands.executeCommand('git.openMergeEditor', file);
      if (await shown) return true;
    }
  } catch (err) {
    ctx.log.warn(`${conflict.gateId}: the git extension's merge editor did not open ${file.fsPath}: ${String(err)}`);
  }
  await vscode.commands.executeCommand('vscode.open', file, { preview: false });
  return false;
}

/**
 * The file a merge editor's tab writes (its result), or undefined for another tab. VS Code 1.99 gives such a tab a
 * `TabInputTextMerge` (base, input1, input2, result), whose class its typings keep in a proposal: told by its shape.
 */
export function mergeResultOf(tab: vscode.Tab): vscode.Uri | undefined {
  const input = tab.input as { base?: unknown; input1?: unknown; input2?: unknown; result?: unknown } | undefined;
  return input?.base && input.input1 && input.input2 && input.result instanceof vscode.Uri ? input.result : undefined;
}

/** Resolves true once a merge editor on `file` is among the tabs, false if none appears within a few seconds. */
function mergeEditorShown(file: vscode.Uri): Promise<boolean> {
  const isIt = (): boolean =>
    vscode.window.tabGroups.all.some((group) => group.tabs.some((tab) => mergeResultOf(tab)?.fsPath === file.fsPath));
  return new Promise((resolve) => {
    const done = (value: boolean): void => {
      clearTimeout(timer);
      watch.dispose();
      resolve(value);
    };
    const watch = vscode.window.tabGroups.onDidChangeTabs(() => {
      if (isIt()) done(true);
    });
    // The git extension opens it without awaiting the editor; a few seconds is plenty, and only decides the fallback.
    const timer = setTimeout(() => done(isIt()), 5_000);
  });
}

/** Send to Agent: the gate closes and the task's agent gets the conflict as a follow-up; this window drives it on. */
async function sendToAgent(ctx: CommandContext, gate: Gate): Promise<void> {
  const e = await ctx.session.engine();
  const sent = await e.sendConflictToAgent({ gateId: gate.id, by: 'VS Code' });
  const said = `${gate.id} sent to ${gate.taskId ?? 'the task'}'s agent as message ${sent.followUp.id}: ${sent.endedDelegationId} ended, and the next attempt merges its work with the target and resolves ${gateFiles(gate)}.`;
  ctx.log.info(`[${gate.runId}] ${said}`);
  void vscode.window.showInformationMessage(said);
  await ctx.session.runState?.refreshNow();
  await continueIfReleased(ctx, gate.runId);
}

/** The open integration_conflict gate a node names, or the one (or one picked) of those open. */
async function conflictGate(ctx: CommandContext, node: CommandNode): Promise<Gate | undefined> {
  const e = await ctx.session.engine();
  const open = (await e.listGates({ status: 'open' })).filter((g) => g.kind === 'integration_conflict');
  if (node?.kind === 'gate') {
    const gate = (await e.listGates({})).find((g) => g.id === node.gateId);
    if (!gate) throw new UserFacingError(`There is no gate ${node.gateId}.`);
    if (gate.kind !== 'integration_conflict')
      throw new UserFacingError(`${gate.id} is a ${gate.kind} gate, not an integration conflict.`);
    if (gate.status !== 'open') throw new UserFacingError(`${gate.id} was already ${gate.status}.`);
    return gate;
  }
  if (node?.kind === 'task' || node?.kind === 'delegation') {
    const mine = open.find(
      (g) =>
        g.runId === node.runId &&
        (node.kind === 'task' ? g.taskId === node.taskId : g.delegationId === node.delegationId),
    );
    if (!mine)
      throw new UserFacingError(
        `No integration conflict of ${node.kind === 'task' ? node.taskId : node.delegationId} waits.`,
      );
    return mine;
  }
  if (open.length === 0) {
    void vscode.window.showInformationMessage('No integration conflict waits for a decision.');
    return undefined;
  }
  if (open.length === 1) return open[0];
  const pick = await vscode.window.showQuickPick(
    open.map((g) => ({ label: g.id, description: `${g.taskId ?? ''} · ${g.runId}`, detail: g.reason, gate: g })),
    { title: 'Baton: Resolve Conflict', placeHolder: 'Which conflict?' },
  );
  return pick?.gate;
}

function gateFiles(gate: Gate): string {
  const files = Array.isArray(gate.details.files) ? gate.details.files.filter((f) => typeof f === 'string') : [];
  return files.length > 0 ? files.join(', ') : 'the conflicting files';
}

function gateNode(gate: Gate): CommandNode {
  return { kind: 'gate', id: `gate:${gate.id}`, runId: gate.runId, gateId: gate.id };
}
