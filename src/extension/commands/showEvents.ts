import { eventLine } from '../model/notices';
import { folderCommand, type CommandNode } from './context';
import { pickRun } from './pick';

/** Show Events: the run's event log, one line per event, in the Baton output channel. */
export const showEvents = folderCommand(async (ctx, node: CommandNode) => {
  const e = await ctx.session.engine();
  const runId = await pickRun(ctx, node, 'Show Events');
  ctx.log.info(`── events of ${runId} ──`);
  for (const ev of await e.listEvents(runId)) ctx.log.info(eventLine(ev));
  ctx.log.show(true);
});
