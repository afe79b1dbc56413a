import { appendFileSync } from 'node:fs';
import { BatonError } from '../../engine/index';
import { printJson, requireStore, withEngine, type CommandContext } from '../context';
import { timestamp } from '../render';

/**
 * Renews a runtime's lease. The runtime and token default to $BATON_RUNTIME_ID / $BATON_RUNTIME_TOKEN.
 * A worker a coordinator started on a shared store has no store credential: its beat goes to
 * the file named by $BATON_HEARTBEAT_RELAY, and its coordinator commits it (docs/team.md).
 */
export async function heartbeat(
  ctx: CommandContext,
  options: { runtime?: string; token?: string; progress?: string },
): Promise<void> {
  const runtimeId = options.runtime ?? process.env.BATON_RUNTIME_ID;
  const token = options.token ?? process.env.BATON_RUNTIME_TOKEN;
  if (!runtimeId || !token) {
    throw new BatonError(
      'heartbeat.missing-identity',
      'Give --runtime and --token (or set BATON_RUNTIME_ID and BATON_RUNTIME_TOKEN).',
    );
  }
  const relay = process.env.BATON_HEARTBEAT_RELAY;
  if (relay && runtimeId === process.env.BATON_RUNTIME_ID) {
    const beat = { runtimeId, token, ...(options.progress !== undefined ? { progress: options.progress } : {}) };
    appendFileSync(relay, `${JSON.stringify(beat)}\n`);
    if (ctx.output.json) return printJson(ctx, { relayed: { runtimeId } });
    ctx.output.out(`Heartbeat of ${runtimeId} handed to its coordinator.`);
    return;
  }
  requireStore(
    ctx,
    () =>
      new BatonError(
        'runtime.unknown',
        `There is no runtime ${runtimeId}: there are no Baton runs in ${ctx.workspace}.`,
      ),
  );
  await withEngine(ctx, async (engine) => {
    const runtime = await engine.heartbeat({
      runtimeId,
      token,
      ...(options.progress !== undefined ? { progress: options.progress } : {}),
    });
    if (ctx.output.json) return printJson(ctx, { runtime });
    ctx.output.out(
      `Lease of ${runtime.id} (${runtime.delegationId}) renewed until ${timestamp(runtime.leaseExpiresAt)}; heartbeat ${runtime.heartbeatCount}.`,
    );
  });
}
