import type { Delegation, Gate, Run } from './types';

/** The command that most likely helps a run next, and why (`baton diagnose`). */
export interface NextStep {
  command: string;
  why: string;
}

/**
 * What to do next with a run, decided from what the store holds and what the machine showed:
 * whether a live coordinator drives it (`coordinated`), and which workers are alive.
 */
export function suggestNextStep(
  view: {
    run: Pick<Run, 'id' | 'status'>;
    gates: readonly Pick<Gate, 'id' | 'status' | 'reason'>[];
    delegations: readonly Pick<Delegation, 'id' | 'status'>[];
  },
  coordinated: boolean,
  workers: readonly { delegationId: string; alive: boolean | null }[],
): NextStep {
  const id = view.run.id;
  const open = view.gates.filter((g) => g.status === 'open');
  if (view.run.status === 'completed') return { command: '', why: 'The run is complete.' };
  if (view.run.status === 'superseded') {
    return { command: 'baton status', why: 'This run was replanned; the newest run continues it.' };
  }
  if (coordinated) {
    return { command: `baton events --run ${id} --follow`, why: 'A coordinator is driving this run; follow it.' };
  }
  const orphaned = view.delegations.filter(
    (d) => d.status === 'RUNNING' && !workers.some((w) => w.delegationId === d.id && w.alive),
  );
  if (orphaned.length > 0) {
    return {
      command: `baton reconcile --run ${id}`,
      why: `${orphaned.map((d) => d.id).join(', ')} ${orphaned.length === 1 ? 'is' : 'are'} RUNNING with no live worker.`,
    };
  }
  if (open.length > 0) {
    const waits = `${open.length} gate${open.length === 1 ? '' : 's'} wait${open.length === 1 ? 's' : ''}`;
    return {
      command: `baton approve ${open[0]!.id}   (or baton reject ${open[0]!.id} --note …)`,
      why: `${waits} for a decision: ${open[0]!.reason}`,
    };
  }
  if (view.run.status === 'failed' || view.run.status === 'blocked') {
    return {
      command: `baton replan --run ${id} --plan <fixed plan>`,
      why: 'Tasks failed and their dependents are blocked.',
    };
  }
  return { command: `baton resume --run ${id}`, why: 'Nothing drives this run; resume continues it.' };
}
