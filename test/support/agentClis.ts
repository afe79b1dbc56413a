// How to run each real agent CLI non-interactively against the scripted model server
// (./modelServer.ts): its config files in a temporary home, its environment, its argv for a
// JSON event stream, and the tool calls that make it write a file or run a command with its
// own tools. Used by test/system/agents/; the facts behind each recipe are in docs/agent-clis.md.
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentCliName } from '../../scripts/agentClis.mjs';
import { AGENT_CLIS, ensureAgentCli, isolatedEnv } from '../../scripts/agentClis.mjs';
import type { RecordedRequest, ToolCall, WireFormat } from './modelServer';

/** `write`: the CLI may edit files and run commands. `readOnly`: its own read-only / plan mode. */
export type PermissionMode = 'write' | 'readOnly';

export interface LaunchOptions {
  /** Temporary home folder for the CLI's config, sessions and logs. */
  home: string;
  /** Working folder (a git repository). */
  cwd: string;
  serverUrl: string;
  prompt: string;
  mode: PermissionMode;
  /** Continue this session (the id the CLI reported) instead of starting a new one. */
  resume?: string;
}

export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
}

export interface AgentCli {
  name: AgentCliName;
  /** The wire format it speaks to the model server. */
  format: WireFormat;
  launch(options: LaunchOptions): Launch;
  /** A tool call that creates `path` (relative to the working folder) with `content`, with the CLI's own tool. */
  writeFile(request: RecordedRequest, cwd: string, path: string, content: string): ToolCall;
  /** A tool call that runs a shell command with the CLI's own tool. */
  runShell(request: RecordedRequest, command: string): ToolCall;
  /** The session id in the CLI's event stream (for resuming). */
  sessionId(events: Record<string, unknown>[]): string | undefined;
}

/** Test key: the server accepts anything; it only has to look like a key to the CLI. */
export const TEST_KEY = 'sk-baton-test-not-a-real-key';

/**
 * The first of `candidates` that the request offers, or else the first candidate: a mode that
 * hides a tool (Gemini's default approval mode, opencode's denied permissions) still gets the
 * call, and the CLI itself must refuse it.
 */
function chooseTool(request: RecordedRequest, ...candidates: [string, ...string[]]): string {
  return request.tools.find((t) => candidates.includes(t.name))?.name ?? candidates[0];
}

/** `base` plus those `extras` whose key is a property of the tool's JSON schema. */
function withDeclared(
  request: RecordedRequest,
  tool: string,
  base: Record<string, unknown>,
  extras: Record<string, unknown>,
) {
  const schema = request.tools.find((t) => t.name === tool)?.schema as
    { properties?: Record<string, unknown> } | undefined;
  const declared = schema?.properties ?? {};
  return { ...base, ...Object.fromEntries(Object.entries(extras).filter(([key]) => key in declared)) };
}

export const claudeCode: AgentCli = {
  name: 'claude',
  format: 'anthropic',
  launch({ home, serverUrl, prompt, mode, resume }) {
    const env = {
      ...isolatedEnv('claude', home),
      ANTHROPIC_BASE_URL: serverUrl,
      ANTHROPIC_API_KEY: TEST_KEY,
    };
    const permissions =
      mode === 'write'
        ? // acceptEdits lets Edit/Write through; Bash still needs a rule. (bypassPermissions is refused as root.)
          ['--permission-mode', 'acceptEdits', '--allowedTools', 'Bash']
        : ['--permission-mode', 'plan'];
    return {
      command: ensureAgentCli('claude'),
      args: [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        ...permissions,
        ...(resume ? ['--resume', resume] : []),
        // --allowedTools takes several values: `--` ends them, so the prompt is not read as one.
        '--',
        prompt,
      ],
      env,
    };
  },
  writeFile(request, cwd, path, content) {
    const tool = chooseTool(request, 'Write');
    return { name: tool, input: { file_path: join(cwd, path), content } };
  },
  runShell(request, command) {
    const tool = chooseTool(request, 'Bash');
    return { name: tool, input: withDeclared(request, tool, { command }, { description: 'Print a marker' }) };
  },
  sessionId: (events) => events.find((e) => e.type === 'system' && e.subtype === 'init')?.session_id as string,
};

export const codex: AgentCli = {
  name: 'codex',
  format: 'responses',
  launch({ home, serverUrl, prompt, mode, resume }) {
    const codexHome = join(home, '.codex');
    mkdirSync(codexHome, { recursive: true });
    // A model from Codex's bundled catalogue, so it offers its usual tools (apply_patch, exec_command)
    // without fetching model metadata; an unknown name works too but gets fallback metadata and no apply_patch.
    writeFileSync(
      join(codexHome, 'config.toml'),
      [
        'model = "gpt-5.5"',
        'model_provider = "baton"',
        'check_for_update_on_startup = false',
        '',
        '[model_providers.baton]',
        'name = "Baton scripted model server"',
        `base_url = "${serverUrl}/v1"`,
        'env_key = "BATON_TEST_MODEL_KEY"',
        'wire_api = "responses"',
        '',
        '[analytics]',
        'enabled = false',
        '',
        '[feedback]',
        'enabled = false',
        '',
        '[otel]',
        'exporter = "none"',
        'metrics_exporter = "none"',
        'trace_exporter = "none"',
        '',
        '[features]',
        'plugins = false',
        'apps = false',
        '',
      ].join('\n'),
    );
    const env = { ...isolatedEnv('codex', home), BATON_TEST_MODEL_KEY: TEST_KEY };
    // `--sandbox <mode>` on `codex exec`; `exec resume` has no --sandbox, so the config key works for both.
    const sandbox = mode === 'write' ? 'workspace-write' : 'read-only';
    const common = ['--json', '--strict-config', '-c', `sandbox_mode="${sandbox}"`];
    return {
      command: ensureAgentCli('codex'),
      args: resume ? ['exec', 'resume', ...common, resume, prompt] : ['exec', ...common, prompt],
      env,
    };
  },
  writeFile(request, _cwd, path, content) {
    // apply_patch is a free-form ("custom") tool for the models in Codex's catalogue, a JSON one for others.
    const tool = request.tools.find((t) => t.name === 'apply_patch');
    const lines = content.replace(/\n$/, '').split('\n');
    const patch = [
      '*** Begin Patch',
      `*** Add File: ${path}`,
      ...lines.map((line) => `+${line}`),
      '*** End Patch',
      '',
    ].join('\n');
    return tool && !tool.freeform
      ? { name: 'apply_patch', input: { input: patch } }
      : { name: 'apply_patch', input: patch };
  },
  runShell(request, command) {
    const tool = chooseTool(request, 'exec_command', 'shell_command', 'shell');
    if (tool === 'exec_command') return { name: tool, input: { cmd: command } };
    if (tool === 'shell_command') return { name: tool, input: { command } };
    return { name: tool, input: { command: ['bash', '-lc', command] } };
  },
  sessionId: (events) => events.find((e) => e.type === 'thread.started')?.thread_id as string,
};

export const geminiCli: AgentCli = {
  name: 'gemini',
  format: 'gemini',
  launch({ home, serverUrl, prompt, mode, resume }) {
    const dir = join(home, '.gemini');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'settings.json'),
      `${JSON.stringify(
        {
          general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
          privacy: { usageStatisticsEnabled: false }, // else it reports to play.googleapis.com
          telemetry: { enabled: false },
          security: { auth: { selectedType: 'gemini-api-key' }, folderTrust: { enabled: false } },
          ide: { enabled: false, hasSeenNudge: true },
        },
        null,
        2,
      )}\n`,
    );
    const env = {
      ...isolatedEnv('gemini', home),
      GEMINI_API_KEY: TEST_KEY,
      GOOGLE_GEMINI_BASE_URL: serverUrl,
    };
    return {
      command: ensureAgentCli('gemini'),
      args: [
        '--output-format',
        'stream-json',
        // A fixed model skips the "auto" router's extra classifier request (the server would answer it too).
        '--model',
        'gemini-2.5-flash',
        '--approval-mode',
        mode === 'write' ? 'yolo' : 'plan',
        ...(resume ? ['--resume', resume] : []),
        '-p',
        prompt,
      ],
      env,
    };
  },
  writeFile(request, cwd, path, content) {
    return { name: chooseTool(request, 'write_file'), input: { file_path: join(cwd, path), content } };
  },
  runShell(request, command) {
    const tool = chooseTool(request, 'run_shell_command');
    return { name: tool, input: withDeclared(request, tool, { command }, { description: 'Print a marker' }) };
  },
  sessionId: (events) => events.find((e) => e.type === 'init')?.session_id as string,
};

export const opencode: AgentCli = {
  name: 'opencode',
  format: 'chat',
  launch({ home, serverUrl, prompt, mode, resume }) {
    const configDir = join(home, '.config', 'opencode');
    mkdirSync(join(configDir, 'node_modules'), { recursive: true });
    // opencode installs @opencode-ai/plugin into each config folder from the npm registry in the
    // background unless that folder's package-lock.json already lists it with a node_modules beside it.
    const plugin = { '@opencode-ai/plugin': AGENT_CLIS.opencode.version };
    writeFileSync(join(configDir, 'package.json'), `${JSON.stringify({ dependencies: plugin })}\n`);
    writeFileSync(
      join(configDir, 'package-lock.json'),
      `${JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: plugin } } })}\n`,
    );
    writeFileSync(
      join(configDir, 'opencode.json'),
      `${JSON.stringify(
        {
          $schema: 'https://opencode.ai/config.json',
          autoupdate: false,
          share: 'disabled',
          model: 'baton/scripted',
          small_model: 'baton/scripted',
          // Read-only: no edit tool (edit, write, patch) and no shell. The built-in "plan" agent alone is
          // not read-only: it denies the edit tools but allows bash, which can write anything.
          ...(mode === 'readOnly' ? { permission: { edit: 'deny', bash: 'deny', webfetch: 'deny' } } : {}),
          provider: {
            baton: {
              npm: '@ai-sdk/openai-compatible',
              name: 'Baton scripted model server',
              options: { baseURL: `${serverUrl}/v1`, apiKey: TEST_KEY },
              models: {
                // cost: US dollars per million tokens, so step_finish events carry a cost.
                scripted: {
                  name: 'Scripted',
                  tool_call: true,
                  limit: { context: 200000, output: 8000 },
                  cost: { input: 3, output: 15 },
                },
              },
            },
          },
        },
        null,
        2,
      )}\n`,
    );
    return {
      command: ensureAgentCli('opencode'),
      args: ['run', '--format', 'json', ...(resume ? ['--session', resume] : []), prompt],
      env: isolatedEnv('opencode', home),
    };
  },
  writeFile(request, cwd, path, content) {
    return { name: chooseTool(request, 'write'), input: { filePath: join(cwd, path), content } };
  },
  runShell(request, command) {
    const tool = chooseTool(request, 'bash');
    return { name: tool, input: withDeclared(request, tool, { command }, { description: 'Print a marker' }) };
  },
  sessionId: (events) => events.find((e) => typeof e.sessionID === 'string')?.sessionID as string,
};

export const AGENT_CLI_RECIPES: AgentCli[] = [claudeCode, codex, geminiCli, opencode];

export interface CliRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** stdout lines that parse as JSON objects, in order. */
  events: Record<string, unknown>[];
  /** stdout lines that are not JSON. */
  otherLines: string[];
  durationMs: number;
  timedOut: boolean;
}

/** Runs a launch in `cwd` with stdin closed, to its end (or kills its process group after `timeoutMs`). */
export function runLaunch(launch: Launch, cwd: string, timeoutMs = 90_000): Promise<CliRun> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const env = Object.fromEntries(Object.entries(launch.env).filter(([, v]) => v !== undefined)) as NodeJS.ProcessEnv;
    // PWD as a shell would set it: opencode takes its project folder from PWD, not from getcwd().
    env.PWD = cwd;
    const child = spawn(launch.command, launch.args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const kill = (signal: NodeJS.Signals) => {
      try {
        process.kill(-child.pid!, signal);
      } catch {
        // gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill('SIGTERM');
      setTimeout(() => kill('SIGKILL'), 3000).unref();
    }, timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Whatever the CLI left behind in its group (a language server, a shell) goes too.
      kill('SIGKILL');
      const events: Record<string, unknown>[] = [];
      const otherLines: string[] = [];
      for (const line of stdout.split('\n')) {
        if (!line.trim()) continue;
        try {
          const value: unknown = JSON.parse(line);
          if (value && typeof value === 'object' && !Array.isArray(value))
            events.push(value as Record<string, unknown>);
          else otherLines.push(line);
        } catch {
          otherLines.push(line);
        }
      }
      resolve({ code, signal, stdout, stderr, events, otherLines, durationMs: Date.now() - started, timedOut });
    });
  });
}
