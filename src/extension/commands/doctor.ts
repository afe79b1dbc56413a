import * as vscode from 'vscode';
import { Engine } from '../../engine/index';
import { folderCommand } from './context';

/**
 * Doctor: what a run needs, checked; each check a line in the log, and a summary that says what blocks. Given a plan
 * (a refused Start Run passes the one it refused), it checks the workers that plan's tasks name, as `baton doctor
 * <plan>` does; else the default worker.
 */
export const doctor = folderCommand(async (ctx, plan?: unknown) => {
  const { log } = ctx;
  const planPath = typeof plan === 'string' ? plan : plan instanceof vscode.Uri ? plan.fsPath : undefined;
  const checks = await Engine.doctor({ workspace: ctx.session.workspace, ...(planPath ? { planPath } : {}) });
  log.info(`── Baton doctor${planPath ? ` (${planPath})` : ''} ──`);
  for (const check of checks) {
    const line = `${check.status === 'ok' ? '✓' : check.status === 'warn' ? '!' : '✗'} ${check.name}: ${check.detail}`;
    if (check.status === 'fail') log.error(line);
    else if (check.status === 'warn') log.warn(line);
    else log.info(line);
  }
  const failed = checks.filter((c) => c.status === 'fail');
  const warned = checks.filter((c) => c.status === 'warn').length;
  const summary = failed.length
    ? `Baton doctor: ${failed.map((c) => c.name).join(', ')} ${failed.length === 1 ? 'blocks' : 'block'} a run — ${failed[0]!.detail}`
    : `Baton doctor: ready to run${warned ? ` (${warned} warning${warned === 1 ? '' : 's'})` : ''}.`;
  const shown = failed.length
    ? vscode.window.showErrorMessage(summary, 'Show Log')
    : vscode.window.showInformationMessage(summary, 'Show Log');
  void shown.then((pick) => pick && log.show(true));
  return checks;
});
