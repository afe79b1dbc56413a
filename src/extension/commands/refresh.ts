import { folderCommand } from './context';

/** Refresh: every held run read again now. */
export const refresh = folderCommand(async (ctx) => ctx.session.runState?.refreshNow());
