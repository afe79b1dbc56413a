import { join } from 'node:path';

/** Where a run keeps its files in the workspace (DESIGN §3 layout). */
export function runPaths(workspace: string, runId: string) {
  const root = join(workspace, '.baton', 'runs', runId);
  return {
    root,
    artifact: (delegationId: string) => join(root, 'artifacts', `${delegationId}.md`),
    prompt: (delegationId: string) => join(root, 'prompts', `${delegationId}.md`),
    log: (delegationId: string) => join(root, 'logs', `${delegationId}.log`),
    verifyLog: (delegationId: string) => join(root, 'logs', `${delegationId}.verify.log`),
  };
}
