import picomatch from 'picomatch';

/**
 * Could some path match both globs? Decided segment by segment without touching the disk:
 * two literal segments must be equal, a literal must match a wildcard segment, two
 * wildcard segments may both match something (assumed yes), and `**` may stand for any
 * number of segments. When unsure it answers yes: holding a task back is safe, running
 * two tasks on one file is not.
 */
export function globsOverlap(a: string, b: string): boolean {
  return segmentsOverlap(segments(a), segments(b));
}

/** The first pair (one glob of each list) that may name the same file, if any. */
export function firstOverlap(as: readonly string[], bs: readonly string[]): [string, string] | undefined {
  for (const a of as) for (const b of bs) if (globsOverlap(a, b)) return [a, b];
  return undefined;
}

function segments(glob: string): string[] {
  // A folder named without a wildcard means everything in it (files: [src/auth] is src/auth/**), hence prefixes
  // overlap.
  return glob
    .trim()
    .replace(/^\.\//, '')
    .split('/')
    .filter((s) => s !== '' && s !== '.');
}

function segmentsOverlap(a: string[], b: string[]): boolean {
  // One is a prefix of the other: a folder and something in it (or the same path).
  if (a.length === 0 || b.length === 0) return true;
  const [x, ...restA] = a;
  const [y, ...restB] = b;
  if (x === '**') return segmentsOverlap(restA, b) || segmentsOverlap(a, restB);
  if (y === '**') return segmentsOverlap(a, restB) || segmentsOverlap(restA, b);
  if (!segmentMayMatch(x!, y!)) return false;
  return segmentsOverlap(restA, restB);
}

function segmentMayMatch(x: string, y: string): boolean {
  const wildX = picomatch.scan(x).isGlob;
  const wildY = picomatch.scan(y).isGlob;
  if (!wildX && !wildY) return x === y;
  if (wildX && wildY) return true;
  return wildX ? picomatch.isMatch(y, x, { dot: true }) : picomatch.isMatch(x, y, { dot: true });
}

/**
 * The changed paths (workspace-relative, `/`-separated) that no glob of a `files:`
 * declaration covers, in their order. A glob covers a path when it matches the path or one
 * of its folders — the rule the overlap check uses (`files: [src/auth]` is everything in
 * src/auth). A path outside the workspace (`../x`) is never covered.
 */
export function outsideDeclaration(paths: readonly string[], globs: readonly string[]): string[] {
  return paths.filter((path) => !globs.some((glob) => covers(glob, path)));
}

function covers(glob: string, path: string): boolean {
  const parts = segments(path);
  if (parts.length === 0 || parts[0] === '..') return false;
  const pattern = segments(glob).join('/');
  for (let n = parts.length; n >= 1; n--) {
    if (picomatch.isMatch(parts.slice(0, n).join('/'), pattern, { dot: true })) return true;
  }
  return false;
}
