/**
 * Child of the large-store row (docs/reliability.md, row 14): opens the engine on a big
 * store, then commits claim → heartbeat → ingest cycles. Prints one JSON line:
 * {openMs, cycleMs: [...], rssMiB, events, delegations}.
 *
 *   node bigStoreOpen.js <workspace> <planPath> <cycles>
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Engine } from '../../../src/engine/index';

async function main(): Promise<void> {
  const [workspace, planPath, cycles] = process.argv.slice(2) as [string, string, string];
  const t0 = performance.now();
  const engine = await Engine.open({ workspace });
  const openMs = performance.now() - t0;
  try {
    const run = await engine.startRun(planPath);
    const cycleMs: number[] = [];
    for (let i = 1; i <= Number(cycles); i++) {
      const artifact = join(workspace, `r${i}.md`);
      writeFileSync(
        artifact,
        `\`\`\`baton-result\ncontract: baton-result-v1\ntask: C${i}\nagent: coder\nstatus: PASS\nsummary: ok\nartifacts: []\n\`\`\`\n`,
      );
      const s = performance.now();
      const claim = await engine.claimTask({ runId: run.id, taskId: `C${i}` });
      await engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token });
      await engine.ingest({
        runId: run.id,
        delegationId: claim.delegation.id,
        token: claim.token,
        artifactPath: artifact,
      });
      cycleMs.push(performance.now() - s);
    }
    process.stdout.write(`${JSON.stringify({ openMs, cycleMs, rssMiB: process.memoryUsage().rss / 2 ** 20 })}\n`);
  } finally {
    await engine.close();
  }
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
