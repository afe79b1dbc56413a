import * as path from 'node:path';

/**
 * The path rules for the `artifacts` of a result (docs/result-contract.md) that need no file
 * system: each entry is a normalized, workspace-relative POSIX path. One problem at most per
 * entry: the first rule it breaks, in the order below.
 */

export const MAX_ARTIFACT_PATH_LENGTH = 1024;

const DRIVE_LETTER = /^[A-Za-z]:/;

export interface PathProblem {
  code: string;
  message: string;
  recommendation: string;
}

/**
 * The first rule a path breaks of those that need no file system, in the order they are
 * reported; undefined when it breaks none (whether it exists, inside the workspace, is
 * checkArtifactPaths's look at the disk).
 */
export function artifactPathProblem(p: string): PathProblem | undefined {
  const relativeHint = 'Write a path relative to the workspace root with "/" separators, e.g. src/notes.ts.';
  if (p.length === 0)
    return {
      code: 'result.artifact-invalid-path',
      message: 'The artifact path is empty.',
      recommendation: relativeHint,
    };
  if (p.includes('\0'))
    return {
      code: 'result.artifact-invalid-path',
      message: 'The artifact path contains a NUL character.',
      recommendation: relativeHint,
    };
  if (p.length > MAX_ARTIFACT_PATH_LENGTH) {
    return {
      code: 'result.artifact-invalid-path',
      message: `The artifact path is ${p.length} characters long; the limit is ${MAX_ARTIFACT_PATH_LENGTH}.`,
      recommendation: 'Report a shorter path (a folder, or an index file that lists the others).',
    };
  }
  if (DRIVE_LETTER.test(p))
    return {
      code: 'result.artifact-invalid-path',
      message: `"${shorten(p)}" starts with a drive letter.`,
      recommendation: relativeHint,
    };
  if (p.startsWith('/') || p.startsWith('\\') || path.isAbsolute(p) || path.win32.isAbsolute(p)) {
    return {
      code: 'result.artifact-absolute',
      message: `"${shorten(p)}" is an absolute path.`,
      recommendation: relativeHint,
    };
  }
  const segments = p.split('/');
  const normalized = path.posix.normalize(p);
  if (normalized === '..' || normalized.startsWith('../')) {
    return {
      code: 'result.artifact-outside-workspace',
      message: `"${shorten(p)}" climbs out of the workspace with "..".`,
      recommendation: 'List only files inside the workspace.',
    };
  }
  if (p.includes('\\')) {
    return {
      code: 'result.artifact-not-normalized',
      message: `"${shorten(p)}" contains a backslash.`,
      recommendation: `Use "/" as the separator: ${shorten(p.replace(/\\/g, '/'))}.`,
    };
  }
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    const suggestion = normalized.replace(/\/+$/, '');
    return {
      code: 'result.artifact-not-normalized',
      message: `"${shorten(p)}" is not a normalized path (it has ${describeSegments(segments)}).`,
      recommendation:
        suggestion && suggestion !== '.' && suggestion !== p ? `Write ${shorten(suggestion)}.` : relativeHint,
    };
  }
  return undefined;
}

function describeSegments(segments: string[]): string {
  if (segments.includes('..')) return 'a ".." segment';
  if (segments.includes('.')) return 'a "." segment';
  if (segments[segments.length - 1] === '' && segments.length > 1) return 'a trailing slash';
  return 'an empty segment';
}

function shorten(p: string): string {
  return p.length > 120 ? `${p.slice(0, 117)}…` : p;
}
