import { copyFileSync, existsSync, readFileSync } from 'node:fs';

/** The opening fence of a result block (up to three spaces of indent, as CommonMark allows). */
export const RESULT_FENCE = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*(baton-result|sdd-result)\b/m;

export function hasResultBlock(text: string): boolean {
  return RESULT_FENCE.test(text);
}

/**
 * Where a worker's result is: the artifact file if it wrote one; otherwise its log, when
 * that holds a result block (an agent CLI prints its answer instead of writing a file) —
 * copied to the artifact path unless `copy` is false.
 */
export function resultOnDisk(artifactPath: string, logPath: string, copy = true): string | undefined {
  if (existsSync(artifactPath)) return artifactPath;
  if (!existsSync(logPath) || !hasResultBlock(readFileSync(logPath, 'utf8'))) return undefined;
  if (!copy) return logPath;
  copyFileSync(logPath, artifactPath);
  return artifactPath;
}
