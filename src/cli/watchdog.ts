// The lease watchdog's program (dist/baton-watchdog.js <worker JSON>): what `baton lease-watchdog` does, without the
// rest of the CLI. A coordinator on a shared store starts one per attempt (startLeaseWatchdog), so its start is paid
// per task: this program loads src/engine/watchdog.ts alone (docs/architecture.md, "How the CLI starts").
import { leaseWatchdog } from './commands/leaseWatchdog';

leaseWatchdog(process.argv[2] ?? '').then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
