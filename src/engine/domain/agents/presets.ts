import { join } from 'node:path';
import { BatonError } from '../errors';
import type { AgentKind } from './agentActivity';

/**
 * What a task may let its agent do (docs/workers.md, "Permission profiles"): read only
 * (look, plan, answer), edit files in its folder, or everything its CLI allows short of
 * skipping its safety checks (edit and run commands).
 */
export const PERMISSION_PROFILES = ['read-only', 'edit', 'full'] as const;
export type PermissionProfile = (typeof PERMISSION_PROFILES)[number];

export interface Permissions {
  profile: PermissionProfile;
  /** Tools the agent may use besides the profile's (Claude Code and opencode only). */
  allowTools?: string[];
  /** Tools the agent may not use whatever the profile says (Claude Code and opencode only). */
  denyTools?: string[];
}

export interface AgentPresetInput {
  kind: AgentKind;
  executable: string;
  model?: string;
  /** Extra arguments the worker's config adds (before the prompt). */
  args: readonly string[];
  prompt: string;
  permissions: Permissions;
  /** Continue this session of the agent (a retried task whose worker asks for it). */
  resumeSession?: string;
  /** The worker's own `env` from the config: it wins over the preset's defaults, never over the task's permissions. */
  env?: Readonly<Record<string, string>>;
  /** How to start the attempt's MCP server (`baton mcp`, docs/agents.md), when the coordinator knows a CLI to run. */
  batonMcp?: BatonMcpServer;
  /** The attempt's own folder under `.baton/`, for a configuration its CLI takes only as a file (Gemini CLI). */
  configFolder?: string;
  /** Gemini CLI's homes: the one the worker would use, and the task's own, which the attempt runs with. */
  geminiHomes?: GeminiHomes;
  /**
   * The command Claude Code runs as its Stop hook (`baton check-result --stop-hook`, docs/agents.md): the result is
   * checked before the agent ends and its issues go back into the session. Absent: no hook (repairRounds 0).
   */
  stopHook?: BatonMcpServer;
}

/** The command that starts `baton mcp`; it finds its attempt in the environment the agent's CLI passes on. */
export interface BatonMcpServer {
  command: string;
  args: string[];
}

/** The MCP server's name in an agent's configuration: its tools are `mcp__baton__<tool>` to Claude Code. */
export const BATON_MCP_NAME = 'baton';

/**
 * The variables Baton gives every worker (usecases/startWorker.ts; docs/workers.md): they bind
 * `baton mcp` to its attempt. A CLI that hands its tool servers only some of its environment
 * (Codex, Gemini CLI) is told to pass these on, by name: the token never goes into an argv or a file.
 */
export const WORKER_VARIABLES = [
  'BATON_RUN_ID',
  'BATON_DELEGATION_ID',
  'BATON_RUNTIME_ID',
  'BATON_RUNTIME_TOKEN',
  'BATON_ARTIFACT_PATH',
  'BATON_WORKSPACE',
  'BATON_WORKTREE',
  'BATON_CLI',
  'BATON_HEARTBEAT_RELAY',
] as const;
export type WorkerVariable = (typeof WORKER_VARIABLES)[number];

/**
 * The attempt's tools an agent may call without asking: all of them, less the hand-in for a
 * read-only task (it changes nothing but it is not a look either: it ends the attempt).
 * `baton_ask` is listed before it exists in every server: a CLI that takes names up front
 * ignores a name its server does not offer.
 */
export function batonMcpTools(profile: PermissionProfile): string[] {
  const tools = ['baton_task', 'baton_progress', 'baton_check_result', 'baton_ask'];
  return profile === 'read-only' ? tools : [...tools, 'baton_submit_result'];
}

/**
 * The Gemini CLI home a worker would use: the folder GEMINI_CLI_HOME names, else its HOME (checked with 0.61.0), with
 * its `.gemini/settings.json` (parsed; {} when there is none) and the other entries of its `.gemini/`.
 */
export interface GeminiUserHome {
  folder: string;
  settings: Record<string, unknown>;
  entries: readonly string[];
}

/**
 * The Gemini CLI home the user's worker would use, and the task's own home in the run (GEMINI_CLI_HOME for its
 * attempts, docs/agents.md): kept across the task's attempts, so that a session the CLI keeps there continues.
 */
export interface GeminiHomes {
  user: GeminiUserHome;
  task: string;
}

/** The opencode agent a Baton worker runs as: defined by the preset, so only the task's rules are its own. */
export const OPENCODE_AGENT = 'baton';

export interface AgentPresetLaunch {
  argv: string[];
  stdin?: string;
  /** The worker's environment: the preset's defaults, then the worker's `env`, then the task's permissions. */
  env: Record<string, string>;
  /** What the CLI itself will enforce, as recorded with the attempt. */
  effective: { profile: PermissionProfile; allowTools: string[]; denyTools: string[]; flags: string[] };
  /** Files the CLI reads at its start, written (under `.baton/`) before it is spawned: absolute path and content. */
  files?: Array<{ path: string; content: string }>;
  /** Links made (under `.baton/`) before it is spawned, to the user's own files the CLI goes on using. */
  links?: Array<{ path: string; target: string }>;
}

/** The executable each preset runs when its worker names none. */
export const DEFAULT_EXECUTABLE: Readonly<Record<AgentKind, string>> = {
  'claude-code': 'claude',
  codex: 'codex',
  gemini: 'gemini',
  opencode: 'opencode',
};

/** Which presets honour tool lists (the others have only their profiles: docs/workers.md). */
export const TOOL_LISTS: Readonly<Record<AgentKind, boolean>> = {
  'claude-code': true,
  codex: false,
  gemini: false,
  opencode: true,
};

/**
 * The command line of an agent preset: the CLI's non-interactive JSON stream, its own
 * permission controls for the task's profile, the model, a session to continue, and the
 * prompt — always as argv elements or stdin, never through a shell. Flags checked against the
 * pinned versions (docs/agent-clis.md): Claude Code 2.1, Codex 0.171, Gemini CLI 0.61,
 * opencode 1.18.
 */
export function agentPresetLaunch(input: AgentPresetInput): AgentPresetLaunch {
  const { permissions } = input;
  const allow = TOOL_LISTS[input.kind] ? (permissions.allowTools ?? []) : [];
  const deny = TOOL_LISTS[input.kind] ? (permissions.denyTools ?? []) : [];
  const model = input.model ? ['--model', input.model] : [];
  switch (input.kind) {
    case 'claude-code': {
      // bypassPermissions is refused as root and skips every check: `full` is edits plus the shell.
      const mode = permissions.profile === 'read-only' ? 'plan' : 'acceptEdits';
      // The attempt's MCP server, given inline (no file under .baton/ a worker could rewrite before it is read), and
      // its tools allowed: `-p` never asks a person, so a tool not allowed is a refused call.
      const mcp = input.batonMcp
        ? {
            flags: ['--mcp-config', JSON.stringify({ mcpServers: { [BATON_MCP_NAME]: input.batonMcp } })],
            tools: batonMcpTools(permissions.profile).map((tool) => `mcp__${BATON_MCP_NAME}__${tool}`),
          }
        : { flags: [], tools: [] };
      const allowed = [...(permissions.profile === 'full' ? ['Bash'] : []), ...mcp.tools, ...allow];
      // `edit` changes files and runs no command. acceptEdits alone lets Claude Code run a command it counts as an
      // edit (a redirect into a file of the folder), so the shell is denied outright, unless the task's own allow
      // list names it (`Bash` or a `Bash(…)` pattern: the person asked for that much).
      const shellDenied =
        permissions.profile === 'edit' && !allow.some((tool) => tool === 'Bash' || tool.startsWith('Bash('));
      const denied = [...(shellDenied ? ['Bash'] : []), ...deny];
      const flags = [
        ...mcp.flags,
        ...(input.stopHook ? claudeStopHookFlags(input.stopHook) : []),
        '--permission-mode',
        mode,
        ...(allowed.length ? ['--allowedTools', ...allowed] : []),
        ...(denied.length ? ['--disallowedTools', ...denied] : []),
      ];
      const resume = input.resumeSession ? ['--resume', input.resumeSession] : [];
      return {
        // The tool lists take several values: `--` ends them, and the prompt comes on stdin.
        argv: [
          input.executable,
          '-p',
          '--output-format',
          'stream-json',
          '--verbose',
          ...model,
          ...flags,
          ...resume,
          ...input.args,
          '--',
        ],
        stdin: input.prompt,
        env: { CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1', ...input.env },
        effective: { profile: permissions.profile, allowTools: allowed, denyTools: denied, flags },
      };
    }
    case 'codex': {
      const sandbox =
        permissions.profile === 'read-only'
          ? 'read-only'
          : permissions.profile === 'edit'
            ? 'workspace-write'
            : 'danger-full-access';
      // `exec resume` takes no --sandbox: the config override works for both forms. `exec` never asks a person.
      const flags = [
        '-c',
        `sandbox_mode="${sandbox}"`,
        '-c',
        'approval_policy="never"',
        // `edit` changes files and runs no command: without its shell tools (the classic one and unified exec)
        // Codex edits through apply_patch only; workspace-write alone would let it run any program in the folder.
        ...(permissions.profile === 'edit'
          ? ['-c', 'features.shell_tool=false', '-c', 'features.unified_exec=false']
          : []),
        ...(input.batonMcp ? codexMcpFlags(input.batonMcp, permissions.profile) : []),
      ];
      const command = input.resumeSession ? ['exec', 'resume', input.resumeSession] : ['exec'];
      return {
        argv: [input.executable, ...command, '--json', '--skip-git-repo-check', ...model, ...flags, ...input.args, '-'],
        stdin: input.prompt,
        env: { ...input.env },
        effective: { profile: permissions.profile, allowTools: [], denyTools: [], flags },
      };
    }
    case 'gemini': {
      const mode = permissions.profile === 'read-only' ? 'plan' : permissions.profile === 'edit' ? 'auto_edit' : 'yolo';
      const flags = ['--approval-mode', mode];
      const resume = input.resumeSession ? ['--resume', input.resumeSession] : [];
      const home = input.batonMcp && input.geminiHomes ? input.geminiHomes.task : undefined;
      const wired = home ? geminiTaskHome(input.geminiHomes!, input.batonMcp!, permissions.profile) : undefined;
      return {
        argv: [
          input.executable,
          '--output-format',
          'stream-json',
          ...model,
          ...flags,
          ...resume,
          ...input.args,
          '-p',
          input.prompt,
        ],
        // Headless Gemini CLI refuses a folder it was not told to trust; Baton's own trust check came first.
        env: {
          GEMINI_CLI_TRUST_WORKSPACE: 'true',
          ...input.env,
          ...(home ? { GEMINI_CLI_HOME: home } : {}),
        },
        effective: {
          profile: permissions.profile,
          allowTools: [],
          denyTools: [],
          flags: home ? [...flags, `GEMINI_CLI_HOME=${home}`] : flags,
        },
        ...(wired ? wired : {}),
      };
    }
    case 'opencode': {
      const base: Record<string, string> =
        permissions.profile === 'read-only'
          ? { edit: 'deny', bash: 'deny', webfetch: 'deny' }
          : permissions.profile === 'edit'
            ? { edit: 'allow', bash: 'deny' }
            : { edit: 'allow', bash: 'allow' };
      const permission = {
        ...base,
        ...Object.fromEntries(allow.map((t) => [t, 'allow'])),
        ...Object.fromEntries(deny.map((t) => [t, 'deny'])),
      };
      const resume = input.resumeSession ? ['--session', input.resumeSession] : [];
      const agentRules = opencodeAgentRules(permission, permissions.profile, input.batonMcp !== undefined);
      const flags = ['--agent', OPENCODE_AGENT, 'permission', JSON.stringify(agentRules)];
      return {
        argv: [
          input.executable,
          'run',
          '--format',
          'json',
          '--agent',
          OPENCODE_AGENT,
          ...model,
          ...resume,
          ...input.args,
          input.prompt,
        ],
        env: opencodeEnv(input.env, permission, agentRules, input.batonMcp),
        effective: { profile: permissions.profile, allowTools: allow, denyTools: deny, flags },
      };
    }
  }
}

/**
 * Claude Code's Stop hook for the attempt, as settings given inline (`--settings <json>`, checked with 2.1.332): a
 * layer over the user's and the project's settings, whose own hooks still run — inline for the reason the MCP
 * configuration is (no file under .baton/ for a worker to rewrite before Claude Code reads it). The hook runs the
 * attempt's `baton check-result --stop-hook` with Claude Code's environment, which holds the attempt's BATON_*
 * binding: the command line names no token. Claude Code runs a hook's command through a shell, so each part is
 * quoted. `--include-hook-events` puts each hook run, with what it said, in the stream — the attempt's log.
 */
function claudeStopHookFlags(hook: BatonMcpServer): string[] {
  const command = [hook.command, ...hook.args].map(shellQuoted).join(' ');
  const settings = { hooks: { Stop: [{ hooks: [{ type: 'command', command, timeout: STOP_HOOK_TIMEOUT_SECONDS }] }] } };
  return ['--settings', JSON.stringify(settings), '--include-hook-events'];
}

/** Long enough to open a large store and check a result; Claude Code ends a hook that takes longer (and goes on). */
const STOP_HOOK_TIMEOUT_SECONDS = 120;

/** One word for a POSIX shell, whatever it holds: in single quotes, each `'` closed, escaped and reopened. */
function shellQuoted(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Codex takes its MCP servers from its config (`-c mcp_servers.<name>.…`, checked with 0.171.0: `codex mcp list`
 * shows them). It hands a stdio server only a few variables of its own environment (HOME, PATH, …) and those named
 * in `env_vars`: the attempt's binding goes by name, never by value. `exec` asks no one, so the tools the profile
 * allows are approved up front (`default_tools_approval_mode = "approve"`) and the others not offered
 * (`enabled_tools`). Values are TOML; a JSON string or array of strings is one.
 */
function codexMcpFlags(server: BatonMcpServer, profile: PermissionProfile): string[] {
  const key = `mcp_servers.${BATON_MCP_NAME}`;
  return [
    ['command', JSON.stringify(server.command)],
    ['args', JSON.stringify(server.args)],
    ['env_vars', JSON.stringify(WORKER_VARIABLES)],
    ['enabled_tools', JSON.stringify(batonMcpTools(profile))],
    ['default_tools_approval_mode', '"approve"'],
  ].flatMap(([name, value]) => ['-c', `${key}.${name}=${value}`]);
}

/**
 * The task's own Gemini CLI home (GEMINI_CLI_HOME): Gemini CLI takes MCP servers only from settings files, and the
 * one a caller may name per run — the system settings — is read only when root owns it and every folder above it
 * (0.61.0), never in a workspace. So the task gets a home of its own whose `.gemini/settings.json` is the user's
 * settings with the attempt's server added, written for each attempt, and whose other entries are links to the user's
 * own (credentials, memory, extensions, sessions): the CLI goes on as the user set it up. What the CLI creates there
 * that the user has not (its sessions, on a first use) stays in the task's home, for the task's next attempt.
 */
function geminiTaskHome(
  { user, task }: GeminiHomes,
  server: BatonMcpServer,
  profile: PermissionProfile,
): Pick<AgentPresetLaunch, 'files' | 'links'> {
  const dir = join(task, '.gemini');
  const settings = withGeminiMcp(user.settings, server, profile);
  return {
    files: [{ path: join(dir, 'settings.json'), content: `${JSON.stringify(settings, null, 2)}\n` }],
    links: user.entries
      .filter((entry) => entry !== 'settings.json')
      .map((entry) => ({ path: join(dir, entry), target: join(user.folder, '.gemini', entry) })),
  };
}

/**
 * The user's Gemini CLI settings with the attempt's server: trusted (no confirmation; headless Gemini CLI cannot ask)
 * with only the profile's tools, beside the user's own servers. Gemini CLI redacts variables named like secrets
 * (…TOKEN…) from a tool server's environment, and under GitHub Actions all but a few: the binding's names are let
 * through by name, beside the names the user lets through.
 */
export function withGeminiMcp(
  user: Record<string, unknown>,
  server: BatonMcpServer,
  profile: PermissionProfile,
): Record<string, unknown> {
  const servers = recordOf(user.mcpServers);
  const security = recordOf(user.security);
  const redaction = recordOf(security.environmentVariableRedaction);
  const allowed = Array.isArray(redaction.allowed) ? redaction.allowed.filter((v) => typeof v === 'string') : [];
  return {
    ...user,
    mcpServers: {
      ...servers,
      [BATON_MCP_NAME]: {
        command: server.command,
        args: server.args,
        trust: true,
        includeTools: batonMcpTools(profile),
      },
    },
    security: {
      ...security,
      environmentVariableRedaction: {
        ...redaction,
        allowed: [...new Set([...allowed, ...WORKER_VARIABLES])],
      },
    },
  };
}

function recordOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/**
 * The rules of the agent Baton runs opencode as (OPENCODE_AGENT). opencode evaluates an agent's rules after the
 * global ones (OPENCODE_PERMISSION included) and the last matching rule wins, so a repository's own agent —
 * its `build` in `opencode.json` or `.opencode/agent/build.md`, or its `default_agent` — could loosen a task's
 * profile; an agent only Baton defines cannot be loosened that way (1.18.33's agent loader). Below `full`, no
 * subagents (`task`): a repository's subagent has its own rules. The attempt's MCP tools are opencode's
 * `baton_<tool>`: those the profile allows are allowed, the hand-in denied to a read-only task.
 */
function opencodeAgentRules(
  permission: Record<string, string>,
  profile: PermissionProfile,
  withMcp: boolean,
): Record<string, string> {
  const allowed = batonMcpTools(profile);
  const mcp = withMcp
    ? Object.fromEntries(
        batonMcpTools('full').map((tool) => [`${BATON_MCP_NAME}_${tool}`, allowed.includes(tool) ? 'allow' : 'deny']),
      )
    : {};
  return { ...(profile === 'full' ? {} : { task: 'deny' }), ...mcp, ...permission };
}

/**
 * opencode's environment for a task. It reads OPENCODE_CONFIG_CONTENT over its config files (the
 * user's and the project's), and OPENCODE_PERMISSION over all of that: a worker that configures
 * opencode through either keeps its settings, but the task's permission rules win, rule by rule.
 * Baton's agent (OPENCODE_AGENT, with `agentRules`) and the attempt's MCP server are added to the
 * content; an agent of that name from the worker's env is replaced, its other agents and servers stay.
 * (One word for every tool, `"permission": "allow"`, is replaced.)
 */
function opencodeEnv(
  env: Readonly<Record<string, string>> | undefined,
  permission: Record<string, string>,
  agentRules: Record<string, string>,
  server: BatonMcpServer | undefined,
): Record<string, string> {
  const config = jsonObject(env, 'OPENCODE_CONFIG_CONTENT');
  const ownRules = config.permission && typeof config.permission === 'object' ? config.permission : {};
  const own = (key: string) => (config[key] && typeof config[key] === 'object' ? config[key] : {});
  const agent = {
    description: 'Does one task of a Baton plan, with the permissions of its profile.',
    mode: 'primary',
    permission: agentRules,
  };
  return {
    ...env,
    OPENCODE_CONFIG_CONTENT: JSON.stringify({
      ...config,
      permission: { ...ownRules, ...permission },
      agent: { ...own('agent'), [OPENCODE_AGENT]: agent },
      ...(server
        ? {
            mcp: {
              ...own('mcp'),
              [BATON_MCP_NAME]: { type: 'local', command: [server.command, ...server.args], enabled: true },
            },
          }
        : {}),
    }),
    OPENCODE_PERMISSION: JSON.stringify({ ...jsonObject(env, 'OPENCODE_PERMISSION'), ...permission }),
  };
}

/** A variable of the worker's env that holds a JSON object (none: `{}`); anything else is a config error. */
function jsonObject(env: Readonly<Record<string, string>> | undefined, name: string): Record<string, unknown> {
  const value = env?.[name];
  if (value === undefined || value.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new BatonError(
      'config.invalid',
      `The opencode worker's env ${name} is not a JSON object; Baton adds the task's permissions to it.`,
    );
  }
  return parsed as Record<string, unknown>;
}
