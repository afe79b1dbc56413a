import {
  BatonError,
  Engine,
  totalUsage,
  type AttemptUsage,
  type DelegationStatus,
  type FollowUp,
  type RunConfigView,
  type RunOverview,
  type WorkerRuntime,
} from '../../engine/index';
import { describeLiveness } from '../../protocol/liveness';
import { printJson, READING, withEngine, type CommandContext } from '../context';
import { bytes, oneLine, paint, status, table, timestamp, tokens, usd } from '../render';

/**
 * A workspace without a store has no runs: said plainly, exit 0, nothing created. A run asked
 * for by id is another matter: an explicit id that does not exist is an error (exit 2), as it
 * is in a store that has runs.
 */
function noRuns(ctx: CommandContext, runId: string | undefined): boolean {
  if (Engine.hasStore(ctx.workspace)) return false;
  if (runId !== undefined)
    throw new BatonError('run.unknown', `There is no run ${runId}: there are no Baton runs in ${ctx.workspace} yet.`);
  if (ctx.output.json) printJson(ctx, { workspace: ctx.workspace, run: null });
  else ctx.output.out(`No Baton runs in ${ctx.workspace} yet. Try: baton claim --plan <plan.md> --task <id>`);
  return true;
}

/** A run at a glance: tasks, live runtimes, open gates. */
export async function showStatus(ctx: CommandContext, runId: string | undefined): Promise<void> {
  if (noRuns(ctx, runId)) return;
  await withEngine(
    ctx,
    async (engine) => {
      const view = await engine.overview(runId);
      const isolation = await engine.isolationSummary(view.run.id);
      const config = await engine.runConfig(view.run.id);
      const followUps = await engine.listFollowUps(view.run.id);
      if (ctx.output.json) {
        // The results with their content from the store: on a team's other machines the artifact paths mean nothing.
        const ingestions = await engine.listIngestionViews(view.run.id);
        return printJson(ctx, {
          ...view,
          ingestions,
          followUps,
          usageTotals: totalUsage(view.usage),
          isolation,
          config,
          now: engine.now(),
        });
      }
      ctx.output.out(renderOverview(ctx, view, engine.now()));
      if (followUps.length > 0) ctx.output.out(`\n${followUpTable(ctx, followUps)}`);
      ctx.output.out(`\n${isolationLine(ctx, isolation)}`);
      ctx.output.out(configLines(ctx, config).join('\n'));
    },
    READING,
  );
}

export function renderOverview(ctx: CommandContext, view: RunOverview, now: number): string {
  const o = ctx.output;
  const { run } = view;
  const done = view.tasks.filter((t) => t.status === 'completed').length;
  const lines = [
    `${paint(o, 'bold', `Run ${run.id}`)}  ${status(o, run.status)}  ${run.planPath}  ${done}/${view.tasks.length} tasks completed  started ${timestamp(run.createdAt)}`,
    '',
    table(
      o,
      ['TASK', 'STATUS', 'ATTEMPT', 'AGENT', 'TITLE', 'WHY'],
      view.tasks.map((t) => {
        const attempts = view.delegations.filter((d) => d.taskId === t.id);
        return [
          t.id,
          status(o, t.status),
          attempts.length ? String(attempts.length) : '-',
          t.agent,
          oneLine(t.title, 40),
          oneLine(t.statusReason ?? '', 90),
        ];
      }),
    ),
  ];
  if (view.usage.length > 0) lines.push('', spentLine(view.usage));
  const live = view.runtimes.filter((r) => r.status !== 'terminal');
  if (live.length > 0) {
    lines.push('', runtimeTable(ctx, live, now));
  }
  const open = view.gates.filter((g) => g.status === 'open');
  if (open.length > 0) {
    lines.push(
      '',
      table(
        o,
        ['GATE', 'KIND', 'TASK', 'REASON'],
        open.map((g) => [paint(o, 'yellow', g.id), g.kind, g.taskId ?? '-', oneLine(g.reason, 90)]),
      ),
    );
    lines.push(
      paint(o, 'dim', `Decide with: baton approve ${open[0]!.id} [--note …]  or  baton reject ${open[0]!.id} --note …`),
    );
  }
  return lines.join('\n');
}

/** A person's follow-up messages (baton message): who sent what to which task, and the attempt that carried it. */
function followUpTable(ctx: CommandContext, followUps: readonly FollowUp[]): string {
  return table(
    ctx.output,
    ['MESSAGE', 'TASK', 'FROM', 'SENT', 'CARRIED BY', 'TEXT'],
    followUps.map((f) => [
      f.id,
      f.taskId,
      f.by,
      timestamp(f.sentAt),
      f.delegationId ?? paint(ctx.output, 'dim', 'its next attempt'),
      oneLine(f.message, 70),
    ]),
  );
}

/** What the run's agents spent, in one line: tokens, cost (where known) and per agent. */
export function spentLine(usage: readonly AttemptUsage[]): string {
  const totals = totalUsage(usage);
  const cost = (c?: number): string => (c === undefined ? '' : `, ${usd(c)}`);
  const priced = usage.filter((u) => u.costUsd !== undefined).length;
  const unpriced = priced < usage.length ? ` (cost known for ${priced} of ${usage.length} attempts)` : '';
  const byAgent = Object.entries(totals.byAgent)
    .map(([agent, s]) => `${agent} ${tokens(s.tokens)}${cost(s.costUsd)}`)
    .join('; ');
  return `Spent: ${tokens(totals.run.tokens)} tokens${cost(totals.run.costUsd)}${unpriced} — by agent: ${byAgent}`;
}

/** Each agent attempt: its CLI, profile, turns, tool calls, tokens, cost and session (diagnose). */
export function usageTable(ctx: CommandContext, usage: readonly AttemptUsage[]): string {
  return table(
    ctx.output,
    ['DELEGATION', 'CLI', 'PROFILE', 'TURNS', 'TOOLS', 'TOKENS IN/OUT', 'COST', 'SESSION', 'DOING'],
    usage.map((u) => [
      u.delegationId,
      u.kind,
      u.permissions.profile,
      String(u.turns),
      u.failedToolCalls ? `${u.toolCalls} (${u.failedToolCalls} refused)` : String(u.toolCalls),
      `${tokens(u.inputTokens)}/${tokens(u.outputTokens)}`,
      u.costUsd === undefined ? 'unknown' : `${usd(u.costUsd)}${u.costSource === 'priced' ? ' (priced)' : ''}`,
      u.sessionId ?? '-',
      oneLine(u.activity ?? '', 40),
    ]),
  );
}

export function runtimeTable(ctx: CommandContext, runtimes: WorkerRuntime[], now: number): string {
  // The same words as the editor's Workers view and dashboard (src/protocol/liveness.ts).
  return table(
    ctx.output,
    ['RUNTIME', 'DELEGATION', 'STATUS', 'LIVENESS', 'LEASE', 'PROGRESS'],
    runtimes.map((r) => {
      const live = describeLiveness(r, now);
      // Under the LEASE header: "1m 57s", "expired 5s ago".
      const lease = live.lease.replace(/^lease /, '');
      return [
        r.id,
        r.delegationId,
        status(ctx.output, live.state),
        live.state === 'stale' ? '-' : live.summary,
        live.state === 'stale' ? paint(ctx.output, 'magenta', lease) : lease,
        oneLine(r.progress ?? '', 50),
      ];
    }),
  );
}

/** The delegation queue of a run, optionally filtered by status. */
export async function showQueue(
  ctx: CommandContext,
  runId: string | undefined,
  filter: DelegationStatus | undefined,
): Promise<void> {
  if (noRuns(ctx, runId)) return;
  await withEngine(
    ctx,
    async (engine) => {
      const { run, delegations } = await engine.listDelegations(runId, filter);
      const { runtimes } = await engine.overview(run.id);
      const now = engine.now();
      if (ctx.output.json) return printJson(ctx, { runId: run.id, delegations, runtimes, now });
      if (delegations.length === 0) {
        ctx.output.out(`Run ${run.id} has no ${filter ? `${filter} ` : ''}delegations.`);
        return;
      }
      const byId = new Map(runtimes.map((r) => [r.id, r]));
      ctx.output.out(
        table(
          ctx.output,
          ['DELEGATION', 'TASK', 'ATTEMPT', 'STATUS', 'RUNTIME', 'LIVENESS', 'RESULT', 'REASON'],
          delegations.map((d) => {
            const runtime = d.runtimeId ? byId.get(d.runtimeId) : undefined;
            return [
              d.id,
              d.taskId,
              d.followUp ? `${d.attempt} (follow-up)` : String(d.attempt),
              status(ctx.output, d.status),
              runtime ? `${runtime.id} ${status(ctx.output, runtime.status)}` : '-',
              runtime && runtime.status !== 'terminal' ? describeLiveness(runtime, now).summary : '-',
              d.resultStatus ?? '-',
              oneLine(d.reason ?? '', 60),
            ];
          }),
        ),
      );
    },
    READING,
  );
}

/** One line on how the run isolates its tasks and what its worktrees use on disk. */
export function isolationLine(ctx: CommandContext, summary: Awaited<ReturnType<Engine['isolationSummary']>>): string {
  const o = ctx.output;
  const i = summary.isolation;
  const how =
    i?.mode === 'worktree'
      ? `worktree per task, ${i.strategy} into ${i.targetBranch} (base ${i.baseCommit?.slice(0, 8)})`
      : i
        ? `shared working tree (${i.note ?? i.mode})`
        : `${summary.setting} (decided at the first dispatch)`;
  const line = `${paint(o, 'bold', 'Isolation')}  ${how}  ·  ${summary.liveWorktrees} worktree${summary.liveWorktrees === 1 ? '' : 's'} on disk, ${bytes(summary.worktreeBytes)}`;
  const target = summary.target;
  if (target?.kind === 'backwards' || target?.kind === 'sideways') {
    const lost = `${target.missingCount} commit${target.missingCount === 1 ? '' : 's'} missing from it`;
    return `${line}\n${paint(o, 'red', '!')} ${target.branch} moved ${target.kind} (expected ${target.expected.slice(0, 10)}, found ${target.found.slice(0, 10)}; ${lost}): nothing is integrated until a person decides. baton diagnose says how to get them back.`;
  }
  if (target?.kind === 'gone')
    return `${line}\n${paint(o, 'red', '!')} ${target.branch} cannot be read; Baton expected it at ${target.expected.slice(0, 10)}.`;
  return line;
}

/**
 * What the run runs with, beside `.baton/config.json` now (docs/architecture.md, "Trust model"): the frozen worker
 * definitions in one line, then each difference the file has (env keys, never values).
 */
export function configSummary(ctx: CommandContext, config: RunConfigView): { line: string; details: string[] } {
  const o = ctx.output;
  if (!config.frozen)
    return {
      line: 'the run started before Baton froze worker definitions: its next resume freezes them from .baton/config.json',
      details: [],
    };
  const frozen = `runs on its frozen worker definitions ${config.frozen.digest.replace('sha256:', '').slice(0, 12)} (default ${config.frozen.defaultWorker})`;
  if (config.file.invalid)
    return { line: `${frozen}; .baton/config.json cannot be used: ${oneLine(config.file.invalid, 100)}`, details: [] };
  // Frozen settings a start option or a budget approval set otherwise differ from the file too: said, not alarmed.
  const settings = config.settings.length
    ? [`settings the run keeps as it started (the file says otherwise): ${config.settings.join(', ')}`]
    : [];
  if (!config.workersDiffer)
    return { line: `${frozen}; .baton/config.json holds the same definitions`, details: settings };
  const gate = config.openGate ? ` (${config.openGate} waits for a decision)` : '';
  return {
    line: `${frozen}; ${paint(o, 'yellow', '.baton/config.json differs')}${gate}:`,
    // Whole: the new command line and the env keys are what a person has to see (each line is at most ~450 characters).
    details: [...config.changes.map((change) => oneLine(change, 600)), ...settings],
  };
}

function configLines(ctx: CommandContext, config: RunConfigView): string[] {
  const { line, details } = configSummary(ctx, config);
  return [`${paint(ctx.output, 'bold', 'Config')}  ${line}`, ...details.map((d) => `  ${d}`)];
}
