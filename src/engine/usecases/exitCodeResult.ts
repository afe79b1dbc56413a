import { join, relative, sep } from 'node:path';
import { writeBatonFile } from '../effects/files/safeWrite';
import { exitCodeResultText, lastOutputLine } from '../domain/result/exitCodeResult';
import { readBatonFileTail } from '../effects/files/safeRead';
import { Git } from '../effects/git/git';
import type { WorkerExit } from '../effects/processes/spawnSupervised';
import { readAttemptChanges } from './attemptChanges';
import type { EngineContext } from './context';

/**
 * The result of a plain command worker (`"result": "exit-code"`, docs/workers.md): it writes
 * no result block, so Baton writes one for it (exitCodeResultText) — exit 0 is PASS with the
 * files the attempt changed (added or modified; from what Baton recorded of its tree) as
 * artifacts, anything else is FAIL. The artifact goes where a worker's own would, and is
 * ingested like one.
 */
export async function writeExitCodeResult(
  ctx: Pick<EngineContext, 'store' | 'workspace'>,
  attempt: { runId: string; delegationId: string; taskId: string; agent: string; artifactPath: string },
  worker: { command: string; cwd: string; logPath: string },
  exit: WorkerExit,
): Promise<void> {
  const passed = exit.exitCode === 0;
  const artifacts = passed ? await changedFiles(ctx, attempt, worker.cwd) : { paths: [] };
  const block = exitCodeResultText(
    attempt,
    worker.command,
    exit,
    artifacts,
    passed ? undefined : lastOutput(ctx, worker),
  );
  // As every file under .baton/: never through a link the worker planted at its artifact path.
  writeBatonFile(ctx.workspace, attempt.artifactPath, block);
}

/** The last line the failed command printed (its log's end, read through the fence); none when it is not readable. */
function lastOutput(ctx: Pick<EngineContext, 'workspace'>, worker: { logPath: string }): string | undefined {
  try {
    const tail = readBatonFileTail(ctx.workspace, worker.logPath, LOG_TAIL_BYTES);
    return tail && lastOutputLine(tail.text);
  } catch {
    // A log a worker replaced with a link: its result says how it ended, without the line.
    return undefined;
  }
}

/** Enough of a log's end to hold its last line. */
const LOG_TAIL_BYTES = 4096;

/** The files the attempt added or changed, relative to the folder it worked in. */
async function changedFiles(
  ctx: Pick<EngineContext, 'store' | 'workspace'>,
  attempt: { runId: string; delegationId: string },
  cwd: string,
): Promise<{ paths: string[]; note?: string }> {
  const changes = await readAttemptChanges(ctx, attempt.runId, attempt.delegationId);
  if (!changes.available) return { paths: [], note: 'its changed files are not known (no git record of its tree)' };
  // Repository paths are relative to the top of the working tree the worker changed (its worktree, or the repository).
  const top = (await new Git(cwd).run(['rev-parse', '--show-toplevel'])).trim();
  const paths = changes.files
    .filter((f) => f.change !== 'deleted')
    .map((f) => relative(cwd, join(top, f.path)).split(sep).join('/'))
    .filter((p) => p && !p.startsWith('..'));
  return { paths };
}
