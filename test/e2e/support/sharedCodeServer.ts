// One code-server for a whole e2e run (issue #28): started on first use, with Baton installed
// and the test user settings, and stopped after the run's last test. Each suite opens its own
// window on it (openBatonEditor): its own copy of a workspace (so its own workspace storage),
// its own browser (so its own browser storage: VS Code's global and workspace state of a web
// window live there), its own extension host with its own environment (windowEnv.ts), and its
// settings in the copy's .vscode/settings.json. A suite that must test what happens when
// code-server starts (trust, `npm start`) or whose variables Baton reads while it activates
// starts its own: see test/README.md, "One code-server for the e2e run".
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startBatonCodeServer, type BatonCodeServer } from './codeServer';
import { installWindowEnvExtension } from './windowEnv';

let shared: Promise<BatonCodeServer> | undefined;
let running: { server: BatonCodeServer; dir: string } | undefined;

/** The run's shared code-server, started on the first call (and again should it have ended meanwhile). */
export function sharedCodeServer(): Promise<BatonCodeServer> {
  if (running && (running.server.process.exitCode !== null || running.server.process.signalCode !== null)) {
    process.stderr.write(
      `The shared code-server ended (its log ends with:\n${running.server.logTail()}\n); starting another.\n`,
    );
    rmSync(running.dir, { recursive: true, force: true });
    running = undefined;
    shared = undefined;
  }
  shared ??= start().catch((err: unknown) => {
    shared = undefined;
    throw err;
  });
  return shared;
}

async function start(): Promise<BatonCodeServer> {
  const dir = mkdtempSync(join(tmpdir(), 'baton-code-server-shared-'));
  const extensionsDir = join(dir, 'extensions');
  installWindowEnvExtension(extensionsDir);
  let server: BatonCodeServer;
  try {
    server = await startBatonCodeServer({ userDataDir: join(dir, 'user-data'), extensionsDir });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  // It must not keep a test process alive by itself (mocha without --exit waits for open handles):
  // the root hook below stops it, and the exit handler kills it should the hook not run.
  server.process.unref();
  for (const stream of [server.process.stdout, server.process.stderr]) (stream as { unref?(): void } | null)?.unref?.();
  running = { server, dir };
  return server;
}

/** Stops the shared code-server, if one was started, and removes its folders. */
export async function stopSharedCodeServer(): Promise<void> {
  await shared?.catch(() => undefined);
  const stopping = running;
  shared = undefined;
  running = undefined;
  await stopping?.server.stop();
  if (stopping) rmSync(stopping.dir, { recursive: true, force: true, maxRetries: 5 });
}

// Whatever ends the process (a failed hook, Ctrl-C, an uncaught error): no code-server is left behind.
process.on('exit', () => {
  if (!running) return;
  try {
    process.kill(-running.server.process.pid!, 'SIGKILL');
  } catch {
    // gone
  }
  rmSync(running.dir, { recursive: true, force: true });
});

// Inside mocha, a hook at a module's top level belongs to the root suite: it runs once, after the
// last test of the run, however many files import this module.
if (typeof after === 'function') {
  after('stop the shared code-server', async function () {
    this.timeout(60_000);
    await stopSharedCodeServer();
  });
}
