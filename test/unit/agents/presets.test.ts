import assert from 'node:assert/strict';
import { agentPresetLaunch, WORKER_VARIABLES, type PermissionProfile } from '../../../src/engine/domain/agents/presets';
import { parseConfig } from '../../../src/engine/domain/config';
import {
  batonMcpServer,
  batonStopHook,
  installsStopHook,
  resolveWorker,
  workerLaunch,
} from '../../../src/engine/domain/workerLaunch';

const HOSTILE = 'do it; rm -rf ~ && echo $(id) `id` | tee x';

function launch(kind: 'claude-code' | 'codex' | 'gemini' | 'opencode', profile: PermissionProfile, extra = {}) {
  return agentPresetLaunch({
    kind,
    executable: kind,
    args: [],
    prompt: HOSTILE,
    permissions: { profile },
    ...extra,
  });
}

describe('agent presets: each CLI’s own flags for the JSON stream and the task’s permission profile', () => {
  it('Claude Code: stream-json, plan mode when read-only, accept edits otherwise, the shell only with full; prompt on stdin', () => {
    const readOnly = launch('claude-code', 'read-only');
    assert.deepEqual(readOnly.argv, [
      'claude-code',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'plan',
      '--',
    ]);
    assert.equal(readOnly.stdin, HOSTILE, 'the prompt never becomes an argument');
    // `edit` changes files and runs no command: acceptEdits alone lets Claude Code run one it counts as an edit.
    assert.deepEqual(launch('claude-code', 'edit').effective.flags, [
      '--permission-mode',
      'acceptEdits',
      '--disallowedTools',
      'Bash',
    ]);
    assert.deepEqual(launch('claude-code', 'full').effective.flags, [
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash',
    ]);
  });

  it('Claude Code: tool lists become --allowedTools / --disallowedTools, ended by -- so the prompt is not eaten', () => {
    const l = agentPresetLaunch({
      kind: 'claude-code',
      executable: 'claude',
      args: [],
      prompt: 'x',
      permissions: { profile: 'edit', allowTools: ['Bash(npm test:*)'], denyTools: ['WebFetch'] },
    });
    assert.deepEqual(l.argv.slice(5), [
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash(npm test:*)',
      '--disallowedTools',
      'WebFetch',
      '--',
    ]);
  });

  it('Codex: exec --json with the sandbox of the profile, never asking; resume through exec resume', () => {
    assert.ok(launch('codex', 'read-only').argv.includes('sandbox_mode="read-only"'));
    assert.ok(launch('codex', 'edit').argv.includes('sandbox_mode="workspace-write"'));
    assert.ok(launch('codex', 'full').argv.includes('sandbox_mode="danger-full-access"'));
    // `edit` runs no command: without its shell tools Codex edits through apply_patch only.
    const shellOff = ['-c', 'features.shell_tool=false', '-c', 'features.unified_exec=false'];
    const has = (argv: readonly string[], part: string[]) => argv.join('\0').includes(part.join('\0'));
    assert.ok(has(launch('codex', 'edit').argv, shellOff));
    assert.ok(
      !has(launch('codex', 'full').argv, shellOff) &&
        !launch('codex', 'full').argv.includes('features.shell_tool=false'),
    );
    const resumed = launch('codex', 'edit', { resumeSession: 'thread-1' });
    assert.deepEqual(resumed.argv.slice(0, 4), ['codex', 'exec', 'resume', 'thread-1']);
    assert.equal(resumed.argv.at(-1), '-', 'the prompt on stdin');
    assert.equal(resumed.stdin, HOSTILE);
  });

  it('Gemini CLI: stream-json with plan / auto_edit / yolo; the prompt one argv element, however hostile', () => {
    for (const [profile, mode] of [
      ['read-only', 'plan'],
      ['edit', 'auto_edit'],
      ['full', 'yolo'],
    ] as const) {
      const l = launch('gemini', profile);
      assert.deepEqual(l.effective.flags, ['--approval-mode', mode]);
      assert.deepEqual(l.argv.slice(-2), ['-p', HOSTILE]);
    }
  });

  it('opencode: run --format json; the profile as its permission config (read-only denies edit, bash, webfetch)', () => {
    const l = launch('opencode', 'read-only');
    assert.deepEqual(l.argv.slice(0, 6), ['opencode', 'run', '--format', 'json', '--agent', 'baton']);
    assert.deepEqual(JSON.parse(l.env.OPENCODE_CONFIG_CONTENT!).permission, {
      edit: 'deny',
      bash: 'deny',
      webfetch: 'deny',
    });
    const full = agentPresetLaunch({
      kind: 'opencode',
      executable: 'opencode',
      args: [],
      prompt: 'x',
      permissions: { profile: 'full', denyTools: ['webfetch'] },
    });
    assert.deepEqual(JSON.parse(full.env.OPENCODE_CONFIG_CONTENT!).permission, {
      edit: 'allow',
      bash: 'allow',
      webfetch: 'deny',
    });
  });

  it("opencode: a worker's own OPENCODE_CONFIG_CONTENT keeps its settings, but the task's permissions win", () => {
    const own = { snapshot: false, permission: { edit: 'allow', bash: 'allow', external_directory: 'deny' } };
    const l = launch('opencode', 'read-only', { env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(own), KEY: 'k' } });
    const { agent: _agent, ...content } = JSON.parse(l.env.OPENCODE_CONFIG_CONTENT!) as Record<string, unknown>;
    assert.deepEqual(content, {
      snapshot: false,
      permission: { edit: 'deny', bash: 'deny', webfetch: 'deny', external_directory: 'deny' },
    });
    assert.equal(l.env.KEY, 'k');
    // OPENCODE_PERMISSION, which opencode merges over every config, gets the task's rules too.
    const broad = launch('opencode', 'read-only', { env: { OPENCODE_PERMISSION: '{"edit":"allow","read":"allow"}' } });
    assert.deepEqual(JSON.parse(broad.env.OPENCODE_PERMISSION!), {
      edit: 'deny',
      read: 'allow',
      bash: 'deny',
      webfetch: 'deny',
    });
    assert.deepEqual(JSON.parse(l.env.OPENCODE_PERMISSION!), { edit: 'deny', bash: 'deny', webfetch: 'deny' });
    // "allow everything" in one word is replaced: the profile decides tool by tool.
    const blanket = launch('opencode', 'read-only', { env: { OPENCODE_CONFIG_CONTENT: '{"permission":"allow"}' } });
    assert.deepEqual(JSON.parse(blanket.env.OPENCODE_CONFIG_CONTENT!).permission, {
      edit: 'deny',
      bash: 'deny',
      webfetch: 'deny',
    });
    assert.throws(
      () => launch('opencode', 'edit', { env: { OPENCODE_CONFIG_CONTENT: '[1]' } }),
      /OPENCODE_CONFIG_CONTENT is not a JSON object/,
    );
  });

  it("opencode: runs as Baton's own agent, whose rules are the task's (no subagents below full); the repository's config is read", () => {
    const own = { agent: { baton: { permission: { bash: 'allow' } }, reviewer: { mode: 'subagent' } } };
    const l = launch('opencode', 'read-only', { env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(own) } });
    const content = JSON.parse(l.env.OPENCODE_CONFIG_CONTENT!) as { agent: Record<string, { permission?: unknown }> };
    // An agent of Baton's name from the worker's env is replaced whole; the others stay.
    assert.deepEqual(content.agent.baton!.permission, { task: 'deny', edit: 'deny', bash: 'deny', webfetch: 'deny' });
    assert.deepEqual(content.agent.reviewer, { mode: 'subagent' });
    assert.deepEqual(JSON.parse(launch('opencode', 'full').env.OPENCODE_CONFIG_CONTENT!).agent.baton.permission, {
      edit: 'allow',
      bash: 'allow',
    });
    // The project's opencode.json, .opencode/ and AGENTS.md apply: opencode is not told to skip them.
    assert.equal(l.env.OPENCODE_DISABLE_PROJECT_CONFIG, undefined);
    assert.deepEqual(l.effective.flags.slice(0, 2), ['--agent', 'baton'], 'recorded with the attempt');
  });

  it("the worker's env wins over a preset's defaults", () => {
    const l = launch('gemini', 'edit', { env: { GEMINI_CLI_TRUST_WORKSPACE: 'false', GEMINI_API_KEY: 'g' } });
    assert.deepEqual(l.env, { GEMINI_CLI_TRUST_WORKSPACE: 'false', GEMINI_API_KEY: 'g' });
  });

  it('Codex and Gemini CLI have no tool lists: only their profiles count, and what is recorded says so', () => {
    const l = agentPresetLaunch({
      kind: 'codex',
      executable: 'codex',
      args: [],
      prompt: 'x',
      permissions: { profile: 'edit', allowTools: ['x'], denyTools: ['y'] },
    });
    assert.deepEqual([l.effective.allowTools, l.effective.denyTools], [[], []]);
  });

  it('a worker of type codex in the config launches the preset, and continues the session its claim passes', () => {
    const { config, issues } = parseConfig(
      JSON.stringify({
        workers: { cx: { type: 'codex', model: 'gpt-5.5', continueSession: true }, g: { type: 'gemini' } },
      }),
    );
    assert.deepEqual(issues, []);
    const values = {
      prompt: 'p',
      promptFile: '/p',
      artifactPath: '/a',
      taskId: 'T1',
      workspace: '/w',
      resumeSession: 'th-9',
    };
    const cx = workerLaunch('cx', resolveWorker(config, 'cx'), values);
    assert.equal(cx.agent?.kind, 'codex');
    assert.deepEqual(cx.argv.slice(0, 4), ['codex', 'exec', 'resume', 'th-9']);
    assert.ok(cx.argv.includes('gpt-5.5'));
    // Whether to continue is the claim's decision (continuesSession): a session it passes is continued.
    const { resumeSession: _none, ...fresh } = values;
    const g = workerLaunch('g', resolveWorker(config, 'g'), fresh);
    assert.ok(!g.argv.includes('--resume'), 'no session passed, none continued');
    assert.equal(g.agent?.effective.profile, 'edit', 'the default profile');
    assert.ok(workerLaunch('g', resolveWorker(config, 'g'), values).argv.includes('--resume'));
  });
});

/** The parts of opencode's OPENCODE_CONFIG_CONTENT these tests read. */
interface OpencodeContent {
  mcp: Record<string, unknown>;
  agent: Record<string, { permission: Record<string, string> }>;
}

describe('agent presets: the attempt’s MCP server (baton mcp, docs/agents.md)', () => {
  const batonMcp = { command: '/usr/bin/node', args: ['/opt/baton/dist/cli.js', 'mcp'] };

  it('Claude Code gets the server inline with --mcp-config, and its tools allowed (no hand-in for a read-only task)', () => {
    const edit = launch('claude-code', 'edit', { batonMcp });
    const at = edit.argv.indexOf('--mcp-config');
    assert.ok(at > 0, 'the flag is there');
    assert.deepEqual(JSON.parse(edit.argv[at + 1]!), { mcpServers: { baton: batonMcp } });
    assert.deepEqual(edit.effective.allowTools, [
      'mcp__baton__baton_task',
      'mcp__baton__baton_progress',
      'mcp__baton__baton_check_result',
      'mcp__baton__baton_ask',
      'mcp__baton__baton_submit_result',
    ]);
    assert.ok(edit.argv.includes('mcp__baton__baton_submit_result'));
    const readOnly = launch('claude-code', 'read-only', { batonMcp });
    assert.ok(!readOnly.effective.allowTools.includes('mcp__baton__baton_submit_result'));
    assert.ok(readOnly.effective.allowTools.includes('mcp__baton__baton_progress'));
    const full = launch('claude-code', 'full', { batonMcp, permissions: { profile: 'full', allowTools: ['Read'] } });
    assert.deepEqual(full.effective.allowTools.slice(0, 1), ['Bash']);
    assert.equal(full.effective.allowTools.at(-1), 'Read', "the task's own tools still apply");
    // The token is nowhere on the command line: the server finds it in the environment Claude Code passes on.
    assert.ok(!edit.argv.join(' ').includes('TOKEN'));
  });

  it('Codex gets the server through -c mcp_servers.baton.…: the binding passed on by name, the profile’s tools approved', () => {
    const edit = launch('codex', 'edit', { batonMcp });
    const overrides = edit.argv.filter((_, i) => edit.argv[i - 1] === '-c');
    assert.deepEqual(
      overrides.filter((o) => o.startsWith('mcp_servers.')),
      [
        'mcp_servers.baton.command="/usr/bin/node"',
        'mcp_servers.baton.args=["/opt/baton/dist/cli.js","mcp"]',
        `mcp_servers.baton.env_vars=${JSON.stringify(WORKER_VARIABLES)}`,
        'mcp_servers.baton.enabled_tools=["baton_task","baton_progress","baton_check_result","baton_ask","baton_submit_result"]',
        'mcp_servers.baton.default_tools_approval_mode="approve"',
      ],
    );
    assert.ok(WORKER_VARIABLES.includes('BATON_RUNTIME_TOKEN'), 'the token goes by name');
    const readOnly = launch('codex', 'read-only', { batonMcp });
    assert.ok(
      readOnly.argv.includes(
        'mcp_servers.baton.enabled_tools=["baton_task","baton_progress","baton_check_result","baton_ask"]',
      ),
    );
    assert.equal(edit.argv.at(-1), '-', 'the prompt still comes on stdin');
  });

  it('Gemini CLI gets a home of the attempt’s own: the user’s settings with the server added (trusted, the profile’s tools, the binding let through), the user’s other files linked', () => {
    const user = {
      folder: '/home/ana',
      settings: {
        security: { auth: { selectedType: 'oauth-personal' }, environmentVariableRedaction: { allowed: ['MY_TOKEN'] } },
        mcpServers: { docs: { command: 'docs-server' } },
        ui: { theme: 'Dracula' },
      },
      entries: ['settings.json', 'oauth_creds.json', 'tmp', 'GEMINI.md'],
    };
    const home = '/ws/.baton/runs/R-1/agent-homes/T1';
    const readOnly = launch('gemini', 'read-only', { batonMcp, geminiHomes: { user, task: home } });
    assert.equal(readOnly.env.GEMINI_CLI_HOME, home);
    assert.equal(readOnly.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH, undefined);
    assert.deepEqual(
      readOnly.files?.map((f) => f.path),
      [`${home}/.gemini/settings.json`],
    );
    assert.deepEqual(JSON.parse(readOnly.files![0]!.content), {
      security: {
        auth: { selectedType: 'oauth-personal' },
        environmentVariableRedaction: { allowed: ['MY_TOKEN', ...WORKER_VARIABLES] },
      },
      mcpServers: {
        docs: { command: 'docs-server' },
        baton: {
          command: '/usr/bin/node',
          args: ['/opt/baton/dist/cli.js', 'mcp'],
          trust: true,
          includeTools: ['baton_task', 'baton_progress', 'baton_check_result', 'baton_ask'],
        },
      },
      ui: { theme: 'Dracula' },
    });
    assert.deepEqual(readOnly.links, [
      { path: `${home}/.gemini/oauth_creds.json`, target: '/home/ana/.gemini/oauth_creds.json' },
      { path: `${home}/.gemini/tmp`, target: '/home/ana/.gemini/tmp' },
      { path: `${home}/.gemini/GEMINI.md`, target: '/home/ana/.gemini/GEMINI.md' },
    ]);
    // A worker's own GEMINI_CLI_HOME is where the user's home was read from; the task's home takes its place.
    const fresh = { user: { folder: '/elsewhere', settings: {}, entries: [] }, task: '/t' };
    const own = launch('gemini', 'edit', { batonMcp, geminiHomes: fresh, env: { GEMINI_CLI_HOME: '/elsewhere' } });
    assert.equal(own.env.GEMINI_CLI_HOME, '/t');
    // A user without a Gemini CLI home yet: only the server's settings.
    assert.deepEqual(Object.keys(JSON.parse(own.files![0]!.content)), ['mcpServers', 'security']);
    assert.deepEqual(own.links, []);
  });

  it('opencode gets the server in OPENCODE_CONFIG_CONTENT beside the worker’s own, its tools allowed by Baton’s agent (the hand-in denied when read-only)', () => {
    const own = { mcp: { docs: { type: 'remote', url: 'https://docs.example' } } };
    const readOnly = launch('opencode', 'read-only', {
      batonMcp,
      env: { OPENCODE_CONFIG_CONTENT: JSON.stringify(own) },
    });
    const content = JSON.parse(readOnly.env.OPENCODE_CONFIG_CONTENT!) as OpencodeContent;
    assert.deepEqual(content.mcp, {
      docs: own.mcp.docs,
      baton: { type: 'local', command: ['/usr/bin/node', '/opt/baton/dist/cli.js', 'mcp'], enabled: true },
    });
    assert.deepEqual(content.agent.baton?.permission, {
      task: 'deny',
      baton_baton_task: 'allow',
      baton_baton_progress: 'allow',
      baton_baton_check_result: 'allow',
      baton_baton_ask: 'allow',
      baton_baton_submit_result: 'deny',
      edit: 'deny',
      bash: 'deny',
      webfetch: 'deny',
    });
    const edit = JSON.parse(launch('opencode', 'edit', { batonMcp }).env.OPENCODE_CONFIG_CONTENT!) as OpencodeContent;
    assert.equal(edit.agent.baton?.permission.baton_baton_submit_result, 'allow');
  });

  it('without a CLI to run, the argv is as before', () => {
    assert.ok(!launch('claude-code', 'edit').argv.includes('--mcp-config'));
    assert.deepEqual(launch('claude-code', 'edit').effective.allowTools, []);
    assert.ok(!launch('codex', 'edit').argv.some((a) => a.startsWith('mcp_servers.')));
    const gemini = launch('gemini', 'edit', {
      geminiHomes: { user: { folder: '/u', settings: {}, entries: [] }, task: '/t' },
    });
    assert.equal(gemini.files, undefined);
    assert.equal(gemini.env.GEMINI_CLI_HOME, undefined);
    assert.equal(JSON.parse(launch('opencode', 'edit').env.OPENCODE_CONFIG_CONTENT!).mcp, undefined);
  });

  it('Claude Code gets the stop hook as inline --settings, its command quoted for the shell; hook runs go into the stream', () => {
    const stopHook = batonStopHook("/opt/bat'on/cli.js", { execPath: '/usr/bin/node' });
    assert.deepEqual(stopHook.args.slice(1), ['check-result', '--stop-hook']);
    const edit = launch('claude-code', 'edit', { batonMcp, stopHook });
    const at = edit.argv.indexOf('--settings');
    assert.ok(at > 0 && at < edit.argv.indexOf('--'), 'a flag, before the end of the options');
    assert.deepEqual(JSON.parse(edit.argv[at + 1]!), {
      hooks: {
        Stop: [
          {
            hooks: [
              {
                type: 'command',
                command: "'/usr/bin/node' '/opt/bat'\\''on/cli.js' 'check-result' '--stop-hook'",
                timeout: 120,
              },
            ],
          },
        ],
      },
    });
    assert.ok(edit.argv.includes('--include-hook-events'));
    assert.ok(!edit.argv.join(' ').includes('TOKEN'), 'the hook finds its attempt in the environment');
    assert.ok(!launch('claude-code', 'edit', { batonMcp }).argv.includes('--settings'), 'no hook asked: none');
  });

  it('only Claude Code gets a stop hook, and only while the run allows repair rounds', () => {
    const base = { executable: 'x', args: [], env: {}, continueSession: false };
    assert.equal(installsStopHook({ type: 'claude-code', ...base }, 2), true);
    assert.equal(installsStopHook({ type: 'claude-code', ...base }, 0), false);
    for (const type of ['codex', 'gemini', 'opencode'] as const)
      assert.equal(installsStopHook({ type, ...base }, 2), false, type);
    assert.equal(installsStopHook({ type: 'manual' }, 2), false);
  });

  it('baton mcp runs on this node, or on node from PATH inside the editor (Electron)', () => {
    assert.deepEqual(batonMcpServer('/x/cli.js', { execPath: '/usr/bin/node' }), {
      command: '/usr/bin/node',
      args: ['/x/cli.js', 'mcp'],
    });
    assert.equal(batonMcpServer('/x/cli.js', { execPath: '/opt/code/code', electron: '34.0.0' }).command, 'node');
  });
});
