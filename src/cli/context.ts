import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { BATON_DIR, BatonError, Engine, type EngineOptions } from '../engine/index';
import { createOutput, type Output } from './render';

export interface GlobalOptions {
  json?: boolean;
  workspace?: string;
}

export const PROTOCOL_VERSION = 1;

/**
 * The workspace is --workspace, else $BATON_WORKSPACE (set for workers), else the nearest
 * folder upwards that has a .baton folder, else the current folder.
 */
export function resolveWorkspace(options: GlobalOptions, from = process.cwd()): string {
  if (options.workspace) return resolve(options.workspace);
  if (process.env.BATON_WORKSPACE) return resolve(process.env.BATON_WORKSPACE);
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, BATON_DIR))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}

/** For a command about a plan, the workspace is the one the plan lives in (searched upwards from it). */
export function planContext(options: GlobalOptions, planPath: string): CommandContext {
  return {
    workspace: resolveWorkspace(options, dirname(resolve(planPath))),
    output: createOutput(Boolean(options.json)),
  };
}

export interface CommandContext {
  workspace: string;
  output: Output;
}

export function commandContext(options: GlobalOptions): CommandContext {
  return { workspace: resolveWorkspace(options), output: createOutput(Boolean(options.json)) };
}

/** Opens the engine for one command and always closes it (the close may snapshot). */
export async function withEngine<T>(
  ctx: CommandContext,
  work: (engine: Engine) => Promise<T>,
  options: Partial<EngineOptions> = {},
): Promise<T> {
  // Workers this process starts can heartbeat through the same CLI (BATON_CLI).
  const engine = await Engine.open({ workspace: ctx.workspace, cliPath: process.argv[1] ?? __filename, ...options });
  let printed = 0;
  const printNotices = (): void => {
    for (const notice of engine.recoveryNotices.slice(printed)) ctx.output.err(`baton: ${notice}`);
    printed = engine.recoveryNotices.length;
  };
  try {
    printNotices();
    return await work(engine);
  } finally {
    await engine.close();
    // A snapshot that failed on close is a notice on stderr; the command's output and exit code stand.
    printNotices();
  }
}

/**
 * For commands that only read (status, diagnose, events): they still answer while a process
 * stopped by a signal holds the store's lock (docs/reliability.md, "A lock holder stopped").
 */
export const READING: Partial<EngineOptions> = { store: { readWhileHolderStopped: true } };

export function printJson(ctx: CommandContext, document: Record<string, unknown>): void {
  ctx.output.out(JSON.stringify({ protocolVersion: PROTOCOL_VERSION, ...document }, null, 2));
}

/** A command that acts on existing state is refused before the engine opens (and would create) the store. */
export function requireStore(ctx: CommandContext, refusal: () => BatonError = () => noRuns(ctx)): void {
  if (!Engine.hasStore(ctx.workspace)) throw refusal();
}

/** The refusal of a command about runs in a workspace that has none (nothing is created). */
export function noRuns(ctx: CommandContext): BatonError {
  return new BatonError(
    'run.unknown',
    `There are no Baton runs in ${ctx.workspace} yet; start one with baton start <plan.md>.`,
  );
}
