import * as vscode from 'vscode';
import { BatonError } from '../../engine/index';
import { describeError, TrustRequiredError } from '../session';
import type { BatonCommand, CommandContext, WindowContext } from './context';
import { COMMANDS, type CommandId } from './table';

/**
 * Registers the table's commands of one scope: `window` ones at activation whether or not a
 * folder is open, `folder` ones once the folder's session exists.
 */
export function registerCommands(scope: 'window', ctx: WindowContext): vscode.Disposable[];
export function registerCommands(scope: 'folder', ctx: CommandContext): vscode.Disposable[];
export function registerCommands(
  scope: BatonCommand['scope'],
  ctx: CommandContext | WindowContext,
): vscode.Disposable[] {
  const registered: vscode.Disposable[] = [];
  for (const [id, command] of Object.entries(COMMANDS) as Array<[CommandId, BatonCommand]>) {
    if (command.scope !== scope) continue;
    const run = command.run as (ctx: CommandContext | WindowContext, ...args: never[]) => unknown;
    registered.push(guarded(id, (...args) => run(ctx, ...args), ctx.log));
  }
  return registered;
}

/** Every command guards its own preconditions and reports a clear message, never a stack trace. */
function guarded(id: CommandId, run: (...args: never[]) => unknown, log: vscode.LogOutputChannel): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: never[]) => {
    try {
      return await run(...args);
    } catch (err) {
      const message = describeError(err);
      log.warn(`${id}: ${message}`);
      if (err instanceof TrustRequiredError)
        void offerTrust(message, () => vscode.commands.executeCommand(id, ...args), log);
      else if (BatonError.is(err, 'worker.missing')) {
        // A worker's program is not installed: nothing was dispatched; Doctor says what else is missing — of the plan
        // that was refused, whose tasks may name other workers than the default one.
        const planPath = (err as BatonError).details?.planPath;
        void vscode.window.showErrorMessage(message, 'Run Doctor').then((pick) => {
          if (pick) void vscode.commands.executeCommand('baton.doctor' satisfies CommandId, planPath);
        });
      } else void vscode.window.showErrorMessage(message);
      return undefined;
    }
  });
}

const MANAGE_TRUST = 'Manage Workspace Trust';
/** How long a refused command waits for the trust it asked for before it is forgotten. */
const TRUST_RETRY_WINDOW_MS = 10 * 60_000;

/**
 * The refusal in Restricted Mode carries the way out: VS Code's trust editor. The command
 * the person asked for runs once the workspace is trusted, so trusting is the last click.
 */
async function offerTrust(
  message: string,
  retry: () => Thenable<unknown>,
  log: vscode.LogOutputChannel,
): Promise<void> {
  const pick = await vscode.window.showWarningMessage(message, MANAGE_TRUST);
  if (pick !== MANAGE_TRUST) return;
  const granted = vscode.workspace.onDidGrantWorkspaceTrust(() => {
    granted.dispose();
    clearTimeout(expiry);
    log.info('The workspace is trusted now; running the command that waited for it.');
    void Promise.resolve(retry()).then(undefined, (err: unknown) => log.warn(describeError(err)));
  });
  const expiry = setTimeout(() => granted.dispose(), TRUST_RETRY_WINDOW_MS);
  await vscode.commands.executeCommand('workbench.trust.manage');
}
