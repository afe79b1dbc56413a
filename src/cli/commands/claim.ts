import { resolve } from 'node:path';
import { BatonError, Engine, readPlan, requireValidPlan } from '../../engine/index';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { paint, timestamp } from '../render';

export interface ClaimOptions {
  plan?: string;
  task: string;
  run?: string;
  agent?: string;
  leaseSeconds?: number;
  holder?: string;
}

/** An external worker takes a task; prints what it needs to heartbeat and ingest. */
export async function claim(ctx: CommandContext, options: ClaimOptions): Promise<void> {
  // Plan paths are relative to where the command runs, like every other path argument.
  const planPath = options.plan ? resolve(options.plan) : undefined;
  // Refuse a bad plan, or a task it does not have, before the engine opens (and would create) a store for it.
  if (planPath && !Engine.hasStore(ctx.workspace)) {
    const plan = requireValidPlan(readPlan(ctx.workspace, planPath));
    if (!plan.parsed.tasks.some((t) => t.id === options.task))
      throw new BatonError('task.unknown', `Task ${options.task} is not in ${plan.path}.`);
  }
  // Without a plan there is nothing to start: a claim in a workspace without runs is refused, creating nothing.
  if (!planPath) requireStore(ctx);
  await withEngine(ctx, async (engine) => {
    const c = await engine.claimTask({
      taskId: options.task,
      ...(planPath ? { planPath } : {}),
      ...(options.run ? { runId: options.run } : {}),
      ...(options.agent ? { agent: options.agent } : {}),
      ...(options.leaseSeconds !== undefined ? { leaseSeconds: options.leaseSeconds } : {}),
      ...(options.holder ? { holder: options.holder } : {}),
    });
    if (ctx.output.json) {
      return printJson(ctx, {
        runId: c.runId,
        runCreated: c.runCreated,
        delegationId: c.delegation.id,
        taskId: c.delegation.taskId,
        agent: c.delegation.agent,
        attempt: c.delegation.attempt,
        runtimeId: c.runtimeId,
        token: c.token,
        epoch: c.epoch,
        leaseExpiresAt: c.leaseExpiresAt,
      });
    }
    const o = ctx.output;
    o.out(
      [
        `${c.runCreated ? `Started run ${paint(o, 'bold', c.runId)}. ` : ''}Claimed ${paint(o, 'bold', c.delegation.id)} (task ${c.delegation.taskId}, attempt ${c.delegation.attempt}) in run ${c.runId}.`,
        `  runtime  ${c.runtimeId}`,
        `  token    ${c.token}`,
        `  lease    until ${timestamp(c.leaseExpiresAt)} (epoch ${c.epoch})`,
        '',
        paint(o, 'dim', `Keep the lease:  baton heartbeat --runtime ${c.runtimeId} --token <token> --progress "…"`),
        paint(o, 'dim', `Hand in:         baton ingest --delegation ${c.delegation.id} --artifact <result.md>`),
      ].join('\n'),
    );
  });
}
