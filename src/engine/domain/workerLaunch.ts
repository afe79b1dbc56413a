import type { AgentKind } from './agents/agentActivity';
import {
  agentPresetLaunch,
  type AgentPresetLaunch,
  type BatonMcpServer,
  type GeminiHomes,
  type Permissions,
} from './agents/presets';
import { BUILTIN_WORKERS, type BatonConfig, type WORKER_PLACEHOLDERS, type WorkerDefinition } from './config';
import { BatonError } from './errors';
import { frozenDefinition, type FrozenWorkers } from './frozenWorkers';

/** What to start for one attempt: argv (never a shell), stdin, environment. */
/** Who holds a manual worker's attempt: a person, through its `manual_handoff` gate (no process; nobody waits). */
export const MANUAL_HOLDER = 'a person (manual)';

export interface WorkerLaunch {
  workerId: string;
  argv: string[];
  /** Written to the worker's stdin, then stdin is closed. */
  stdin?: string;
  env: Record<string, string>;
  /** An agent preset: its stream is read live (docs/workers.md) and its permissions as the CLI enforces them. */
  agent?: { kind: AgentKind; effective: AgentPresetLaunch['effective'] };
  /** Files to write under `.baton/` before the spawn: the CLI reads them at its start. */
  files?: AgentPresetLaunch['files'];
  /** Links to make under `.baton/` before the spawn, to the user's own files (Gemini CLI's home). */
  links?: AgentPresetLaunch['links'];
}

/** The profile a task gets when its plan block names none. */
export const DEFAULT_PERMISSIONS: Permissions = { profile: 'edit' };

export interface LaunchValues {
  prompt: string;
  promptFile: string;
  artifactPath: string;
  taskId: string;
  workspace: string;
  /** The task's permission profile (agent presets); DEFAULT_PERMISSIONS when absent. */
  permissions?: Permissions;
  /** The agent session the attempt continues (a retry whose worker asks for it, the attempt after a parked one). */
  resumeSession?: string;
  /** How an agent preset starts the attempt's MCP server (batonMcpServer), when there is a CLI to run. */
  batonMcp?: BatonMcpServer;
  /** The attempt's folder for an agent CLI's configuration files (runPaths().agentConfig). */
  configFolder?: string;
  /** Gemini CLI's homes (the user's, read by readGeminiUserHome; the task's), for an attempt given the server. */
  geminiHomes?: GeminiHomes;
  /** The attempt's stop hook (batonStopHook), for a preset whose CLI has one (installsStopHook). */
  stopHook?: BatonMcpServer;
}

/**
 * `baton mcp` through the CLI script the coordinator hands its workers as BATON_CLI: with this
 * very node, or `node` on PATH where this process is not node (the editor's extension host).
 */
export function batonMcpServer(cliPath: string, host: BatonHost): BatonMcpServer {
  return batonCommand(cliPath, host, ['mcp']);
}

/** The attempt's stop hook (`baton check-result --stop-hook`, docs/agents.md), started as `baton mcp` is. */
export function batonStopHook(cliPath: string, host: BatonHost): BatonMcpServer {
  return batonCommand(cliPath, host, ['check-result', '--stop-hook']);
}

/** The process a coordinator runs in: node, or the editor's extension host (Electron). */
export interface BatonHost {
  execPath: string;
  electron?: string;
}

function batonCommand(cliPath: string, host: BatonHost, args: string[]): BatonMcpServer {
  return { command: host.electron ? 'node' : host.execPath, args: [cliPath, ...args] };
}

/**
 * Whether an attempt's worker gets Baton's stop hook: a preset whose CLI has one wired (Claude Code; docs/agents.md,
 * "Stop hooks per CLI") in a run that allows repair rounds. The caller also needs a CLI script to run it with.
 */
export function installsStopHook(worker: WorkerDefinition, repairRounds: number): boolean {
  return worker.type === 'claude-code' && repairRounds > 0;
}

/**
 * The agent CLI a worker runs, if it is an agent preset (its log is then an event stream); tolerant of unknown ids.
 * Given a run's frozen workers (or a config: both hold `workers` by id).
 */
export function agentKindOf(
  definitions: Pick<BatonConfig, 'workers'>,
  workerId: string | null | undefined,
): AgentKind | undefined {
  const worker = definitionOf(definitions, workerId);
  return worker && isAgentWorker(worker) ? worker.type : undefined;
}

/** The model an agent worker is configured with (what its tokens are priced by when its CLI names none). */
export function agentModelOf(
  definitions: Pick<BatonConfig, 'workers'>,
  workerId: string | null | undefined,
): string | undefined {
  const worker = definitionOf(definitions, workerId);
  return worker && isAgentWorker(worker) ? worker.model : undefined;
}

/**
 * A plain command whose exit status is its result (`"result": "exit-code"`): the command's name,
 * as the result Baton writes for it says it; undefined for any other worker. By definition, or
 * by id in a run's frozen workers (or a config), tolerant of unknown ids.
 */
export function exitCodeCommandOf(
  worker: WorkerDefinition | { definitions: Pick<BatonConfig, 'workers'>; workerId: string | null | undefined },
): string | undefined {
  const definition = 'definitions' in worker ? definitionOf(worker.definitions, worker.workerId) : worker;
  if (definition?.type !== 'process' || definition.result !== 'exit-code') return undefined;
  return definition.command.split(/[\\/]/).pop() ?? definition.command;
}

/** Whether a worker is a person's (`manual`), by id in a run's frozen workers (or a config); tolerant of unknown ids */
export function isManualWorker(
  definitions: Pick<BatonConfig, 'workers'>,
  workerId: string | null | undefined,
): boolean {
  return definitionOf(definitions, workerId)?.type === 'manual';
}

function definitionOf(
  definitions: Pick<BatonConfig, 'workers'>,
  workerId: string | null | undefined,
): WorkerDefinition | undefined {
  if (!workerId) return undefined;
  return Object.hasOwn(definitions.workers, workerId)
    ? definitions.workers[workerId]
    : Object.hasOwn(BUILTIN_WORKERS, workerId)
      ? BUILTIN_WORKERS[workerId]
      : undefined;
}

/**
 * The definition a run starts for a worker id: the one it froze (docs/architecture.md, "Trust
 * model"), never the config file's. A worker the run never froze is refused: a person adopts it
 * at a config_changed gate first.
 */
export function frozenWorkerFor(frozen: FrozenWorkers, workerId: string): WorkerDefinition {
  const worker = frozenDefinition(frozen, workerId);
  if (!worker) {
    const known = [...new Set([...Object.keys(frozen.workers), ...Object.keys(BUILTIN_WORKERS)])];
    throw new BatonError(
      'worker.not-frozen',
      `Worker "${workerId}" is not one of the worker definitions this run froze (${known.join(', ')}); a new worker in .baton/config.json is used only once a person approves it at a config_changed gate. Resume without --worker ${workerId}, or start a new run.`,
    );
  }
  return worker;
}

/**
 * Whether Baton starts a worker's CLI with the attempt's MCP server (`baton mcp`), so its prompt names the tools
 * instead of the `baton` commands: every agent preset (Gemini CLI through a home of the attempt's own, docs/agents.md).
 */
export function wiresBatonMcp(worker: WorkerDefinition): boolean {
  return isAgentWorker(worker);
}

export function isAgentWorker(worker: WorkerDefinition): worker is Extract<WorkerDefinition, { type: AgentKind }> {
  return (
    worker.type === 'claude-code' || worker.type === 'codex' || worker.type === 'gemini' || worker.type === 'opencode'
  );
}

/** Whether a worker gets its prompt as an argument (a size limit applies) rather than on stdin or in a file. */
export function promptInArgv(worker: WorkerDefinition): boolean {
  if (worker.type === 'gemini' || worker.type === 'opencode') return true;
  if (worker.type !== 'process') return false;
  return worker.args.some((a) => a.includes('{prompt}'));
}

export function resolveWorker(config: BatonConfig, workerId: string): WorkerDefinition {
  // Own keys only: a plan naming `worker: constructor` (or `toString`) must not find Object's members.
  const worker = Object.hasOwn(config.workers, workerId)
    ? config.workers[workerId]
    : Object.hasOwn(BUILTIN_WORKERS, workerId)
      ? BUILTIN_WORKERS[workerId]
      : undefined;
  if (!worker) {
    const known = [...new Set([...Object.keys(config.workers), ...Object.keys(BUILTIN_WORKERS)])];
    throw new BatonError(
      'worker.unknown',
      `There is no worker "${workerId}"; known workers: ${known.join(', ')}. Define it under "workers" in .baton/config.json.`,
    );
  }
  return worker;
}

function substitute(arg: string, values: LaunchValues): string {
  return arg.replace(
    /\{(prompt|promptFile|artifactPath|taskId|workspace)\}/g,
    (_m, key: (typeof WORKER_PLACEHOLDERS)[number]) => values[key],
  );
}

const usesPrompt = (args: readonly string[]): boolean =>
  args.some((a) => a.includes('{prompt}') || a.includes('{promptFile}'));

/**
 * Turns a worker definition into a launch. Placeholders are replaced inside each argv
 * element, so a value with spaces or shell characters stays one argument.
 */
export function workerLaunch(workerId: string, worker: WorkerDefinition, values: LaunchValues): WorkerLaunch {
  switch (worker.type) {
    case 'process': {
      const onStdin = worker.promptOnStdin ?? !usesPrompt(worker.args);
      return {
        workerId,
        argv: [worker.command, ...worker.args.map((a) => substitute(a, values))],
        ...(onStdin ? { stdin: values.prompt } : {}),
        env: worker.env,
      };
    }
    case 'claude-code':
    case 'codex':
    case 'gemini':
    case 'opencode': {
      const preset = agentPresetLaunch({
        kind: worker.type,
        executable: worker.executable,
        ...(worker.model ? { model: worker.model } : {}),
        args: worker.args.map((a) => substitute(a, values)),
        prompt: values.prompt,
        permissions: values.permissions ?? DEFAULT_PERMISSIONS,
        // Whether to continue is the claim's decision (domain/parking.ts, continuesSession): passed on when set.
        ...(values.resumeSession ? { resumeSession: values.resumeSession } : {}),
        ...(values.batonMcp ? { batonMcp: values.batonMcp } : {}),
        ...(values.configFolder ? { configFolder: values.configFolder } : {}),
        ...(values.geminiHomes ? { geminiHomes: values.geminiHomes } : {}),
        ...(values.stopHook ? { stopHook: values.stopHook } : {}),
        env: worker.env,
      });
      return {
        workerId,
        argv: preset.argv,
        ...(preset.stdin !== undefined ? { stdin: preset.stdin } : {}),
        env: preset.env,
        agent: { kind: worker.type, effective: preset.effective },
        ...(preset.files ? { files: preset.files } : {}),
        ...(preset.links ? { links: preset.links } : {}),
      };
    }
    case 'manual':
      throw new BatonError('worker.not-launched', 'A manual worker is not launched: a person does the task.');
  }
}
