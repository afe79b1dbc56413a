import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { BatonError, DELEGATION_STATUSES, formatIssue, type DelegationStatus, type ErrorKind } from '../engine/index';
import { claim } from './commands/claim';
import { events } from './commands/events';
import { answer, decide, listGates, recheck } from './commands/gates';
import { cancel } from './commands/cancel';
import { heartbeat } from './commands/heartbeat';
import { ingest } from './commands/ingest';
import { showIngestion } from './commands/ingestion';
import { init } from './commands/init';
import { showQueue, showStatus } from './commands/status';
import { validate } from './commands/validate';
import { resume, start } from './commands/drive';
import { reconcile } from './commands/reconcile';
import { stop } from './commands/stop';
import { replan } from './commands/replan';
import { diagnose } from './commands/diagnose';
import { doctor } from './commands/doctor';
import { cleanup } from './commands/cleanup';
import { exportStoreCommand, importStoreCommand } from './commands/store';
import { leaseWatchdog } from './commands/leaseWatchdog';
import { mcp, mcpForPerson } from './commands/mcp';
import { checkResult, checkResultAtStop } from './commands/checkResult';
import { ask } from './commands/ask';
import { message } from './commands/message';
import { commandContext, planContext, PROTOCOL_VERSION, type GlobalOptions } from './context';

const VERSION = '0.1.0';

/** Exit codes of DESIGN §6 (docs/cli.md). */
export const EXIT_CODES: Record<ErrorKind, number> = {
  io: 1,
  'invalid-input': 2,
  conflict: 3,
  mismatch: 4,
  'worker-failure': 5,
  'integration-conflict': 6,
  'not-qualified': 7,
  'awaiting-decision': 8,
};

function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('expected a positive whole number.');
  return n;
}

function nonNegativeInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number ≥ 0.');
  return n;
}

/** A repeatable option: each use adds one value. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

function driveOptions(o: { maxConcurrency?: number; worker?: string; task?: string[]; observe?: boolean }) {
  return {
    ...(o.maxConcurrency ? { maxConcurrency: o.maxConcurrency } : {}),
    ...(o.worker ? { worker: o.worker } : {}),
    ...(o.task ? { tasks: o.task } : {}),
    ...(o.observe ? { observe: true } : {}),
  };
}

const OBSERVE_HELP =
  'when another machine drives the run: only watch it (and take it over once it is gone), instead of joining it';

export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('baton')
    .description(
      'Run a markdown plan of tasks through coding agents: a durable delegation queue with leases, heartbeats, gates and result contracts.',
    )
    .version(VERSION)
    .option('--json', 'print one JSON document (NDJSON for events --follow)')
    .option('-C, --workspace <dir>', 'the workspace folder (default: nearest folder with .baton, else the current one)')
    .showHelpAfterError('(run baton --help for usage)')
    .exitOverride();
  const ctx = (cmd: Command) => commandContext(cmd.optsWithGlobals<GlobalOptions>());

  program
    .command('init')
    .description('create .baton/ with a default config.json')
    .action((_o, cmd: Command) => init(ctx(cmd)));

  program
    .command('validate <file>')
    .description('check a plan (or a .baton/config.json) and print its issues with line and column')
    .action((file: string, _o, cmd: Command) => setExitCode(validate(ctx(cmd), file)));

  program
    .command('status')
    .description('a run at a glance: tasks, live worker runtimes, open gates')
    .option('--run <id>', 'the run (default: the most recent)')
    .action((o: { run?: string }, cmd: Command) => showStatus(ctx(cmd), o.run));

  program
    .command('queue')
    .description("a run's delegations (attempts) with their runtimes")
    .option('--run <id>', 'the run (default: the most recent)')
    .addOption(new Option('--status <status>', 'only delegations with this status').choices([...DELEGATION_STATUSES]))
    .action((o: { run?: string; status?: DelegationStatus }, cmd: Command) => showQueue(ctx(cmd), o.run, o.status));

  program
    .command('claim')
    .description('take a task as an external worker: starts the run if needed, returns delegation, runtime and token')
    .requiredOption('--task <id>', 'the task id from the plan')
    .option('--plan <plan.md>', 'the plan file (its active run is used, or started)')
    .option('--run <id>', 'claim in this run')
    .option('--agent <name>', "the agent taking it (default: the task's agent)")
    .option('--lease-seconds <n>', 'lease length (default: leaseSeconds from the config)', positiveInteger)
    .option('--holder <text>', 'who holds the runtime, shown in status (default: this host)')
    .action(
      (
        o: { task: string; plan?: string; run?: string; agent?: string; leaseSeconds?: number; holder?: string },
        cmd: Command,
      ) => claim(o.plan ? planContext(cmd.optsWithGlobals<GlobalOptions>(), o.plan) : ctx(cmd), o),
    );

  program
    .command('heartbeat')
    .description("renew a runtime's lease, with optional progress text")
    .option('--runtime <id>', 'the runtime id (default: $BATON_RUNTIME_ID)')
    .option('--token <token>', 'the runtime token (default: $BATON_RUNTIME_TOKEN)')
    .option('--progress <text>', 'what the worker is doing now')
    .action((o: { runtime?: string; token?: string; progress?: string }, cmd: Command) => heartbeat(ctx(cmd), o));

  program
    .command('ingest')
    .description('hand in a result artifact for a delegation; exit 4 when it is rejected')
    .requiredOption('--delegation <id>', 'the delegation, e.g. D-T1-coder-001')
    .requiredOption('--artifact <path>', 'the markdown result artifact; - reads it from stdin')
    .option('--run <id>', 'the run (default: the most recent run with that delegation)')
    .option('--token <token>', "the attempt's runtime token while it runs (default: $BATON_RUNTIME_TOKEN)")
    .action(async (o: { delegation: string; artifact: string; run?: string; token?: string }, cmd: Command) =>
      setExitCode(await ingest(ctx(cmd), o)),
    );

  program
    .command('ingestion')
    .description("a recorded ingestion's artifact, from the store")
    .command('show <ingestionId>')
    .description("print an ingestion's artifact as the store keeps it (with --json: the record and the content)")
    .option('--run <id>', 'the run the ingestion must belong to')
    .action((id: string, o: { run?: string }, cmd: Command) => showIngestion(ctx(cmd), id, o));

  program
    .command('gates')
    .description('open gates waiting for a decision')
    .option('--run <id>', 'only this run')
    .option('--all', 'include decided gates')
    .action((o: { run?: string; all?: boolean }, cmd: Command) => listGates(ctx(cmd), o));

  program
    .command('approve <gateId>')
    .description('approve a gate')
    .option('--note <text>', 'why')
    .option('--accept', 'verification_failed gates: take the result as it is instead of retrying the task')
    .action((gateId: string, o: { note?: string; accept?: boolean }, cmd: Command) =>
      decide(ctx(cmd), gateId, 'approved', o.note, Boolean(o.accept)),
    );

  program
    .command('reject <gateId>')
    .description('reject a gate')
    .option('--note <text>', 'why')
    .action((gateId: string, o: { note?: string }, cmd: Command) => decide(ctx(cmd), gateId, 'rejected', o.note));

  program
    .command('answer <gateId> <text>')
    .description("answer an agent's question (a question gate); the first answer wins")
    .action((gateId: string, text: string, _o, cmd: Command) => answer(ctx(cmd), gateId, text));

  program
    .command('recheck [gateId]')
    .description(
      'check an isolation gate again (default: every open one): when the tree is clean now, it closes and its task gets a worktree',
    )
    .option('--run <id>', 'only the gates of this run')
    .action(async (gateId: string | undefined, o: { run?: string }, cmd: Command) =>
      setExitCode(await recheck(ctx(cmd), gateId, o)),
    );

  program
    .command('message <task> <text>')
    .description(
      "send a task's agent a follow-up message: a running attempt is ended and continued with it, a finished task runs again as a follow-up",
    )
    .option('--run <id>', 'the run (default: the most recent)')
    .option('--plan <plan.md>', 'the newest run of this plan (instead of --run)')
    .action(async (task: string, text: string, o: { run?: string; plan?: string }, cmd: Command) =>
      setExitCode(await message(ctx(cmd), task, text, o)),
    );

  program
    .command('start <plan>')
    .description(
      'run a plan: its active run (or a new one) is driven in the foreground until it ends or waits on a person',
    )
    .option('--max-concurrency <n>', 'workers at once (default: maxConcurrency from the config)', positiveInteger)
    .option('--worker <id>', 'run every task with this worker')
    .option('--task <id...>', 'dispatch only these tasks')
    .option('--new', 'start a new run even if the plan has an active one')
    .option('--observe', OBSERVE_HELP)
    .addOption(
      new Option(
        '--isolation <mode>',
        'a new run: each task in its own git worktree, the shared tree, or auto (default: the config)',
      ).choices(['auto', 'worktree', 'none']),
    )
    .addOption(
      new Option(
        '--integration <strategy>',
        'a new run: how passed tasks join the target branch (default: the config)',
      ).choices(['merge', 'rebase', 'cherry-pick', 'branch']),
    )
    .action(
      async (
        plan: string,
        o: {
          maxConcurrency?: number;
          worker?: string;
          task?: string[];
          new?: boolean;
          observe?: boolean;
          isolation?: 'auto' | 'worktree' | 'none';
          integration?: 'merge' | 'rebase' | 'cherry-pick' | 'branch';
        },
        cmd: Command,
      ) =>
        setExitCode(
          await start(planContext(cmd.optsWithGlobals<GlobalOptions>(), plan), plan, {
            ...driveOptions(o),
            fresh: Boolean(o.new),
            settings: {
              ...(o.isolation ? { isolation: o.isolation } : {}),
              ...(o.integration ? { integration: o.integration } : {}),
            },
          }),
        ),
    );

  program
    .command('resume')
    .description('reconcile a run, take it over, and continue it to its end')
    .option('--run <id>', 'the run (default: the most recent)')
    .option('--max-concurrency <n>', 'workers at once', positiveInteger)
    .option('--worker <id>', 'run every task with this worker')
    .option('--task <id...>', 'dispatch only these tasks')
    .option('--observe', OBSERVE_HELP)
    .action(
      async (
        o: { run?: string; maxConcurrency?: number; worker?: string; task?: string[]; observe?: boolean },
        cmd: Command,
      ) => setExitCode(await resume(ctx(cmd), o.run, driveOptions(o))),
    );

  program
    .command('stop')
    .description(
      'stop a run (or one delegation): graceful lets in-flight work finish; immediate ends every worker process and proves it',
    )
    .option('--run <id>', 'the run (default: the most recent)')
    .addOption(new Option('--mode <mode>', 'how to stop').choices(['graceful', 'immediate']).default('graceful'))
    .option('--delegation <id>', 'stop only this attempt (immediately); its task is cancelled')
    .action(async (o: { run?: string; mode: 'graceful' | 'immediate'; delegation?: string }, cmd: Command) =>
      setExitCode(
        await stop(ctx(cmd), {
          mode: o.delegation ? 'immediate' : o.mode,
          ...(o.run ? { run: o.run } : {}),
          ...(o.delegation ? { delegation: o.delegation } : {}),
        }),
      ),
    );

  program
    .command('cancel')
    .description(
      'end a run for good: its workers are ended (and proven gone), its gates closed, its attempts and tasks cancelled',
    )
    .option('--run <id>', 'the run (default: the most recent)')
    .option('--note <text>', 'why (kept with the closed gates and the cancelled tasks)')
    .action(async (o: { run?: string; note?: string }, cmd: Command) => setExitCode(await cancel(ctx(cmd), o)));

  program
    .command('reconcile')
    .description(
      'classify every task of a run from the evidence (store, processes, artifacts) and repair only proven gaps',
    )
    .option('--run <id>', 'the run (default: the most recent)')
    .action(async (o: { run?: string }, cmd: Command) => setExitCode(await reconcile(ctx(cmd), o.run)));

  program
    .command('replan')
    .description(
      'map a run onto a new plan: completed tasks carry over, the old run is superseded (refused while its workers are alive)',
    )
    .option('--run <id>', 'the run to replace (default: the most recent)')
    .requiredOption('--plan <plan.md>', 'the new plan')
    .option('--map <old=new...>', 'old task → new task (old= drops it); tasks with the same id map to themselves')
    .action((o: { run?: string; plan: string; map?: string[] }, cmd: Command) =>
      replan(planContext(cmd.optsWithGlobals<GlobalOptions>(), o.plan), o),
    );

  program
    .command('cleanup')
    .description(
      "remove the worktrees and branches of a run's attempts that are over (integrated, failed, discarded); keeps those in flight or at an open gate",
    )
    .option('--run <id>', 'the run (default: the most recent)')
    .action((o: { run?: string }, cmd: Command) => cleanup(ctx(cmd), o.run));

  program
    .command('diagnose')
    .description(
      'everything about a run: tasks, attempts, worker processes, leases, gates, receipts, stops, disk, and what to do next',
    )
    .option('--run <id>', 'the run (default: the most recent)')
    .action((o: { run?: string }, cmd: Command) => diagnose(ctx(cmd), o.run));

  program
    .command('doctor [plan]')
    .description(
      'check what a run needs before it starts: node, git, the config, each worker (installed, version, credentials), the store, disk; with a plan, the workers its tasks name; exit 7 when something blocks a run',
    )
    .action(async (plan: string | undefined, _o: unknown, cmd: Command) => setExitCode(await doctor(ctx(cmd), plan)));

  program
    .command('events')
    .description("a run's event log; --follow keeps printing as events arrive")
    .option('--run <id>', 'the run (default: the most recent)')
    .option('--follow', 'keep printing new events until interrupted')
    .option('--after <seq>', 'only events after this sequence number', nonNegativeInteger)
    .action((o: { run?: string; follow?: boolean; after?: number }, cmd: Command) => events(ctx(cmd), o));

  program
    .command('check-result')
    .description(
      "check a draft result for this worker's own attempt as ingestion would, writing nothing; exit 4 when it would be rejected",
    )
    .option('--artifact <path>', 'the draft (default: $BATON_ARTIFACT_PATH, where the attempt expects its result)')
    .addOption(
      new Option(
        '--stop-hook',
        "run as the agent's Stop hook (Claude Code): read the hook input on stdin, check the attempt's own result as a repair round, exit 2 to send the issues back to the agent, 0 to let it end",
      ).conflicts('artifact'),
    )
    .action(async (o: { artifact?: string; stopHook?: boolean }, cmd: Command) =>
      setExitCode(await (o.stopHook ? checkResultAtStop(ctx(cmd)) : checkResult(ctx(cmd), o))),
    );

  program
    .command('ask <question>')
    .description(
      "ask a person a question for this worker's own attempt and wait for the answer, printed on stdout (a question gate)",
    )
    .option('--choice <text>', 'an answer the person may pick (repeat for each, at most 10)', collect, undefined)
    .action(async (question: string, o: { choice?: string[] }, cmd: Command) =>
      setExitCode(await ask(ctx(cmd), question, o)),
    );

  program
    .command('mcp')
    .description(
      "serve one attempt's tools to its agent over MCP on stdio, bound by its BATON_* environment; --for-person: Baton's chat tools for a person's MCP client",
    )
    .option(
      '--for-person',
      "serve the workspace's runs to a person's chat (list runs, tasks, gates, a task's issues; start a run, decide a gate, answer a question, stop a run) instead of one attempt",
    )
    .action((o: { forPerson?: boolean }, cmd: Command) =>
      o.forPerson ? mcpForPerson(ctx(cmd), VERSION) : mcp(ctx(cmd), VERSION),
    );

  const store = program
    .command('store')
    .description(
      "move a workspace's store: export it as one document, import one into an empty store (docs/store-transfer.md)",
    );
  store
    .command('export')
    .description(
      'write the whole store (every run, task, delegation, runtime, gate, ingestion, event, …) as one JSON-lines document',
    )
    .option('--out <file>', 'where to write it; - is stdout', '-')
    .action((o: { out: string }, cmd: Command) => exportStoreCommand(ctx(cmd), o));
  store
    .command('import')
    .description("load an exported document into this workspace's store, which must be empty: all or nothing")
    .option('--in <file>', 'the document; - is stdin', '-')
    .action((o: { in: string }, cmd: Command) => importStoreCommand(ctx(cmd), o));

  // Started by a coordinator beside each worker on a shared store (docs/team.md, "Failover"); not for people.
  program
    .command('lease-watchdog <worker>', { hidden: true })
    .description('internal: ends a worker whose lease ran out (a coordinator on a shared store starts it)')
    .action((worker: string) => leaseWatchdog(worker));

  return program;
}

/**
 * Runs the CLI and returns the exit code. Errors become one readable line (or a JSON
 * error document with --json) and the documented exit code; never a stack trace.
 */
export async function runCli(argv: string[]): Promise<number> {
  let exitCode = 0;
  const json = argv.includes('--json');
  const program = buildProgram((code) => (exitCode = code));
  // Subcommands keep their own output settings: configure each one.
  const commands = (c: Command): Command[] => [c, ...c.commands.flatMap(commands)];
  for (const command of commands(program)) {
    command.configureOutput({
      writeErr: (text) => {
        if (!json) process.stderr.write(text);
      },
    });
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    return reportError(err, json);
  }
}

function reportError(err: unknown, json: boolean): number {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
      return 0;
    const message = err.message.replace(/^error: /, '');
    if (json)
      process.stdout.write(
        `${JSON.stringify({ protocolVersion: PROTOCOL_VERSION, error: { code: 'cli.usage', message } })}\n`,
      );
    return 2;
  }
  if (BatonError.is(err)) {
    if (json) {
      process.stdout.write(
        `${JSON.stringify({ protocolVersion: PROTOCOL_VERSION, error: { code: err.code, message: err.message, ...(err.issues.length ? { issues: err.issues } : {}), ...err.details } }, null, 2)}\n`,
      );
    } else {
      process.stderr.write(`baton: ${err.message}\n`);
      for (const i of err.issues) process.stderr.write(`  ${formatIssue(i)}\n`);
    }
    return EXIT_CODES[err.kind];
  }
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (json)
    process.stdout.write(
      `${JSON.stringify({ protocolVersion: PROTOCOL_VERSION, error: { code: 'unexpected', message } })}\n`,
    );
  else process.stderr.write(`baton: unexpected error${code ? ` (${code})` : ''}: ${message}\n`);
  if (process.env.BATON_DEBUG && err instanceof Error) process.stderr.write(`${err.stack}\n`);
  return 1;
}

/** Runs `baton` with this process's arguments: the bundle's entry (src/cli/bin.ts calls it; so does a direct run). */
export function runAsProgram(): void {
  // `baton status | head -c1`: the reader went away. What is left to print is dropped, quietly;
  // the command itself runs to its end (a coordinator is not cut off mid-commit by a closed pipe).
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') process.exitCode = 1;
    });
  }
  // exitCode, not exit(): let stdout drain; every handle the engine opens is closed or unref'd.
  runCli(process.argv.slice(2)).then(
    (code) => (process.exitCode = code),
    () => (process.exitCode = 1),
  );
}

if (require.main === module) runAsProgram();
