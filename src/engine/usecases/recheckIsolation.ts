import { resolve } from 'node:path';
import { isolationGateReason, isolationResolvedNote } from '../domain/gateReasons';
import type { Gate } from '../domain/types';
import { probeRepository } from '../effects/git/worktrees';
import {
  openIsolationGate,
  resolveIsolationGate,
  restateIsolationGate,
} from '../operations/gates/resolveIsolationGate';
import { findRun, listGates } from '../queries/runView';
import type { EngineContext } from './context';

export interface IsolationRecheck {
  gate: Gate;
  /** True when the problem is gone: the gate closed by itself and its task goes back to the queue. */
  resolved: boolean;
  /** Why the gate closed, or what still stands in the way. */
  reason: string;
}

/**
 * "Check again" on an isolation gate (docs/isolation.md): probes the repository as the first
 * isolated dispatch did — the run's plan file and `.baton/` do not count as changes — and,
 * when the problem is gone (the person committed, stashed, checked out a branch), closes the
 * gate with that reason so the task runs in a worktree of its own at its next dispatch.
 * Otherwise the gate stays open and its reason says what is in the way now.
 */
export async function recheckIsolationGate(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'workspace'>,
  gateId: string,
): Promise<IsolationRecheck> {
  const { gate, planPath } = await ctx.store.read(async (r) => {
    const found = await openIsolationGate(r, gateId);
    return { gate: found, planPath: (await findRun(r, found.runId)).planPath };
  });
  const probe = await probeRepository(ctx.workspace, { ignore: [resolve(ctx.workspace, planPath)] });
  if (probe.ok) {
    const reason = isolationResolvedNote(probe.branch, gate.taskId);
    const closed = await ctx.store.transact((tx) =>
      resolveIsolationGate(tx, { gateId, note: reason }, ctx.clock.now()),
    );
    return { gate: closed, resolved: true, reason };
  }
  const reason = isolationGateReason(gate.taskId ?? 'The task', probe.reason);
  const open = await ctx.store.transact((tx) => restateIsolationGate(tx, { gateId, reason }, ctx.clock.now()));
  return { gate: open, resolved: false, reason: probe.reason };
}

/** Checks every open isolation gate of a run again (what resuming does first). */
export async function recheckIsolationGates(
  ctx: Pick<EngineContext, 'store' | 'clock' | 'workspace'>,
  runId?: string,
): Promise<IsolationRecheck[]> {
  const open = await ctx.store.read((r) => listGates(r, { ...(runId ? { runId } : {}), status: 'open' }));
  const outcomes: IsolationRecheck[] = [];
  for (const gate of open) if (gate.kind === 'isolation') outcomes.push(await recheckIsolationGate(ctx, gate.id));
  return outcomes;
}
