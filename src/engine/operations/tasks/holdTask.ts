import { describeCrossing } from '../../domain/agents/budget';
import type { LaunchHold } from '../../domain/launch';
import type { Gate } from '../../domain/types';
import { taskStatusOf } from '../../queries/tasks';
import type { StoreTx } from '../../store/port';
import { openGate, waitsAtGateReason } from '../gates/openGate';
import { refreshRunStatus } from '../runs/refreshRunStatus';
import { setTaskNotBefore, setTaskStatus } from './setTaskStatus';

/**
 * Holds a ready task back, in one transaction: it waits at an open gate, at a gate of its own that
 * says why (budget, permission policy, isolation), or stays ready with a reason (an overlap).
 * Only while it is still ready — someone may have claimed or gated it since the pass read it: the
 * next pass sees that. Returns the gate it opened.
 */
export async function holdTask(
  tx: StoreTx,
  input: { runId: string; taskId: string; hold: LaunchHold },
  now: number,
): Promise<Gate | undefined> {
  const { runId, taskId, hold } = input;
  if ((await taskStatusOf(tx, runId, taskId)) !== 'ready') return undefined;
  if (hold.kind === 'overlap') {
    await setTaskStatus(tx, runId, taskId, 'ready', hold.reason, now);
    return undefined;
  }
  if (hold.kind === 'quota') {
    // Its worker's reset as its backoff: the dispatch pass wakes for it then, as for a retry.
    await setTaskStatus(tx, runId, taskId, 'ready', hold.reason, now);
    await setTaskNotBefore(tx, runId, taskId, hold.until);
    return undefined;
  }
  let opened: Gate | undefined;
  if (hold.kind === 'wait-at-gate')
    await setTaskStatus(tx, runId, taskId, 'gated', waitsAtGateReason(hold.gateId, hold.gate), now);
  else opened = await openGate(tx, { runId, taskId, ...gateFor(taskId, hold) }, now);
  await refreshRunStatus(tx, runId, now);
  return opened;
}

function gateFor(
  taskId: string,
  hold: Exclude<LaunchHold, { kind: 'wait-at-gate' } | { kind: 'overlap' } | { kind: 'quota' }>,
): { kind: Gate['kind']; reason: string; details: Record<string, unknown> } {
  switch (hold.kind) {
    case 'budget-gate': {
      const why = hold.crossings.map(describeCrossing).join('; ');
      return {
        kind: 'budget',
        reason: `Task ${taskId} was not started: ${why}. Approve to raise the limit and start it, reject to fail it.`,
        details: { crossings: hold.crossings },
      };
    }
    case 'permission-gate':
      return {
        kind: 'risk_approval',
        reason: `Task ${taskId} asks for the ${hold.profile} permission profile, but ${hold.why}. Approve to run it with ${hold.profile} anyway, reject to cancel it.`,
        details: { permissionProfile: hold.profile, policy: hold.why },
      };
    case 'isolation-gate':
      return { kind: 'isolation', reason: hold.reason, details: { problem: hold.problem } };
  }
}
