import { raisedBudget, type BudgetCrossing } from '../../domain/agents/budget';
import { readRunSettings } from '../../queries/runs';
import type { StoreTx } from '../../store/port';

/**
 * A person approved a budget gate: the run's budget lines that were crossed are raised past
 * what was spent (docs/workers.md, "Budgets"), in the settings frozen with the run — the
 * config file is not changed.
 */
export async function raiseRunBudget(tx: StoreTx, runId: string, crossings: readonly BudgetCrossing[]): Promise<void> {
  const settings = await readRunSettings(tx, runId);
  if (!settings.budget) return;
  const budget = raisedBudget(settings.budget, crossings);
  await tx.run(`UPDATE runs SET config_json = ? WHERE id = ?`, [JSON.stringify({ ...settings, budget }), runId]);
}
