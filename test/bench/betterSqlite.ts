import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';

/**
 * better-sqlite3, the native reference of the store benchmark's row 3, is not a dependency of Baton: npm would compile
 * it from source on every `npm ci` (minutes of a 2-core machine) for one row of a benchmark. It is loaded here when it
 * can be had: from node_modules (someone installed it), else from the bench's own folder under .cache/ (which `npm run
 * bench` fills on first use); when neither has it, row 3 says so instead of the run failing.
 */

/** v13 segfaults on Node 20 (as of 13.0): the benchmark pins 12. */
export const BETTER_SQLITE_SPEC = 'better-sqlite3@12';
/** Where `npm run bench` installs it: beside code-server, out of the project's node_modules. */
export const BENCH_DEPS_DIR = resolve(__dirname, '../../.cache/bench-deps');

export type BetterSqlite = typeof BetterSqlite3;
export type LoadedBetterSqlite = { Database: BetterSqlite; from: string } | { missing: string };

/**
 * better-sqlite3 from node_modules or from BENCH_DEPS_DIR; with `install`, installs it into BENCH_DEPS_DIR first when
 * neither has it (`npm install better-sqlite3@12`, which compiles it: a few minutes, once). Never throws: what could
 * not be had is `missing`, with the reason. `BATON_BENCH_BETTER_SQLITE=0` leaves it out.
 */
export function loadBetterSqlite(
  options: { install?: boolean; env?: NodeJS.ProcessEnv; log?: (line: string) => void; dir?: string } = {},
): LoadedBetterSqlite {
  const env = options.env ?? process.env;
  const dir = options.dir ?? BENCH_DEPS_DIR;
  if (env.BATON_BENCH_BETTER_SQLITE === '0') return { missing: 'left out (BATON_BENCH_BETTER_SQLITE=0)' };
  const fromProject = tryRequire('node_modules');
  if ('Database' in fromProject) return fromProject;
  // By its path: resolving the name from there would walk up into the project's own node_modules.
  const fromDir = (): LoadedBetterSqlite => tryRequire(dir, join(dir, 'node_modules', 'better-sqlite3'));
  const cached = fromDir();
  if ('Database' in cached || !options.install) {
    return 'Database' in cached
      ? cached
      : { missing: `not installed (\`npm run bench\` installs ${BETTER_SQLITE_SPEC} into .cache/bench-deps/)` };
  }
  options.log?.(`installing ${BETTER_SQLITE_SPEC} into ${dir} (once; npm compiles it, a few minutes)`);
  try {
    mkdirSync(dir, { recursive: true });
    const manifest = join(dir, 'package.json');
    // A package.json of its own, so that npm installs here and not into the project that holds .cache/.
    if (!existsSync(manifest))
      writeFileSync(manifest, `${JSON.stringify({ name: 'baton-bench-deps', private: true }, null, 2)}\n`);
    execFileSync(
      'npm',
      ['install', '--prefix', dir, '--no-save', '--no-package-lock', '--no-audit', '--no-fund', BETTER_SQLITE_SPEC],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20 * 60_000 },
    );
  } catch (err) {
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim().split('\n').slice(-3).join(' ');
    return { missing: `could not be installed (${stderr || (err as Error).message})` };
  }
  const installed = fromDir();
  return 'Database' in installed ? installed : { missing: `installed but would not load (${installed.missing})` };
}

function tryRequire(from: string, id = 'better-sqlite3'): LoadedBetterSqlite {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when it can be had
    const loaded = require(id) as BetterSqlite | { default: BetterSqlite };
    const Database = 'default' in loaded ? loaded.default : loaded;
    // The native part loads on the first open, not on require: open one now, so a broken build counts as missing.
    new Database(':memory:').close();
    return { Database, from };
  } catch (err) {
    return { missing: (err as Error).message.split('\n')[0]! };
  }
}
