import * as fs from 'node:fs';
import * as path from 'node:path';
import { issue } from '../domain/issue';
import type { Issue, Range } from '../domain/issue';
import type { ParsedResult } from '../domain/result/parseResult';

/**
 * The path rules for the `artifacts` of a result (docs/result-contract.md): each
 * entry is a normalized, workspace-relative POSIX path to something that exists
 * inside the workspace, also after symlinks are resolved. One issue at most per
 * entry: the first rule it breaks, in the order below.
 */

export const MAX_ARTIFACT_PATH_LENGTH = 1024;

const DRIVE_LETTER = /^[A-Za-z]:/;

export function checkArtifactPaths(
  workspaceRoot: string,
  result: Pick<ParsedResult, 'artifacts' | 'artifactRanges'>,
): Issue[] {
  const issues: Issue[] = [];
  let realRoot: string | undefined;
  let rootError: string | undefined;
  try {
    realRoot = fs.realpathSync.native(path.resolve(workspaceRoot));
  } catch (error) {
    rootError = error instanceof Error ? error.message : String(error);
  }
  result.artifacts.forEach((artifact, index) => {
    const range = result.artifactRanges[index];
    const problem = lexicalProblem(artifact);
    if (problem) {
      issues.push(at(problem.code, problem.message, problem.recommendation, range));
      return;
    }
    if (realRoot === undefined) {
      issues.push(
        at(
          'result.artifact-missing',
          `"${artifact}" cannot be checked: the workspace folder cannot be read (${rootError ?? 'unknown error'}).`,
          'Open the workspace folder the run belongs to.',
          range,
        ),
      );
      return;
    }
    let realTarget: string;
    try {
      realTarget = fs.realpathSync.native(path.join(realRoot, ...artifact.split('/')));
    } catch {
      // ENOENT, a dangling link, a loop of links or a path through a file: all "not there".
      issues.push(
        at(
          'result.artifact-missing',
          `"${artifact}" does not exist in the workspace${isDanglingLink(path.join(realRoot, ...artifact.split('/'))) ? ' (it is a symbolic link to nothing)' : ''}.`,
          'Create the file before reporting it, or remove it from artifacts.',
          range,
        ),
      );
      return;
    }
    if (!isInside(realRoot, realTarget)) {
      issues.push(
        at(
          'result.artifact-outside-workspace',
          `"${artifact}" leads outside the workspace through a symbolic link (to ${realTarget}).`,
          'List only files whose real location is inside the workspace.',
          range,
        ),
      );
    }
  });
  return issues;
}

interface PathProblem {
  code: string;
  message: string;
  recommendation: string;
}

/** The rules that need no file system, in the order they are reported. */
function lexicalProblem(p: string): PathProblem | undefined {
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

function isInside(root: string, target: string): boolean {
  const relative = path.relative(root, target);
  return relative !== '..' && !relative.startsWith('..' + path.sep) && !path.isAbsolute(relative);
}

function isDanglingLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function shorten(p: string): string {
  return p.length > 120 ? `${p.slice(0, 117)}…` : p;
}

function at(code: string, message: string, recommendation: string, range: Range | undefined): Issue {
  return issue(code, 'artifacts', message, recommendation, range);
}
