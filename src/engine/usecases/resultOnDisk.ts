import { copyFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readAgentStream, type AgentKind } from '../domain/agents/agentActivity';

/** The opening fence of a result block (up to three spaces of indent, as CommonMark allows). */
export const RESULT_FENCE = /^[ \t]{0,3}(`{3,}|~{3,})[ \t]*(baton-result|sdd-result)\b/m;

export function hasResultBlock(text: string): boolean {
  return RESULT_FENCE.test(text);
}

/**
 * Where a worker's result is: the artifact file if it wrote one; otherwise what it answered,
 * when that holds a result block — copied to the artifact path unless `copy` is false. A
 * plain worker's answer is its log (it printed it); an agent preset's answer is the final
 * message of its event stream (`agent`), never the raw stream, whose JSON escapes the block.
 */
export function resultOnDisk(
  artifactPath: string,
  logPath: string,
  copy = true,
  agent?: { kind: AgentKind; finalText?: string },
): string | undefined {
  if (existsSync(artifactPath)) return artifactPath;
  if (agent) {
    const finalText =
      agent.finalText ??
      (existsSync(logPath)
        ? readAgentStream(agent.kind, readFileSync(logPath, 'utf8').split('\n')).ended?.finalText
        : undefined);
    if (finalText === undefined || !hasResultBlock(finalText)) return undefined;
    if (!copy) return logPath;
    writeFileSync(artifactPath, finalText.endsWith('\n') ? finalText : `${finalText}\n`);
    return artifactPath;
  }
  if (!existsSync(logPath) || !hasResultBlock(readFileSync(logPath, 'utf8'))) return undefined;
  if (!copy) return logPath;
  copyFileSync(logPath, artifactPath);
  return artifactPath;
}
