// The `baton` command (dist/cli.js). It runs the CLI's bundle (dist/baton-cli.js) from V8's code cache
// when the build left one for exactly that bundle: compiling 1.5 MB of JavaScript is a third of a
// command's start, and workers run `baton heartbeat` often (docs/architecture.md, "How the CLI starts").
// A cache that does not match — another bundle, another Node — is ignored, and the bundle compiles
// as usual. Nothing here writes a file, except for the build that asks for the cache.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire, wrap } from 'node:module';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { Script, constants } from 'node:vm';

// The store's SQLite is WebAssembly (sql.js). By default V8 also compiles its hot functions again with its optimizing
// compiler, on background threads, as a command opens the store: CPU a command that lives half a second pays for
// and never gets back (`baton status` on a workspace with a run: about 1 s of CPU instead of 0.45 s). A command
// runs sql.js on V8's baseline compiler only. Set before anything compiles, so the build's code cache is made
// under the same flags (V8 rejects a cache made under others). docs/architecture.md, "How the CLI starts".
setFlagsFromString('--liftoff-only');

const BUNDLE = join(__dirname, 'baton-cli.js');
const CACHE = `${BUNDLE}.cache`;
/** The cache file: the bundle's sha256, then V8's code cache for it. */
const DIGEST_BYTES = 32;

const source = readFileSync(BUNDLE, 'utf8');
const digest = createHash('sha256').update(source).digest();
const script = new Script(wrap(source), {
  filename: BUNDLE,
  cachedData: cacheFor(digest),
  importModuleDynamically: constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
});
const bundle: { exports: { runAsProgram?: () => void } } = { exports: {} };
(script.runInThisContext() as (...args: unknown[]) => void).call(
  bundle.exports,
  bundle.exports,
  createRequire(BUNDLE),
  bundle,
  BUNDLE,
  __dirname,
);
if (process.env.BATON_WRITE_CODE_CACHE === '1') {
  // After the command ran: the cache then holds the functions it compiled on the way, not only the top level.
  process.once('exit', () => writeFileSync(CACHE, Buffer.concat([digest, script.createCachedData()])));
}
bundle.exports.runAsProgram!();

function cacheFor(expected: Buffer): Buffer | undefined {
  let file: Buffer;
  try {
    file = readFileSync(CACHE);
  } catch {
    return undefined;
  }
  return file.subarray(0, DIGEST_BYTES).equals(expected) ? file.subarray(DIGEST_BYTES) : undefined;
}
