// Path arithmetic between the workspace, the repository it lies in and the files a result or
// a commit names. Nothing here touches the file system.
import { isAbsolute, posix, relative, sep } from 'node:path';

/** Workspace-relative with POSIX separators when inside the workspace, else absolute. */
export function workspacePath(workspace: string, absolute: string): string {
  const rel = relative(workspace, absolute);
  if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return rel.split(sep).join('/');
  return absolute;
}

/** Is `target` the folder `root` or inside it (both absolute, links already resolved)? */
export function isInsideFolder(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel !== '..' && !rel.startsWith('..' + sep) && !isAbsolute(rel);
}

/**
 * Paths git names from the repository's root, as the workspace names them (`files:` in a plan):
 * the workspace may be a folder inside the repository.
 */
export function pathsInWorkspace(repoRoot: string, workspace: string, repoPaths: readonly string[]): string[] {
  const inside = relative(repoRoot, workspace).split(sep).join('/') || '.';
  return repoPaths.map((file) => posix.relative(inside, file));
}
