import { existsSync, readFileSync } from 'node:fs';
import { writeBatonFile } from '../effects/files/safeWrite';
import { readAgentStream, type AgentKind } from '../domain/agents/agentActivity';
import { hasResultBlock } from '../domain/result/parseResult';

/**
 * Where a worker's result is: the artifact file if it wrote one; otherwise what it answered,
 * when that holds a result block — copied to the artifact path unless `copy` is false. A
 * plain worker's answer is its log (it printed it); an agent preset's answer is the final
 * message of its event stream (`agent`), never the raw stream, whose JSON escapes the block.
 * The copy is written as every file under .baton/ is: never through a planted link.
 */
export function resultOnDisk(
  workspace: string,
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
    writeBatonFile(workspace, artifactPath, finalText.endsWith('\n') ? finalText : `${finalText}\n`);
    return artifactPath;
  }
  if (!existsSync(logPath) || !hasResultBlock(readFileSync(logPath, 'utf8'))) return undefined;
  if (!copy) return logPath;
  writeBatonFile(workspace, artifactPath, readFileSync(logPath));
  return artifactPath;
}
