import * as fs from 'node:fs';
import * as path from 'node:path';
import { issue } from '../domain/issue';
import type { Issue, Range } from '../domain/issue';
import { artifactPathProblem, type PathProblem } from '../domain/result/artifactPathRules';
import type { ParsedResult } from '../domain/result/parseResult';
import { isInsideFolder } from '../domain/workspacePath';
import { BATON_DIR } from '../effects/workspaceLayout';

/**
 * The run a result is judged for, so that an sdd-result's `artifacts/…` entries resolve as the seed
 * (sdd-agent-platform) resolves them: run-relative, `artifacts/x` being `.baton/runs/<run>/artifacts/x`.
 */
export interface ResultRun {
  /** The workspace that holds `.baton/` (not a task's worktree). */
  workspace: string;
  runId: string;
  /**
   * Entries that name the result being judged itself (`artifacts/<delegation>.md`, and the seed's name for it,
   * `artifacts/<agent>-<task>.md`): the seed requires a result to list its own path, and the result is at hand.
   */
  ownNames: readonly string[];
}

/** The prefix of a run-relative entry of an sdd-result: the run's artifact folder. */
export const RUN_ARTIFACTS_PREFIX = 'artifacts/';

/** The names a delegation's own result goes by in an sdd-result's `artifacts` (ResultRun.ownNames). */
export function ownResultNames(delegation: { id: string; taskId: string; agent: string }): string[] {
  return [
    `${RUN_ARTIFACTS_PREFIX}${delegation.id}.md`,
    `${RUN_ARTIFACTS_PREFIX}${delegation.agent}-${delegation.taskId}.md`,
  ];
}

/**
 * The path rules for the `artifacts` of a result (docs/result-contract.md): each
 * entry is a normalized, workspace-relative POSIX path (artifactPathProblem) to something
 * that exists inside the workspace, also after symlinks are resolved. One issue at most per
 * entry: the first rule it breaks, in that order.
 *
 * With `run`, an sdd-result's entries under `artifacts/` are the run's files instead (ResultRun): each must exist in
 * `.baton/runs/<run>/artifacts/` and really be there after links are resolved, or name the result itself.
 */
export function checkArtifactPaths(
  workspaceRoot: string,
  result: Pick<ParsedResult, 'artifacts' | 'artifactRanges'> & Partial<Pick<ParsedResult, 'contract'>>,
  run?: ResultRun,
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
    if (run && result.contract === 'sdd-result-v1' && artifact.startsWith(RUN_ARTIFACTS_PREFIX)) {
      const problem = runArtifactProblem(run, artifact);
      if (problem) issues.push(at(problem.code, problem.message, problem.recommendation, range));
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

/**
 * An sdd-result's `artifacts/x`, resolved as the seed resolves it: `.baton/runs/<run>/artifacts/x` of the workspace
 * (never of a worktree: the run's folder is the workspace's). Its real place must be inside the real workspace's
 * folder of that name, so a link planted anywhere on the way is refused, as everywhere under `.baton/`.
 */
function runArtifactProblem(run: ResultRun, artifact: string): PathProblem | undefined {
  if (run.ownNames.includes(artifact)) return undefined;
  const shown = `${BATON_DIR}/runs/${run.runId}/${artifact}`;
  let folder: string;
  try {
    folder = path.join(fs.realpathSync.native(path.resolve(run.workspace)), BATON_DIR, 'runs', run.runId, 'artifacts');
  } catch (error) {
    return {
      code: 'result.artifact-missing',
      message: `"${artifact}" cannot be checked: the workspace folder cannot be read (${(error as Error).message}).`,
      recommendation: 'Open the workspace folder the run belongs to.',
    };
  }
  const target = path.join(folder, ...artifact.slice(RUN_ARTIFACTS_PREFIX.length).split('/'));
  let realTarget: string;
  try {
    realTarget = fs.realpathSync.native(target);
  } catch {
    return {
      code: 'result.artifact-missing',
      message: `"${artifact}" does not exist in the run's artifact folder (${shown})${isDanglingLink(target) ? ': it is a symbolic link to nothing' : ''}. In an sdd-result, a path under artifacts/ names a file of the run, as the seed reads it.`,
      recommendation: `Write the file to ${shown} before reporting it, or remove it from artifacts.`,
    };
  }
  if (!isInsideFolder(folder, realTarget))
    return {
      code: 'result.artifact-outside-workspace',
      message: `"${artifact}" leads outside the run's artifact folder through a symbolic link (to ${realTarget}).`,
      recommendation: `List only files whose real location is inside ${BATON_DIR}/runs/${run.runId}/artifacts/.`,
    };
  return undefined;
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
