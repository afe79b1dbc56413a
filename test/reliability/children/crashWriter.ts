/**
 * Child of the crash test: drives claim → heartbeat → ingest through the engine as fast
 * as it can and prints one `ack …` line after each call returns (that is, after the
 * commit is durable). The parent SIGKILLs it at a random moment.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BatonError, Engine } from '../../../src/engine/index';

async function main(): Promise<void> {
  const [workspace, planPath, from] = process.argv.slice(2) as [string, string, string];
  // Snapshot every few cycles, so that kills land mid-snapshot too.
  const engine = await Engine.open({ workspace, store: { snapshotAfterBytes: 16 * 1024 } });
  const ack = (line: string): void => {
    process.stdout.write(`ack ${line}\n`);
  };
  // The first round may be killed while it starts the run; that is a crash like any other.
  const runId = (await engine.listRuns())[0]?.id ?? (await engine.startRun(planPath)).id;
  process.stdout.write('ready\n');
  mkdirSync(join(workspace, 'results'), { recursive: true });
  // The parent says where to start; a task claimed but never acknowledged is skipped (it conflicts).
  for (let i = Number(from); ; i++) {
    const taskId = `T${i}`;
    let claim;
    try {
      claim = await engine.claimTask({ runId, taskId });
    } catch (err) {
      if (BatonError.is(err, 'task.unknown')) break;
      if (BatonError.is(err)) continue;
      throw err;
    }
    ack(`claim ${claim.runId} ${claim.delegation.id}`);
    const runtime = await engine.heartbeat({
      runtimeId: claim.runtimeId,
      token: claim.token,
      progress: `working on ${taskId}`,
    });
    ack(`beat ${claim.runId} ${runtime.id} ${runtime.heartbeatCount}`);
    const artifact = join(workspace, 'results', `${taskId}.md`);
    writeFileSync(
      artifact,
      `Done.\n\n\`\`\`baton-result\ncontract: baton-result-v1\ntask: ${taskId}\nagent: coder\nstatus: PASS\nsummary: did ${taskId}\nartifacts: []\n\`\`\`\n`,
    );
    await engine.ingest({
      runId: claim.runId,
      delegationId: claim.delegation.id,
      token: claim.token,
      artifactPath: artifact,
    });
    ack(`ingest ${claim.runId} ${claim.delegation.id}`);
  }
  await engine.close();
  process.stdout.write('done\n');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
