import type * as vscode from 'vscode';
import type { AttemptViews } from '../attemptViews';
import type { ResultDiagnostics } from '../diagnostics';
import type { HiddenRuns } from '../hiddenRuns';
import type { ReviewComments } from '../reviewComments';
import type { BatonSession } from '../session';
import type { GateNode, RunsNode, WorkerNode } from '../views';

/** What every command may use, with or without a folder open. */
export interface WindowContext {
  readonly log: vscode.LogOutputChannel;
  readonly extensionUri: vscode.Uri;
}

/** What a command of the folder's Baton needs: the session (its engine, its runs) and the surfaces it acts on. */
export interface CommandContext extends WindowContext {
  readonly session: BatonSession;
  readonly diagnostics: ResultDiagnostics;
  readonly attemptViews: AttemptViews;
  readonly reviews: ReviewComments;
  readonly hidden: HiddenRuns;
}

/** The node a command was invoked on (a view's item, inline or in its context menu); undefined from the palette. */
export type CommandNode = RunsNode | GateNode | WorkerNode | undefined;

/**
 * One command: what it does with its context and the arguments VS Code passes (a node, a URI,
 * a CodeLens's arguments). It throws what should be shown: the registration turns that into a
 * message, never a stack trace. `window` commands are registered whether or not a folder is
 * open; the others once the folder's session exists.
 */
export type BatonCommand =
  | { readonly scope: 'window'; readonly run: (ctx: WindowContext, ...args: never[]) => unknown }
  | { readonly scope: 'folder'; readonly run: (ctx: CommandContext, ...args: never[]) => unknown };

/** A command of the folder's Baton. */
export function folderCommand(run: (ctx: CommandContext, ...args: never[]) => unknown): BatonCommand {
  return { scope: 'folder', run };
}

/** A command that works in any window, a folder open or not. */
export function windowCommand(run: (ctx: WindowContext, ...args: never[]) => unknown): BatonCommand {
  return { scope: 'window', run };
}
