/**
 * Child of the race test, reused across rounds. Reads commands on stdin:
 *   open <workspace>   opens the engine there and answers `ready`
 *   go <plan> <task>   claims the task, answers with the outcome as JSON, closes the engine
 *   claim <run> <task> claims the task of that run (a claim scoped to the run), answers with the outcome; the engine
 *                      stays open for the next round
 */
import { createInterface } from 'node:readline';
import { BatonError, Engine } from '../../../src/engine/index';

let engine: Engine | undefined;

async function handle(line: string): Promise<string> {
  const [command, a, b] = line.split(' ');
  if (command === 'open') {
    engine = await Engine.open({ workspace: a! });
    return 'ready';
  }
  if (command === 'go') {
    try {
      return await claimOutcome({ planPath: a!, taskId: b! });
    } finally {
      await engine!.close();
      engine = undefined;
    }
  }
  if (command === 'claim') return claimOutcome({ runId: a!, taskId: b! });
  if (command === 'close') {
    await engine?.close();
    engine = undefined;
    return 'closed';
  }
  throw new Error(`unknown command ${line}`);
}

/** The claim's outcome as one JSON line: won, or the refusal's code. */
async function claimOutcome(input: { planPath?: string; runId?: string; taskId: string }): Promise<string> {
  try {
    const claim = await engine!.claimTask(input);
    return JSON.stringify({ won: true, runId: claim.runId, delegationId: claim.delegation.id });
  } catch (err) {
    if (!BatonError.is(err)) throw err;
    return JSON.stringify({ won: false, code: err.code });
  }
}

const lines = createInterface({ input: process.stdin });
let queue = Promise.resolve();
lines.on('line', (line) => {
  queue = queue.then(async () => {
    process.stdout.write(`${await handle(line)}\n`);
  });
  queue.catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
});
