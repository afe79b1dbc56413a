import { DashboardPanel } from '../dashboard';
import { folderCommand } from './context';

/** Open Dashboard: the dashboard of the node's run (the Runs view's inline action), else of the newest run. */
export const openDashboard = folderCommand(async (ctx, node?: { runId?: unknown }) => {
  await DashboardPanel.show(ctx.extensionUri, ctx.session, typeof node?.runId === 'string' ? node.runId : undefined);
});
