import { accessSync, constants, existsSync, statfsSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { isAgentKind, type AgentKind } from '../domain/agents/agentActivity';
import type { BatonConfig, WorkerDefinition } from '../domain/config';
import { BUILTIN_WORKERS } from '../domain/config';
import { formatIssue, hasErrors, type Issue } from '../domain/issue';
import { findGit } from '../effects/git/git';
import { loadExeca } from '../effects/processes/execa';
import { pidNamespaceLauncher } from '../effects/processes/pidNamespace';
import { BATON_DIR, configPathOf } from '../effects/workspaceLayout';

/** One check of `baton doctor`: `fail` blocks a run, `warn` may, `ok` does not. */
export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

/** Node version Baton needs (package.json engines). */
const NODE_MIN = [20, 19] as const;
const DISK_WARN_BYTES = 1024 ** 3;
const DISK_FAIL_BYTES = 100 * 1024 ** 2;

/**
 * The credentials each agent CLI can use: an environment variable, or a login the CLI keeps
 * in its own home. Only whether one is present is reported — never a value.
 */
const CREDENTIALS: Readonly<Record<AgentKind, { env: string[]; login: string[] }>> = {
  'claude-code': {
    env: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
    login: ['.claude/.credentials.json', '.claude.json'],
  },
  codex: { env: ['OPENAI_API_KEY', 'CODEX_API_KEY'], login: ['.codex/auth.json'] },
  gemini: {
    env: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS'],
    login: ['.gemini/oauth_creds.json'],
  },
  opencode: {
    env: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
    login: ['.local/share/opencode/auth.json'],
  },
};

/**
 * Everything a run needs before it starts (docs/cli.md, `baton doctor`): Node and git, the
 * config, each worker a run could use — its executable, its version, whether it has
 * credentials — the store and its recovery notices, free disk and writable folders. It
 * changes nothing and starts only the workers' own `--version`.
 */
export async function runDoctor(input: {
  workspace: string;
  config: BatonConfig;
  configIssues: readonly Issue[];
  /** The workers a plan's tasks name: missing ones fail; other defined workers only warn. */
  planWorkers?: readonly string[];
  /** Opens the store if there is one: its recovery notices, or why it does not open. */
  store: () => Promise<{ exists: boolean; notices: readonly string[]; error?: string; detail?: string }>;
  env?: NodeJS.ProcessEnv;
}): Promise<DoctorCheck[]> {
  const env = input.env ?? process.env;
  const checks: DoctorCheck[] = [];
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const nodeOk = major > NODE_MIN[0] || (major === NODE_MIN[0] && minor >= NODE_MIN[1]);
  checks.push({
    name: 'node',
    status: nodeOk ? 'ok' : 'fail',
    detail: nodeOk ? `Node ${process.version}` : `Node ${process.version}; Baton needs ${NODE_MIN.join('.')} or later`,
  });
  const git = await findGit();
  checks.push(
    git
      ? { name: 'git', status: 'ok', detail: `git ${git}` }
      : {
          name: 'git',
          status: 'warn',
          detail: 'git is not on PATH: tasks run in the shared working tree, never in worktrees',
        },
  );
  checks.push(processIdentityCheck());
  const configPath = configPathOf(input.workspace);
  const errors = input.configIssues.filter((i) => i.severity === 'error');
  checks.push(
    hasErrors(input.configIssues)
      ? {
          name: 'config',
          status: 'fail',
          detail: errors.map((i) => formatIssue({ ...i, file: configPath })).join('\n'),
        }
      : {
          name: 'config',
          status: input.configIssues.length ? 'warn' : 'ok',
          detail: existsSync(configPath)
            ? input.configIssues.length
              ? input.configIssues.map((i) => formatIssue({ ...i, file: configPath })).join('\n')
              : `${configPath} is valid`
            : 'no .baton/config.json: the defaults apply',
        },
  );
  const required = new Set(input.planWorkers ?? [input.config.defaultWorker]);
  for (const [id, worker] of workersInUse(input.config, required)) {
    checks.push(...(await checkWorker(id, worker, required.has(id), input.workspace, env)));
  }
  const store = await input.store();
  if (store.error) checks.push({ name: 'store', status: 'fail', detail: store.error });
  else if (!store.exists)
    checks.push({ name: 'store', status: 'ok', detail: 'no store yet: the first run creates it' });
  else if (store.notices.length) checks.push({ name: 'store', status: 'warn', detail: store.notices.join('\n') });
  else checks.push({ name: 'store', status: 'ok', detail: store.detail ?? 'the store opens cleanly' });
  checks.push(diskCheck(input.workspace), writableCheck(input.workspace));
  return checks;
}

/** The workers a run could use: the required ones (the plan's, or the default) and every defined one. */
/** The npm package each agent preset's CLI installs from (the versions Baton is tested with: docs/agent-clis.md). */
const AGENT_CLI_PACKAGES: Readonly<Record<AgentKind, string>> = {
  'claude-code': '@anthropic-ai/claude-code',
  codex: '@openai/codex',
  gemini: '@google/gemini-cli',
  opencode: 'opencode-ai',
};

function workersInUse(config: BatonConfig, required: ReadonlySet<string>): Array<[string, WorkerDefinition]> {
  const ids = new Set([...required, ...Object.keys(config.workers)]);
  return [...ids].flatMap((id): Array<[string, WorkerDefinition]> => {
    const worker = config.workers[id] ?? BUILTIN_WORKERS[id];
    return worker ? [[id, worker]] : [];
  });
}

/** Whether workers get a PID namespace of their own here, the identity a worker cannot change (docs/workers.md). */
function processIdentityCheck(): DoctorCheck {
  const launcher = pidNamespaceLauncher();
  if ('argv' in launcher)
    return {
      name: 'process identity',
      status: 'ok',
      detail: `workers run in a PID namespace of their own (unshare --pid${launcher.user ? ', in a user namespace' : ''})`,
    };
  return {
    name: 'process identity',
    status: 'warn',
    detail: `no PID namespace for workers (${launcher.unavailable}): their processes are found by their marker, which a daemon that clears its environment and resets its limits escapes (docs/workers.md, "Process identity")`,
  };
}

async function checkWorker(
  id: string,
  worker: WorkerDefinition,
  required: boolean,
  workspace: string,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck[]> {
  const name = `worker ${id}`;
  if (worker.type === 'manual') return [{ name, status: 'ok', detail: 'a person (manual hand-off): nothing to start' }];
  const executable = worker.type === 'process' ? worker.command : worker.executable;
  const found = findExecutable(executable, workspace, env);
  if (!found) {
    const pkg = AGENT_CLI_PACKAGES[worker.type as AgentKind];
    const install = pkg
      ? ` (install it: npm install -g ${pkg}; or set "executable" in .baton/config.json)`
      : worker.type === 'process'
        ? ''
        : ` (install the ${worker.type} CLI, or set "executable" in .baton/config.json)`;
    const where = `${executable} is not found${isAbsolute(executable) ? '' : ' on PATH'}`;
    return [
      required
        ? { name, status: 'fail', detail: `${where}: tasks that use this worker cannot start${install}` }
        : {
            name,
            status: 'warn',
            detail: `${where}: no task of the plan needs it now, but one that names it cannot start${install}`,
          },
    ];
  }
  const checks: DoctorCheck[] = [];
  const version = worker.type === 'process' ? undefined : await versionOf(found, env);
  checks.push({ name, status: 'ok', detail: `${found}${version ? ` — ${version}` : ''}` });
  const kind = isAgentKind(worker.type) ? worker.type : undefined;
  if (kind) {
    const { env: vars, login } = CREDENTIALS[kind];
    const configured = { ...env, ...worker.env };
    const present = vars.filter((v) => Boolean(configured[v]));
    const home = env.HOME ?? '';
    const logins = login.filter((path) => home && existsSync(join(home, path)));
    checks.push(
      present.length || logins.length
        ? {
            name: `${name} credentials`,
            status: 'ok',
            detail: present.length ? `${present.join(', ')} set` : `a login in ~/${logins[0]}`,
          }
        : {
            name: `${name} credentials`,
            status: 'warn',
            detail: `none found (${vars.join(', ')} or a login in ~/${login[0]}): the CLI may refuse to run`,
          },
    );
  }
  return checks;
}

/** Where a command would be found: a path (relative to the workspace), or the first match on PATH. */
export function findExecutable(
  command: string,
  workspace: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const runnable = (path: string): boolean => {
    try {
      accessSync(path, constants.X_OK);
      return statSync(path).isFile();
    } catch {
      return false;
    }
  };
  if (command.includes('/')) {
    const path = isAbsolute(command) ? command : join(workspace, command);
    return runnable(path) ? path : undefined;
  }
  for (const dir of (env.PATH ?? '').split(delimiter).filter(Boolean)) {
    const path = join(dir, command);
    if (runnable(path)) return path;
  }
  return undefined;
}

async function versionOf(executable: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const { execa } = await loadExeca();
  const result = await execa(executable, ['--version'], { reject: false, timeout: 15_000, env, stdin: 'ignore' });
  const line = `${result.stdout ?? ''}`.split('\n').find((l) => l.trim());
  return result.exitCode === 0 && line ? line.trim().slice(0, 120) : undefined;
}

function diskCheck(workspace: string): DoctorCheck {
  try {
    const fs = statfsSync(workspace);
    const free = fs.bavail * fs.bsize;
    const shown = `${(free / 1024 ** 3).toFixed(1)} GiB free`;
    if (free < DISK_FAIL_BYTES)
      return { name: 'disk', status: 'fail', detail: `${shown}: too little for logs and worktrees` };
    if (free < DISK_WARN_BYTES)
      return { name: 'disk', status: 'warn', detail: `${shown}: logs and worktrees may fill it` };
    return { name: 'disk', status: 'ok', detail: shown };
  } catch (err) {
    return { name: 'disk', status: 'warn', detail: `free space unknown: ${(err as Error).message}` };
  }
}

function writableCheck(workspace: string): DoctorCheck {
  const target = existsSync(join(workspace, BATON_DIR)) ? join(workspace, BATON_DIR) : workspace;
  try {
    accessSync(target, constants.W_OK);
    return { name: 'writable', status: 'ok', detail: `${target} is writable` };
  } catch {
    return {
      name: 'writable',
      status: 'fail',
      detail: `${target} is not writable: Baton cannot keep its store or logs`,
    };
  }
}
