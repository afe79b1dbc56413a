// code-server, installed on demand into .cache/ (never a dependency, so `npm install` stays
// plain): a real VS Code 1.99 extension host that runs on Node 20, used by the integration
// and end-to-end tests and by `npm start`. See docs/extension.md, "Testing in a real editor".
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_SERVER_VERSION = '4.99.4';
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CACHE = join(ROOT, '.cache');
const INSTALL_DIR = join(CACHE, `code-server-${CODE_SERVER_VERSION}`);
const MARKER = join(INSTALL_DIR, '.installed');
export const CODE_SERVER_BIN = join(INSTALL_DIR, 'node_modules', '.bin', 'code-server');

/**
 * Installs code-server once. Its postinstall builds native modules (needs Debian's
 * libkrb5-dev), calls npx (npm_config_yes), refuses to run as root without
 * npm_config_unsafe_perm, and would download ripgrep from GitHub unless the tarball is
 * already in its cache: we put Debian's `rg` there.
 */
export function ensureCodeServer(log = (line) => process.stderr.write(`${line}\n`)) {
  if (installed()) return CODE_SERVER_BIN;
  // .ci/run installs it in the background while the first tiers run; a tier that needs it meanwhile waits here.
  const release = takeInstallLock(log);
  try {
    if (installed()) return CODE_SERVER_BIN;
    return install(log);
  } finally {
    release();
  }
}

const installed = () => existsSync(MARKER) && existsSync(CODE_SERVER_BIN);
const INSTALL_LOCK = `${INSTALL_DIR}.lock`;

/**
 * One installer at a time: the lock is a folder (mkdir is atomic) holding its owner's pid; a
 * lock whose owner is gone is taken over. Returns its release.
 */
function takeInstallLock(log) {
  mkdirSync(CACHE, { recursive: true });
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let told = false; ;) {
    try {
      mkdirSync(INSTALL_LOCK);
      writeFileSync(join(INSTALL_LOCK, 'pid'), `${process.pid}\n`);
      return () => rmSync(INSTALL_LOCK, { recursive: true, force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    const owner = lockOwner();
    if (owner !== undefined && !isAlive(owner)) {
      rmSync(INSTALL_LOCK, { recursive: true, force: true });
      continue;
    }
    if (!told) log(`Waiting for the code-server install of another process (pid ${owner ?? '?'})…`);
    told = true;
    Atomics.wait(pause, 0, 0, 500);
  }
}

function lockOwner() {
  try {
    return Number(readFileSync(join(INSTALL_LOCK, 'pid'), 'utf8')) || undefined;
  } catch {
    return undefined; // just made, its pid not written yet
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

function install(log) {
  log(`Installing code-server ${CODE_SERVER_VERSION} into ${INSTALL_DIR} (first use only)…`);
  rmSync(INSTALL_DIR, { recursive: true, force: true });
  const tmp = join(INSTALL_DIR, 'tmp');
  const ripgrepCache = join(tmp, 'vscode-ripgrep-cache-1.15.11');
  mkdirSync(ripgrepCache, { recursive: true });
  const rg = which('rg');
  if (!rg) throw new Error('code-server needs ripgrep: install Debian\'s "ripgrep" package (apt-get install ripgrep).');
  const staging = join(tmp, 'rg-staging');
  mkdirSync(staging, { recursive: true });
  execFileSync('cp', [rg, join(staging, 'rg')]);
  execFileSync('tar', [
    '-czf',
    join(ripgrepCache, 'ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz'),
    '-C',
    staging,
    'rg',
  ]);
  writeFileSync(
    join(INSTALL_DIR, 'package.json'),
    `${JSON.stringify({ name: 'baton-code-server', private: true, allowScripts: { 'code-server': true, argon2: true } }, null, 2)}\n`,
  );
  execFileSync(
    'npm',
    ['install', `code-server@${CODE_SERVER_VERSION}`, '--no-audit', '--no-fund', '--loglevel=error'],
    {
      cwd: INSTALL_DIR,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, TMPDIR: tmp, npm_config_yes: 'true', npm_config_unsafe_perm: 'true' },
    },
  );
  if (!existsSync(CODE_SERVER_BIN)) throw new Error(`code-server did not install into ${INSTALL_DIR}.`);
  writeFileSync(MARKER, `${new Date().toISOString()}\n`);
  return CODE_SERVER_BIN;
}

function which(command) {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts code-server on a free local port. Resolves once it listens; `lines` collects its
 * log (it says "Extension Host Process exited with code: N" when an extension host ends;
 * after extension tests N is 0 even when they failed: the workbench reports the run's
 * code to window.codeAutomationExit instead, see test/support/codeServerLauncher.ts).
 * `env` adds variables for code-server and so for its extension host.
 */
export function startCodeServer({
  folder,
  extensionsDir,
  userDataDir,
  port = 0,
  trust = false,
  extraArgs = [],
  env: extraEnv = {},
  onLine,
} = {}) {
  const bin = ensureCodeServer();
  mkdirSync(extensionsDir, { recursive: true });
  mkdirSync(userDataDir, { recursive: true });
  const args = [
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--auth',
    'none',
    '--extensions-dir',
    extensionsDir,
    '--user-data-dir',
    userDataDir,
    '--disable-telemetry',
    '--disable-update-check',
    ...(trust ? [] : ['--disable-workspace-trust']),
    ...extraArgs,
    ...(folder ? [folder] : []),
  ];
  // Its config file, its logs and VS Code's device id (~/.cache/Microsoft/DeveloperTools)
  // go to the user data folder, not to the home folder.
  // Extra variables reach the extension host too (it inherits code-server's environment).
  const env = {
    ...process.env,
    ...extraEnv,
    XDG_CONFIG_HOME: join(userDataDir, 'config'),
    XDG_DATA_HOME: join(userDataDir, 'data'),
    XDG_CACHE_HOME: join(userDataDir, 'cache'),
  };
  delete env.NODE_OPTIONS;
  for (const [key, value] of Object.entries(env)) if (value === undefined) delete env[key];
  const child = spawn(bin, args, { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const lines = [];
  let buffered = '';
  const onData = (chunk) => {
    buffered += chunk.toString();
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      lines.push(line);
      onLine?.(line);
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`code-server did not start:\n${lines.join('\n')}`)), 60_000);
    const check = (line) => {
      const match = /HTTP server listening on (http:\/\/[^\s]+)/.exec(line);
      if (!match) return;
      clearTimeout(timer);
      resolvePromise({
        url: match[1].replace(/\/$/, ''),
        child,
        lines,
        stop: () => stopProcessGroup(child),
      });
    };
    const previous = onLine;
    onLine = (line) => {
      previous?.(line);
      check(line);
    };
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`code-server exited with ${code}:\n${lines.join('\n')}`));
    });
  });
}

export function stopProcessGroup(child) {
  return new Promise((resolvePromise) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolvePromise();
    child.once('exit', () => resolvePromise());
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
    setTimeout(() => {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }, 3000).unref();
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${ensureCodeServer()}\n`);
}
