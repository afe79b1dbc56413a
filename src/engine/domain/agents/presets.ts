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
}

/** The command that starts `baton mcp`; it finds its attempt in the environment the agent's CLI passes on. */
export interface BatonMcpServer {
  command: string;
  args: string[];
}

/** The MCP server's name in an agent's configuration: its tools are `mcp__baton__<tool>` to Claude Code. */
export const BATON_MCP_NAME = 'baton';

/**
 * The attempt's tools an agent may call without asking: all four, less the hand-in for a
 * read-only task (it changes nothing but it is not a look either: it ends the attempt).
 */
export function batonMcpTools(profile: PermissionProfile): string[] {
  const tools = ['baton_task', 'baton_progress', 'baton_check_result'];
  return profile === 'read-only' ? tools : [...tools, 'baton_submit_result'];
}

export interface AgentPresetLaunch {
  argv: string[];
  stdin?: string;
  /** The worker's environment: the preset's defaults, then the worker's `env`, then the task's permissions. */
  env: Record<string, string>;
  /** What the CLI itself will enforce, as recorded with the attempt. */
  effective: { profile: PermissionProfile; allowTools: string[]; denyTools: string[]; flags: string[] };
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
 * opencode reads the repository's own configuration — `opencode.json(c)` from the working
 * folder up to the git root, and every `.opencode/` folder there (agents, modes, plugins) —
 * and an agent's own `permission` there is merged over every global rule,
 * OPENCODE_PERMISSION included: `.opencode/agent/build.md` with `permission: {bash: allow}`
 * would loosen any task's profile (and a project plugin runs inside opencode). So the
 * repository's opencode configuration is not read at all for a Baton worker (docs/workers.md,
 * "Permission profiles"); the user's own (global) config and the worker's env still apply.
 */
const OPENCODE_NO_PROJECT_CONFIG = 'OPENCODE_DISABLE_PROJECT_CONFIG';

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
      const flags = [
        ...mcp.flags,
        '--permission-mode',
        mode,
        ...(allowed.length ? ['--allowedTools', ...allowed] : []),
        ...(deny.length ? ['--disallowedTools', ...deny] : []),
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
        effective: { profile: permissions.profile, allowTools: allowed, denyTools: deny, flags },
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
      const flags = ['-c', `sandbox_mode="${sandbox}"`, '-c', 'approval_policy="never"'];
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
        env: { GEMINI_CLI_TRUST_WORKSPACE: 'true', ...input.env },
        effective: { profile: permissions.profile, allowTools: [], denyTools: [], flags },
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
      const flags = ['permission', JSON.stringify(permission), `${OPENCODE_NO_PROJECT_CONFIG}=1`];
      return {
        argv: [input.executable, 'run', '--format', 'json', ...model, ...resume, ...input.args, input.prompt],
        env: opencodeEnv(input.env, permission),
        effective: { profile: permissions.profile, allowTools: allow, denyTools: deny, flags },
      };
    }
  }
}

/**
 * opencode's environment for a task. It reads OPENCODE_CONFIG_CONTENT over its config files (the
 * project's too), and OPENCODE_PERMISSION over all of that: a worker that configures opencode
 * through either keeps its settings, but the task's permission rules win, rule by rule — they
 * are the profile's only guard. (One word for every tool, `"permission": "allow"`, is replaced.)
 */
function opencodeEnv(
  env: Readonly<Record<string, string>> | undefined,
  permission: Record<string, string>,
): Record<string, string> {
  const config = jsonObject(env, 'OPENCODE_CONFIG_CONTENT');
  const ownRules = config.permission && typeof config.permission === 'object' ? config.permission : {};
  return {
    ...env,
    OPENCODE_CONFIG_CONTENT: JSON.stringify({ ...config, permission: { ...ownRules, ...permission } }),
    OPENCODE_PERMISSION: JSON.stringify({ ...jsonObject(env, 'OPENCODE_PERMISSION'), ...permission }),
    [OPENCODE_NO_PROJECT_CONFIG]: '1',
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
