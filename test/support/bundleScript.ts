import { buildSync } from 'esbuild';
import { mkdirSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';

const ROOT = resolve(__dirname, '../..');
const cache = new Map<string, string>();

/**
 * Bundles a TypeScript entry (a child process script for crash and race tests) into one
 * CommonJS file, so each child starts in plain Node in tens of milliseconds instead of
 * paying for a TypeScript loader on every spawn. A child runs sql.js on V8's baseline compiler
 * only, as the `baton` command does (src/cli/bin.ts): a short-lived process otherwise spends a
 * third of a second of CPU optimizing SQLite it then hardly runs.
 */
export function bundleScript(entry: string): string {
  const absolute = resolve(ROOT, entry);
  const cached = cache.get(absolute);
  if (cached) return cached;
  const outDir = join(ROOT, 'out', 'test-children');
  mkdirSync(outDir, { recursive: true });
  const outfile = join(outDir, `${absolute.replace(/[^A-Za-z0-9]+/g, '_')}.js`);
  // Written aside, then renamed over the bundle: the system tier's parallel files bundle the same children, and a child
  // spawned while another process rewrote its bundle in place read it truncated and exited at once, silently.
  const written = `${outfile}.${process.pid}.tmp`;
  buildSync({
    entryPoints: [absolute],
    outfile: written,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    mainFields: ['module', 'main'],
    // pg's optional libpq binding, never loaded (as in scripts/build.mjs).
    external: ['pg-native'],
    logLevel: 'error',
    banner: { js: `require('node:v8').setFlagsFromString('--liftoff-only');` },
  });
  renameSync(written, outfile);
  cache.set(absolute, outfile);
  return outfile;
}
