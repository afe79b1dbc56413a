import * as fs from 'node:fs';
import * as path from 'node:path';
import { issue } from '../domain/issue';
import type { Issue, Range } from '../domain/issue';
import { artifactPathProblem } from '../domain/result/artifactPathRules';
import type { ParsedResult } from '../domain/result/parseResult';
import { isInsideFolder } from '../domain/workspacePath';

/**
 * The path rules for the `artifacts` of a result (docs/result-contract.md): each
 * entry is a normalized, workspace-relative POSIX path (artifactPathProblem) to something
 * that exists inside the workspace, also after symlinks are resolved. One issue at most per
 * entry: the first rule it breaks, in that order.
 */
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
    const problem = artifactPathProblem(artifact);
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
    if (!isInsideFolder(realRoot, realTarget)) {
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

function isDanglingLink(p: string): boolean {
  try {
    return fs.lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

function at(code: string, message: string, recommendation: string, range: Range | undefined): Issue {
  return issue(code, 'artifacts', message, recommendation, range);
}
