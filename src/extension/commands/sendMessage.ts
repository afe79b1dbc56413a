import * as vscode from 'vscode';
import { FOLLOW_UP_TASK_STATUSES, MAX_FOLLOW_UP_BYTES, type FollowUpOutcome } from '../../engine/index';
import { UserFacingError } from '../session';
import { folderCommand, type CommandContext, type CommandNode } from './context';

/**
 * Send Message…: a person's follow-up message to a task's agent, the same engine operation as
 * `baton message` (docs/agents.md, "Follow-up messages"). From a task or attempt in the Runs view,
 * a worker in the Workers view, or the palette (a pick of the tasks that take one). A running
 * attempt is ended and the next continues its session with the message first; a finished task
 * runs again as a follow-up. When no window or process drives the run, this window does, so the
 * message is acted on without a second click.
 */
export const sendMessage = folderCommand(async (ctx, node: CommandNode) => {
  ctx.session.requireTrust('send a message to an agent');
  const target = await messageTarget(ctx, node);
  if (!target) return;
  const text = await vscode.window.showInputBox({
    title: `Message to ${target.taskId}'s agent (${target.runId})`,
    prompt:
      'What the agent should do next. A running attempt is ended and continued with it; a finished task runs again.',
    validateInput: (value) =>
      !value.trim()
        ? 'A message has some text.'
        : Buffer.byteLength(value) > MAX_FOLLOW_UP_BYTES
          ? `A message is at most ${MAX_FOLLOW_UP_BYTES.toLocaleString('en-US')} bytes.`
          : undefined,
  });
  if (text === undefined) return;
  const e = await ctx.session.engine();
  const outcome = await e.sendFollowUp({ runId: target.runId, taskId: target.taskId, message: text, by: 'VS Code' });
  const said = messageSent(target.taskId, outcome);
  ctx.log.info(`[${target.runId}] ${said}`);
  const report = outcome.interrupted?.report;
  if (report && !report.confirmed)
    void vscode.window.showWarningMessage(`${said} Still alive: ${report.survivors.join(', ')}.`);
  else void vscode.window.showInformationMessage(said);
  if (!outcome.driven && outcome.action !== 'queue') await ctx.session.drive(target.runId);
  await ctx.session.runState?.refreshNow();
});

/** One line for what the message did, as `baton message` says it. */
export function messageSent(taskId: string, outcome: FollowUpOutcome): string {
  const head = `Message ${outcome.followUp.id} sent to ${taskId}`;
  switch (outcome.action) {
    case 'interrupt':
      return `${head}: its running attempt ${outcome.interrupted!.delegationId} was ended; the next attempt continues its session with the message first.`;
    case 'reopen':
      return `${head}: the finished task runs again as a follow-up attempt.`;
    case 'queue':
      return `${head}: its next attempt carries it.`;
    case 'send-back':
      return outcome.sentBack!.gateKind === 'integration_failed'
        ? `${head}: ${outcome.sentBack!.delegationId}, whose work failed merged (${outcome.sentBack!.gateId}), goes back to its agent; the next attempt starts from its work with the message first.`
        : `${head}: changes requested of ${outcome.sentBack!.delegationId} (review gate ${outcome.sentBack!.gateId}); the next attempt starts from its work with the message first.`;
  }
}

/** The task a node names (a task, an attempt, a worker), or one picked from the tasks that take a message. */
async function messageTarget(
  ctx: CommandContext,
  node: CommandNode,
): Promise<{ runId: string; taskId: string } | undefined> {
  const cache = ctx.session.runState;
  if (node?.kind === 'task') return { runId: node.runId, taskId: node.taskId };
  if (node?.kind === 'delegation' || node?.kind === 'runtime') {
    const overview = cache?.overview(node.runId);
    const delegationId =
      node.kind === 'delegation'
        ? node.delegationId
        : overview?.runtimes.find((r) => r.id === node.runtimeId)?.delegationId;
    const taskId = overview?.delegations.find((d) => d.id === delegationId)?.taskId;
    if (!taskId)
      throw new UserFacingError(`The attempt of ${node.id} is not known yet; refresh the view and try again.`);
    return { runId: node.runId, taskId };
  }
  const e = await ctx.session.engine();
  const runs = (await e.listRuns()).filter((r) => r.status !== 'superseded' && r.status !== 'cancelled');
  const items = [];
  for (const run of runs.slice(0, 5)) {
    const overview = cache?.overview(run.id) ?? (await e.overview(run.id));
    for (const task of overview.tasks)
      if (FOLLOW_UP_TASK_STATUSES.includes(task.status))
        items.push({ label: task.id, description: `${task.status} · ${run.id}`, detail: task.title, runId: run.id });
  }
  if (items.length === 0) {
    void vscode.window.showInformationMessage('No task takes a message now: start a run first.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(items, { title: 'Baton: send a message to which task?' });
  return pick ? { runId: pick.runId, taskId: pick.label } : undefined;
}
