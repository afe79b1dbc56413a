import { totalUsage } from '../../engine/index';
import { printJson, READING, requireStore, withEngine, type CommandContext } from '../context';
import { bytes, duration, oneLine, paint, status, table, timestamp } from '../render';
import { configSummary, renderOverview, usageTable } from './status';

/**
 * `baton diagnose`: everything about a run — tasks, attempts, workers, leases, gates, receipts, stops — and the next
 * command.
 */
export async function diagnose(ctx: CommandContext, runId: string | undefined): Promise<void> {
  // Refused before the engine opens (and would create) a store.
  requireStore(ctx);
  await withEngine(
    ctx,
    async (engine) => {
      const d = await engine.diagnose(runId);
      if (ctx.output.json) return printJson(ctx, { ...d, usageTotals: totalUsage(d.usage) });
      const o = ctx.output;
      const section = (title: string): string => `\n${paint(o, 'bold', title)}`;
      const lines = [renderOverview(ctx, d, d.now)];
      lines.push(section('Coordinator'));
      if (!d.coordinator) lines.push('  never coordinated (tasks were claimed by hand)');
      else {
        const c = d.coordinator;
        // The state and the lease wording come from the same facts: a lease with time left is never "expired".
        const leaseRunning = c.expiresAt > d.now;
        const state = c.released
          ? 'released'
          : leaseRunning
            ? c.alive === false
              ? 'holder gone before its lease ended'
              : 'live'
            : c.alive
              ? 'expired, holder still running'
              : 'expired, holder gone';
        lines.push(
          `  ${c.holder}  epoch ${c.epoch}  ${state}  lease ${c.expiresAt > d.now ? `${duration(c.expiresAt - d.now)} left` : `ended ${duration(d.now - c.expiresAt)} ago`}`,
        );
      }
      lines.push(section('Attempts'));
      lines.push(
        table(
          o,
          ['DELEGATION', 'STATUS', 'WORKER', 'PID', 'PROCESS', 'RESULT', 'REASON'],
          d.delegations.map((del) => {
            const w = d.workers.find((x) => x.delegationId === del.id);
            const proc = !w?.pid
              ? '-'
              : w.alive === null
                ? 'other host'
                : w.alive
                  ? paint(o, 'green', 'alive')
                  : 'gone';
            return [
              del.id,
              status(o, del.status),
              w?.worker ?? '-',
              w?.pid ? String(w.pid) : '-',
              proc,
              del.resultStatus ?? '-',
              oneLine(del.reason ?? '', 90),
            ];
          }),
        ),
      );
      const prompts = d.delegations.filter((del) => del.prompt);
      if (prompts.length > 0) {
        lines.push(section('Prompts'));
        for (const del of prompts)
          lines.push(
            `  ${del.id}  sha256 ${del.prompt!.sha256}  ${bytes(del.prompt!.bytes)}${del.prompt!.truncated ? paint(o, 'yellow', '  truncated') : ''}`,
          );
      }
      if (d.usage.length > 0) {
        lines.push(section('Agents'), usageTable(ctx, d.usage));
      }
      if (d.receipts.length > 0) {
        lines.push(section('Verification receipts'));
        for (const r of d.receipts)
          lines.push(
            `  ${r.exitCode === 0 ? paint(o, 'green', '✓') : paint(o, 'red', '✗')} ${r.delegationId}  ${r.command.join(' ')}  ${r.timedOut ? 'timed out' : `exit ${r.exitCode}`}  ${r.durationMs} ms  ${r.logPath}`,
          );
      }
      if (d.stops.length > 0) {
        lines.push(section('Stops'));
        for (const s of d.stops) {
          lines.push(
            `  ${s.id} ${s.mode} ${s.delegationId ?? 'run'} by ${s.requestedBy} at ${timestamp(s.requestedAt)}: ${s.status}`,
          );
          for (const e of s.report)
            lines.push(
              `    ${e.confirmed ? paint(o, 'green', '✓') : paint(o, 'red', '✗')} ${e.delegationId} ${e.note ?? `${e.processes.length} process(es)${e.confirmed ? ' confirmed gone' : `, alive: ${e.survivors.join(', ')}`}`}`,
            );
        }
      }
      if (d.isolation || d.worktrees.length > 0) {
        const i = d.isolation;
        lines.push(section('Isolation'));
        lines.push(
          i?.mode === 'worktree'
            ? `  worktree per task; ${i.strategy === 'branch' ? 'pushed for pull requests' : i.strategy} into ${i.targetBranch}; run base ${i.baseCommit}`
            : `  shared working tree (${i?.note ?? 'none'})`,
        );
        if (d.worktrees.length > 0) {
          lines.push(
            table(
              o,
              ['DELEGATION', 'STATUS', 'BRANCH', 'CHANGED', 'TARGET BEFORE → AFTER', 'ON DISK'],
              d.worktrees.map((w) => [
                w.delegationId,
                status(o, w.status),
                w.branch,
                String(w.changedFiles.length),
                // A pushed attempt's target did not move (integration: branch): its pull request's base.
                !w.targetBefore
                  ? '-'
                  : w.status === 'pushed'
                    ? `${w.targetBefore.slice(0, 8)} (not moved)`
                    : `${w.targetBefore.slice(0, 8)} → ${w.targetAfter?.slice(0, 8) ?? '?'}`,
                w.removedAt !== undefined ? 'removed' : bytes(w.bytes),
              ]),
            ),
          );
        }
        for (const f of d.worktreeFindings)
          lines.push(`  ${paint(o, 'yellow', '!')} ${f.delegationId ?? f.path}: ${f.finding}`);
      }
      const config = configSummary(ctx, d.config);
      lines.push(section('Config'), `  ${config.line}`, ...config.details.map((detail) => `    ${detail}`));
      lines.push(
        section('Disk'),
        `  .baton/runs/${d.run.id}: ${bytes(d.diskBytes)}`,
        `  .baton/worktrees/${d.run.id}: ${bytes(d.worktreeBytes)}`,
      );
      lines.push(
        section('Next'),
        `  ${d.next.why}`,
        ...(d.next.command ? [`  ${paint(o, 'cyan', d.next.command)}`] : []),
      );
      o.out(lines.join('\n'));
    },
    READING,
  );
}
