import { resolve } from 'node:path';
import { BatonError, type Engine, type Run } from '../../engine/index';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { paint } from '../render';

/**
 * `baton message <task> "…"`: a person's follow-up message to a task's agent (docs/agents.md, "Follow-up messages";
 * docs/cli.md). A running attempt is ended and the next one continues its session with the message first; a finished
 * task runs again as a follow-up; a task yet to start takes it with its next attempt. Exit 2: an empty or too long
 * message, an unknown task or run, a person's task; 3: the task's result is being verified; 4: the task (or its run)
 * does not run again; 1: an attempt this process ended whose end could not be confirmed.
 */
export async function message(
  ctx: CommandContext,
  taskId: string,
  text: string,
  options: { run?: string; plan?: string },
): Promise<number> {
  requireStore(ctx, () => new BatonError('run.unknown', 'There is no run yet; there is no task to send a message to.'));
  return withEngine(ctx, async (engine) => {
    const run = await runOf(engine, options);
    const outcome = await engine.sendFollowUp({ runId: run.id, taskId, message: text });
    const report = outcome.interrupted?.report;
    const code = report && !report.confirmed ? 1 : 0;
    if (ctx.output.json) {
      printJson(ctx, { ...outcome, exitCode: code });
      return code;
    }
    const o = ctx.output;
    const { followUp, action } = outcome;
    const head = `Message ${followUp.id} from ${followUp.by} to ${paint(o, 'bold', taskId)}`;
    if (action === 'interrupt') {
      const ended = outcome.interrupted!;
      const how =
        ended.endedBy === 'coordinator'
          ? 'its coordinator ends it'
          : report?.confirmed
            ? `${report.processes.length} process(es) ended, confirmed gone`
            : `still alive: ${report?.survivors.join(', ') ?? '?'}`;
      o.out(
        `${head}: its running attempt ${ended.delegationId} was ended (${how}); the next attempt continues its session with the message first.`,
      );
    } else if (action === 'send-back')
      o.out(
        outcome.sentBack!.gateKind === 'integration_failed'
          ? `${head}: ${outcome.sentBack!.delegationId}, whose work failed merged with the target (${outcome.sentBack!.gateId} rejected), goes back to its agent; the next attempt starts from its work with the message first.`
          : `${head}: changes requested of ${outcome.sentBack!.delegationId}, which waited for review (${outcome.sentBack!.gateId} rejected); the next attempt starts from its work with the message first.`,
      );
    else if (action === 'reopen')
      o.out(`${head}: the finished task runs again as a follow-up attempt (run ${run.id} is ${outcome.runStatus}).`);
    else o.out(`${head}: its next attempt carries it.`);
    if (!outcome.driven) o.out(paint(o, 'dim', `Continue with: baton resume --run ${run.id}`));
    return code;
  });
}

/** The run named by --run, else the newest run of --plan, else the most recent run. */
async function runOf(engine: Engine, options: { run?: string; plan?: string }): Promise<Run> {
  if (options.run || !options.plan) return engine.getRun(options.run);
  const plan = resolve(options.plan);
  const run = (await engine.listRuns()).find((r) => resolve(engine.workspace, r.planPath) === plan);
  if (!run) throw new BatonError('run.unknown', `There is no run of ${options.plan} yet.`);
  return run;
}
