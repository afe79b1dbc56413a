/**
 * Child of the heartbeat-latency row: an engine that follows the store (as another window
 * or `baton events --follow` would) and prints `<runtimeId> <heartbeatCount> <epoch ms>`
 * the moment each heartbeat event fires. Prints `ready` once it listens.
 *
 *   node beatObserver.js <workspace>
 */
import { Engine } from '../../../src/engine/index';

async function main(): Promise<void> {
  const engine = await Engine.open({ workspace: process.argv[2]!, follow: true });
  engine.onEvent((e) => {
    if (e.type !== 'runtime:heartbeat') return;
    process.stdout.write(`${e.data.runtimeId} ${e.data.heartbeatCount} ${Date.now()}\n`);
  });
  // The store's watch does not keep a process alive (an editor or a CLI has its own reasons to live): this one must.
  setInterval(() => undefined, 1 << 30);
  process.stdout.write('ready\n');
  process.on('SIGTERM', () => void engine.close().then(() => process.exit(0)));
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
