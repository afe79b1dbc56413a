/**
 * Child of the resident-workers row (test/bench/pgBench.ts): one process standing in for many
 * resident workers. It opens an engine on the workspace (PgStore's default pool), claims every
 * task of its run through the engine (`claimTask`, as `baton claim` does) and prints `claimed`.
 * Then one line on stdin, `{"startAt", "offsetMs", "spacingMs", "seconds"}`, starts the beating:
 * runtime r's k-th beat is due at startAt + offsetMs + r·spacingMs + k·1000, and is sent through
 * `engine.heartbeat` when due, without waiting for the process's earlier beats — a store that
 * falls behind shows as lag that grows. Answers with one JSON line: every beat's
 * [due − startAt, lag ms], the failures, its CPU and when its last beat committed.
 *
 *   node pgResident.js <workspace> <runId> <taskIdPrefix> <runtimes>
 *   (claims tasks <prefix>1 … <prefix><runtimes>; BATON_STORE_URL: the cluster)
 */
import { createInterface } from 'node:readline';
import { Engine, type ClaimOutcome } from '../../../src/engine/index';

interface Start {
  startAt: number;
  offsetMs: number;
  spacingMs: number;
  seconds: number;
}

async function main(): Promise<void> {
  const [workspace, runId, prefix, count] = process.argv.slice(2) as [string, string, string, string];
  const engine = await Engine.open({ workspace });
  const claims: ClaimOutcome[] = [];
  for (let i = 1; i <= Number(count); i++)
    claims.push(await engine.claimTask({ runId, taskId: `${prefix}${i}`, leaseSeconds: 600 }));
  process.stdout.write('claimed\n');
  const lines = createInterface({ input: process.stdin });
  const start = await new Promise<Start>((resolve) => lines.once('line', (line) => resolve(JSON.parse(line) as Start)));

  const lags: Array<[number, number]> = [];
  let failed = 0;
  let lastCommit = 0;
  const pending: Array<Promise<void>> = [];
  let cpu: NodeJS.CpuUsage | undefined;
  for (let k = 0; k < start.seconds; k++) {
    for (let r = 0; r < claims.length; r++) {
      const due = start.startAt + start.offsetMs + r * start.spacingMs + k * 1000;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      cpu ??= process.cpuUsage();
      const claim = claims[r]!;
      pending.push(
        engine.heartbeat({ runtimeId: claim.runtimeId, token: claim.token, progress: `beat ${k}` }).then(
          () => {
            const now = Date.now();
            lastCommit = Math.max(lastCommit, now);
            lags.push([due - start.startAt, now - due]);
          },
          () => {
            failed++;
          },
        ),
      );
    }
  }
  await Promise.all(pending);
  const used = process.cpuUsage(cpu);
  process.stdout.write(
    `${JSON.stringify({ lags, failed, end: lastCommit, cpuMs: (used.user + used.system) / 1000 })}\n`,
  );
  lines.on('close', () => void engine.close().then(() => process.exit(0)));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
