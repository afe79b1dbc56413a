// The four coding-agent CLIs Baton drives as workers (Claude Code, Codex, Gemini CLI,
// opencode), installed on demand into .cache/agents/<cli>-<version>/ with pinned versions —
// never a project dependency, so `npm install` stays plain. The real binaries are run by
// test/system/agents/ against a scripted model server on loopback (test/support/modelServer.ts).
// `node scripts/agentClis.mjs` installs all four and prints their versions.
// See docs/agent-clis.md.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const AGENTS_CACHE = join(ROOT, '.cache', 'agents');

/**
 * Pinned versions. Each package ships (or selects, through an optional dependency for the
 * platform) its own binary: Claude Code, Codex and opencode are native executables;
 * Gemini CLI is a bundled Node program (Node 20 or later).
 */
export const AGENT_CLIS = {
  claude: {
    package: '@anthropic-ai/claude-code',
    version: '2.1.332',
    bin: 'claude',
    // install.cjs copies the platform binary over the bin/claude.exe placeholder.
    allowScripts: { '@anthropic-ai/claude-code': true },
  },
  codex: { package: '@openai/codex', version: '0.171.0', bin: 'codex', allowScripts: {} },
  gemini: { package: '@google/gemini-cli', version: '0.61.0', bin: 'gemini', allowScripts: {} },
  opencode: {
    package: 'opencode-ai',
    version: '1.18.33',
    bin: 'opencode',
    // postinstall.mjs links the platform binary into bin/.
    allowScripts: { 'opencode-ai': true },
  },
};

export const AGENT_CLI_NAMES = Object.keys(AGENT_CLIS);

export function installDir(cli) {
  const spec = AGENT_CLIS[cli];
  if (!spec) throw new Error(`Unknown agent CLI "${cli}" (known: ${AGENT_CLI_NAMES.join(', ')}).`);
  return join(AGENTS_CACHE, `${cli}-${spec.version}`);
}

/** Where the binary is once installed (it may not be yet: see ensureAgentCli). */
export function agentCliPath(cli) {
  return join(installDir(cli), 'node_modules', '.bin', AGENT_CLIS[cli].bin);
}

export const CLAUDE_BIN = agentCliPath('claude');
export const CODEX_BIN = agentCliPath('codex');
export const GEMINI_BIN = agentCliPath('gemini');
export const OPENCODE_BIN = agentCliPath('opencode');

/** Installs one CLI once (first use only) and returns the path of its binary. */
export function ensureAgentCli(cli, log = (line) => process.stderr.write(`${line}\n`)) {
  const dir = installDir(cli);
  const bin = agentCliPath(cli);
  const marker = join(dir, '.installed');
  if (existsSync(marker) && existsSync(bin)) return bin;
  const spec = AGENT_CLIS[cli];
  log(`Installing ${spec.package}@${spec.version} into ${dir} (first use only)…`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: `baton-agent-${cli}`, private: true, allowScripts: spec.allowScripts }, null, 2)}\n`,
  );
  execFileSync(
    'npm',
    ['install', `${spec.package}@${spec.version}`, '--no-audit', '--no-fund', '--loglevel=error', '--save-exact'],
    {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
      // Install scripts run the CLI (opencode's postinstall runs `opencode --version`, which makes its
      // XDG folders): those land in the install folder, not in the home folder. npm keeps HOME (its config).
      env: {
        ...process.env,
        TMPDIR: join(dir, 'tmp'),
        XDG_CONFIG_HOME: join(dir, 'tmp', 'config'),
        XDG_DATA_HOME: join(dir, 'tmp', 'data'),
        XDG_CACHE_HOME: join(dir, 'tmp', 'cache'),
        XDG_STATE_HOME: join(dir, 'tmp', 'state'),
        npm_config_update_notifier: 'false',
      },
    },
  );
  if (!existsSync(bin)) throw new Error(`${spec.package} did not install its "${spec.bin}" binary into ${dir}.`);
  writeFileSync(marker, `${new Date().toISOString()}\n`);
  return bin;
}

export function ensureAllAgentClis(log) {
  return Object.fromEntries(AGENT_CLI_NAMES.map((cli) => [cli, ensureAgentCli(cli, log)]));
}

/**
 * The environment to run one CLI with, for tests: HOME and the XDG folders under `home` (a
 * temporary folder), so no config, session, log or credential lands in the real home folder;
 * every variable that could point a CLI at a real account or endpoint removed; and the switches
 * against phoning home (telemetry, auto-update, feedback) that each CLI reads from the
 * environment turned on. The switches that live in a CLI's config file (Codex, Gemini CLI) are
 * written by test/support/agentClis.ts. Provider settings (base URL, key) are added by the caller.
 */
export function isolatedEnv(cli, home, base = process.env) {
  const env = { ...base };
  for (const key of Object.keys(env)) {
    if (
      /^(ANTHROPIC|CLAUDE|CODEX|OPENAI|AZURE|GEMINI|GOOGLE|OPENCODE|VERTEX|AWS|BATON)_/.test(key) ||
      /^(CLOUD_SHELL|NODE_OPTIONS|HTTPS?_PROXY|ALL_PROXY|npm_.*)$/i.test(key)
    )
      delete env[key];
  }
  Object.assign(env, {
    HOME: home,
    USERPROFILE: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
    // Temporary files and sockets (Claude Code's /tmp/cc-socks/…) stay in the temporary home too.
    TMPDIR: join(home, 'tmp'),
    NO_COLOR: '1',
    // Generic opt-outs that several CLIs and their Node dependencies honour.
    DO_NOT_TRACK: '1',
    NO_UPDATE_NOTIFIER: '1',
    ...QUIET_ENV[cli],
  });
  mkdirSync(env.TMPDIR, { recursive: true });
  if (cli === 'claude') env.CLAUDE_CONFIG_DIR = join(home, '.claude');
  if (cli === 'codex') env.CODEX_HOME = join(home, '.codex');
  if (cli === 'gemini') env.GEMINI_CLI_HOME = home;
  return env;
}

/**
 * Per-CLI environment switches against phoning home, checked with strace (docs/agent-clis.md:
 * with them and the config files of test/support/agentClis.ts, a run resolves no host name).
 */
export const QUIET_ENV = {
  claude: {
    // Without it Claude Code 2.1 looks up api.anthropic.com (telemetry) even with ANTHROPIC_BASE_URL set.
    // It implies the four below; they are spelled out for older versions.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_BUG_COMMAND: '1',
  },
  // Codex: check_for_update_on_startup, [analytics], [feedback], [otel] and features in config.toml.
  codex: {},
  // Gemini CLI: general.enableAutoUpdate, privacy.usageStatisticsEnabled, telemetry in settings.json.
  gemini: {},
  opencode: {
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1', // models.dev
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    // Do not read ~/.claude and ~/.agents skills or CLAUDE.md (the temp home has none anyway).
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
    OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
    OPENCODE_DISABLE_TERMINAL_TITLE: '1',
  },
};

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const bins = ensureAllAgentClis();
  for (const [cli, bin] of Object.entries(bins)) {
    const version = execFileSync(bin, ['--version'], {
      encoding: 'utf8',
      env: isolatedEnv(cli, join(installDir(cli), 'tmp')),
      cwd: join(installDir(cli), 'tmp'),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 60_000,
    }).trim();
    process.stdout.write(`${cli}\t${AGENT_CLIS[cli].package}@${AGENT_CLIS[cli].version}\t${version}\t${bin}\n`);
  }
}
