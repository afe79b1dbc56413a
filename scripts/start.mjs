// `npm start`: Baton in a real VS Code, in your browser. Builds the extension, sets up
// code-server on first use (cached in .cache/), installs Baton into it, opens a fresh copy
// of the demo workspace and prints the address. Ctrl-C stops it.
//
// Workspace trust: this server opens one folder only, the fresh copy of Baton's own demo
// made below, so it opens it trusted (code-server's --disable-workspace-trust, for this
// server only) and ▶ Start Run works at once. Any other folder goes through VS Code's own
// trust prompt; in Restricted Mode Baton starts nothing and offers the trust editor
// (docs/extension.md, "Workspace trust").
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CACHE, ROOT, startCodeServer } from './codeServer.mjs';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));

/**
 * Installs the built extension into `home`, copies the demo and starts code-server on it.
 * Needs `npm run build` first. The end-to-end suite calls this too, so the README's first
 * step is tested as it is.
 */
export async function startDemo({ port = 0, home = join(CACHE, 'start'), env = {} } = {}) {
  const extensionsDir = join(home, 'extensions');
  const userDataDir = join(home, 'user-data');
  const installed = join(extensionsDir, `${pkg.publisher}.${pkg.name}-${pkg.version}`);
  rmSync(installed, { recursive: true, force: true });
  mkdirSync(installed, { recursive: true });
  for (const part of ['package.json', 'README.md', 'dist', 'media', 'schemas'])
    cpSync(join(ROOT, part), join(installed, part), { recursive: true });
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  writeFileSync(
    join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ 'workbench.startupEditor': 'none', 'telemetry.telemetryLevel': 'off' }, null, 2),
  );
  const workspace = join(mkdtempSync(join(tmpdir(), 'baton-demo-')), 'demo');
  cpSync(join(ROOT, 'examples', 'demo'), workspace, {
    recursive: true,
    filter: (src) => !/[/\\]\.baton[/\\](store|runs)/.test(src),
  });
  const server = await startCodeServer({ folder: workspace, extensionsDir, userDataDir, port, trust: false, env });
  return { server, workspace, url: `${server.url}/?folder=${encodeURIComponent(workspace)}` };
}

async function main() {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const { server, workspace, url } = await startDemo({ port: Number(process.env.PORT || 8080) });
  process.stdout.write(
    [
      '',
      `Baton ${pkg.version} is running in code-server (VS Code 1.99) at:`,
      '',
      `    ${url}`,
      '',
      `Workspace: a fresh copy of examples/demo in ${workspace} (opened trusted: it is Baton's own demo)`,
      'Open the Baton view in the activity bar and press ▶ (Start Run). Ctrl-C stops the server.',
      '',
    ].join('\n'),
  );
  const stop = async () => {
    await server.stop();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

// No top-level await: the end-to-end suite loads this module from CommonJS.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`${err?.message ?? err}\n`);
    process.exit(1);
  });
}
