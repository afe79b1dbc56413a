import { resolve } from 'node:path';
import { counted, formatIssue, MAX_ARTIFACT_BYTES_CEILING, parseStopHookInput } from '../../engine/index';
import { printJson, withEngine, type CommandContext } from '../context';
import { attemptOfThisWorker } from './attemptOfThisWorker';
import { paint } from '../render';

/**
 * `baton check-result`: what `baton_check_result` is to an agent, for a plain process worker —
 * a dry run of ingestion on its draft for its own attempt (the BATON_* environment), writing
 * nothing. Exit 0 when ingestion would accept it, 4 when it would reject it.
 */
export async function checkResult(ctx: CommandContext, options: { artifact?: string }): Promise<number> {
  const credential = attemptOfThisWorker(ctx);
  // Relative to the current folder, as every path on the command line is (docs/cli.md).
  const draft = options.artifact === undefined ? undefined : resolve(options.artifact);
  return withEngine(ctx, async (engine) => {
    const check = await engine.checkDraftResult(credential, draft);
    if (ctx.output.json) {
      printJson(ctx, { check: { ...check, recorded: false } });
      return check.acceptable ? 0 : 4;
    }
    const o = ctx.output;
    for (const i of check.issues)
      o.out(paint(o, i.severity === 'error' ? 'red' : 'yellow', formatIssue(i, check.path)));
    o.out(
      check.acceptable
        ? `${paint(o, 'green', '✓')} ${check.path}: ingestion would accept this ${check.resultStatus} result for ${credential.delegationId} (nothing was recorded).`
        : `${paint(o, 'red', '✗')} ${check.path}: ingestion would reject this result for ${credential.delegationId} (nothing was recorded).`,
    );
    return check.acceptable ? 0 : 4;
  });
}

/**
 * `baton check-result --stop-hook`: Claude Code's Stop hook for an attempt (docs/agents.md, "The stop
 * hook"). It reads the hook's input on stdin, checks the result the agent is about to end with, and
 * answers in the hook's own exit codes, not Baton's: 2 sends the issues (stderr) back to the agent,
 * which goes on in its session; 0 lets it end — the result is acceptable, the attempt's repair rounds
 * are spent, the attempt has ended already, or Baton could not be reached (said on stderr, which the
 * attempt's log keeps). A hook that fails never keeps an agent from ending: ingestion judges then.
 */
export async function checkResultAtStop(ctx: CommandContext): Promise<number> {
  const say = (line: string): void => ctx.output.err(`baton stop hook: ${line}`);
  try {
    const input = parseStopHookInput(await readHookInput());
    const credential = attemptOfThisWorker(ctx);
    return await withEngine(ctx, async (engine) => {
      const stop = await engine.checkBeforeStop(credential, input);
      if (stop.kind === 'ended') {
        say(`${stop.reason} Nothing to check: the agent ends.`);
        return 0;
      }
      const { verdict, check, repairRounds } = stop;
      if (verdict.kind === 'repair') {
        ctx.output.err(stop.feedback!);
        return 2;
      }
      say(
        verdict.why === 'acceptable'
          ? `${check.path}: ingestion would accept this ${check.resultStatus} result for ${credential.delegationId} (check ${verdict.round}); the agent ends.`
          : `${check.path}: the result for ${credential.delegationId} still has ${counted(check.issues.filter((i) => i.severity === 'error').length, 'issue')} after ${repairRounds} repair rounds (repairRounds); the agent ends and ingestion judges it.`,
      );
      return 0;
    });
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    say(`could not check the result (${why}); the agent ends and ingestion judges its result.`);
    return 0;
  }
}

/** The hook input Claude Code writes on stdin; none from a terminal. Beyond the ceiling it is not read as JSON. */
async function readHookInput(): Promise<string> {
  if (process.stdin.isTTY) return '';
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of process.stdin as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= HOOK_INPUT_CEILING) chunks.push(chunk);
  }
  return size > HOOK_INPUT_CEILING ? '' : Buffer.concat(chunks).toString('utf8');
}

/** The hook input holds the agent's last message (escaped as JSON): room for the largest artifact a run takes. */
const HOOK_INPUT_CEILING = 2 * MAX_ARTIFACT_BYTES_CEILING;
