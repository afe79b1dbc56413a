// `npm start`: Baton in a real VS Code, in your browser. Builds the extension, sets up
// code-server on first use (cached in .cache/), installs Baton into it, opens a fresh copy
// of the demo workspace and prints the address. Ctrl-C stops it.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CACHE, ROOT, startCodeServer } from './codeServer.mjs';

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const port = Number(process.env.PORT || 8080);

execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });

const home = join(CACHE, 'start');
const extensionsDir = join(home, 'extensions');
const userDataDir = join(home, 'user-data');
const installed = join(extensionsDir, `${pkg.publisher}.${pkg.name}-${pkg.version}`);
rmSync(installed, { recursive: true, force: true });
mkdirSync(installed, { recursive: true });
for (const part of ['package.json', 'README.md', 'dist', 'media', 'schemas']) cpSync(join(ROOT, part), join(installed, part), { recursive: true });
mkdirSync(join(userDataDir, 'User'), { recursive: true });
writeFileSync(
  join(userDataDir, 'User', 'settings.json'),
  JSON.stringify({ 'workbench.startupEditor': 'none', 'security.workspace.trust.startupPrompt': 'never', 'telemetry.telemetryLevel': 'off' }, null, 2),
);

const workspace = join(mkdtempSync(join(tmpdir(), 'baton-demo-')), 'demo');
cpSync(join(ROOT, 'examples', 'demo'), workspace, { recursive: true, filter: (src) => !/[/\\]\.baton[/\\](store|runs)/.test(src) });

const server = await startCodeServer({ folder: workspace, extensionsDir, userDataDir, port, trust: true });
const url = `${server.url}/?folder=${encodeURIComponent(workspace)}`;
process.stdout.write(
  [
    '',
    `Baton ${pkg.version} is running in code-server (VS Code ${'1.99'}) at:`,
    '',
    `    ${url}`,
    '',
    `Workspace: a fresh copy of examples/demo in ${workspace}`,
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
