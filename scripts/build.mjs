// Bundles the extension, the CLI and the dashboard webview. The sql.js wasm is copied next to the bundles and
// loaded from disk with `wasmBinary`, so nothing is fetched at run time.
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  // Small bundles load faster (activation); names stay readable in stack traces.
  minify: true,
  keepNames: true,
  logLevel: 'warning',
  // sql.js probes for these only in browsers; they never load under Node. pg-native: pg's optional
  // libpq binding, loaded only when asked for (`pg.native`), which Baton never does.
  external: ['vscode', 'pg-native'],
  // Prefer ES module builds: jsonc-parser's UMD build hides its requires from the bundler.
  mainFields: ['module', 'main'],
};

mkdirSync('dist', { recursive: true });
copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), 'dist/sql-wasm.wasm');

const targets = [
  { ...common, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js' },
  // The CLI: its program (dist/baton-cli.js) and the `baton` command that runs it from V8's code cache
  // (src/cli/bin.ts; the cache is written below, once both are built).
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/baton-cli.js' },
  { ...common, entryPoints: ['src/cli/bin.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  // The lease watchdog, started beside every attempt on a shared store: a program of its own, without the CLI.
  { ...common, entryPoints: ['src/cli/watchdog.ts'], outfile: 'dist/baton-watchdog.js' },
  // The dashboard webview: a browser bundle of its own (docs/extension.md, "Dashboard").
  {
    bundle: true,
    platform: 'browser',
    target: 'es2022',
    format: 'iife',
    sourcemap: true,
    minify: true,
    logLevel: 'warning',
    entryPoints: ['webview-ui/src/main.ts'],
    outfile: 'dist/webview/dashboard.js',
  },
];

if (watch) {
  const { context } = await import('esbuild');
  for (const t of targets) await (await context(t)).watch();
} else {
  await Promise.all(targets.map((t) => build(t)));
  chmodSync('dist/cli.js', 0o755);
  writeCliCodeCache();
}

/**
 * Runs one command (`baton status` in an empty folder: the program's start, the engine's opening) so that
 * dist/cli.js writes V8's code cache of what it compiled, for this Node. Without it the CLI works the same,
 * only its start is slower (docs/architecture.md, "How the CLI starts").
 */
function writeCliCodeCache() {
  rmSync('dist/baton-cli.js.cache', { force: true });
  const empty = mkdtempSync(join(tmpdir(), 'baton-build-'));
  try {
    execFileSync(process.execPath, ['dist/cli.js', 'status', '--workspace', empty], {
      env: { ...process.env, BATON_WRITE_CODE_CACHE: '1' },
      stdio: 'ignore',
    });
  } finally {
    rmSync(empty, { recursive: true, force: true });
  }
}
