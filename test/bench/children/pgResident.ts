/**
 * Child of the resident-workers row (test/bench/pgBench.ts): one process standing in for many
 * resident workers. It opens an engine on the workspace (PgStore's default pool), claims every
 * task of its run through the engine (`claimTask`, as `baton claim` does) and prints `claimed`.
 * Then one line on stdin, `{"startAt", "offsetMs", "spacingMs", "seconds", "graceMs"}`, starts the beating:
 * runtime r's k-th beat is due at startAt + offsetMs + r·spacingMs + k·1000, and is sent through
 * `engine.heartbeat` when due, without waiting for the process's earlier beats — a store that
 * falls behind shows as lag that grows. Once the last beat is sent it waits `graceMs` at most for
 * the ones still queued, then answers with one JSON line: every committed beat's
 * [due − startAt, lag ms], the failures, the beats still uncommitted, its CPU, its round trips to
 * the server and when its last beat committed.
 *
 *   node pgResident.js <workspace> <runId> <taskIdPrefix> <runtimes>
 *   (claims tasks <prefix>1 … <prefix><runtimes>; BATON_STORE_URL: the cluster)
 */
import { createInterface } from 'node:readline';
import pg from 'pg';
import { Engine, type ClaimOutcome } from '../../../src/engine/index';

interface Start {
  startAt: number;
  offsetMs: number;
  spacingMs: number;
  seconds: number;
  graceMs: number;
}

/** Every query a pg client of this process sends: its round trips to the server. */
let roundTrips = 0;
const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
  roundTrips++;
  return query.apply(this, args);
} as typeof pg.Client.prototype.query;

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
  let trips = 0;
  for (let k = 0; k < start.seconds; k++) {
    for (let r = 0; r < claims.length; r++) {
      const due = start.startAt + start.offsetMs + r * start.spacingMs + k * 1000;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      if (!cpu) {
        cpu = process.cpuUsage();
        trips = roundTrips;
      }
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
  let settled = false;
  await Promise.race([
    Promise.all(pending).then(() => (settled = true)),
    new Promise((resolve) => setTimeout(resolve, start.graceMs)),
  ]);
  const used = process.cpuUsage(cpu);
  const uncommitted = pending.length - lags.length - failed;
  process.stdout.write(
    `${JSON.stringify({ lags, failed, uncommitted, end: lastCommit, cpuMs: (used.user + used.system) / 1000, roundTrips: roundTrips - trips })}\n`,
  );
  // A store that fell behind still has beats queued: closing would wait for them all.
  lines.on('close', () => (settled ? void engine.close().then(() => process.exit(0)) : process.exit(0)));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
