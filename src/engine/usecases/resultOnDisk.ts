import { existsSync } from 'node:fs';
import { readWorkerFileTail } from '../effects/files/safeRead';
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
  // The log is the worker's: it may have replaced it with a FIFO or a link to a device (read as no answer).
  const log = readWorkerFileTail(logPath, MAX_ANSWER_LOG_BYTES);
  if (agent) {
    const finalText =
      agent.finalText ??
      (log ? readAgentStream(agent.kind, log.toString('utf8').split('\n')).ended?.finalText : undefined);
    if (finalText === undefined || !hasResultBlock(finalText)) return undefined;
    if (!copy) return logPath;
    writeBatonFile(workspace, artifactPath, finalText.endsWith('\n') ? finalText : `${finalText}\n`);
    return artifactPath;
  }
  if (!log || !hasResultBlock(log.toString('utf8'))) return undefined;
  if (!copy) return logPath;
  writeBatonFile(workspace, artifactPath, log);
  return artifactPath;
}

/** How much of the end of a worker's log is read for its answer: the final message and a printed block come last. */
const MAX_ANSWER_LOG_BYTES = 64 * 1024 * 1024;
